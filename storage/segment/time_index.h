// File: storage/segment/time_index.h
//
// The sparse time index of one segment, held in memory and persisted as the
// segment's ".timeindex" file. It answers "which batch is the first whose
// maxTimestamp is >= T" (Kafka ListOffsets by timestamp) and "how old is this
// segment" (retention by time) without scanning the log.
//
// An entry (timestamp, offset) says: the largest maxTimestamp of the batches
// up to and including the batch at `offset` is `timestamp`. Entries are
// strictly increasing in both fields (an entry is only added when the
// segment's largest timestamp grew). The segment adds an entry at the same
// cadence as the offset index, and a final one when the segment is closed,
// so the last entry of a closed segment holds the segment's largest
// timestamp and the offset of the batch that carries it.
//
// On-disk format (".timeindex"): a sequence of 12-byte entries, no header:
//   int64 big-endian  timestamp (ms)
//   int32 big-endian  relative offset (batch base offset - segment base)
// Decode keeps the longest valid prefix (see OffsetIndex).
//
// Thread-safety: thread-safe, like OffsetIndex.

#ifndef KAAS_STORAGE_SEGMENT_TIME_INDEX_H_
#define KAAS_STORAGE_SEGMENT_TIME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace kaas::segment {

inline constexpr size_t kTimeIndexEntrySize = 12;

struct TimeIndexEntry {
  int64_t timestamp = 0;
  int64_t offset = 0;  // absolute batch base offset

  friend bool operator==(const TimeIndexEntry& a, const TimeIndexEntry& b) {
    return a.timestamp == b.timestamp && a.offset == b.offset;
  }
};

class TimeIndex {
 public:
  explicit TimeIndex(int64_t base_offset) : base_offset_(base_offset) {}

  // Copies take the source's lock. Assignment replaces the entries;
  // REQUIRES: other.base_offset() == base_offset().
  TimeIndex(const TimeIndex& other);
  TimeIndex& operator=(const TimeIndex& other);

  int64_t base_offset() const { return base_offset_; }

  // Adds (timestamp, offset) if `timestamp` is larger than the last entry's
  // timestamp and `offset` larger than its offset; otherwise does nothing.
  // Returns whether an entry was added. REQUIRES (CHECK-fails otherwise):
  // offset >= base and offset - base fits in int32.
  bool MaybeAppend(int64_t timestamp, int64_t offset);

  // The entry with the largest timestamp strictly below `timestamp`, if any:
  // every batch up to its offset has maxTimestamp < `timestamp`, so a search
  // for the first batch with maxTimestamp >= `timestamp` can start after it.
  std::optional<TimeIndexEntry> LookupBelow(int64_t timestamp) const;

  // Removes every entry whose offset is >= `offset` (log truncation).
  void TruncateToOffset(int64_t offset);

  size_t size() const;
  // How many entries have an offset below `offset`.
  size_t CountBelowOffset(int64_t offset) const;
  std::optional<TimeIndexEntry> last() const;
  std::vector<TimeIndexEntry> entries() const;

  // The on-disk encoding of entries [from_entry, size()).
  // REQUIRES: from_entry <= size().
  std::string Encode(size_t from_entry = 0) const;
  // The encoding of entries [from_entry, to_entry).
  // REQUIRES: from_entry <= to_entry <= size().
  std::string Encode(size_t from_entry, size_t to_entry) const;

  struct Decoded;
  // Decodes a .timeindex file of a segment whose next offset (one past its
  // last batch) is `next_offset`; entries at or past it, below the base, or
  // not increasing in both fields are invalid. Never fails: keeps the longest
  // valid prefix and sets `problem` (see OffsetIndex::Decode).
  static Decoded Decode(int64_t base_offset, absl::string_view bytes,
                        int64_t next_offset);

 private:
  const int64_t base_offset_;
  mutable absl::Mutex mu_;
  std::vector<int64_t> timestamps_ ABSL_GUARDED_BY(mu_);
  std::vector<int32_t> relative_offsets_ ABSL_GUARDED_BY(mu_);
};

struct TimeIndex::Decoded {
  TimeIndex index;
  std::string problem;  // empty when the whole file was valid
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_TIME_INDEX_H_
