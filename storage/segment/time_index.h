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
// timestamp and the segment's last offset.
//
// On-disk format (".timeindex"): a sequence of 12-byte entries, no header:
//   int64 big-endian  timestamp (ms)
//   int32 big-endian  relative offset (batch base offset - segment base)
// Decode keeps the longest valid prefix (see OffsetIndex).
//
// Thread-safety: thread-safe (storage/segment/sparse_index.h).

#ifndef KAAS_STORAGE_SEGMENT_TIME_INDEX_H_
#define KAAS_STORAGE_SEGMENT_TIME_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "storage/segment/sparse_index.h"

namespace kaas::segment {

inline constexpr size_t kTimeIndexEntrySize = 12;

struct TimeIndexEntry {
  int64_t timestamp = 0;
  int64_t offset = 0;  // absolute batch base offset

  friend bool operator==(const TimeIndexEntry& a, const TimeIndexEntry& b) {
    return a.timestamp == b.timestamp && a.offset == b.offset;
  }
};

// How .timeindex entries are encoded (storage/segment/sparse_index.h).
struct TimeIndexFormat {
  using Entry = TimeIndexEntry;
  static constexpr size_t kEntrySize = kTimeIndexEntrySize;
  static constexpr absl::string_view kName = "time index";
  static Entry Read(const char* bytes, int64_t base_offset);
  static void Write(const Entry& entry, int64_t base_offset, char* bytes);
};

class TimeIndex : public SparseIndex<TimeIndexFormat> {
 public:
  explicit TimeIndex(int64_t base_offset) : SparseIndex(base_offset) {}

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

  // How many entries have an offset below `offset`.
  size_t CountBelowOffset(int64_t offset) const;

  using Decoded = DecodedIndex<TimeIndex>;
  // Decodes a .timeindex file of a segment whose next offset (one past its
  // last batch) is `next_offset`; entries at or past it, below the base, or
  // not increasing in both fields are invalid. Never fails: keeps the longest
  // valid prefix and sets `problem` (see OffsetIndex::Decode).
  static Decoded Decode(int64_t base_offset, absl::string_view bytes,
                        int64_t next_offset);
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_TIME_INDEX_H_
