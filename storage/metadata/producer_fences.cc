#include "storage/metadata/producer_fences.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"

namespace kaas::metadata {
namespace {

// What one copy of the fences holds.
struct FenceCopy {
  enum class State { kMissing, kValid, kCorrupt } state = State::kMissing;
  ProducerFences fences;
  std::string problem;  // kCorrupt: why
};

absl::Status ValidateFences(const ProducerFences& fences) {
  for (const ProducerFences::Fence& fence : fences.fences()) {
    if (fence.producer_id() < 0 || fence.epoch() < 0 ||
        fence.epoch() > std::numeric_limits<int16_t>::max()) {
      return absl::DataLossError(
          absl::StrCat("fence of producer ", fence.producer_id(), " at epoch ",
                       fence.epoch(),
                       " is out of range (checksums match, but no engine "
                       "writes this)"));
    }
  }
  return absl::OkStatus();
}

// Reads the copy `<dir>/<name>`. Errors: an unreadable file (kStorageError:
// unreadable is not corrupt, and treating it so could drop every fence) and
// one of a newer format (kFailedPrecondition: never misread, never
// overwritten).
absl::StatusOr<FenceCopy> ReadCopy(fs::FileSystem& fs, const std::string& dir,
                                   absl::string_view name) {
  const std::string path = fs::JoinPath(dir, name);
  FenceCopy copy;
  absl::StatusOr<std::string> bytes =
      ReadMetadataBytes(fs, path, MetadataKind::kProducerFences);
  if (absl::IsNotFound(bytes.status())) return copy;
  absl::Status decoded = bytes.status();
  if (!decoded.ok() && !absl::IsDataLoss(decoded)) {
    return StorageError(StorageErrorCode::kStorageError,
                        absl::StrCat("cannot read the producer fences ", path,
                                     ": ", decoded.message()));
  }
  if (decoded.ok()) {
    decoded = DecodeMetadataFile(*bytes, MetadataKind::kProducerFences,
                                 kProducerFencesVersion, &copy.fences);
  }
  if (decoded.ok()) decoded = ValidateFences(copy.fences);
  if (decoded.ok()) {
    copy.state = FenceCopy::State::kValid;
    return copy;
  }
  if (!absl::IsDataLoss(decoded)) {
    return absl::Status(decoded.code(),
                        absl::StrCat(path, ": ", decoded.message()));
  }
  copy.state = FenceCopy::State::kCorrupt;
  copy.problem = absl::StrCat(path, ": ", decoded.message());
  copy.fences.Clear();
  return copy;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ProducerFenceStore>> ProducerFenceStore::Load(
    fs::FileSystem* fs, std::string dir, bool read_only,
    std::vector<std::string>* problems) {
  std::unique_ptr<ProducerFenceStore> store(
      new ProducerFenceStore(fs, std::move(dir), read_only));
  std::vector<std::string> ignored;
  if (problems == nullptr) problems = &ignored;
  const std::string& at = store->dir_;
  KAAS_ASSIGN_OR_RETURN(FenceCopy primary,
                        ReadCopy(*fs, at, kProducerFencesFileName));
  KAAS_ASSIGN_OR_RETURN(FenceCopy second,
                        ReadCopy(*fs, at, kProducerFencesCopyFileName));
  using State = FenceCopy::State;
  const bool primary_ok = primary.state == State::kValid;
  const bool second_ok = second.state == State::kValid;
  if (!primary_ok && !second_ok) {
    if (primary.state == State::kMissing && second.state == State::kMissing) {
      // Nothing fenced yet, or a data dir of a build that kept one file under
      // the old name: read it (never written, never set aside: its
      // ".corrupt" name would be a legal topic name).
      absl::StatusOr<fs::FileInfo> legacy =
          fs->Stat(fs::JoinPath(at, kLegacyProducerFencesFileName));
      if (legacy.ok() && legacy->is_regular) {
        KAAS_ASSIGN_OR_RETURN(FenceCopy old,
                              ReadCopy(*fs, at, kLegacyProducerFencesFileName));
        if (old.state == State::kCorrupt) {
          LOG(ERROR) << old.problem << ": legacy producer fences corrupt";
          problems->push_back(
              absl::StrCat(old.problem, ": legacy fences corrupt, ignored"));
        }
        store->Merge(old.fences);
      }
      return store;
    }
    // Every copy that exists is corrupt: starting would forget fences and let
    // a fenced producer epoch write again.
    absl::Status refused = StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat(
            "the producer fences are corrupt in every copy (",
            primary.state == State::kCorrupt ? primary.problem : "",
            primary.state == State::kCorrupt && second.state == State::kCorrupt
                ? "; "
                : "",
            second.state == State::kCorrupt ? second.problem : "",
            "): refusing to start, which would let fenced producers write "
            "again. Restore a copy, or remove both files (",
            at, "/", kProducerFencesFileName, ", ", at, "/",
            kProducerFencesCopyFileName,
            ") to start knowingly without fences"));
    if (!read_only) return refused;
    problems->push_back(std::string(refused.message()));
    return store;
  }
  store->Merge(primary.fences);
  store->Merge(second.fences);
  if (primary_ok && second_ok &&
      primary.fences.SerializeAsString() == second.fences.SerializeAsString()) {
    return store;
  }
  // One copy is damaged or missing (or a crash fell between the two writes):
  // both are rewritten from what survives, the damaged one set aside first.
  for (const FenceCopy* copy : {&primary, &second}) {
    if (copy->state != State::kCorrupt) continue;
    problems->push_back(absl::StrCat(
        copy->problem,
        ": set aside at start-up, and rewritten from the other copy"));
    if (read_only) continue;
    LOG(ERROR) << copy->problem << ": set aside, rewritten from the other copy";
    absl::string_view name = copy == &primary ? kProducerFencesFileName
                                              : kProducerFencesCopyFileName;
    KAAS_RETURN_IF_ERROR(QuarantineMetadataFile(*fs, at, name));
  }
  if (read_only) return store;
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileLock> file_lock,
                        store->LockFile());
  absl::MutexLock lock(&store->mu_);
  // Another engine may have fenced since the copies were read.
  KAAS_RETURN_IF_ERROR(store->RefreshLocked());
  KAAS_RETURN_IF_ERROR(store->WriteLocked());
  return store;
}

void ProducerFenceStore::Merge(const ProducerFences& fences) {
  absl::MutexLock lock(&mu_);
  MergeLocked(fences);
}

void ProducerFenceStore::MergeLocked(const ProducerFences& fences) {
  for (const ProducerFences::Fence& fence : fences.fences()) {
    auto [it, inserted] = fences_.try_emplace(
        fence.producer_id(), fence.epoch(), fence.fenced_at_ms());
    if (!inserted && fence.epoch() >= it->second.first) {
      it->second = {fence.epoch(),
                    std::max(it->second.second, fence.fenced_at_ms())};
    }
  }
}

absl::Status ProducerFenceStore::Fence(int64_t producer_id, int16_t epoch,
                                       int64_t now_ms, int64_t expiration_ms) {
  if (read_only_) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        "the producer fences were loaded read-only");
  }
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileLock> file_lock, LockFile());
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(RefreshLocked());
  auto& entry = fences_[producer_id];
  entry = {std::max<int32_t>(entry.first, epoch), now_ms};
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (now_ms - it->second.second > expiration_ms) {
      fences_.erase(it++);
    } else {
      ++it;
    }
  }
  return WriteLocked();
}

absl::Status ProducerFenceStore::WriteLocked() {
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
  // One copy after the other, each atomically: whatever damages one (a bad
  // sector, an operator) leaves the other, and a crash between the two
  // writes leaves one at least as new as every fence acknowledged before.
  for (absl::string_view name :
       {kProducerFencesFileName, kProducerFencesCopyFileName}) {
    KAAS_RETURN_IF_ERROR(WriteMetadataFile(*fs_, fs::JoinPath(dir_, name),
                                           MetadataKind::kProducerFences,
                                           kProducerFencesVersion, file));
  }
  return absl::OkStatus();
}

absl::Status ProducerFenceStore::Refresh() {
  absl::MutexLock lock(&mu_);
  return RefreshLocked();
}

absl::Status ProducerFenceStore::RefreshLocked() {
  for (absl::string_view name :
       {kProducerFencesFileName, kProducerFencesCopyFileName}) {
    KAAS_ASSIGN_OR_RETURN(FenceCopy copy, ReadCopy(*fs_, dir_, name));
    if (copy.state == FenceCopy::State::kValid) MergeLocked(copy.fences);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<fs::FileLock>> ProducerFenceStore::LockFile()
    const {
  const std::string path = fs::JoinPath(dir_, kProducerFencesLockFileName);
  // Another engine holds it for one read and two small durable writes
  // (milliseconds); a holder that keeps it for seconds is stuck.
  absl::Duration backoff = absl::Milliseconds(1);
  absl::Duration waited;
  for (;;) {
    absl::StatusOr<std::unique_ptr<fs::FileLock>> lock =
        fs::FileOpener::LockFile(*fs_, path);
    if (lock.ok()) return lock;
    if (!absl::IsUnavailable(lock.status()) || waited >= absl::Seconds(2)) {
      return StorageError(
          StorageErrorCode::kStorageError,
          absl::StrCat("cannot lock the producer fences (", path, "): ",
                       absl::IsUnavailable(lock.status())
                           ? "held by another engine for 2 s"
                           : lock.status().message()));
    }
    absl::SleepFor(backoff);
    waited += backoff;
    backoff = std::min(backoff * 2, absl::Milliseconds(50));
  }
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
