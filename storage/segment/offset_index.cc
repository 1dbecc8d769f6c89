// File: storage/segment/offset_index.cc

#include "storage/segment/offset_index.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {

OffsetIndexEntry OffsetIndexFormat::Read(const char* bytes,
                                         int64_t base_offset) {
  return {base_offset + ReadBigEndian32(bytes),
          static_cast<uint32_t>(ReadBigEndian32(bytes + 4))};
}

void OffsetIndexFormat::Write(const OffsetIndexEntry& entry,
                              int64_t base_offset, char* bytes) {
  WriteBigEndian32(bytes, static_cast<int32_t>(entry.offset - base_offset));
  WriteBigEndian32(bytes + 4, static_cast<int32_t>(entry.position));
}

OffsetIndexEntry OffsetIndex::Lookup(int64_t offset) const {
  std::optional<OffsetIndexEntry> below =
      LastOf([offset](const OffsetIndexEntry& entry) {
        return entry.offset <= offset;
      });
  return below.value_or(OffsetIndexEntry{base_offset(), 0});
}

void OffsetIndex::Append(int64_t offset, uint64_t position) {
  CHECK_LE(offset - base_offset(), std::numeric_limits<int32_t>::max())
      << "relative offset overflows int32 (segment base " << base_offset()
      << ")";
  CHECK_LE(position, std::numeric_limits<uint32_t>::max())
      << "position overflows uint32";
  AppendIf({offset, position},
           [this](const std::optional<OffsetIndexEntry>& last,
                  const OffsetIndexEntry& entry) {
             // The segment start {base, 0} acts as the entry before the first
             // one.
             const OffsetIndexEntry previous =
                 last.value_or(OffsetIndexEntry{base_offset(), 0});
             CHECK_GT(entry.offset, previous.offset)
                 << "offset index entries must increase";
             CHECK_GT(entry.position, previous.position)
                 << "offset index positions must increase";
             return true;
           });
}

void OffsetIndex::TruncateToPosition(uint64_t position) {
  KeepPrefix([position](const OffsetIndexEntry& entry) {
    return entry.position < position;
  });
}

size_t OffsetIndex::CountBelowPosition(uint64_t position) const {
  return CountPrefix([position](const OffsetIndexEntry& entry) {
    return entry.position < position;
  });
}

OffsetIndex::Decoded OffsetIndex::Decode(int64_t base_offset,
                                         absl::string_view bytes,
                                         uint64_t log_size) {
  Decoded decoded{OffsetIndex(base_offset), ""};
  decoded.problem = DecodeInto(
      bytes,
      [&](size_t i, const std::optional<OffsetIndexEntry>& previous,
          const OffsetIndexEntry& entry) -> std::string {
        // The segment start {base, 0} is the implicit first entry.
        const OffsetIndexEntry before =
            previous.value_or(OffsetIndexEntry{base_offset, 0});
        if (entry.offset <= before.offset) {
          return i == 0 ? absl::StrFormat(
                              "entry 0: offset %d is not above the segment "
                              "base %d",
                              entry.offset, base_offset)
                        : absl::StrFormat(
                              "entry %d: offset %d is not above the previous "
                              "entry's %d",
                              i, entry.offset, before.offset);
        }
        if (entry.position <= before.position) {
          return i == 0 ? absl::StrFormat(
                              "entry 0: position %d is not above the segment "
                              "start",
                              entry.position)
                        : absl::StrFormat(
                              "entry %d: position %d is not above the "
                              "previous entry's %d",
                              i, entry.position, before.position);
        }
        if (entry.position >= log_size) {
          return absl::StrFormat(
              "entry %d: position %d is at or past the end of the log (%d "
              "bytes)",
              i, entry.position, log_size);
        }
        return "";
      },
      &decoded.index);
  return decoded;
}

}  // namespace kaas::segment
