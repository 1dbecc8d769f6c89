// File: storage/partition/state_replay.h
//
// Rebuilds a partition's producer and transaction state at open: start from
// a state snapshot (or empty), apply the batch headers of the log after it in
// order, then the engine-wide producer fences, then evict what the log start
// no longer covers.
//
// Thread-safety: thread-compatible (used by one opening thread).

#ifndef KAAS_STORAGE_PARTITION_STATE_REPLAY_H_
#define KAAS_STORAGE_PARTITION_STATE_REPLAY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "idempotence/producer_state_map.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/state_snapshot.pb.h"
#include "txn/txn_index.h"

namespace kaas::partition {

class StateReplay {
 public:
  StateReplay() = default;

  // Replaces the state with `snapshot`'s. On error the state is unchanged.
  absl::Status Load(const metadata::PartitionStateSnapshot& snapshot);

  // Applies one batch of the log (in offset order). A batch the state
  // refuses (it cannot happen for a log this engine wrote) is logged and
  // skipped.
  void Apply(const RecordBatchView& batch);

  void ApplyFences(const metadata::ProducerFences& fences);
  void EvictBelow(int64_t log_start) { txns_.EvictBelow(log_start); }

  // The state so far as a snapshot at `offset` (the next offset to apply).
  metadata::PartitionStateSnapshot Snapshot(int64_t offset,
                                            int64_t leader_epoch) const;

  int64_t applied_batches() const { return applied_; }
  idempotence::ProducerStateMap TakeProducers() {
    return std::move(producers_);
  }
  txn::TxnIndex TakeTransactions() { return std::move(txns_); }

 private:
  idempotence::ProducerStateMap producers_;
  txn::TxnIndex txns_;
  int64_t applied_ = 0;
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_STATE_REPLAY_H_
