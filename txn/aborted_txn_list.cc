#include "txn/aborted_txn_list.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kaas {
namespace txn {
namespace {

constexpr int64_t kNoEntry = std::numeric_limits<int64_t>::min();

bool FirstOffsetLess(const AbortedTxn& txn, int64_t offset) {
  return txn.first_offset < offset;
}

bool OffsetLessThanFirst(int64_t offset, const AbortedTxn& txn) {
  return offset < txn.first_offset;
}

}  // namespace

absl::Status ValidateAbortedTxn(const AbortedTxn& txn) {
  if (txn.producer_id < 0 || txn.first_offset < 0 ||
      txn.last_offset < txn.first_offset) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid aborted transaction of producer ", txn.producer_id,
        " at offsets ", txn.first_offset, "..", txn.last_offset,
        ": needs producer id >= 0 and 0 <= first offset <= last offset"));
  }
  return absl::OkStatus();
}

absl::StatusOr<AbortedTxnList> AbortedTxnList::FromSorted(
    std::vector<AbortedTxn> sorted) {
  for (size_t i = 0; i < sorted.size(); ++i) {
    absl::Status status = ValidateAbortedTxn(sorted[i]);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("aborted transaction ", i, ": ", status.message()));
    }
    if (i > 0 && sorted[i].first_offset < sorted[i - 1].first_offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "aborted transaction ", i, ": first offset ", sorted[i].first_offset,
          " is below the previous one's ", sorted[i - 1].first_offset,
          " (the list is sorted by first offset)"));
    }
  }
  AbortedTxnList list;
  list.entries_ = std::move(sorted);
  list.Rebuild();
  return list;
}

absl::Status AbortedTxnList::Insert(const AbortedTxn& txn) {
  if (absl::Status status = ValidateAbortedTxn(txn); !status.ok()) {
    return status;
  }
  const auto same_first = std::lower_bound(entries_.begin(), entries_.end(),
                                           txn.first_offset, FirstOffsetLess);
  const auto position = std::upper_bound(same_first, entries_.end(),
                                         txn.first_offset, OffsetLessThanFirst);
  if (std::find(same_first, position, txn) != position) {
    return absl::OkStatus();
  }
  if (position == entries_.end()) {
    entries_.push_back(txn);
    if (entries_.size() <= leaf_count_) {
      UpdateLeaf(entries_.size() - 1);
    } else {
      Rebuild();
    }
    return absl::OkStatus();
  }
  entries_.insert(position, txn);
  Rebuild();
  return absl::OkStatus();
}

std::vector<AbortedTxn> AbortedTxnList::Overlapping(int64_t start,
                                                    int64_t end) const {
  std::vector<AbortedTxn> result;
  if (start >= end || entries_.empty()) return result;
  // Only entries before `limit` begin before `end`.
  const size_t limit = static_cast<size_t>(
      std::lower_bound(entries_.begin(), entries_.end(), end, FirstOffsetLess) -
      entries_.begin());
  CollectOverlapping(/*node=*/1, /*node_begin=*/0, leaf_count_, limit, start,
                     &result);
  return result;
}

void AbortedTxnList::CollectOverlapping(size_t node, size_t node_begin,
                                        size_t node_size, size_t limit,
                                        int64_t start,
                                        std::vector<AbortedTxn>* out) const {
  // node_begin < limit <= entries_.size() also keeps empty leaves out, so
  // their kNoEntry value never matters for correctness.
  if (node_begin >= limit || max_last_offset_[node] < start) return;
  if (node_size == 1) {
    out->push_back(entries_[node_begin]);
    return;
  }
  const size_t half = node_size / 2;
  CollectOverlapping(2 * node, node_begin, half, limit, start, out);
  CollectOverlapping(2 * node + 1, node_begin + half, half, limit, start, out);
}

size_t AbortedTxnList::EvictBelow(int64_t log_start) {
  const auto kept_end = std::remove_if(entries_.begin(), entries_.end(),
                                       [log_start](const AbortedTxn& txn) {
                                         return txn.last_offset < log_start;
                                       });
  const size_t removed = static_cast<size_t>(entries_.end() - kept_end);
  if (removed > 0) {
    entries_.erase(kept_end, entries_.end());
    Rebuild();
  }
  return removed;
}

void AbortedTxnList::Rebuild() {
  leaf_count_ = entries_.empty() ? 0 : 1;
  while (leaf_count_ < entries_.size()) leaf_count_ *= 2;
  max_last_offset_.assign(2 * leaf_count_, kNoEntry);
  for (size_t i = 0; i < entries_.size(); ++i) {
    max_last_offset_[leaf_count_ + i] = entries_[i].last_offset;
  }
  for (size_t node = leaf_count_; node-- > 1;) {  // leaf_count_ - 1 .. 1.
    max_last_offset_[node] =
        std::max(max_last_offset_[2 * node], max_last_offset_[2 * node + 1]);
  }
}

void AbortedTxnList::UpdateLeaf(size_t index) {
  size_t node = leaf_count_ + index;
  max_last_offset_[node] = entries_[index].last_offset;
  for (node /= 2; node >= 1; node /= 2) {
    max_last_offset_[node] =
        std::max(max_last_offset_[2 * node], max_last_offset_[2 * node + 1]);
  }
}

}  // namespace txn
}  // namespace kaas
