// File: storage/partition/batch_state.h
//
// What a batch header means for the idempotent-producer state and the
// transaction index. One function serves both the append path (after the
// write succeeded) and recovery's replay of the log after a state snapshot,
// so that replaying the log rebuilds exactly the state appending built.
//
// Thread-safety: functions of their arguments; callers hold the partition
// lock (append) or own the state (replay).

#ifndef KAAS_STORAGE_PARTITION_BATCH_STATE_H_
#define KAAS_STORAGE_PARTITION_BATCH_STATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "idempotence/producer_entry.h"
#include "idempotence/producer_state_map.h"
#include "storage/batch/record_batch.h"
#include "txn/txn_index.h"

namespace kaas {

// The producer fields of `batch`'s header.
idempotence::BatchInfo BatchInfoOf(const RecordBatchView& batch);

// Records `batch`, stored at `base_offset`, in `producers` and `txns`
// (which the caller guards). A control batch's marker type must decode
// (the append path validates it first; replay skips what does not).
absl::Status RecordBatchState(const RecordBatchView& batch,
                              int64_t base_offset,
                              idempotence::ProducerStateMap* producers,
                              txn::TxnIndex* txns);

}  // namespace kaas

#endif  // KAAS_STORAGE_PARTITION_BATCH_STATE_H_
