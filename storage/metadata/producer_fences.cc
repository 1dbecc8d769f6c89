#include "storage/metadata/producer_fences.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"

namespace kaas::metadata {

absl::StatusOr<std::unique_ptr<ProducerFenceStore>> ProducerFenceStore::Load(
    fs::FileSystem* fs, std::string dir) {
  std::unique_ptr<ProducerFenceStore> store(
      new ProducerFenceStore(fs, std::move(dir)));
  ProducerFences fences;
  absl::Status status = ReadMetadataFile(
      *fs, fs::JoinPath(store->dir_, kProducerFencesFileName),
      MetadataKind::kProducerFences, kProducerFencesVersion, &fences);
  if (absl::IsNotFound(status)) return store;
  if (absl::IsFailedPrecondition(status)) return status;  // newer format
  if (!status.ok()) {
    LOG(ERROR) << "producer fences unreadable, set aside: " << status;
    KAAS_RETURN_IF_ERROR(
        QuarantineMetadataFile(*fs, store->dir_, kProducerFencesFileName));
    return store;
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
