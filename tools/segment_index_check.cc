// File: tools/segment_index_check.cc

#include "tools/segment_index_check.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/time_index.h"

namespace kaas::tools {

IndexCheck CheckOffsetIndex(int64_t base_offset, absl::string_view bytes,
                            const LogLayout& log) {
  IndexCheck check;
  segment::OffsetIndex::Decoded decoded =
      segment::OffsetIndex::Decode(base_offset, bytes, log.valid_end);
  if (!decoded.problem.empty()) check.problems.push_back(decoded.problem);
  for (const segment::OffsetIndexEntry& entry : decoded.index.entries()) {
    auto it = std::lower_bound(log.boundaries.begin(), log.boundaries.end(),
                               std::make_pair(entry.position, INT64_MIN));
    const bool at_boundary =
        it != log.boundaries.end() && it->first == entry.position;
    if (at_boundary && it->second == entry.offset) continue;
    check.problems.push_back(absl::StrFormat(
        "entry (offset %d, position %d) does not match the log: %s",
        entry.offset, entry.position,
        at_boundary
            ? absl::StrCat("the batch there has base offset ", it->second)
            : std::string("that is not where a batch starts")));
    break;
  }
  return check;
}

IndexCheck CheckTimeIndex(int64_t base_offset, absl::string_view bytes,
                          const LogLayout& log) {
  IndexCheck check;
  segment::TimeIndex::Decoded decoded =
      segment::TimeIndex::Decode(base_offset, bytes, log.next_offset);
  if (!decoded.problem.empty()) check.problems.push_back(decoded.problem);
  for (const segment::TimeIndexEntry& entry : decoded.index.entries()) {
    // The last batch starting at or before the entry's offset.
    auto it = std::upper_bound(
        log.boundaries.begin(), log.boundaries.end(), entry.offset,
        [](int64_t offset, const std::pair<uint64_t, int64_t>& boundary) {
          return offset < boundary.second;
        });
    if (it == log.boundaries.begin()) continue;
    const int64_t max_before = log.running_max_timestamp[static_cast<size_t>(
        it - log.boundaries.begin() - 1)];
    if (entry.timestamp >= max_before) continue;
    check.problems.push_back(absl::StrFormat(
        "entry (timestamp %d, offset %d) is below the largest batch "
        "maxTimestamp up to that offset (%d): lookups by time would skip "
        "batches",
        entry.timestamp, entry.offset, max_before));
    break;
  }
  return check;
}

}  // namespace kaas::tools
