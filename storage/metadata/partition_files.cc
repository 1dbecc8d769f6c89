#include "storage/metadata/partition_files.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "storage/metadata/metadata_file.h"

namespace kaas::metadata {
namespace {

std::string PathOf(const std::string& dir, absl::string_view name) {
  return fs::JoinPath(dir, name);
}

}  // namespace

absl::StatusOr<PartitionManifest> ReadManifest(fs::FileSystem& fs,
                                               const std::string& dir) {
  PartitionManifest manifest;
  KAAS_RETURN_IF_ERROR(ReadMetadataFile(fs, PathOf(dir, kManifestFileName),
                                        MetadataKind::kManifest,
                                        kManifestVersion, &manifest));
  return manifest;
}

absl::StatusOr<ManifestWrite> WriteManifestUnlessSuperseded(
    fs::FileSystem& fs, const std::string& dir,
    const PartitionManifest& manifest) {
  absl::StatusOr<PartitionManifest> current = ReadManifest(fs, dir);
  if (current.ok()) {
    if (current->leader_epoch() > manifest.leader_epoch()) {
      return ManifestWrite{true, *std::move(current)};
    }
    if (google::protobuf::util::MessageDifferencer::Equals(*current,
                                                           manifest)) {
      return ManifestWrite{false, manifest};
    }
  } else if (!absl::IsNotFound(current.status()) &&
             !absl::IsDataLoss(current.status())) {
    // A newer build wrote it, or it could not be read (EIO, EMFILE,
    // EACCES...): it may hold a higher epoch, so never overwrite what we
    // cannot read.
    return current.status();
  }
  // Absent or corrupt (recovery set a corrupt one aside): write ours.
  KAAS_RETURN_IF_ERROR(WriteMetadataFile(fs, PathOf(dir, kManifestFileName),
                                         MetadataKind::kManifest,
                                         kManifestVersion, manifest));
  return ManifestWrite{false, manifest};
}

absl::StatusOr<RecoveryCheckpoint> ReadCheckpoint(fs::FileSystem& fs,
                                                  const std::string& dir) {
  RecoveryCheckpoint checkpoint;
  KAAS_RETURN_IF_ERROR(ReadMetadataFile(fs, PathOf(dir, kCheckpointFileName),
                                        MetadataKind::kRecoveryCheckpoint,
                                        kCheckpointVersion, &checkpoint));
  return checkpoint;
}

absl::Status WriteCheckpoint(fs::FileSystem& fs, const std::string& dir,
                             const RecoveryCheckpoint& checkpoint) {
  return WriteMetadataFile(fs, PathOf(dir, kCheckpointFileName),
                           MetadataKind::kRecoveryCheckpoint,
                           kCheckpointVersion, checkpoint);
}

std::string SnapshotFileName(int64_t offset) {
  return absl::StrFormat("%020d%s", offset, kSnapshotSuffix);
}

std::optional<int64_t> ParseSnapshotFileName(absl::string_view name) {
  if (!absl::ConsumeSuffix(&name, kSnapshotSuffix) || name.size() != 20) {
    return std::nullopt;
  }
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  int64_t offset = 0;
  if (!absl::SimpleAtoi(name, &offset) || offset < 0) return std::nullopt;
  return offset;
}

absl::StatusOr<PartitionStateSnapshot> ReadStateSnapshot(fs::FileSystem& fs,
                                                         const std::string& dir,
                                                         int64_t offset) {
  PartitionStateSnapshot snapshot;
  KAAS_RETURN_IF_ERROR(ReadMetadataFile(
      fs, PathOf(dir, SnapshotFileName(offset)), MetadataKind::kStateSnapshot,
      kStateSnapshotVersion, &snapshot));
  if (snapshot.offset() != offset) {
    return absl::DataLossError(absl::StrFormat(
        "%s: the snapshot says it covers offset %d, its name says %d",
        PathOf(dir, SnapshotFileName(offset)), snapshot.offset(), offset));
  }
  return snapshot;
}

absl::Status WriteStateSnapshot(fs::FileSystem& fs, const std::string& dir,
                                const PartitionStateSnapshot& snapshot) {
  return WriteMetadataFile(fs, PathOf(dir, SnapshotFileName(snapshot.offset())),
                           MetadataKind::kStateSnapshot, kStateSnapshotVersion,
                           snapshot);
}

absl::Status QuarantineMetadataFile(fs::FileSystem& fs, const std::string& dir,
                                    absl::string_view name) {
  std::string from = PathOf(dir, name);
  return fs.Rename(from, absl::StrCat(from, ".corrupt"));
}

}  // namespace kaas::metadata
