// File: tools/make_metadata.cc
//
// Test helper for the end-to-end tests of `kaaslog`: rewrites a metadata
// file with the values a test wants, checksums and all, so a test can hand
// the engine metadata that is well-formed but says something false (a
// checksum-valid lie is what recovery must not trust), or record a producer
// fence the way FenceProducerEpoch does. One action per run:
//   make_metadata --checkpoint=PATH --next_offset=N
//   make_metadata --manifest=PATH [--epochs=E@START,...] [--log_start=N]
//   make_metadata --fences_dir=DIR --fence=PRODUCER:EPOCH
// Exit status: 0 done, 1 failure (printed).

#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"
#include "storage/metadata/producer_fences.h"

ABSL_FLAG(std::string, checkpoint, "", "A recovery-checkpoint to rewrite.");
ABSL_FLAG(int64_t, next_offset, -1, "The checkpoint's new next offset.");
ABSL_FLAG(std::string, manifest, "", "A manifest to rewrite.");
ABSL_FLAG(std::string, epochs, "",
          "The manifest's new epoch history: EPOCH@START,... (in this order, "
          "ascending or not).");
ABSL_FLAG(int64_t, log_start, 0, "The manifest's new log start offset.");
ABSL_FLAG(std::string, fences_dir, "", "A data dir to record a fence in.");
ABSL_FLAG(std::string, fence, "", "PRODUCER_ID:EPOCH to fence.");

namespace {

namespace metadata = kaas::metadata;

// Reads `path` as `kind`, whatever its content says (no validation).
template <typename Message>
bool ReadRaw(const std::string& path, metadata::MetadataKind kind,
             uint16_t version, Message* message) {
  absl::StatusOr<std::string> bytes =
      kaas::fs::ReadFileToString(*kaas::fs::PosixFileSystem::Default(), path);
  if (!bytes.ok()) {
    std::cerr << bytes.status() << "\n";
    return false;
  }
  absl::Status status =
      metadata::DecodeMetadataFile(*bytes, kind, version, message);
  if (!status.ok()) std::cerr << status << "\n";
  return status.ok();
}

int Run() {
  kaas::fs::FileSystem& fs = *kaas::fs::PosixFileSystem::Default();
  if (const std::string path = absl::GetFlag(FLAGS_checkpoint); !path.empty()) {
    metadata::RecoveryCheckpoint checkpoint;
    if (!ReadRaw(path, metadata::MetadataKind::kRecoveryCheckpoint,
                 metadata::kCheckpointVersion, &checkpoint)) {
      return 1;
    }
    checkpoint.set_next_offset(absl::GetFlag(FLAGS_next_offset));
    absl::Status status = metadata::WriteMetadataFile(
        fs, path, metadata::MetadataKind::kRecoveryCheckpoint,
        metadata::kCheckpointVersion, checkpoint);
    if (!status.ok()) std::cerr << status << "\n";
    return status.ok() ? 0 : 1;
  }
  if (const std::string path = absl::GetFlag(FLAGS_manifest); !path.empty()) {
    metadata::PartitionManifest manifest;
    if (!ReadRaw(path, metadata::MetadataKind::kManifest,
                 metadata::kManifestVersion, &manifest)) {
      return 1;
    }
    if (const std::string epochs = absl::GetFlag(FLAGS_epochs);
        !epochs.empty()) {
      manifest.clear_epochs();
      for (absl::string_view entry : absl::StrSplit(epochs, ',')) {
        std::pair<std::string, std::string> parts = absl::StrSplit(entry, '@');
        int64_t epoch = 0, start = 0;
        if (!absl::SimpleAtoi(parts.first, &epoch) ||
            !absl::SimpleAtoi(parts.second, &start)) {
          std::cerr << "bad --epochs entry " << entry << "\n";
          return 1;
        }
        metadata::EpochStart* added = manifest.add_epochs();
        added->set_epoch(epoch);
        added->set_start_offset(start);
        manifest.set_leader_epoch(std::max(manifest.leader_epoch(), epoch));
      }
    }
    manifest.set_log_start_offset(absl::GetFlag(FLAGS_log_start));
    absl::Status status =
        metadata::WriteMetadataFile(fs, path, metadata::MetadataKind::kManifest,
                                    metadata::kManifestVersion, manifest);
    if (!status.ok()) std::cerr << status << "\n";
    return status.ok() ? 0 : 1;
  }
  if (const std::string dir = absl::GetFlag(FLAGS_fences_dir); !dir.empty()) {
    std::pair<std::string, std::string> parts =
        absl::StrSplit(absl::GetFlag(FLAGS_fence), ':');
    int64_t producer = 0;
    int32_t epoch = 0;
    if (!absl::SimpleAtoi(parts.first, &producer) ||
        !absl::SimpleAtoi(parts.second, &epoch)) {
      std::cerr << "bad --fence\n";
      return 1;
    }
    absl::StatusOr<std::unique_ptr<metadata::ProducerFenceStore>> store =
        metadata::ProducerFenceStore::Load(&fs, dir);
    absl::Status status = store.status();
    if (status.ok()) {
      status = (*store)->Fence(producer, static_cast<int16_t>(epoch),
                               /*now_ms=*/0, /*expiration_ms=*/INT64_MAX);
    }
    if (!status.ok()) std::cerr << status << "\n";
    return status.ok() ? 0 : 1;
  }
  std::cerr << "nothing to do\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return Run();
}
