#include "storage/partition/epoch_history.h"

#include <algorithm>

namespace kaas::partition {

void EpochHistory::Begin(int64_t epoch, int64_t log_end) {
  if (!entries_.empty() && entries_.back().epoch >= epoch) return;
  if (!entries_.empty() && entries_.back().start_offset == log_end) {
    entries_.back() = Entry{epoch, log_end};  // the previous wrote nothing
    return;
  }
  entries_.push_back(Entry{epoch, log_end});
}

void EpochHistory::TrimBelow(int64_t log_start) {
  std::vector<Entry> kept;
  for (const Entry& entry : entries_) {
    if (!kept.empty() && entry.start_offset <= log_start) kept.clear();
    kept.push_back(entry);
  }
  if (!kept.empty() && kept.front().start_offset < log_start) {
    kept.front().start_offset = log_start;
  }
  entries_ = std::move(kept);
}

void EpochHistory::TruncateFromEnd(int64_t end_offset) {
  while (!entries_.empty() && entries_.back().start_offset >= end_offset) {
    entries_.pop_back();
  }
}

EpochEndOffset EpochHistory::EndOffsetFor(int64_t epoch,
                                          int64_t log_end) const {
  if (epoch < 0 || entries_.empty()) return EpochEndOffset{};
  if (entries_.back().epoch == epoch) return EpochEndOffset{epoch, log_end};
  auto higher = std::upper_bound(
      entries_.begin(), entries_.end(), epoch,
      [](int64_t value, const Entry& entry) { return value < entry.epoch; });
  if (higher == entries_.end()) return EpochEndOffset{};
  if (higher == entries_.begin()) {
    return EpochEndOffset{epoch, higher->start_offset};
  }
  return EpochEndOffset{std::prev(higher)->epoch, higher->start_offset};
}

int64_t EpochHistory::EpochAt(int64_t offset) const {
  int64_t epoch = 0;
  for (const Entry& entry : entries_) {
    if (entry.start_offset > offset) break;
    epoch = std::max(epoch, entry.epoch);
  }
  return epoch;
}

}  // namespace kaas::partition
