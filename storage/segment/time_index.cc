// File: storage/segment/time_index.cc

#include "storage/segment/time_index.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {

TimeIndexEntry TimeIndexFormat::Read(const char* bytes, int64_t base_offset) {
  return {ReadBigEndian64(bytes), base_offset + ReadBigEndian32(bytes + 8)};
}

void TimeIndexFormat::Write(const TimeIndexEntry& entry, int64_t base_offset,
                            char* bytes) {
  WriteBigEndian64(bytes, entry.timestamp);
  WriteBigEndian32(bytes + 8, static_cast<int32_t>(entry.offset - base_offset));
}

bool TimeIndex::MaybeAppend(int64_t timestamp, int64_t offset) {
  CHECK_GE(offset, base_offset()) << "offset below the segment base";
  CHECK_LE(offset - base_offset(), std::numeric_limits<int32_t>::max())
      << "relative offset overflows int32 (segment base " << base_offset()
      << ")";
  return AppendIf(
      {timestamp, offset}, [](const std::optional<TimeIndexEntry>& last,
                              const TimeIndexEntry& entry) {
        return !last.has_value() || (entry.timestamp > last->timestamp &&
                                     entry.offset > last->offset);
      });
}

std::optional<TimeIndexEntry> TimeIndex::LookupBelow(int64_t timestamp) const {
  return LastOf([timestamp](const TimeIndexEntry& entry) {
    return entry.timestamp < timestamp;
  });
}

void TimeIndex::TruncateToOffset(int64_t offset) {
  KeepPrefix(
      [offset](const TimeIndexEntry& entry) { return entry.offset < offset; });
}

size_t TimeIndex::CountBelowOffset(int64_t offset) const {
  return CountPrefix(
      [offset](const TimeIndexEntry& entry) { return entry.offset < offset; });
}

TimeIndex::Decoded TimeIndex::Decode(int64_t base_offset,
                                     absl::string_view bytes,
                                     int64_t next_offset) {
  Decoded decoded{TimeIndex(base_offset), ""};
  decoded.problem = DecodeInto(
      bytes,
      [&](size_t i, const std::optional<TimeIndexEntry>& previous,
          const TimeIndexEntry& entry) -> std::string {
        if (entry.offset < base_offset) {
          return absl::StrFormat(
              "entry %d: offset %d is below the segment base %d", i,
              entry.offset, base_offset);
        }
        if (entry.offset >= next_offset) {
          return absl::StrFormat(
              "entry %d: offset %d is at or past the segment's next offset %d",
              i, entry.offset, next_offset);
        }
        if (previous.has_value() && entry.timestamp <= previous->timestamp) {
          return absl::StrFormat(
              "entry %d: timestamp %d is not above the previous entry's %d", i,
              entry.timestamp, previous->timestamp);
        }
        if (previous.has_value() && entry.offset <= previous->offset) {
          return absl::StrFormat(
              "entry %d: offset %d is not above the previous entry's %d", i,
              entry.offset, previous->offset);
        }
        return "";
      },
      &decoded.index);
  return decoded;
}

}  // namespace kaas::segment
