// Partition::DescribeUnopened: a partition's size and offsets from its
// directory listing and metadata files, without opening it.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition.h"
#include "storage/segment/segment_name.h"

namespace kaas::partition {

absl::StatusOr<ReplicaDescription> Partition::DescribeUnopened(
    fs::FileSystem& fs, const std::string& dir) {
  ReplicaDescription out;
  KAAS_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries,
                        fs.ListDirEntries(dir));
  for (const fs::DirEntry& entry : entries) {
    std::optional<segment::ParsedSegmentFile> parsed =
        segment::ParseSegmentFileName(entry.name);
    if (!parsed.has_value() || parsed->kind != segment::SegmentFileKind::kLog ||
        entry.type != fs::FileType::kRegular) {
      continue;
    }
    absl::StatusOr<fs::FileInfo> info = fs.Stat(fs::JoinPath(dir, entry.name));
    if (info.ok()) out.size_bytes += info->size;
  }
  // The manifest's log end is the durable end when it was written; a later
  // recovery checkpoint may prove more durable.
  absl::StatusOr<metadata::PartitionManifest> manifest =
      metadata::ReadManifest(fs, dir);
  if (manifest.ok()) {
    out.log_start_offset = manifest->log_start_offset();
    out.log_end_offset = manifest->log_end_offset();
  }
  absl::StatusOr<metadata::RecoveryCheckpoint> checkpoint =
      metadata::ReadCheckpoint(fs, dir);
  if (checkpoint.ok()) {
    out.log_end_offset =
        std::max(out.log_end_offset, checkpoint->next_offset());
  }
  out.log_start_offset = std::min(out.log_start_offset, out.log_end_offset);
  return out;
}

}  // namespace kaas::partition
