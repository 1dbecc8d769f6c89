#include "storage/engine/storage_engine.h"

#include <utility>

namespace kaas {

absl::StatusOr<AppendResult> StorageEngine::AppendAndWait(
    const TopicPartition& tp, int64_t leader_epoch, Acks acks,
    absl::string_view batch) {
  absl::StatusOr<AppendResult> result = Append(tp, leader_epoch, acks, batch);
  if (!result.ok() || acks != Acks::kAll) return result;
  if (absl::Status durable = result->durable.Wait(); !durable.ok()) {
    return durable;
  }
  return result;
}

absl::StatusOr<RegionReadResult> StorageEngine::ReadRegions(
    const TopicPartition& tp, int64_t offset, size_t max_bytes,
    Isolation isolation) {
  absl::StatusOr<ReadResult> read = Read(tp, offset, max_bytes, isolation);
  if (!read.ok()) return read.status();
  RegionReadResult result;
  result.records.Append(std::move(read->records));
  result.batches = read->batches;
  result.next_offset = read->next_offset;
  result.high_watermark = read->high_watermark;
  result.log_start_offset = read->log_start_offset;
  result.last_stable_offset = read->last_stable_offset;
  result.log_end_offset = read->log_end_offset;
  result.aborted_transactions = std::move(read->aborted_transactions);
  return result;
}

}  // namespace kaas
