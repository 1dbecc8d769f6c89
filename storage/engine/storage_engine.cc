#include "storage/engine/storage_engine.h"

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

}  // namespace kaas
