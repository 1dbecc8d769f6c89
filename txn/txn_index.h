// File: txn/txn_index.h
//
// TxnIndex: the transaction bookkeeping of one partition (Kafka's ongoing
// transactions of ProducerStateManager plus its TransactionIndex):
//   - the open transaction of each producer (first data offset, no marker
//     yet), which gives the first unstable offset, hence the last stable
//     offset (LSO) read_committed consumers may read up to;
//   - the aborted transactions, which a read_committed fetch reports so the
//     consumer can drop their records.
//
// The partition layer calls it under its lock, after a batch was written:
//
//   if (info.is_transactional && !info.is_control)
//     KAAS_RETURN_IF_ERROR(txns.OnTransactionalData(pid, base_offset));
//   if (info.is_transactional && info.is_control)
//     KAAS_RETURN_IF_ERROR(txns.OnMarker(pid, kind, base_offset));
//   lso = txns.FirstUnstableOffset().value_or(high_watermark);
//
// TxnIndex is the single source of truth for "does this producer have an
// ongoing transaction" (idempotence::ProducerStateMap::RemoveExpired asks
// HasOpenTransaction).
//
// Every mutator validates its input and refuses (state unchanged) what would
// break an invariant, so a snapshot this class writes is always one FromProto
// accepts.
//
// Thread-safety: thread-compatible (the owner's lock serialises access: the
// partition's txn_mu_, taken shared by readers).

#ifndef KAAS_TXN_TXN_INDEX_H_
#define KAAS_TXN_TXN_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/optional.h"
#include "txn/aborted_txn_list.h"
#include "txn/txn_state.pb.h"

namespace kaas {
namespace txn {

// The type of a transaction marker (Kafka's ControlRecordType values).
enum class ControlKind : int {
  kAbort = 0,
  kCommit = 1,
};

// A transaction with data and no marker yet.
struct OpenTxn {
  int64_t producer_id = 0;
  int64_t first_offset = 0;

  friend bool operator==(const OpenTxn& a, const OpenTxn& b) {
    return a.producer_id == b.producer_id && a.first_offset == b.first_offset;
  }
};

class TxnIndex {
 public:
  TxnIndex() = default;

  // A transactional data batch of `producer_id` was written at
  // `base_offset`: opens the producer's transaction there unless one is
  // already open (later batches of a transaction do not move its start).
  // InvalidArgument if producer_id or base_offset is negative.
  absl::Status OnTransactionalData(int64_t producer_id, int64_t base_offset);

  // A marker of `producer_id` was written at `marker_offset`: closes the
  // producer's open transaction; for kAbort, records
  // AbortedTxn{producer_id, first offset, marker_offset}. A marker with no
  // open transaction (an empty transaction, a retried marker) changes
  // nothing, as in Kafka. InvalidArgument if producer_id or marker_offset is
  // negative; FailedPrecondition if marker_offset is below the open
  // transaction's first offset.
  absl::Status OnMarker(int64_t producer_id, ControlKind kind,
                        int64_t marker_offset);

  // The smallest first offset of the open transactions, or nullopt if none
  // is open. The partition's LSO is this, else its visible end. O(1).
  absl::optional<int64_t> FirstUnstableOffset() const;

  // The aborted transactions a read_committed fetch of [start, end) must
  // report: every one holding an offset of the range (last_offset >= start
  // && first_offset < end, Kafka's overlap rule; D-9: including those that
  // began before `start`), in first-offset order. O(log n + k).
  std::vector<AbortedTxn> AbortedInRange(int64_t start, int64_t end) const {
    return aborted_.Overlapping(start, end);
  }

  // Forgets the aborted transactions that ended below `log_start` (all of
  // them, not only a prefix of the first-offset order). Open transactions
  // are kept: only their markers end them. Returns how many were removed.
  size_t EvictBelow(int64_t log_start) {
    return aborted_.EvictBelow(log_start);
  }

  bool HasOpenTransaction(int64_t producer_id) const {
    return open_by_producer_.contains(producer_id);
  }

  // Sorted by first_offset.
  std::vector<OpenTxn> open_transactions() const;
  // Sorted by first_offset.
  const std::vector<AbortedTxn>& aborted_transactions() const {
    return aborted_.entries();
  }

  // Open transactions and aborted transactions, both sorted by first offset.
  TxnIndexSnapshot ToProto() const;

  // Rebuilds an index from a snapshot. DataLossError naming the entry, the
  // field and the value for a negative producer id or offset, a producer
  // with two open transactions, an aborted transaction whose last offset is
  // below its first, or aborted transactions not sorted by first offset.
  static absl::StatusOr<TxnIndex> FromProto(const TxnIndexSnapshot& snapshot);

 private:
  // Both hold the same open transactions; the set orders them for
  // FirstUnstableOffset.
  absl::flat_hash_map<int64_t, int64_t> open_by_producer_;
  // (first_offset, producer_id).
  std::set<std::pair<int64_t, int64_t>> open_by_first_offset_;
  AbortedTxnList aborted_;
};

}  // namespace txn
}  // namespace kaas

#endif  // KAAS_TXN_TXN_INDEX_H_
