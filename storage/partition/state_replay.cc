#include "storage/partition/state_replay.h"

#include <utility>

#include "base/status_macros.h"
#include "glog/logging.h"
#include "storage/partition/batch_state.h"

namespace kaas::partition {

absl::Status StateReplay::Load(
    const metadata::PartitionStateSnapshot& snapshot) {
  KAAS_ASSIGN_OR_RETURN(
      idempotence::ProducerStateMap producers,
      idempotence::ProducerStateMap::FromProto(snapshot.producers()));
  KAAS_ASSIGN_OR_RETURN(txn::TxnIndex txns,
                        txn::TxnIndex::FromProto(snapshot.transactions()));
  producers_ = std::move(producers);
  txns_ = std::move(txns);
  return absl::OkStatus();
}

void StateReplay::Apply(const RecordBatchView& batch) {
  ++applied_;
  absl::Status status =
      RecordBatchState(batch, batch.base_offset(), &producers_, &txns_);
  if (!status.ok()) {
    LOG(WARNING) << "replay of the batch at offset " << batch.base_offset()
                 << " skipped: " << status;
  }
}

void StateReplay::ApplyFences(const metadata::ProducerFences& fences) {
  for (const metadata::ProducerFences::Fence& fence : fences.fences()) {
    absl::Status status = producers_.Fence(fence.producer_id(),
                                           static_cast<int16_t>(fence.epoch()),
                                           fence.fenced_at_ms());
    if (!status.ok()) {
      LOG(WARNING) << "ignoring invalid producer fence " << fence.producer_id()
                   << "@" << fence.epoch() << ": " << status;
    }
  }
}

metadata::PartitionStateSnapshot StateReplay::Snapshot(
    int64_t offset, int64_t leader_epoch) const {
  metadata::PartitionStateSnapshot snapshot;
  snapshot.set_offset(offset);
  snapshot.set_leader_epoch(leader_epoch);
  *snapshot.mutable_producers() = producers_.ToProto();
  *snapshot.mutable_transactions() = txns_.ToProto();
  return snapshot;
}

}  // namespace kaas::partition
