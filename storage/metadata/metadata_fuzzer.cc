// libFuzzer target: every metadata file format, read the way the engine
// reads it from a partition directory. The first input byte picks the file
// (manifest, recovery checkpoint, state snapshot, producer fences), the
// rest is its content; when bit 2 of that byte is set, the header's length
// and both checksums are recomputed first, so that mutations reach the
// payload's parsing and validation instead of stopping at a checksum.
// Beyond "no crash", it checks:
//   * what is accepted re-encodes to an equal message (decode(encode(m))
//     == m), so nothing is half understood;
//   * a state snapshot that is accepted rebuilds producer and transaction
//     state whose own snapshots are stable (FromProto(ToProto(x)) == x),
//     or is refused with a data-loss error;
//   * a manifest or checkpoint that is accepted passes the validation a
//     reader applies (ValidateManifest / ValidateCheckpoint).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "glog/logging.h"
#include "google/protobuf/message_lite.h"
#include "idempotence/producer_state_map.h"
#include "storage/batch/crc32c.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"
#include "storage/metadata/producer_fences.h"
#include "txn/txn_index.h"

namespace kaas::metadata {
namespace {

void Must(const absl::Status& status) { CHECK(status.ok()) << status; }

fs::FileSystem& Fs() { return *fs::PosixFileSystem::Default(); }

const std::string& Dir() {
  static fs::ScopedTempDir* dir = new fs::ScopedTempDir();
  return dir->path();
}

void Put(absl::string_view name, absl::string_view bytes) {
  Must(fs::WriteStringToFile(Fs(), fs::JoinPath(Dir(), name), bytes));
}

void Remove(absl::string_view name) {
  Fs().Unlink(fs::JoinPath(Dir(), name)).IgnoreError();
}

template <typename Message>
void CheckReencodes(const Message& message, MetadataKind kind,
                    uint16_t version) {
  Message again;
  Must(DecodeMetadataFile(EncodeMetadataFile(kind, version, message), kind,
                          version, &again));
  CHECK_EQ(again.SerializeAsString(), message.SerializeAsString());
}

// State rebuilt from its snapshot is refused as data loss, or snapshots to
// what rebuilds it again (FromProto(ToProto(x)) == x).
template <typename State, typename Snapshot>
void CheckRebuildsStably(const Snapshot& snapshot) {
  absl::StatusOr<State> state = State::FromProto(snapshot);
  if (!state.ok()) {
    CHECK(absl::IsDataLoss(state.status())) << state.status();
    return;
  }
  const std::string once = state->ToProto().SerializeAsString();
  absl::StatusOr<State> again = State::FromProto(state->ToProto());
  Must(again.status());
  CHECK_EQ(again->ToProto().SerializeAsString(), once);
}

void FuzzManifest(absl::string_view bytes) {
  Put(kManifestFileName, bytes);
  absl::StatusOr<PartitionManifest> manifest = ReadManifest(Fs(), Dir());
  if (!manifest.ok()) return;
  Must(ValidateManifest(*manifest));
  CheckReencodes(*manifest, MetadataKind::kManifest, kManifestVersion);
}

void FuzzCheckpoint(absl::string_view bytes) {
  Put(kCheckpointFileName, bytes);
  absl::StatusOr<RecoveryCheckpoint> checkpoint = ReadCheckpoint(Fs(), Dir());
  if (!checkpoint.ok()) return;
  Must(ValidateCheckpoint(*checkpoint));
  CheckReencodes(*checkpoint, MetadataKind::kRecoveryCheckpoint,
                 kCheckpointVersion);
}

void FuzzSnapshot(absl::string_view bytes) {
  PartitionStateSnapshot header;
  // The snapshot's name must match the offset it covers: read the offset
  // first (a file that does not decode is refused either way).
  int64_t offset = 0;
  if (DecodeMetadataFile(bytes, MetadataKind::kStateSnapshot,
                         kStateSnapshotVersion, &header)
          .ok() &&
      header.offset() >= 0) {
    offset = header.offset();
  }
  const std::string name = SnapshotFileName(offset);
  Put(name, bytes);
  absl::StatusOr<PartitionStateSnapshot> snapshot =
      ReadStateSnapshot(Fs(), Dir(), offset);
  Remove(name);
  if (!snapshot.ok()) return;
  CheckReencodes(*snapshot, MetadataKind::kStateSnapshot,
                 kStateSnapshotVersion);
  CheckRebuildsStably<idempotence::ProducerStateMap>(snapshot->producers());
  CheckRebuildsStably<txn::TxnIndex>(snapshot->transactions());
}

void FuzzFences(absl::string_view bytes) {
  Remove(kProducerFencesCopyFileName);
  Put(kProducerFencesFileName, bytes);
  absl::StatusOr<std::unique_ptr<ProducerFenceStore>> store =
      ProducerFenceStore::Load(&Fs(), Dir(), /*read_only=*/true);
  if (!store.ok()) return;
  CheckReencodes((*store)->Snapshot(), MetadataKind::kProducerFences,
                 kProducerFencesVersion);
}

}  // namespace
}  // namespace kaas::metadata

namespace {

void PutBigEndian32(char* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr size_t kHeader = kaas::metadata::kMetadataHeaderSize;
  if ((data[0] & 4) != 0 && bytes.size() >= kHeader) {
    PutBigEndian32(&bytes[8], static_cast<uint32_t>(bytes.size() - kHeader));
    PutBigEndian32(&bytes[12], kaas::crc32c::Value(bytes.data() + kHeader,
                                                   bytes.size() - kHeader));
    PutBigEndian32(&bytes[16], kaas::crc32c::Value(bytes.data(), 16));
  }
  switch (data[0] % 4) {
    case 0:
      kaas::metadata::FuzzManifest(bytes);
      break;
    case 1:
      kaas::metadata::FuzzCheckpoint(bytes);
      break;
    case 2:
      kaas::metadata::FuzzSnapshot(bytes);
      break;
    default:
      kaas::metadata::FuzzFences(bytes);
      break;
  }
  return 0;
}
