// Scenarios (c) and (d): a writer child process writes the data set, then
// this process reads it back or reopens it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/bench_engine.h"
#include "bench/child_protocol.h"
#include "bench/data_set_child.h"
#include "bench/scenarios.h"
#include "bench/subprocess.h"
#include "fs/fs_util.h"
#include "storage/batch/record_batch.h"

namespace kaas::bench {

namespace {

constexpr size_t kFetchMaxBytes = size_t{1} << 20;

// What a consumer makes of one fetch response: the complete batches in it,
// and the offset to fetch next (the last complete batch's base offset +
// lastOffsetDelta + 1; `fetch_offset` if there is none).
struct Consumed {
  uint64_t bytes = 0;
  int64_t batches = 0;
  int64_t next_offset = 0;
};

Consumed ConsumeBatches(absl::string_view bytes, int64_t fetch_offset) {
  Consumed consumed;
  consumed.next_offset = fetch_offset;
  while (bytes.size() >= batch_layout::kHeaderSize) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok() || *size > bytes.size()) break;  // incomplete
    consumed.next_offset =
        ReadBigEndian64(bytes.data() + batch_layout::kBaseOffset) +
        ReadBigEndian32(bytes.data() + batch_layout::kLastOffsetDelta) + 1;
    consumed.bytes += *size;
    ++consumed.batches;
    bytes.remove_prefix(*size);
  }
  return consumed;
}

}  // namespace

BenchRow RunSequentialRead(const ScenarioContext& context,
                           const BatchShape& shape, CacheState cache) {
  BenchRow row;
  row.scenario = "c";
  row.name = absl::StrCat("(c) ", shape.name, " ", CacheStateName(cache));
  row.batch = std::string(shape.name);
  row.flush_interval = 0;
  row.cache = std::string(CacheStateName(cache));
  const std::string dir = fs::JoinPath(
      context.root, absl::StrCat("c-", shape.name, "-", CacheStateName(cache)));
  const TopicPartition tp{std::string(kDataSetTopic), kBenchPartition};
  absl::Status status = [&]() -> absl::Status {
    KAAS_ASSIGN_OR_RETURN(ChildWriteReport written,
                          WriteClosedDataSet(context, dir, tp.topic, shape));
    KAAS_RETURN_IF_ERROR(SyncFilesUnder(*context.fs, dir, cache));
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenBenchEngine(dir, /*flush_interval_messages=*/0));
    KAAS_RETURN_IF_ERROR(engine->TakeOver(tp, kReopenEpoch).status());
    KAAS_ASSIGN_OR_RETURN(int64_t high_watermark, engine->HighWatermark(tp));

    int64_t offset = 0;
    Consumed total;
    const absl::Time start = absl::Now();
    while (offset < high_watermark) {
      KAAS_ASSIGN_OR_RETURN(ReadResult fetched,
                            engine->Read(tp, offset, kFetchMaxBytes,
                                         Isolation::kReadUncommitted));
      Consumed consumed;
      if (auto flat = fetched.records.TryFlat()) {
        consumed = ConsumeBatches(*flat, offset);
      } else {
        consumed = ConsumeBatches(std::string(fetched.records), offset);
      }
      if (consumed.next_offset <= offset) {
        return absl::InternalError(absl::StrCat(
            "the read at offset ", offset, " returned no complete batch (",
            fetched.records.size(), " bytes, high watermark ", high_watermark,
            ")"));
      }
      total.bytes += consumed.bytes;
      total.batches += consumed.batches;
      offset = consumed.next_offset;
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    row.mb_per_s = static_cast<double>(total.bytes) / 1e6 / seconds;
    row.batches_per_s = static_cast<double>(total.batches) / seconds;
    row.hwm_ok = offset == written.end_offset && total.bytes == written.bytes;
    if (!*row.hwm_ok) {
      return absl::DataLossError(
          absl::StrCat("read ", total.bytes, " bytes up to offset ", offset,
                       "; the child wrote ", written.bytes,
                       " bytes up to offset ", written.end_offset));
    }
    return absl::OkStatus();
  }();
  FinishCase(context, dir, std::move(status), &row);
  return row;
}

BenchRow RunReopen(const ScenarioContext& context, const BatchShape& shape,
                   ReopenCase reopen, CacheState cache) {
  const bool crash = reopen != ReopenCase::kCleanClose;
  const int64_t flush = reopen == ReopenCase::kCrashWithFlushEvery ? 1 : 0;
  const std::string written_name = !crash      ? "clean"
                                   : flush > 0 ? "crash-flush1"
                                               : "crash-nofsync";
  BenchRow row;
  row.scenario = "d";
  row.name = absl::StrCat("(d) ", written_name, " ", shape.name, " ",
                          CacheStateName(cache));
  row.batch = std::string(shape.name);
  row.flush_interval = flush;
  row.close = crash ? "crash" : "clean";
  row.cache = std::string(CacheStateName(cache));
  const std::string dir = fs::JoinPath(
      context.root, absl::StrCat("d-", written_name, "-", shape.name, "-",
                                 CacheStateName(cache)));
  const TopicPartition tp{std::string(kDataSetTopic), kBenchPartition};
  absl::Status status = [&]() -> absl::Status {
    ChildWriteSpec spec;
    spec.data_dir = dir;
    spec.topic = tp.topic;
    spec.shape = shape;
    spec.bytes = context.data_set_bytes;
    spec.flush_interval_messages = flush;
    spec.crash = crash;
    KAAS_ASSIGN_OR_RETURN(ChildWriteReport written,
                          WriteDataSetInChild(context, spec));
    KAAS_RETURN_IF_ERROR(SyncFilesUnder(*context.fs, dir, cache));
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenBenchEngine(dir, flush));
    // TakeOver opens (recovers) the partition, then takes it over; the
    // engine's recovery-time histogram holds exactly the open's share.
    const absl::Time start = absl::Now();
    KAAS_RETURN_IF_ERROR(engine->TakeOver(tp, kReopenEpoch).status());
    const absl::Duration total = absl::Now() - start;
    const LatencyHistogram::Snapshot recovery =
        engine->Stats().recovery_time.Take();
    if (recovery.count != 1) {
      return absl::InternalError(absl::StrCat(
          "expected one partition open, the engine counted ", recovery.count));
    }
    KAAS_ASSIGN_OR_RETURN(int64_t high_watermark, engine->HighWatermark(tp));
    row.open_ms = absl::ToDoubleMilliseconds(recovery.sum);
    row.takeover_ms = absl::ToDoubleMilliseconds(total - recovery.sum);
    row.recovery_scanned_bytes =
        static_cast<int64_t>(engine->Stats().recovery_scanned_bytes.load());
    row.mb_per_s = static_cast<double>(written.bytes) / 1e6 /
                   absl::ToDoubleSeconds(recovery.sum);
    row.hwm_ok = high_watermark == written.end_offset;
    if (!*row.hwm_ok) {
      return absl::DataLossError(
          absl::StrCat("recovered high watermark ", high_watermark,
                       " != the child's end offset ", written.end_offset,
                       " (child high watermark ", written.high_watermark, ")"));
    }
    return absl::OkStatus();
  }();
  FinishCase(context, dir, std::move(status), &row);
  return row;
}

}  // namespace kaas::bench
