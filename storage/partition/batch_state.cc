#include "storage/partition/batch_state.h"

#include "base/status_macros.h"

namespace kaas {

idempotence::BatchInfo BatchInfoOf(const RecordBatchView& batch) {
  idempotence::BatchInfo info;
  info.producer_id = batch.producer_id();
  info.producer_epoch = batch.producer_epoch();
  info.base_sequence = batch.base_sequence();
  info.last_offset_delta = batch.last_offset_delta();
  info.is_transactional = batch.is_transactional();
  info.is_control = batch.is_control();
  info.max_timestamp = batch.max_timestamp();
  return info;
}

absl::Status RecordBatchState(const RecordBatchView& batch,
                              int64_t base_offset,
                              idempotence::ProducerStateMap* producers,
                              txn::TxnIndex* txns) {
  if (!batch.has_producer_id()) return absl::OkStatus();
  KAAS_RETURN_IF_ERROR(producers->Record(BatchInfoOf(batch), base_offset));
  if (!batch.is_transactional()) return absl::OkStatus();
  if (!batch.is_control()) {
    return txns->OnTransactionalData(batch.producer_id(), base_offset);
  }
  KAAS_ASSIGN_OR_RETURN(ControlType type, batch.control_type());
  return txns->OnMarker(batch.producer_id(),
                        type == ControlType::kAbort ? txn::ControlKind::kAbort
                                                    : txn::ControlKind::kCommit,
                        base_offset);
}

}  // namespace kaas
