// DiskEngine: leadership (take-over, relinquish, abandon, drain), partition
// creation and deletion, and moves between log dirs.
//
// A move is crash-safe by construction. Steps, with what a crash after each
// leaves in use:
//   1. relinquish (the source is complete and quiescent)    -> the source
//   2. write "<source>/.moving-to" naming the target dir     -> the source
//   3. copy into "<target>/<topic>/.<p>.moving", fsynced     -> the source
//   4. rename the copy to "<target>/<topic>/<p>", dir fsync  -> the target:
//      a source whose .moving-to names a dir that now has the partition is
//      no longer data (HasPartitionData), and the next resolution finishes
//      step 5
//   5. rename the source aside to "<root>/<topic>/.<p>.moved", dir fsync,
//      then delete it                                        -> the target
// The partition stays fenced (kMigrating) until step 5 is done.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/common/storage_error.h"
#include "storage/common/topic_name.h"
#include "storage/engine/disk_engine.h"
#include "storage/metadata/partition_files.h"

namespace kaas {
namespace {

std::string HiddenSibling(const std::string& partition_dir,
                          absl::string_view suffix) {
  return fs::JoinPath(fs::Dirname(partition_dir),
                      absl::StrCat(".", fs::Basename(partition_dir), suffix));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Partition>> DiskEngine::OpenPartition(
    const TopicPartition& tp, const Resolved& where) {
  KAAS_ASSIGN_OR_RETURN(PartitionConfig config, EffectiveConfig(tp));
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
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
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
  if (partition != nullptr) return partition->TakeOver(leader_epoch);

  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  // The identity gate runs before anything is created: opening creates the
  // directory, which must not re-materialise a dir being reclaimed.
  KAAS_RETURN_IF_ERROR(CheckIdentity(tp, where));
  KAAS_ASSIGN_OR_RETURN(partition, OpenPartition(tp, where));
  absl::StatusOr<int64_t> log_end = partition->TakeOver(leader_epoch);
  if (!log_end.ok()) {
    // Opened for nothing: close without persisting (recovery already made
    // the directory consistent; a re-drive recovers again, cheaply).
    partition->Abandon();
    return log_end.status();
  }
  absl::MutexLock lock(&map_mu_);
  led_[tp] = std::move(partition);
  return log_end;
}

absl::Status DiskEngine::Relinquish(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicName(tp.topic));
  KAAS_RETURN_IF_ERROR(ValidatePartition(tp.partition));
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
  return partition->Relinquish();
}

int DiskEngine::AbandonTopic(absl::string_view topic) {
  std::vector<TopicPartition> doomed;
  {
    absl::ReaderMutexLock lock(&map_mu_);
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
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  {
    absl::StatusOr<std::shared_ptr<Partition>> led = Led(tp);
    if (led.ok()) return absl::OkStatus();
    if (HasStorageErrorCode(led.status(), StorageErrorCode::kMigrating)) {
      return led.status();
    }
  }
  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  KAAS_RETURN_IF_ERROR(CheckIdentity(tp, where));
  return fs::CreateDirsDurably(*fs_, where.dir);
}

absl::Status DiskEngine::DeletePartition(const TopicPartition& tp) {
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  std::shared_ptr<Partition> partition;
  {
    absl::MutexLock lock(&map_mu_);
    if (migrating_.contains(tp)) {
      return StorageError(
          StorageErrorCode::kMigrating,
          absl::StrCat(tp.ToString(), " is moving to another log dir"));
    }
    auto it = led_.find(tp);
    if (it != led_.end()) {
      partition = std::move(it->second);
      led_.erase(it);
    }
  }
  if (partition != nullptr) partition->Abandon();
  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  KAAS_ASSIGN_OR_RETURN(bool exists, fs_->Exists(where.dir));
  if (!exists) return absl::OkStatus();
  // Renamed aside first: a sync cycle of the abandoned partition finishing
  // late writes nothing into the directory being removed (its path is gone).
  std::string trash = HiddenSibling(where.dir, ".deleted");
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, trash));
  KAAS_RETURN_IF_ERROR(fs_->Rename(where.dir, trash));
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(fs::Dirname(where.dir)));
  return fs::RemoveTree(*fs_, trash);
}

absl::StatusOr<OpenReport> DiskEngine::RecoverPartition(
    const TopicPartition& tp) {
  std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
  absl::MutexLock lifecycle_lock(lifecycle.get());
  if (Led(tp).ok()) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat(tp.ToString(), " is led: relinquish it before a repair"));
  }
  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  KAAS_ASSIGN_OR_RETURN(PartitionConfig config, EffectiveConfig(tp));
  OpenReport report;
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition,
                        Partition::Open(runtime(), where.dir, config,
                                        fences_->Snapshot(), &report));
  partition->Abandon();
  return report;
}

absl::Status DiskEngine::CompleteInterruptedMove(
    const TopicPartition& tp, const std::string& source_dir) {
  LOG(WARNING) << tp.ToString() << ": finishing an interrupted move, "
               << "reclaiming the source " << source_dir;
  std::string trash = HiddenSibling(source_dir, ".moved");
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, trash));
  KAAS_RETURN_IF_ERROR(fs_->Rename(source_dir, trash));
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(fs::Dirname(source_dir)));
  return fs::RemoveTree(*fs_, trash);
}

absl::StatusOr<std::string> DiskEngine::MovePartitionToLogDir(
    const TopicPartition& tp, absl::string_view log_dir) {
  KAAS_ASSIGN_OR_RETURN(const placement::LogDirInfo* target,
                        log_dirs_->ResolveMoveTarget(log_dir));
  std::optional<int64_t> epoch;
  std::string source_name;
  absl::Status status;
  {
    std::shared_ptr<absl::Mutex> lifecycle = LifecycleLock(tp);
    absl::MutexLock lifecycle_lock(lifecycle.get());
    KAAS_ASSIGN_OR_RETURN(Resolved source, Resolve(tp));
    source_name = source.log_dir->name;
    if (source.log_dir == target) return source_name;
    std::shared_ptr<Partition> partition;
    {
      absl::MutexLock lock(&map_mu_);
      if (migrating_.contains(tp)) {
        return StorageError(StorageErrorCode::kMigrating,
                            absl::StrCat(tp.ToString(), " is already moving"));
      }
      migrating_.insert(tp);
      auto it = led_.find(tp);
      if (it != led_.end()) {
        partition = std::move(it->second);
        led_.erase(it);
      }
    }
    if (partition != nullptr) {
      epoch = partition->LeaderEpoch();
      status = partition->Relinquish();
      partition.reset();
    }
    if (status.ok()) status = MoveQuiescedPartition(tp, source.dir, *target);
    absl::MutexLock lock(&map_mu_);
    migrating_.erase(tp);
  }
  if (!status.ok()) {
    LOG(ERROR) << "moving " << tp.ToString() << " to log dir " << target->name
               << " failed: " << status;
  }
  if (epoch.has_value()) {
    // Serve it again, from wherever its data now is, at the same epoch. A
    // failure here is the broker's to re-drive (TakeOver is idempotent).
    absl::StatusOr<int64_t> led_again = TakeOver(tp, *epoch);
    LOG_IF(ERROR, !led_again.ok())
        << tp.ToString()
        << ": taking it over again after the move: " << led_again.status();
  }
  if (!status.ok()) return status;
  return source_name;
}

absl::Status DiskEngine::MoveQuiescedPartition(
    const TopicPartition& tp, const std::string& source_dir,
    const placement::LogDirInfo& target) {
  const std::string destination =
      fs::JoinPath(target.path, tp.topic, absl::StrCat(tp.partition));
  const std::string staging = HiddenSibling(destination, ".moving");
  KAAS_ASSIGN_OR_RETURN(bool source_exists, fs_->Exists(source_dir));
  if (!source_exists) {
    // Nothing was ever written: the partition simply starts there.
    return fs::CreateDirsDurably(*fs_, destination);
  }
  // A previous attempt may have left a copy behind: it is stale (the source
  // stayed the partition's data).
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, staging));
  KAAS_RETURN_IF_ERROR(fs::RemoveTree(*fs_, destination));
  KAAS_RETURN_IF_ERROR(fs::AtomicReplaceFile(
      *fs_, fs::JoinPath(source_dir, kMovingToFileName), target.name));
  KAAS_RETURN_IF_ERROR(fs::CreateDirsDurably(*fs_, fs::Dirname(staging)));
  KAAS_RETURN_IF_ERROR(fs::CopyTree(*fs_, source_dir, staging));
  // The copy carries the marker; at the target it would mean nothing.
  KAAS_RETURN_IF_ERROR(fs_->Unlink(fs::JoinPath(staging, kMovingToFileName)));
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(staging));
  // The switch: from here on the target is the partition's data.
  KAAS_RETURN_IF_ERROR(fs_->Rename(staging, destination));
  KAAS_RETURN_IF_ERROR(fs_->SyncDir(fs::Dirname(destination)));
  return CompleteInterruptedMove(tp, source_dir);
}

}  // namespace kaas
