// File: storage/metadata/partition_files.h
//
// Reading and writing the metadata files of a partition directory, each
// behind the checksummed envelope of metadata_file.h and replaced atomically:
//
//   manifest                  PartitionManifest (leader epoch, log start,
//                             epoch history)
//   recovery-checkpoint       RecoveryCheckpoint (bounds crash recovery)
//   <offset:020d>.snapshot    PartitionStateSnapshot (producer and
//                             transaction state at <offset>)
//
// The manifest is only ever written through WriteManifestUnlessSuperseded:
// no writer may lower the durable leader epoch, so a deposed leader that
// writes late never replays its state over its successor's.
//
// Thread-safety: stateless functions; callers serialise writers of the same
// directory (the partition does).

#ifndef KAAS_STORAGE_METADATA_PARTITION_FILES_H_
#define KAAS_STORAGE_METADATA_PARTITION_FILES_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "storage/metadata/state_snapshot.pb.h"

namespace kaas::metadata {

inline constexpr absl::string_view kManifestFileName = "manifest";
inline constexpr absl::string_view kCheckpointFileName = "recovery-checkpoint";
inline constexpr absl::string_view kSnapshotSuffix = ".snapshot";

// Format versions this build writes and the newest it reads.
inline constexpr uint16_t kManifestVersion = 1;
inline constexpr uint16_t kCheckpointVersion = 1;
inline constexpr uint16_t kStateSnapshotVersion = 1;

inline constexpr absl::string_view kLockFileName = "leader.lock";

// ---- the leader's lock ----------------------------------------------------

// Takes the exclusive lock of the partition directory `dir` (its
// "leader.lock" file, created if missing): whoever changes a partition's
// files holds it, so two engines, in one process or in two, on one machine
// or (on CephFS or NFSv4, where flock reaches every client) on several,
// never write one partition at once. Released when the returned object is
// destroyed (or the process dies). kNotLeader if another holder has it;
// kStorageError if it cannot be taken (it names the file).
absl::StatusOr<std::unique_ptr<fs::FileLock>> LockPartitionDir(
    fs::FileSystem& fs, const std::string& dir);

// ---- manifest -------------------------------------------------------------

// kNotFound when absent; kDataLoss when corrupt or when what it says is not
// a manifest this engine could have written (ValidateManifest);
// kFailedPrecondition when written by a newer format.
absl::StatusOr<PartitionManifest> ReadManifest(fs::FileSystem& fs,
                                               const std::string& dir);

// What a checksum cannot tell: the leader epoch and every epoch of the
// history in [0, 2^31), history epochs strictly ascending with start offsets
// non-decreasing and none above the leader epoch, offsets non-negative, the
// log start not past the log end, a cleaner offset >= 0, a compaction swap
// naming at least one segment, ascending by base offset, each with a valid
// base offset and epoch.
// kDataLoss naming the first rule broken.
absl::Status ValidateManifest(const PartitionManifest& manifest);

struct ManifestWrite {
  // True if the manifest on disk has a higher leader epoch: nothing was
  // written, and `on_disk` holds it.
  bool superseded = false;
  PartitionManifest on_disk;  // the manifest now on disk
};

// Re-reads the manifest; if its epoch is higher than `manifest`'s, writes
// nothing and reports `superseded`; if it is identical, writes nothing;
// otherwise replaces it atomically. A missing or corrupt (kDataLoss)
// manifest is replaced; one of a newer format, or one that cannot be read
// (an I/O or permission error), is never overwritten: its error is returned.
absl::StatusOr<ManifestWrite> WriteManifestUnlessSuperseded(
    fs::FileSystem& fs, const std::string& dir,
    const PartitionManifest& manifest);

// ---- recovery checkpoint --------------------------------------------------

// As ReadManifest; ValidateCheckpoint's rules make a checkpoint kDataLoss.
absl::StatusOr<RecoveryCheckpoint> ReadCheckpoint(fs::FileSystem& fs,
                                                  const std::string& dir);

// Offsets non-negative (next offset at or past the segment's base), the
// segment epoch in [0, 2^31), timestamps >= -1. Whether it agrees with the
// log is recovery's to check.
absl::Status ValidateCheckpoint(const RecoveryCheckpoint& checkpoint);
absl::Status WriteCheckpoint(fs::FileSystem& fs, const std::string& dir,
                             const RecoveryCheckpoint& checkpoint);

// ---- state snapshots ------------------------------------------------------

// "00000000000000000123.snapshot" for offset 123.
std::string SnapshotFileName(int64_t offset);
// The offset named by a snapshot file name, or nullopt.
std::optional<int64_t> ParseSnapshotFileName(absl::string_view name);

absl::StatusOr<PartitionStateSnapshot> ReadStateSnapshot(fs::FileSystem& fs,
                                                         const std::string& dir,
                                                         int64_t offset);
absl::Status WriteStateSnapshot(fs::FileSystem& fs, const std::string& dir,
                                const PartitionStateSnapshot& snapshot);

// Moves `name` aside as "<name>.corrupt" so it is reported once and never
// read again (a corrupt metadata file must not make the partition
// unopenable). Errors are returned; callers usually log them.
absl::Status QuarantineMetadataFile(fs::FileSystem& fs, const std::string& dir,
                                    absl::string_view name);

}  // namespace kaas::metadata

#endif  // KAAS_STORAGE_METADATA_PARTITION_FILES_H_
