#include "storage/metadata/producer_fences.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/common/storage_error.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"

namespace kaas::metadata {
namespace {

// Reads the fences file `<dir>/<name>` into `fences`. Returns false when
// there is none, true when `fences` holds its content (empty if it was
// corrupt and `set_aside_if_corrupt`: then it was renamed aside).
absl::StatusOr<bool> ReadFences(fs::FileSystem& fs, const std::string& dir,
                                absl::string_view name,
                                bool set_aside_if_corrupt,
                                ProducerFences* fences) {
  const std::string path = fs::JoinPath(dir, name);
  absl::StatusOr<std::string> bytes =
      ReadMetadataBytes(fs, path, MetadataKind::kProducerFences);
  if (absl::IsNotFound(bytes.status())) return false;
  if (!bytes.ok()) {
    // Unreadable is not corrupt: setting it aside would drop every fence
    // because of, say, EIO or EACCES.
    return StorageError(StorageErrorCode::kStorageError,
                        absl::StrCat("cannot read the producer fences ", path,
                                     ": ", bytes.status().message()));
  }
  absl::Status decoded = DecodeMetadataFile(
      *bytes, MetadataKind::kProducerFences, kProducerFencesVersion, fences);
  if (absl::IsDataLoss(decoded)) {
    LOG(ERROR) << path << ": producer fences corrupt, ignored: " << decoded;
    fences->Clear();
    if (set_aside_if_corrupt) {
      KAAS_RETURN_IF_ERROR(QuarantineMetadataFile(fs, dir, name));
    }
    return true;
  }
  if (!decoded.ok()) {  // a newer format: never misread, never overwritten
    return absl::Status(decoded.code(),
                        absl::StrCat(path, ": ", decoded.message()));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProducerFenceStore>> ProducerFenceStore::Load(
    fs::FileSystem* fs, std::string dir) {
  std::unique_ptr<ProducerFenceStore> store(
      new ProducerFenceStore(fs, std::move(dir)));
  ProducerFences fences;
  KAAS_ASSIGN_OR_RETURN(bool found,
                        ReadFences(*fs, store->dir_, kProducerFencesFileName,
                                   /*set_aside_if_corrupt=*/true, &fences));
  if (!found) {
    absl::StatusOr<fs::FileInfo> legacy =
        fs->Stat(fs::JoinPath(store->dir_, kLegacyProducerFencesFileName));
    if (legacy.ok() && !legacy->is_directory) {
      // Its ".corrupt" name would be a legal topic name: never set aside.
      KAAS_RETURN_IF_ERROR(ReadFences(*fs, store->dir_,
                                      kLegacyProducerFencesFileName,
                                      /*set_aside_if_corrupt=*/false, &fences)
                               .status());
    }
  }
  absl::MutexLock lock(&store->mu_);
  for (const ProducerFences::Fence& fence : fences.fences()) {
    auto& entry = store->fences_[fence.producer_id()];
    if (fence.epoch() >= entry.first) {
      entry = {fence.epoch(), fence.fenced_at_ms()};
    }
  }
  return store;
}

absl::Status ProducerFenceStore::Fence(int64_t producer_id, int16_t epoch,
                                       int64_t now_ms, int64_t expiration_ms) {
  absl::MutexLock lock(&mu_);
  auto& entry = fences_[producer_id];
  entry = {std::max<int32_t>(entry.first, epoch), now_ms};
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (now_ms - it->second.second > expiration_ms) {
      fences_.erase(it++);
    } else {
      ++it;
    }
  }
  ProducerFences file;
  std::vector<std::pair<int64_t, std::pair<int32_t, int64_t>>> sorted(
      fences_.begin(), fences_.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [id, value] : sorted) {
    ProducerFences::Fence* fence = file.add_fences();
    fence->set_producer_id(id);
    fence->set_epoch(value.first);
    fence->set_fenced_at_ms(value.second);
  }
  return WriteMetadataFile(*fs_, fs::JoinPath(dir_, kProducerFencesFileName),
                           MetadataKind::kProducerFences,
                           kProducerFencesVersion, file);
}

ProducerFences ProducerFenceStore::Snapshot() const {
  absl::MutexLock lock(&mu_);
  ProducerFences out;
  for (const auto& [id, value] : fences_) {
    ProducerFences::Fence* fence = out.add_fences();
    fence->set_producer_id(id);
    fence->set_epoch(value.first);
    fence->set_fenced_at_ms(value.second);
  }
  return out;
}

}  // namespace kaas::metadata
