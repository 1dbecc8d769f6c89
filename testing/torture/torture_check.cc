// File: testing/torture/torture_check.cc

#include "testing/torture/torture_check.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "storage/batch/record_batch.h"

namespace kaas::torture {
namespace {

constexpr size_t kFetchBytes = 1 << 20;

// What the log implies about one producer of a partition.
struct ProducerInLog {
  int32_t last_sequence = -1;
  int64_t open_transaction_first = -1;  // -1: none open
};

// The checks of one partition's scan.
class PartitionScan {
 public:
  PartitionScan(int partition, const std::vector<Writer>& writers,
                LogContents* contents)
      : partition_(partition), writers_(writers), contents_(contents) {}

  absl::Status Batch(const RecordBatchView& batch) {
    const int64_t offset = batch.base_offset();
    if (offset != next_offset_) {
      return Loss(offset, absl::StrCat("the batch starts at ", offset,
                                       " where offset ", next_offset_,
                                       " was expected (a gap or overlap)"));
    }
    KAAS_ASSIGN_OR_RETURN(const Writer* writer, WriterOf(batch));
    WriterInLog& found = contents_->writers[writer->index];
    const int64_t n = static_cast<int64_t>(found.offsets.size());
    const std::string where =
        absl::StrCat(" (writer ", writer->index, " ",
                     WriterKindName(writer->kind), ", unit ", n, ")");
    if (!batch.is_control()) {
      std::optional<UnitId> id = IdentifyDataBatch(batch);
      if (!id.has_value() || id->writer != writer->index || id->n != n) {
        return Loss(offset,
                    absl::StrCat("a data batch out of its writer's order or "
                                 "never sent",
                                 where));
      }
    }
    if (!SameBatchButForLeaderFields(batch.bytes(), UnitBytes(*writer, n))) {
      return Loss(
          offset,
          absl::StrCat("the stored bytes differ from the unit sent", where));
    }
    found.offsets.push_back(offset);
    ++contents_->batches;
    if (writer->kind != WriterKind::kPlain) {
      ProducerInLog& producer = producers_[writer->producer_id()];
      if (!batch.is_control()) {
        producer.last_sequence = batch.last_sequence();
        if (writer->kind == WriterKind::kTransactional &&
            producer.open_transaction_first < 0) {
          producer.open_transaction_first = offset;
        }
      } else {
        if (UnitOf(*writer, n).marker_type == ControlType::kAbort &&
            producer.open_transaction_first >= 0) {
          aborted_.push_back(
              {writer->producer_id(), producer.open_transaction_first, offset});
        }
        producer.open_transaction_first = -1;
      }
    }
    next_offset_ = batch.next_offset();
    return absl::OkStatus();
  }

  // The engine's producer and transaction state against the log's.
  absl::Status CheckState(StorageEngine& engine, const TopicPartition& tp,
                          int64_t high_watermark) {
    if (next_offset_ != high_watermark) {
      return Loss(next_offset_,
                  absl::StrCat("the log ends here, the high watermark is ",
                               high_watermark));
    }
    int64_t last_stable = high_watermark;
    for (const auto& [id, producer] : producers_) {
      if (producer.open_transaction_first >= 0) {
        last_stable = std::min(last_stable, producer.open_transaction_first);
      }
    }
    KAAS_ASSIGN_OR_RETURN(int64_t engine_last_stable,
                          engine.LastStableOffset(tp));
    if (engine_last_stable != last_stable) {
      return State(absl::StrCat("last stable offset ", engine_last_stable,
                                ", the log's open transactions imply ",
                                last_stable));
    }
    KAAS_ASSIGN_OR_RETURN(
        std::vector<AbortedTransaction> aborted,
        engine.AbortedTransactionsInRange(tp, 0, high_watermark));
    std::sort(aborted_.begin(), aborted_.end(),
              [](const AbortedTransaction& a, const AbortedTransaction& b) {
                return a.first_offset < b.first_offset;
              });
    if (aborted != aborted_) {
      return State(absl::StrCat("the engine reports ", aborted.size(),
                                " aborted transactions, the log holds ",
                                aborted_.size()));
    }
    KAAS_ASSIGN_OR_RETURN(std::vector<ProducerDescription> described,
                          engine.DescribeProducers(tp));
    std::map<int64_t, ProducerDescription> by_id;
    for (const ProducerDescription& d : described) by_id[d.producer_id] = d;
    for (const auto& [id, producer] : producers_) {
      if (producer.last_sequence < 0) continue;  // only markers in the log
      auto it = by_id.find(id);
      if (it == by_id.end()) {
        return State(absl::StrCat("producer ", id, " has batches in the log ",
                                  "but no idempotence state"));
      }
      if (it->second.last_sequence != producer.last_sequence ||
          it->second.current_txn_start_offset !=
              producer.open_transaction_first) {
        return State(absl::StrCat(
            "producer ", id, ": last sequence ", it->second.last_sequence,
            " and open transaction at ", it->second.current_txn_start_offset,
            "; the log says ", producer.last_sequence, " and ",
            producer.open_transaction_first));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<const Writer*> WriterOf(const RecordBatchView& batch) {
    const Writer* writer = nullptr;
    if (batch.has_producer_id()) {
      const int64_t index = batch.producer_id() - kFirstProducerId;
      if (index >= 0 && index < static_cast<int64_t>(writers_.size())) {
        writer = &writers_[index];
      }
    } else if (std::optional<UnitId> id = IdentifyDataBatch(batch);
               id.has_value() &&
               id->writer < static_cast<int>(writers_.size())) {
      writer = &writers_[id->writer];
    }
    if (writer == nullptr || writer->partition != partition_ ||
        writer->producer_id() != batch.producer_id()) {
      return Loss(batch.base_offset(), "a batch no writer of it sent");
    }
    return writer;
  }

  absl::Status Loss(int64_t offset, absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(kTortureTopic, "-", partition_,
                                            " offset ", offset, ": ", what));
  }
  absl::Status State(absl::string_view what) const {
    return absl::DataLossError(
        absl::StrCat(kTortureTopic, "-", partition_,
                     ": producer state disagrees with the log: ", what));
  }

  const int partition_;
  const std::vector<Writer>& writers_;
  LogContents* const contents_;
  int64_t next_offset_ = 0;
  std::map<int64_t, ProducerInLog> producers_;
  std::vector<AbortedTransaction> aborted_;
};

absl::Status ScanPartition(StorageEngine& engine, int partition,
                           const std::vector<Writer>& writers,
                           LogContents* contents) {
  const TopicPartition tp{std::string(kTortureTopic), partition};
  KAAS_ASSIGN_OR_RETURN(int64_t log_start, engine.LogStartOffset(tp));
  KAAS_ASSIGN_OR_RETURN(int64_t high_watermark, engine.HighWatermark(tp));
  if (log_start != 0) {
    return absl::DataLossError(absl::StrCat(kTortureTopic, "-", partition,
                                            ": the log starts at ", log_start,
                                            ", yet nothing was ever deleted"));
  }
  PartitionScan scan(partition, writers, contents);
  int64_t next = 0;
  while (next < high_watermark) {
    KAAS_ASSIGN_OR_RETURN(
        ReadResult read,
        engine.Read(tp, next, kFetchBytes, Isolation::kReadUncommitted));
    if (read.batches == 0) break;
    const std::string bytes(read.records);
    absl::string_view rest = bytes;
    while (!rest.empty()) {
      KAAS_ASSIGN_OR_RETURN(size_t size, PeekBatchSize(rest));
      KAAS_ASSIGN_OR_RETURN(RecordBatchView batch,
                            RecordBatchView::Parse(rest.substr(0, size)));
      KAAS_RETURN_IF_ERROR(scan.Batch(batch));
      rest.remove_prefix(size);
    }
    next = read.next_offset;
  }
  return scan.CheckState(engine, tp, high_watermark);
}

}  // namespace

absl::StatusOr<LogContents> CheckRecoveredLog(
    StorageEngine& engine, const std::vector<Writer>& writers,
    const std::vector<WriterLedger>& ledgers, int partitions) {
  LogContents contents;
  contents.writers.resize(writers.size());
  for (int p = 0; p < partitions; ++p) {
    KAAS_RETURN_IF_ERROR(ScanPartition(engine, p, writers, &contents));
  }
  for (const Writer& writer : writers) {
    const WriterLedger& ledger = ledgers[writer.index];
    const std::vector<int64_t>& stored = contents.writers[writer.index].offsets;
    const std::string who =
        absl::StrCat("writer ", writer.index, " (", WriterKindName(writer.kind),
                     ", ", kTortureTopic, "-", writer.partition, ")");
    for (size_t n = 0; n < ledger.acked.size(); ++n) {
      if (n >= stored.size()) {
        return absl::DataLossError(absl::StrCat(
            "acknowledged unit lost: ", who, " unit ", n, " acknowledged at ",
            ledger.acked[n], "; the log holds ", stored.size(), " of its ",
            ledger.acked.size(), " acknowledged units"));
      }
      if (stored[n] != ledger.acked[n]) {
        return absl::DataLossError(
            absl::StrCat(who, " unit ", n, " acknowledged at offset ",
                         ledger.acked[n], ", stored at ", stored[n]));
      }
    }
    const size_t allowed = ledger.acked.size() + (ledger.in_doubt ? 1 : 0);
    if (stored.size() > allowed) {
      return absl::DataLossError(
          absl::StrCat(who, " unit ", allowed, " is stored at offset ",
                       stored[allowed], " but was never sent"));
    }
    if (stored.size() > ledger.acked.size()) ++contents.in_doubt_kept;
  }
  return contents;
}

}  // namespace kaas::torture
