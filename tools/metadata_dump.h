// File: tools/metadata_dump.h
//
// Readable text of every file of a data dir that is not a segment log:
// metadata files (manifest, recovery checkpoint, state snapshots, producer
// fences; storage/metadata), the sparse indexes (.index, .timeindex;
// storage/segment) and the operator-written topic files (.config.json,
// .topic-id.json; storage/engine). Used by `kaaslog dump`.
//
// Each Dump* function prints what it decoded, or where and why the file is
// unreadable, and returns whether the file was valid. Nothing here fails on
// bad input.
//
// Thread-safety: thread-compatible (writes to the given stream).

#ifndef KAAS_TOOLS_METADATA_DUMP_H_
#define KAAS_TOOLS_METADATA_DUMP_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "storage/metadata/state_snapshot.pb.h"

namespace kaas::tools {

// The metadata kind a file name stands for ("manifest", "recovery-checkpoint",
// "<offset:020d>.snapshot", "~producer-fences"), ignoring a ".corrupt" suffix
// (files recovery set aside); nullopt for other names.
std::optional<metadata::MetadataKind> MetadataKindOfFileName(
    absl::string_view name);

// Decodes the metadata file at `path` as `kind` and prints it.
bool DumpMetadataFile(fs::FileSystem& fs, const std::string& path,
                      metadata::MetadataKind kind, std::ostream& out);

// Multi-line descriptions (each line indented by two spaces).
std::string DescribeManifest(const metadata::PartitionManifest& manifest);
std::string DescribeCheckpoint(const metadata::RecoveryCheckpoint& checkpoint);
std::string DescribeSnapshot(const metadata::PartitionStateSnapshot& snapshot);
std::string DescribeFences(const metadata::ProducerFences& fences);

// An .index file of the segment with `base_offset`, validated against a log
// of `log_size` bytes (OffsetIndex::Decode). Prints a summary line, and each
// entry when `entries`.
bool DumpOffsetIndexFile(fs::FileSystem& fs, const std::string& path,
                         int64_t base_offset, uint64_t log_size, bool entries,
                         std::ostream& out);

// A .timeindex file, validated against the segment's next offset (one past
// its last batch; TimeIndex::Decode).
bool DumpTimeIndexFile(fs::FileSystem& fs, const std::string& path,
                       int64_t base_offset, int64_t next_offset, bool entries,
                       std::ostream& out);

// `<topic_dir>/.config.json` and `<topic_dir>/.topic-id.json`.
bool DumpTopicConfigFile(fs::FileSystem& fs, const std::string& topic_dir,
                         std::ostream& out);
bool DumpTopicIdFile(fs::FileSystem& fs, const std::string& topic_dir,
                     std::ostream& out);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_METADATA_DUMP_H_
