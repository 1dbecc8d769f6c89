// File: tools/segment_index_check.h
//
// Whether a segment's sparse index files agree with its log, for `kaaslog
// verify`: the files decode (OffsetIndex::Decode, TimeIndex::Decode: sizes,
// increasing entries, within the log), every .index entry sits at a batch
// boundary holding its offset (else reads start at the wrong place), and
// every .timeindex entry's timestamp is at least the largest batch
// maxTimestamp up to its offset (else lookups by time skip batches).
//
// Thread-safety: pure functions.

#ifndef KAAS_TOOLS_SEGMENT_INDEX_CHECK_H_
#define KAAS_TOOLS_SEGMENT_INDEX_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace kaas::tools {

// The batches of a segment's log, as a walk of its framing found them.
struct LogLayout {
  uint64_t valid_end = 0;   // just past the last framed batch
  int64_t next_offset = 0;  // one past the last framed batch
  // (position, base offset) of every batch, in log order.
  std::vector<std::pair<uint64_t, int64_t>> boundaries;
  // The largest batch maxTimestamp up to and including each batch.
  std::vector<int64_t> running_max_timestamp;
};

struct IndexCheck {
  std::vector<std::string> problems;  // empty: the file agrees with the log
};

// `bytes` is the content of the .index (.timeindex) file of the segment
// whose base offset is `base_offset` and whose log is `log`.
IndexCheck CheckOffsetIndex(int64_t base_offset, absl::string_view bytes,
                            const LogLayout& log);
IndexCheck CheckTimeIndex(int64_t base_offset, absl::string_view bytes,
                          const LogLayout& log);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_SEGMENT_INDEX_CHECK_H_
