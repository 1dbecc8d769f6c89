#include "storage/metadata/partition_files.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "storage/common/api_types.h"
#include "storage/metadata/metadata_file.h"

namespace kaas::metadata {
namespace {

std::string PathOf(const std::string& dir, absl::string_view name) {
  return fs::JoinPath(dir, name);
}

bool IsLeaderEpoch(int64_t epoch) {
  return epoch >= 0 && epoch <= kMaxLeaderEpoch;
}

// `status` (kDataLoss) with the file's path in front.
absl::Status InvalidContent(const std::string& path,
                            const absl::Status& status) {
  return absl::DataLossError(
      absl::StrCat(path, ": ", status.message(),
                   " (checksums match, but no engine writes this)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<fs::FileLock>> LockPartitionDir(
    fs::FileSystem& fs, const std::string& dir) {
  const std::string path = PathOf(dir, kLockFileName);
  absl::StatusOr<std::unique_ptr<fs::FileLock>> lock =
      fs::FileOpener::LockFile(fs, path);
  if (absl::IsUnavailable(lock.status())) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrCat(dir,
                     " is led by another engine (its lock file is held: "
                     "another process, or another engine of this one, owns "
                     "the partition until it relinquishes it or exits)"));
  }
  if (!lock.ok()) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot lock ", dir, ": ", lock.status().message()));
  }
  return lock;
}

absl::Status ValidateManifest(const PartitionManifest& manifest) {
  if (!IsLeaderEpoch(manifest.leader_epoch())) {
    return absl::DataLossError(
        absl::StrFormat("leader epoch %d is not a Kafka leader epoch",
                        manifest.leader_epoch()));
  }
  if (manifest.log_start_offset() < 0 || manifest.log_end_offset() < 0) {
    return absl::DataLossError(absl::StrFormat(
        "negative offsets (log start %d, log end %d)",
        manifest.log_start_offset(), manifest.log_end_offset()));
  }
  // The engine never writes a log start past the log end it records (see
  // Partition::ManifestLocked): one that is would make recovery delete every
  // segment below it, intact or not.
  if (manifest.log_start_offset() > manifest.log_end_offset()) {
    return absl::DataLossError(absl::StrFormat(
        "log start %d is past the log end %d", manifest.log_start_offset(),
        manifest.log_end_offset()));
  }
  if (manifest.has_truncate_to() &&
      (manifest.truncate_to() < manifest.log_start_offset() ||
       manifest.truncate_to() > manifest.log_end_offset())) {
    return absl::DataLossError(absl::StrFormat(
        "a truncation to %d outside the log [%d, %d]", manifest.truncate_to(),
        manifest.log_start_offset(), manifest.log_end_offset()));
  }
  if (manifest.truncate_fully() &&
      (manifest.has_truncate_to() ||
       manifest.log_start_offset() != manifest.log_end_offset())) {
    return absl::DataLossError(absl::StrFormat(
        "a full truncation whose log start %d is not its log end %d",
        manifest.log_start_offset(), manifest.log_end_offset()));
  }
  if (manifest.cleaner_offset() < 0) {
    return absl::DataLossError(absl::StrFormat("negative cleaner offset %d",
                                               manifest.cleaner_offset()));
  }
  if (manifest.has_compaction_swap()) {
    const auto& replaced = manifest.compaction_swap().replaced();
    if (replaced.empty()) {
      return absl::DataLossError("a compaction swap that replaces nothing");
    }
    for (int i = 0; i < replaced.size(); ++i) {
      if (replaced[i].base_offset() < 0 ||
          !IsLeaderEpoch(static_cast<int64_t>(replaced[i].epoch())) ||
          (i > 0 &&
           replaced[i].base_offset() <= replaced[i - 1].base_offset())) {
        return absl::DataLossError(absl::StrFormat(
            "compaction swap: replaced segment %d (base %d, epoch %d) is out "
            "of range or out of order",
            i, replaced[i].base_offset(), replaced[i].epoch()));
      }
    }
  }
  const auto& epochs = manifest.epochs();
  for (int i = 0; i < epochs.size(); ++i) {
    const EpochStart& entry = epochs[i];
    if (!IsLeaderEpoch(entry.epoch()) || entry.start_offset() < 0) {
      return absl::DataLossError(absl::StrFormat(
          "epoch history entry %d (epoch %d from offset %d) is out of range", i,
          entry.epoch(), entry.start_offset()));
    }
    if (entry.epoch() > manifest.leader_epoch()) {
      return absl::DataLossError(absl::StrFormat(
          "epoch history names epoch %d, above the leader epoch %d",
          entry.epoch(), manifest.leader_epoch()));
    }
    if (i > 0 && (entry.epoch() <= epochs[i - 1].epoch() ||
                  entry.start_offset() < epochs[i - 1].start_offset())) {
      return absl::DataLossError(absl::StrFormat(
          "epoch history is not ascending: epoch %d from offset %d follows "
          "epoch %d from offset %d",
          entry.epoch(), entry.start_offset(), epochs[i - 1].epoch(),
          epochs[i - 1].start_offset()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateCheckpoint(const RecoveryCheckpoint& checkpoint) {
  if (checkpoint.segment_base_offset() < 0 ||
      checkpoint.next_offset() < checkpoint.segment_base_offset() ||
      checkpoint.position() > static_cast<uint64_t>(INT64_MAX)) {
    return absl::DataLossError(absl::StrFormat(
        "segment %d, position %d, next offset %d are not a place in a log",
        checkpoint.segment_base_offset(), checkpoint.position(),
        checkpoint.next_offset()));
  }
  if (!IsLeaderEpoch(checkpoint.segment_epoch())) {
    return absl::DataLossError(
        absl::StrFormat("segment epoch %d is not a Kafka leader epoch",
                        checkpoint.segment_epoch()));
  }
  if (checkpoint.max_timestamp() < -1 ||
      checkpoint.offset_of_max_timestamp() < -1) {
    return absl::DataLossError("timestamps below -1");
  }
  return absl::OkStatus();
}

absl::StatusOr<PartitionManifest> ReadManifest(fs::FileSystem& fs,
                                               const std::string& dir) {
  PartitionManifest manifest;
  const std::string path = PathOf(dir, kManifestFileName);
  KAAS_RETURN_IF_ERROR(ReadMetadataFile(fs, path, MetadataKind::kManifest,
                                        kManifestVersion, &manifest));
  if (absl::Status valid = ValidateManifest(manifest); !valid.ok()) {
    return InvalidContent(path, valid);
  }
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
  const std::string path = PathOf(dir, kCheckpointFileName);
  KAAS_RETURN_IF_ERROR(ReadMetadataFile(fs, path,
                                        MetadataKind::kRecoveryCheckpoint,
                                        kCheckpointVersion, &checkpoint));
  if (absl::Status valid = ValidateCheckpoint(checkpoint); !valid.ok()) {
    return InvalidContent(path, valid);
  }
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
  if (!IsLeaderEpoch(snapshot.leader_epoch())) {
    return InvalidContent(PathOf(dir, SnapshotFileName(offset)),
                          absl::DataLossError(absl::StrFormat(
                              "writer's leader epoch %d is not a Kafka epoch",
                              snapshot.leader_epoch())));
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
