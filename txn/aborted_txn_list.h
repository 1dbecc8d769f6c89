// File: txn/aborted_txn_list.h
//
// AbortedTxn, and AbortedTxnList: a partition's aborted transactions, sorted
// by first offset, answering "which aborted transactions overlap the offsets
// [start, end)?" in O(log n + k) for k results.
//
// Why not a linear scan: the list is sorted by first offset, but the
// question is about both ends. Entries with first_offset < end are a prefix;
// among them, the ones with last_offset >= start can be anywhere (a long
// aborted transaction can span many short ones). A max-segment tree over
// last_offset, in first-offset order, lets the query descend only into
// subtrees that hold a match. Appends (the common case: transactions abort
// roughly in order) update the tree in O(log n); an insert in the middle or
// an eviction rebuilds it in O(n), which is also the cost of the vector
// shift they already pay.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_TXN_ABORTED_TXN_LIST_H_
#define KAAS_TXN_ABORTED_TXN_LIST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kaas {
namespace txn {

// A transaction that ended with an ABORT marker. Its records are those of
// `producer_id` in [first_offset, last_offset]; last_offset is the marker's.
struct AbortedTxn {
  int64_t producer_id = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;

  friend bool operator==(const AbortedTxn& a, const AbortedTxn& b) {
    return a.producer_id == b.producer_id && a.first_offset == b.first_offset &&
           a.last_offset == b.last_offset;
  }
  friend bool operator!=(const AbortedTxn& a, const AbortedTxn& b) {
    return !(a == b);
  }
};

// InvalidArgument unless producer_id >= 0 and
// 0 <= first_offset <= last_offset.
absl::Status ValidateAbortedTxn(const AbortedTxn& txn);

class AbortedTxnList {
 public:
  AbortedTxnList() = default;

  // A list holding `sorted`. InvalidArgument (naming the index) if an entry
  // fails ValidateAbortedTxn or the entries are not sorted by first_offset.
  static absl::StatusOr<AbortedTxnList> FromSorted(
      std::vector<AbortedTxn> sorted);

  // Inserts `txn` after the entries with the same or a smaller first
  // offset. Inserting an entry equal to one already held does nothing, so
  // replaying a log range twice does not list a transaction twice.
  // InvalidArgument (list unchanged) if `txn` fails ValidateAbortedTxn.
  absl::Status Insert(const AbortedTxn& txn);

  // Every entry with last_offset >= start and first_offset < end (it holds
  // at least one offset of [start, end)), in first-offset order. Empty if
  // start >= end.
  std::vector<AbortedTxn> Overlapping(int64_t start, int64_t end) const;

  // Removes every entry with last_offset < log_start (wherever it sits in
  // the list). Returns how many were removed.
  size_t EvictBelow(int64_t log_start);

  // Sorted by first_offset.
  const std::vector<AbortedTxn>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  void CollectOverlapping(size_t node, size_t node_begin, size_t node_size,
                          size_t limit, int64_t start,
                          std::vector<AbortedTxn>* out) const;
  // Recomputes the tree for entries_ (capacity: the next power of two).
  void Rebuild();
  // Updates the tree after entries_[index] was set, capacity permitting.
  void UpdateLeaf(size_t index);

  // Sorted by first_offset.
  std::vector<AbortedTxn> entries_;
  // Max-segment tree over entries_[i].last_offset: node 1 is the root, the
  // children of node n are 2n and 2n+1, leaf i is node leaf_count_ + i.
  // Leaves past entries_.size() hold INT64_MIN.
  std::vector<int64_t> max_last_offset_;
  size_t leaf_count_ = 0;
};

}  // namespace txn
}  // namespace kaas

#endif  // KAAS_TXN_ABORTED_TXN_LIST_H_
