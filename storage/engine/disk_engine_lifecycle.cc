// DiskEngine: leadership (take-over, relinquish, abandon, drain), partition
// creation and deletion, and moves between log dirs.
//
// A move is crash-safe by construction. Steps, with what a crash after each
// leaves in use:
//   1. relinquish (the source is complete and quiescent)    -> the source
//   2. carry the topic's config and identity files into
//      "<target>/<topic>/" (CarryTopicFiles), then write
//      "<source>/.moving-to" naming the target dir           -> the source
//   3. copy into "<target>/<topic>/.<p>.moving", fsynced     -> the source
//   4. rename the copy to "<target>/<topic>/<p>", dir fsync  -> the target
//      once that fsync succeeded: a source whose .moving-to names a dir that
//      now has the partition (with a manifest) is no longer data
//      (HasPartitionData), and the next lifecycle call finishes step 5
//      (CompleteInterruptedMove, which repeats the fsync first)
//   5. rename the source aside to "<root>/<topic>/.<p>.moved", dir fsync,
//      then delete it                                        -> the target
// The partition stays fenced (kMigrating) until step 5 is done. The move
// holds the partition's lifecycle lock from step 1 until it leads the
// partition again, so no other lifecycle call of the partition runs in
// between; those that would wait for it (take-over, creation, deletion,
// another move) fail fast with kMigrating instead.

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/request_validation.h"
#include "storage/engine/small_files/small_files.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/partition_files.h"

namespace kaas {

using ::kaas::partition::OpenReport;
using ::kaas::partition::Partition;
using ::kaas::partition::PartitionAccess;
namespace {

std::string HiddenSibling(const std::string& partition_dir,
                          absl::string_view suffix) {
  return fs::JoinPath(fs::Dirname(partition_dir),
                      absl::StrCat(".", fs::Basename(partition_dir), suffix));
}

// Renames `dir` aside to its hidden sibling ".<name><suffix>" (replacing a
// leftover of an earlier attempt), makes the rename durable, then deletes
// it. Renamed first so that the path is gone at once: a late writer (a sync
// cycle of an abandoned partition) creates nothing in the tree being
// removed, and a crash midway leaves a hidden leftover, never a partial
// partition under its real name. `lock`, the partition's lock if the caller
// holds it, is released once the path is gone and before the files are
// removed (an unlinked file held open would leave an NFS ".nfs" file behind).
absl::Status RemoveAside(fs::FileSystem& fs, const std::string& dir,
                         absl::string_view suffix,
                         std::unique_ptr<fs::FileLock> lock = nullptr) {
  std::string trash = HiddenSibling(dir, suffix);
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(fs, trash));
  KAAS_RETURN_IF_ERROR(fs.Rename(dir, trash));
  KAAS_RETURN_IF_ERROR(fs.SyncDir(fs::Dirname(dir)));
  lock.reset();
  return fs::RemoveTree(fs, trash);
}

// The lock of the partition dir `dir`, if it exists (nullptr if it does
// not): kNotLeader while another engine leads the partition.
absl::StatusOr<std::unique_ptr<fs::FileLock>> LockIfPresent(
    fs::FileSystem& fs, const std::string& dir) {
  KAAS_ASSIGN_OR_RETURN(bool exists, fs.Exists(dir));
  if (!exists) return nullptr;
  return metadata::LockPartitionDir(fs, dir);
}

// Whether the topic file `name` of two topic dirs says the same, compared as
// parsed (the operator may have written them with other whitespace or hex
// case). Errors: the file's own (kInvalidConfig naming it).
absl::StatusOr<bool> TopicFilesAgree(fs::FileSystem& fs, absl::string_view name,
                                     const std::string& topic_dir,
                                     const std::string& other_topic_dir) {
  if (name == kTopicConfigFileName) {
    KAAS_ASSIGN_OR_RETURN(std::optional<TopicConfigOverrides> config,
                          ReadTopicConfig(fs, topic_dir));
    KAAS_ASSIGN_OR_RETURN(std::optional<TopicConfigOverrides> other,
                          ReadTopicConfig(fs, other_topic_dir));
    return config == other;
  }
  KAAS_ASSIGN_OR_RETURN(std::optional<std::string> id,
                        ReadTopicIdStamp(fs, topic_dir));
  KAAS_ASSIGN_OR_RETURN(std::optional<std::string> other,
                        ReadTopicIdStamp(fs, other_topic_dir));
  if (!id.has_value() || !other.has_value()) return id == other;
  return absl::EqualsIgnoreCase(*id, *other);
}

// The topic's config and identity are read from the topic dir of the log
// dir holding the partition, so a partition moving to another log dir takes
// them along: without them it would fall back to the engine defaults (a
// keep-forever topic to the default retention, whose cleaner then deletes
// its old segments) and escape the identity gate. Each file is written
// durably (small_files::WriteSmallFile) where the target lacks it; one the
// target already has must agree, otherwise the move fails (kInvalidConfig)
// rather than silently pick one. REQUIRES: `to_topic_dir` exists.
absl::Status CarryTopicFiles(fs::FileSystem& fs, const TopicPartition& tp,
                             const std::string& from_topic_dir,
                             const std::string& to_topic_dir) {
  for (absl::string_view name : {kTopicConfigFileName, kTopicIdFileName}) {
    const std::string from = fs::JoinPath(from_topic_dir, name);
    const std::string to = fs::JoinPath(to_topic_dir, name);
    KAAS_ASSIGN_OR_RETURN(std::optional<std::string> content,
                          small_files::ReadSmallFile(fs, from));
    if (!content.has_value()) continue;
    KAAS_ASSIGN_OR_RETURN(bool present, fs.Exists(to));
    if (!present) {
      KAAS_RETURN_IF_ERROR(small_files::WriteSmallFile(fs, to, *content));
      continue;
    }
    KAAS_ASSIGN_OR_RETURN(
        bool agree, TopicFilesAgree(fs, name, from_topic_dir, to_topic_dir));
    if (!agree) {
      return StorageError(
          StorageErrorCode::kInvalidConfig,
          absl::StrCat("cannot move ", tp.ToString(), ": ", to,
                       " differs from ", from,
                       " (a topic's files must agree in every log dir; "
                       "reconcile them, then move again)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Partition>> DiskEngine::OpenPartition(
    const TopicPartition& tp, const Resolved& where) {
  KAAS_ASSIGN_OR_RETURN(PartitionConfig config, ConfigAt(where));
  // An operator reclaiming a dead incarnation renames the topic dir aside
  // and recreates it; an open racing that gap sees ENOENT. Retry briefly.
  absl::Duration backoff = absl::Milliseconds(50);
  for (int attempt = 1;; ++attempt) {
    OpenReport report;
    absl::StatusOr<std::shared_ptr<Partition>> partition = Partition::Open(
        runtime(), where.dir, config, fences_->Snapshot(), &report);
    if (partition.ok()) {
      if (!report.problems.empty() || report.truncated_bytes > 0) {
        LOG(WARNING) << tp.ToString() << " recovered in "
                     << absl::FormatDuration(report.duration) << " with "
                     << report.problems.size() << " finding(s), "
                     << report.truncated_bytes << " bytes truncated";
      }
      return partition;
    }
    if (!absl::IsNotFound(partition.status()) || attempt >= 5) {
      return partition.status();
    }
    absl::SleepFor(backoff);
    backoff *= 2;
  }
}

absl::StatusOr<int64_t> DiskEngine::TakeOver(const TopicPartition& tp,
                                             int64_t leader_epoch) {
  return TakeRole(tp, leader_epoch, Role::kLeader);
}

absl::StatusOr<int64_t> DiskEngine::BecomeFollower(const TopicPartition& tp,
                                                   int64_t leader_epoch) {
  return TakeRole(tp, leader_epoch, Role::kFollower);
}

absl::StatusOr<int64_t> DiskEngine::TakeRole(const TopicPartition& tp,
                                             int64_t leader_epoch, Role role) {
  // Before anything is looked up or created: an invalid epoch must leave no
  // directory behind, and the map of lifecycle locks holds valid names only.
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(ValidateLeaderEpoch(leader_epoch));
  KAAS_RETURN_IF_ERROR(CheckWritable("TakeOver"));
  const uint64_t abandons = AbandonsOf(tp.topic);
  // Before the lifecycle lock, which a move holds for its whole copy.
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  return EnsureStorageError(TakeOverLocked(tp, leader_epoch, abandons, role));
}

absl::StatusOr<int64_t> DiskEngine::TruncateTo(const TopicPartition& tp,
                                               int64_t offset) {
  return Truncate(tp, offset, /*full=*/false);
}

absl::Status DiskEngine::TruncateFullyAndStartAt(const TopicPartition& tp,
                                                 int64_t offset) {
  return Truncate(tp, offset, /*full=*/true).status();
}

absl::StatusOr<int64_t> DiskEngine::Truncate(const TopicPartition& tp,
                                             int64_t offset, bool full) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(
      CheckWritable(full ? "TruncateFullyAndStartAt" : "TruncateTo"));
  const uint64_t abandons = AbandonsOf(tp.topic);
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  const int64_t epoch = partition->LeaderEpoch();
  const int64_t high_watermark = partition->HighWatermark();
  absl::StatusOr<int64_t> end = partition->PrepareTruncation(offset, full);
  // Refused, or nothing to cut: the partition is as it was.
  if (!partition->is_closed()) return EnsureStorageError(end);
  {
    absl::MutexLock lock(&map_mu_);
    auto it = led_.find(tp);
    if (it != led_.end() && it->second == partition) led_.erase(it);
  }
  // The reopen's recovery carries the truncation out (or, if its intent did
  // not reach the disk, finds the log as it was).
  KAAS_ASSIGN_OR_RETURN(
      int64_t log_end,
      EnsureStorageError(TakeOverLocked(tp, epoch, abandons, Role::kFollower)));
  // Kafka's truncateTo keeps the high watermark where it was unless it now
  // lies past the log end.
  CarryBrokerHighWatermark(tp, high_watermark);
  if (!end.ok()) return EnsureStorageError(end.status());
  return log_end;
}

void DiskEngine::CarryBrokerHighWatermark(const TopicPartition& tp,
                                          int64_t before) {
  absl::StatusOr<std::shared_ptr<Partition>> partition = Led(tp);
  if (!partition.ok() ||
      !(*partition)->config().broker_managed_high_watermark) {
    return;
  }
  absl::Status carried = (*partition)->SetHighWatermark(before);
  LOG_IF(WARNING, !carried.ok())
      << tp.ToString() << ": high watermark not carried over: " << carried;
}

absl::StatusOr<int64_t> DiskEngine::TakeOverLocked(const TopicPartition& tp,
                                                   int64_t leader_epoch,
                                                   uint64_t abandons,
                                                   Role role) {
  std::shared_ptr<Partition> partition;
  {
    absl::StatusOr<std::shared_ptr<Partition>> led = Led(tp);
    if (led.ok()) {
      partition = *std::move(led);
    } else if (!HasStorageErrorCode(led.status(),
                                    StorageErrorCode::kNotLeader)) {
      return led.status();
    }
  }
  if (partition != nullptr) return partition->TakeOver(leader_epoch, role);

  KAAS_ASSIGN_OR_RETURN(Resolved where, ResolveForLifecycle(tp));
  // The identity gate runs before anything is created: opening creates the
  // directory, which must not re-materialise a dir being reclaimed.
  KAAS_RETURN_IF_ERROR(CheckIdentity(tp, where));
  KAAS_ASSIGN_OR_RETURN(partition, OpenPartition(tp, where));
  absl::StatusOr<int64_t> log_end = partition->TakeOver(leader_epoch, role);
  if (!log_end.ok()) {
    // Opened for nothing: close without persisting (recovery already made
    // the directory consistent; a re-drive recovers again, cheaply).
    partition->Abandon();
    return log_end.status();
  }
  // Another engine sharing the data dir may have fenced producers since
  // this one loaded the record: re-read it, so this partition refuses them.
  if (absl::Status refreshed = fences_->Refresh(); !refreshed.ok()) {
    partition->Abandon();
    return EnsureStorageError(refreshed);
  }
  bool abandoned = false;
  {
    absl::ReaderMutexLock fences_lock(&fences_mu_);
    // Recovery applied the fences recorded when it began; a fence recorded
    // since found no led partition to fence. Apply the record again while
    // no fence can be recorded (see fences_mu_). Fencing keeps the highest
    // epoch, so applying a fence twice changes nothing.
    const metadata::ProducerFences fences = fences_->Snapshot();
    for (const metadata::ProducerFences::Fence& fence : fences.fences()) {
      absl::Status fenced = partition->FenceProducer(
          fence.producer_id(), static_cast<int16_t>(fence.epoch()));
      LOG_IF(WARNING, !fenced.ok())
          << tp.ToString() << ": ignoring invalid producer fence "
          << fence.producer_id() << "@" << fence.epoch() << ": " << fenced;
    }
    absl::MutexLock lock(&map_mu_);
    auto it = abandons_.find(tp.topic);
    abandoned = (it == abandons_.end() ? 0 : it->second) != abandons;
    if (!abandoned) led_[tp] = partition;
  }
  if (abandoned) {
    partition->Abandon();
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrCat(tp.ToString(), ": topic ", tp.topic,
                     " was abandoned while this take-over was opening it"));
  }
  return log_end;
}

absl::Status DiskEngine::Relinquish(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  // Not failed fast while the partition moves: the move leads it again at
  // its end, so this waits for the move and relinquishes what it leads.
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  std::shared_ptr<Partition> partition;
  {
    absl::MutexLock lock(&map_mu_);
    auto it = led_.find(tp);
    if (it == led_.end()) return absl::OkStatus();
    partition = std::move(it->second);
    led_.erase(it);
  }
  return EnsureStorageError(partition->Relinquish());
}

int DiskEngine::AbandonTopic(absl::string_view topic) {
  // Nothing of an invalid name is ever led (and it must not become a key).
  if (!ValidateTopicName(topic).ok()) return 0;
  std::vector<TopicPartition> doomed;
  {
    absl::MutexLock lock(&map_mu_);
    // Counted first: a take-over of the topic still opening (so not in led_
    // yet) sees the count change and does not lead.
    ++abandons_[std::string(topic)];
    for (const auto& [tp, partition] : led_) {
      if (tp.topic == topic) doomed.push_back(tp);
    }
  }
  int abandoned = 0;
  for (const TopicPartition& tp : doomed) {
    std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
    absl::MutexLock lifecycle_lock(lifecycle.get());
    std::shared_ptr<Partition> partition;
    {
      absl::MutexLock lock(&map_mu_);
      auto it = led_.find(tp);
      if (it == led_.end()) continue;
      partition = std::move(it->second);
      led_.erase(it);
    }
    partition->Abandon();
    ++abandoned;
  }
  return abandoned;
}

absl::Status DiskEngine::Drain() {
  absl::Status first_error;
  for (const TopicPartition& tp : LedPartitions()) {
    absl::Status status = Relinquish(tp);
    if (!status.ok()) {
      LOG(ERROR) << "relinquishing " << tp.ToString() << ": " << status;
      if (first_error.ok()) first_error = status;
    }
  }
  return first_error;
}

absl::Status DiskEngine::CreatePartition(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(CheckWritable("CreatePartition"));
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  if (Led(tp).ok()) return absl::OkStatus();
  KAAS_ASSIGN_OR_RETURN(Resolved where, ResolveForLifecycle(tp));
  KAAS_RETURN_IF_ERROR(CheckIdentity(tp, where));
  // A broken topic config is reported to whoever creates the partition, not
  // left for the first take-over (often on another broker, much later).
  KAAS_RETURN_IF_ERROR(ConfigAt(where).status());
  return EnsureStorageError(fs::CreateDirsDurably(*fs_, where.dir));
}

absl::Status DiskEngine::DeletePartition(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(CheckWritable("DeletePartition"));
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  std::shared_ptr<Partition> partition;
  {
    absl::MutexLock lock(&map_mu_);
    auto it = led_.find(tp);
    if (it != led_.end()) {
      partition = std::move(it->second);
      led_.erase(it);
    }
  }
  if (partition != nullptr) partition->Abandon();
  KAAS_ASSIGN_OR_RETURN(Resolved where,
                        EnsureStorageError(ResolveForLifecycle(tp)));
  // Never from under another engine that leads it: its lock first.
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileLock> lock,
                        EnsureStorageError(LockIfPresent(*fs_, where.dir)));
  if (lock == nullptr) return absl::OkStatus();
  return EnsureStorageError(
      RemoveAside(*fs_, where.dir, ".deleted", std::move(lock)));
}

absl::StatusOr<OpenReport> DiskEngine::RecoverPartition(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(CheckWritable("RecoverPartition"));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  if (Led(tp).ok()) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat(tp.ToString(), " is led: relinquish it before a repair"));
  }
  KAAS_ASSIGN_OR_RETURN(Resolved where, ResolveForLifecycle(tp));
  KAAS_ASSIGN_OR_RETURN(PartitionConfig config, ConfigAt(where));
  OpenReport report;
  KAAS_ASSIGN_OR_RETURN(
      std::shared_ptr<Partition> partition,
      EnsureStorageError(Partition::Open(runtime(), where.dir, config,
                                         fences_->Snapshot(), &report)));
  partition->Abandon();
  return report;
}

absl::StatusOr<std::shared_ptr<Partition>> DiskEngine::OpenReadOnly(
    const TopicPartition& tp, OpenReport* report,
    const PartitionConfig* config) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_ASSIGN_OR_RETURN(Resolved where, EnsureStorageError(Resolve(tp)));
  PartitionConfig effective;
  if (config != nullptr) {
    effective = *config;
  } else {
    KAAS_ASSIGN_OR_RETURN(effective, ConfigAt(where));
  }
  return EnsureStorageError(Partition::Open(runtime(), where.dir, effective,
                                            fences_->Snapshot(), report,
                                            PartitionAccess::kReadOnly));
}

absl::Status DiskEngine::CompleteInterruptedMove(
    const TopicPartition& tp, const std::string& source_dir,
    const std::string& copy_dir, std::unique_ptr<fs::FileLock> source_lock) {
  // The switch (step 4) is durable only once the copy's directory entry is:
  // until then a crash can undo the rename, and the source is the only copy
  // that survives it. A failing disk stops here, keeping the source.
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(fs::Dirname(copy_dir)));
  KAAS_ASSIGN_OR_RETURN(
      bool complete,
      fs_->Exists(fs::JoinPath(copy_dir, metadata::kManifestFileName)));
  if (!complete) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot finish moving ", tp.ToString(), ": the copy ",
                     copy_dir, " has no manifest; keeping the source ",
                     source_dir));
  }
  return RemoveAside(*fs_, source_dir, ".moved", std::move(source_lock));
}

absl::StatusOr<std::string> DiskEngine::MovePartitionToLogDir(
    const TopicPartition& tp, absl::string_view log_dir) {
  KAAS_RETURN_IF_ERROR(CheckWritable("MovePartitionToLogDir"));
  KAAS_ASSIGN_OR_RETURN(const placement::LogDirInfo* target,
                        log_dirs_->ResolveMoveTarget(log_dir));
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  const uint64_t abandons = AbandonsOf(tp.topic);
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  KAAS_ASSIGN_OR_RETURN(Resolved source, ResolveForLifecycle(tp));
  const std::string source_name = source.log_dir->name;
  if (source.log_dir == target) return source_name;
  std::shared_ptr<Partition> partition;
  {
    absl::MutexLock lock(&map_mu_);
    migrating_.insert(tp);
    auto it = led_.find(tp);
    if (it != led_.end()) {
      partition = std::move(it->second);
      led_.erase(it);
    }
  }
  std::optional<int64_t> epoch;
  Role role = Role::kLeader;
  int64_t high_watermark = 0;
  absl::Status status;
  if (partition != nullptr) {
    epoch = partition->LeaderEpoch();
    role = partition->role();
    high_watermark = partition->HighWatermark();
    status = partition->Relinquish();
    partition.reset();
  }
  // The source stays locked from here until it is reclaimed: another engine
  // taking it over meanwhile would write what the copy misses.
  std::unique_ptr<fs::FileLock> source_lock;
  if (status.ok()) {
    absl::StatusOr<std::unique_ptr<fs::FileLock>> locked =
        LockIfPresent(*fs_, source.dir);
    status = locked.status();
    if (locked.ok()) source_lock = *std::move(locked);
  }
  if (status.ok()) {
    status =
        MoveQuiescedPartition(tp, source.dir, *target, std::move(source_lock));
  }
  {
    absl::MutexLock lock(&map_mu_);
    migrating_.erase(tp);
  }
  if (!status.ok()) {
    LOG(ERROR) << "moving " << tp.ToString() << " to log dir " << target->name
               << " failed: " << status;
  }
  if (epoch.has_value()) {
    // Serve it again, from wherever its data now is, at the same epoch, and
    // still under the lifecycle lock: a Relinquish or DeletePartition
    // waiting for the move runs after this, never in between (where this
    // would undo it). A failure here is the broker's to re-drive (TakeOver
    // is idempotent).
    absl::StatusOr<int64_t> led_again =
        TakeOverLocked(tp, *epoch, abandons, role);
    LOG_IF(ERROR, !led_again.ok())
        << tp.ToString()
        << ": taking it over again after the move: " << led_again.status();
    if (led_again.ok()) CarryBrokerHighWatermark(tp, high_watermark);
  }
  if (!status.ok()) return EnsureStorageError(status);
  return source_name;
}

absl::Status DiskEngine::MoveQuiescedPartition(
    const TopicPartition& tp, const std::string& source_dir,
    const placement::LogDirInfo& target,
    std::unique_ptr<fs::FileLock> source_lock) {
  const std::string destination =
      fs::JoinPath(target.path, tp.topic, absl::StrCat(tp.partition));
  const std::string staging = HiddenSibling(destination, ".moving");
  KAAS_RETURN_IF_ERROR(fs::CreateDirsDurably(*fs_, fs::Dirname(destination)));
  KAAS_RETURN_IF_ERROR(CarryTopicFiles(*fs_, tp, fs::Dirname(source_dir),
                                       fs::Dirname(destination)));
  KAAS_ASSIGN_OR_RETURN(
      bool source_has_data,
      fs_->Exists(fs::JoinPath(source_dir, metadata::kManifestFileName)));
  if (!source_has_data) {
    // Nothing was ever written: the partition simply starts there. (A
    // directory without a manifest is no partition's data; it may be
    // another engine's creation in flight, so it is left alone.)
    return fs::CreateDirsDurably(*fs_, destination);
  }
  // A previous attempt may have left a copy behind: it is stale (the source
  // stayed the partition's data).
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, staging));
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, destination));
  KAAS_RETURN_IF_ERROR(small_files::WriteSmallFile(
      *fs_, fs::JoinPath(source_dir, kMovingToFileName), target.name));
  KAAS_RETURN_IF_ERROR(
      small_files::CopyPartitionDir(*fs_, source_dir, staging));
  // The copy carries the marker; at the target it would mean nothing.
  KAAS_RETURN_IF_ERROR(fs_->Unlink(fs::JoinPath(staging, kMovingToFileName)));
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(staging));
  // The switch: once CompleteInterruptedMove has made it durable, the target
  // is the partition's data.
  KAAS_RETURN_IF_ERROR(fs_->Rename(staging, destination));
  return CompleteInterruptedMove(tp, source_dir, destination,
                                 std::move(source_lock));
}

}  // namespace kaas
