// Scenarios (a) and (b): append throughput with the producer driver.

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/bench_engine.h"
#include "bench/producer_driver.h"
#include "bench/raw_baselines.h"
#include "bench/scenarios.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"

namespace kaas::bench {
namespace {

// Runs one throughput case in `<root>/<slug>` and fills `row`'s figures.
void RunThroughput(const ScenarioContext& context, const std::string& slug,
                   const BatchShape& shape, int producers, Acks acks,
                   int64_t flush_interval_messages, BenchRow* row,
                   bool validate_records = false, bool direct_io = false) {
  const std::string dir = fs::JoinPath(context.root, slug);
  absl::Status status = [&]() -> absl::Status {
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenBenchEngine(dir, flush_interval_messages,
                                          validate_records, direct_io));
    const TopicPartition tp{"bench", kBenchPartition};
    KAAS_RETURN_IF_ERROR(StartTopic(*engine, tp));
    ProducerRunSpec spec;
    spec.engine = engine.get();
    spec.tp = tp;
    spec.leader_epoch = kWriterEpoch;
    spec.acks = acks;
    spec.shape = shape;
    spec.producers = producers;
    spec.driver_threads = context.driver_threads;
    spec.warmup = context.warmup;
    spec.window = context.window;
    KAAS_ASSIGN_OR_RETURN(ProducerRunResult result, RunProducers(spec));
    // Close without persisting, and let the engine join its I/O threads
    // (an in-flight sync cycle may still write index files), before the
    // files are removed: what was never synced is dropped instead of being
    // written back behind the next case's measurements. (DeletePartition
    // does not wait for an in-flight sync cycle, so its removal can fail
    // with "Directory not empty".)
    engine->AbandonTopic(tp.topic);
    engine.reset();

    const double seconds = absl::ToDoubleSeconds(result.window);
    row->batches_per_s = static_cast<double>(result.batches) / seconds;
    row->mb_per_s = static_cast<double>(result.bytes) / 1e6 / seconds;
    row->p50_us = result.latency.p50_us;
    row->p99_us = result.latency.p99_us;
    row->p999_us = result.latency.p999_us;
    row->fsyncs_per_s = static_cast<double>(result.fsyncs) / seconds;
    if (result.fsyncs > 0) {
      row->fsync_mean_us = absl::ToDoubleMicroseconds(result.fsync_mean);
      row->batches_per_fsync = static_cast<double>(result.batches) /
                               static_cast<double>(result.fsyncs);
    }
    return absl::OkStatus();
  }();
  absl::Status removed = fs::RemoveTree(*context.fs, dir);
  if (status.ok()) status = removed;
  if (!status.ok()) row->error = std::string(status.ToString());
}

absl::StatusOr<SyncedAppendRate> ProbeSyncedAppends(
    const ScenarioContext& context) {
  return MeasureSyncedAppendRate(*context.fs, context.root,
                                 context.adjacent_sync_probe,
                                 RawBaselineSpec().sync_write_bytes);
}

}  // namespace

ScenarioContext RealFileSystemContext(std::string root, absl::Duration warmup,
                                      absl::Duration window) {
  ScenarioContext context;
  context.fs = fs::PosixFileSystem::Default();
  context.root = std::move(root);
  context.warmup = warmup;
  context.window = window;
  return context;
}

BenchRow RunAcksAllThroughput(const ScenarioContext& context,
                              const BatchShape& shape, int producers,
                              bool direct_io) {
  BenchRow row;
  row.scenario = "a";
  row.name = absl::StrCat("(a) ", shape.name, " P=", producers,
                          direct_io ? " direct" : "");
  row.io = direct_io ? "direct" : "buffered";
  row.batch = std::string(shape.name);
  row.producers = producers;
  row.flush_interval = 1;
  row.acks = "all";
  const bool probe_around = producers == 1 && shape.name == kBatch1KiB.name &&
                            !direct_io &&
                            context.adjacent_sync_probe > absl::ZeroDuration();
  absl::StatusOr<SyncedAppendRate> before;
  if (probe_around) before = ProbeSyncedAppends(context);
  RunThroughput(context,
                absl::StrCat("a-", shape.name, "-p", producers,
                             direct_io ? "-direct" : ""),
                shape, producers, Acks::kAll, /*flush_interval_messages=*/1,
                &row, /*validate_records=*/false, direct_io);
  if (probe_around) {
    absl::StatusOr<SyncedAppendRate> after = ProbeSyncedAppends(context);
    if (before.ok() && after.ok()) {
      row.adjacent_fdatasync_ops_per_s =
          (before->ops_per_s + after->ops_per_s) / 2;
    } else if (!row.error.has_value()) {
      row.error = std::string(
          (before.ok() ? after.status() : before.status()).ToString());
    }
  }
  return row;
}

BenchRow RunAcksOneThroughput(const ScenarioContext& context,
                              const BatchShape& shape,
                              int64_t flush_interval_messages,
                              bool validate_records) {
  const int64_t flush =
      flush_interval_messages > 0 ? flush_interval_messages : 0;
  const std::string flush_name = flush > 0 ? absl::StrCat(flush) : "never";
  BenchRow row;
  row.scenario = "b";
  row.name = absl::StrCat("(b) ", shape.name, " flush=", flush_name,
                          validate_records ? " validate" : "");
  row.batch = std::string(shape.name);
  row.producers = 1;
  row.flush_interval = flush;
  row.acks = "1";
  row.records = validate_records ? "on" : "off";
  RunThroughput(context,
                absl::StrCat("b-", shape.name, "-flush-", flush_name,
                             validate_records ? "-validate" : ""),
                shape, /*producers=*/1, Acks::kLeader, flush, &row,
                validate_records);
  return row;
}

}  // namespace kaas::bench
