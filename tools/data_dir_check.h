// File: tools/data_dir_check.h
//
// `kaaslog verify` of a whole data dir, read-only: the producer fences (as a
// read-only engine's start-up found them), each topic's .config.json and
// .topic-id.json (as the engine parses them), and every partition dir
// (tools/partition_check.h). Entries the engine does not own are notes.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_TOOLS_DATA_DIR_CHECK_H_
#define KAAS_TOOLS_DATA_DIR_CHECK_H_

#include <string>
#include <vector>

#include "storage/engine/disk_engine.h"
#include "tools/partition_check.h"

namespace kaas::tools {

struct DataDirCheck {
  std::vector<Finding> findings;  // of the data dir and the topic dirs
  std::vector<PartitionCheck> partitions;

  int problems() const;  // of the whole data dir
  int notes() const;
};

// Checks the data dir of `engine` (a read-only engine over a
// ReadOnlyFileSystem).
DataDirCheck CheckDataDir(DiskEngine& engine, const std::string& data_dir);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_DATA_DIR_CHECK_H_
