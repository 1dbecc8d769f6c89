// File: tools/partition_check.h
//
// The read-only check of one partition directory behind `kaaslog verify`,
// in two parts:
//   * what opening the partition does: a read-only open through the engine
//     (DiskEngine::OpenReadOnly), which runs the very recovery a leader's
//     open runs (storage/partition/partition_recovery.h) and changes
//     nothing. Each of its findings is reported as it is ("recovery: ..."),
//     and an open that fails is reported with its error: the prediction is
//     what the engine does, by construction;
//   * what recovery trusts without checking: the CRC32C and field values of
//     every batch before where recovery starts verifying (the recovery
//     checkpoint), the .index and .timeindex of every segment against its
//     log, the state snapshots, and names the engine ignores.
// A finding of the second kind in bytes recovery verifies is left out (the
// first part already says what recovery does there).
//
// Findings are "problems" (damage; verify exits 1) or "notes" (benign
// leftovers the engine cleans up or ignores).
//
// Everything goes through the engine's filesystem, which callers make a
// ReadOnlyFileSystem (tools/read_only_file_system.h) over a read-only engine.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_TOOLS_PARTITION_CHECK_H_
#define KAAS_TOOLS_PARTITION_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "storage/common/api_types.h"
#include "storage/engine/disk_engine.h"
#include "storage/segment/segment_name.h"

namespace kaas::tools {

struct Finding {
  bool problem = true;  // false: a note
  std::string path;     // the file or directory concerned
  std::string message;  // what is wrong, where, and what the engine does
};

// What the check learned about one segment that recovery keeps.
struct SegmentCheck {
  segment::SegmentId id;
  uint64_t size = 0;    // of the .log file
  bool closed = false;  // not the last segment
  // The .index or .timeindex file is missing, undecodable or inconsistent
  // with the log.
  bool index_damaged = false;
};

struct PartitionCheck {
  TopicPartition tp;
  std::string dir;
  std::vector<Finding> findings;
  std::vector<SegmentCheck> segments;
  int64_t batches = 0;
  uint64_t log_bytes = 0;
  int64_t first_offset = -1;  // log start offset after recovery
  int64_t next_offset = -1;   // log end offset after recovery
  int64_t leader_epoch = -1;  // -1 if the partition does not open
  // What a leader's open does (the read-only open's report).
  partition::OpenReport recovery;
  bool opens = false;

  int problems() const;
  int notes() const;
};

// How many of `findings` are problems (`problems`) or notes (!`problems`).
int CountFindings(const std::vector<Finding>& findings, bool problems);

// Checks the partition dir `dir` of `tp` through `engine` (read-only).
PartitionCheck CheckPartition(DiskEngine& engine, const TopicPartition& tp,
                              const std::string& dir);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_PARTITION_CHECK_H_
