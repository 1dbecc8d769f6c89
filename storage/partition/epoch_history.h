// File: storage/partition/epoch_history.h
//
// Kafka's leader-epoch cache (LeaderEpochFileCache): the first offset each
// leader epoch wrote, answering OffsetForLeaderEpoch (KIP-101/KIP-279).
// Shared by the disk partition (which persists it in the manifest) and the
// in-memory engine, so both answer alike.
//
// Rules:
//   * a new epoch starts at the log end when it takes over; an epoch that
//     wrote nothing (the previous entry starts at the same offset) is
//     replaced, so it leaves no trace;
//   * advancing the log start forgets the epochs entirely below it, keeping
//     the one that covers it, whose start becomes the log start;
//   * cutting the log's tail (recovery, a follower's truncation) forgets the
//     epochs that began in what was cut;
//   * EndOffsetFor(e): the latest epoch -> (e, log end); an epoch above the
//     latest -> unknown; otherwise (largest epoch <= e, start of the next
//     epoch), or (e, first start) when e precedes every known epoch.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_STORAGE_PARTITION_EPOCH_HISTORY_H_
#define KAAS_STORAGE_PARTITION_EPOCH_HISTORY_H_

#include <cstdint>
#include <vector>

#include "storage/common/api_types.h"

namespace kaas::partition {

class EpochHistory {
 public:
  struct Entry {
    int64_t epoch = 0;
    int64_t start_offset = 0;

    friend bool operator==(const Entry& a, const Entry& b) {
      return a.epoch == b.epoch && a.start_offset == b.start_offset;
    }
  };

  EpochHistory() = default;
  // From persisted entries (ascending).
  explicit EpochHistory(std::vector<Entry> entries)
      : entries_(std::move(entries)) {}

  // `epoch` starts writing at `log_end`. No-op unless `epoch` is newer than
  // the latest entry.
  void Begin(int64_t epoch, int64_t log_end);

  // Forgets what lies below `log_start` (see the file comment).
  void TrimBelow(int64_t log_start);

  // Forgets the epochs that begin at or past `end_offset` (Kafka's
  // truncateFromEnd): the log was cut there, so they wrote nothing that is
  // left. The epochs before keep their starts.
  void TruncateFromEnd(int64_t end_offset);

  // Kafka OffsetForLeaderEpoch.
  EpochEndOffset EndOffsetFor(int64_t epoch, int64_t log_end) const;

  // The epoch that wrote `offset` (0 when no entry starts at or before it).
  int64_t EpochAt(int64_t offset) const;

  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

 private:
  std::vector<Entry> entries_;  // ascending by epoch and start offset
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_EPOCH_HISTORY_H_
