// File: tools/partition_check.h
//
// The read-only consistency check of one partition directory behind
// `kaaslog verify`: everything recovery (storage/partition/partition_open.cc)
// would check or change there, found without changing anything, plus the
// consistency of what recovery trusts without checking (index files of closed
// segments, the recovery checkpoint, metadata files).
//
// Per partition directory:
//   * naming: segment files named {epoch:08x}-{base:020d}.{log,index,
//     timeindex}; other files are reported (misnamed segment files are
//     problems: the engine ignores them);
//   * epochs: a segment whose epoch is below an earlier segment's or below
//     what the manifest's epoch history says for its base offset, or that
//     duplicates a base offset, was written by a deposed leader (recovery
//     quarantines it);
//   * every batch: framing, magic, CRC32C, field values (RecordBatchView::
//     Parse), offsets contiguous and increasing within and across segments,
//     no batch past the next segment's base offset. A batch failing its CRC
//     or field checks is reported and the walk goes on (framing intact);
//     lost framing or an offset mismatch ends it. Each finding says what
//     recovery does about it: truncate there, or nothing at all when the
//     damage lies below the recovery checkpoint, whose bytes recovery
//     trusts without verifying (PartitionCheck::damage_below_checkpoint);
//   * indexes: present and consistent with the log
//     (tools/segment_index_check.h);
//   * metadata: manifest, recovery checkpoint (it must name a batch boundary
//     of the log holding its next offset), state snapshots readable; the log
//     start offset within the log.
// (tools/data_dir_check.h runs it on every partition of a data dir.)
//
// Findings are "problems" (damage; verify exits 1) or "notes" (benign
// leftovers the engine cleans up, e.g. a temp file of an interrupted atomic
// write).
//
// Everything goes through the given FileSystem; callers pass a
// ReadOnlyFileSystem (tools/read_only_file_system.h) so that nothing can be
// changed.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_TOOLS_PARTITION_CHECK_H_
#define KAAS_TOOLS_PARTITION_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fs/file_system.h"
#include "storage/common/api_types.h"
#include "storage/segment/segment_name.h"

namespace kaas::tools {

struct Finding {
  bool problem = true;  // false: a note
  std::string path;     // the file or directory concerned
  std::string message;  // what is wrong, where (positions, offsets), and
                        // what recovery does about it
};

// What the check learned about one segment that recovery keeps.
struct SegmentCheck {
  segment::SegmentId id;
  uint64_t size = 0;    // of the .log file
  bool closed = false;  // not the last segment
  // The .index or .timeindex file is missing, undecodable or inconsistent
  // with the log.
  bool index_damaged = false;
  // The offset of the first .index entry that points at the wrong place
  // (reads from there detect it and rebuild the index).
  std::optional<int64_t> misplaced_index_offset;
};

struct PartitionCheck {
  TopicPartition tp;
  std::string dir;
  std::vector<Finding> findings;
  std::vector<SegmentCheck> segments;
  int64_t batches = 0;
  uint64_t log_bytes = 0;
  int64_t first_offset = -1;  // base offset of the first segment
  int64_t next_offset = -1;   // one past the last valid batch
  int64_t leader_epoch = -1;  // from the manifest, -1 if unreadable
  // Damage lies in bytes the recovery checkpoint vouches for: recovery
  // trusts them without verifying, so it would not repair it.
  bool damage_below_checkpoint = false;

  int problems() const;
  int notes() const;
};

// How many of `findings` are problems (`problems`) or notes (!`problems`).
int CountFindings(const std::vector<Finding>& findings, bool problems);

// Checks the partition directory `dir` of `tp`.
PartitionCheck CheckPartition(fs::FileSystem& fs, const TopicPartition& tp,
                              const std::string& dir);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_PARTITION_CHECK_H_
