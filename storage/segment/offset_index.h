// File: storage/segment/offset_index.h
//
// The sparse offset index of one segment, held in memory and persisted as the
// segment's ".index" file. An entry maps the base offset of a batch to the
// byte position where that batch starts in the ".log" file. The segment adds
// an entry for a batch when at least `index_interval_bytes` of log were
// written since the last indexed position, so the first batch (position 0) is
// never indexed and a lookup lands at most about one interval before the
// wanted batch.
//
// On-disk format (".index"): a sequence of 8-byte entries, no header:
//   int32 big-endian  relative offset (batch base offset - segment base)
//   uint32 big-endian position of the batch in the .log file
// Entries are strictly increasing in both fields, starting above the
// implicit segment start {relative offset 0, position 0} (the first batch is
// never indexed). A file that is not a multiple of 8 bytes, or whose entries
// are not increasing or point at or past the end of the log, is corrupt; Decode
// keeps the longest valid prefix and says what was wrong with the rest, and
// owners rebuild the index from the log.
//
// Thread-safety: thread-safe (storage/segment/sparse_index.h).

#ifndef KAAS_STORAGE_SEGMENT_OFFSET_INDEX_H_
#define KAAS_STORAGE_SEGMENT_OFFSET_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "storage/segment/sparse_index.h"

namespace kaas::segment {

inline constexpr size_t kOffsetIndexEntrySize = 8;

struct OffsetIndexEntry {
  int64_t offset = 0;     // absolute batch base offset
  uint64_t position = 0;  // byte position in the .log file

  friend bool operator==(const OffsetIndexEntry& a, const OffsetIndexEntry& b) {
    return a.offset == b.offset && a.position == b.position;
  }
};

// How .index entries are encoded (storage/segment/sparse_index.h).
struct OffsetIndexFormat {
  using Entry = OffsetIndexEntry;
  static constexpr size_t kEntrySize = kOffsetIndexEntrySize;
  static constexpr absl::string_view kName = "index";
  static Entry Read(const char* bytes, int64_t base_offset);
  static void Write(const Entry& entry, int64_t base_offset, char* bytes);
};

class OffsetIndex : public SparseIndex<OffsetIndexFormat> {
 public:
  explicit OffsetIndex(int64_t base_offset) : SparseIndex(base_offset) {}

  // The entry with the largest offset <= `offset`; {base_offset, 0} when
  // there is none (the segment start). Never fails.
  OffsetIndexEntry Lookup(int64_t offset) const;

  // Adds an entry. REQUIRES (CHECK-fails otherwise): offset > the last
  // entry's offset and > base, offset - base fits in int32, position > the
  // last entry's position (> 0 for the first entry) and fits in uint32 (the
  // segment layer keeps segments below 2 GiB).
  void Append(int64_t offset, uint64_t position);

  // Removes every entry whose position is >= `position` (log truncation).
  void TruncateToPosition(uint64_t position);

  // How many entries have a position below `position`.
  size_t CountBelowPosition(uint64_t position) const;

  using Decoded = DecodedIndex<OffsetIndex>;
  // Decodes an .index file of a segment whose log is `log_size` bytes long.
  // Never fails: keeps the longest valid prefix, and sets `problem` to a
  // precise description of the first invalid part (empty if none).
  static Decoded Decode(int64_t base_offset, absl::string_view bytes,
                        uint64_t log_size);
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_OFFSET_INDEX_H_
