// Group commit: sync cycles on the I/O pool, the fsync watchdog, sticky
// stalls and their re-arm probe, recovery checkpoints and state snapshots.
//
// The invariant that makes acks=all honest is structural: a cycle samples
// (under the partition lock) the log end offset together with the segments
// and byte positions that hold it, syncs exactly those (without the lock),
// and then publishes exactly the sampled offset as durable. Nothing appended
// after the sample can be published by this cycle; it is picked up by the
// next one, which starts as soon as this one ends.

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/stopwatch.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition.h"

namespace kaas::partition {

struct Partition::SyncPlan {
  int64_t target_offset = 0;
  std::shared_ptr<segment::Segment> active;
  uint64_t active_position = 0;
  std::vector<PendingSeal> seals;
  bool sync_dir = false;
  bool checkpoint = false;
  metadata::RecoveryCheckpoint recovery_checkpoint;
  metadata::PartitionStateSnapshot snapshot;
};

void Partition::Complete(Completions& done) {
  for (Completion& completion : done) {
    completion.promise.Set(std::move(completion.status));
  }
  done.clear();
}

StatusFuture Partition::DurableFutureLocked(
    int64_t end_offset, std::optional<uint64_t>* lead_cycle) {
  if (durable_end_ >= end_offset) return StatusFuture::Ready(absl::OkStatus());
  if (state_ == State::kClosed) {
    return StatusFuture::Ready(
        StorageError(StorageErrorCode::kNotLeader,
                     absl::StrCat(dir_, ": leadership was given up")));
  }
  if (stalled_.load(std::memory_order_relaxed)) {
    return StatusFuture::Ready(stall_status_);
  }
  Waiter waiter{end_offset, StatusPromise()};
  StatusFuture future = waiter.promise.GetFuture();
  // Waiters stay sorted by end offset (a duplicate's waiter may be older).
  if (waiters_.empty() || waiters_.back().end_offset <= end_offset) {
    waiters_.push_back(std::move(waiter));
  } else {
    auto position = std::upper_bound(
        waiters_.begin(), waiters_.end(), end_offset,
        [](int64_t end, const Waiter& w) { return end < w.end_offset; });
    waiters_.insert(position, std::move(waiter));
  }
  if (lead_cycle != nullptr) {
    *lead_cycle = ClaimCycleLocked();
  } else {
    RequestSyncLocked();
  }
  return future;
}

StatusFuture Partition::WhenDurable(int64_t offset) {
  absl::MutexLock lock(&mu_);
  return DurableFutureLocked(std::min(offset, next_offset_));
}

void Partition::PublishDurableLocked(int64_t offset, Completions* done) {
  durable_end_ = std::max(durable_end_, offset);
  while (!waiters_.empty() && waiters_.front().end_offset <= durable_end_) {
    ack_latency_.Record(waiters_.front().since.Elapsed());
    done->push_back({std::move(waiters_.front().promise), absl::OkStatus()});
    waiters_.pop_front();
  }
  PublishOffsetsLocked();
}

void Partition::RequestSyncLocked() {
  std::optional<uint64_t> generation = ClaimCycleLocked();
  if (!generation.has_value()) return;
  std::weak_ptr<Partition> weak = weak_from_this();
  runtime_.io_pool->Schedule([weak, generation = *generation] {
    if (std::shared_ptr<Partition> self = weak.lock())
      self->RunSync(generation);
  });
}

std::optional<uint64_t> Partition::ClaimCycleLocked() {
  if (state_ == State::kClosed || stalled_.load(std::memory_order_relaxed)) {
    return std::nullopt;
  }
  if (sync_in_flight_) {
    sync_again_ = true;
    return std::nullopt;
  }
  sync_in_flight_ = true;
  sync_again_ = false;
  const uint64_t generation = ++sync_generation_;
  if (config_.fsync_max_latency > absl::ZeroDuration()) {
    // The check takes mu_, which TakeOver and Relinquish hold across an
    // fdatasync that may hang: on the timer thread it would hold up every
    // partition's deadlines and probes.
    std::weak_ptr<Partition> weak = weak_from_this();
    ThreadPool* pool = runtime_.io_pool;
    watchdog_ = runtime_.timers->ScheduleAfter(
        config_.fsync_max_latency, [weak, generation, pool] {
          pool->Schedule([weak, generation] {
            if (std::shared_ptr<Partition> self = weak.lock()) {
              self->CheckSyncDeadline(generation);
            }
          });
        });
  }
  return generation;
}

metadata::RecoveryCheckpoint Partition::CheckpointLocked() const {
  metadata::RecoveryCheckpoint checkpoint;
  checkpoint.set_segment_base_offset(active_->base_offset());
  checkpoint.set_segment_epoch(active_->epoch());
  checkpoint.set_position(active_->size());
  checkpoint.set_next_offset(next_offset_);
  absl::StatusOr<segment::SegmentTimeInfo> time = active_->GetTimeInfo();
  checkpoint.set_max_timestamp(time.ok() ? time->max_timestamp : -1);
  checkpoint.set_offset_of_max_timestamp(
      time.ok() ? time->offset_of_max_timestamp : -1);
  return checkpoint;
}

metadata::PartitionStateSnapshot Partition::StateSnapshotLocked() const {
  metadata::PartitionStateSnapshot snapshot;
  snapshot.set_offset(next_offset_);
  snapshot.set_leader_epoch(leader_epoch_);
  *snapshot.mutable_producers() = producers_.ToProto();
  absl::ReaderMutexLock txn_lock(&txn_mu_);
  *snapshot.mutable_transactions() = txns_.ToProto();
  return snapshot;
}

void Partition::RunSync(uint64_t generation, CycleThread thread) {
  SyncPlan plan;
  {
    absl::MutexLock lock(&mu_);
    // Linger (PartitionConfig::group_commit_linger_max): the producers the
    // last cycle acknowledged are appending again; wait for them, so that
    // one fdatasync carries everyone instead of every other one. (Not on a
    // caller's thread: a lone AppendAndWait caller has nobody to wait for.)
    if (thread == CycleThread::kIoPool && linger_waiters_ > 1 &&
        waiters_.size() < linger_waiters_ &&
        config_.group_commit_linger_max > absl::ZeroDuration()) {
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](Partition* self) {
                                 self->mu_.AssertHeld();
                                 return self->waiters_.size() >=
                                            self->linger_waiters_ ||
                                        self->state_ == State::kClosed;
                               },
                               this),
                           config_.group_commit_linger_max);
    }
    if (generation != sync_generation_ || state_ == State::kClosed ||
        stalled_.load()) {
      if (generation == sync_generation_) sync_in_flight_ = false;
      return;
    }
    plan.target_offset = next_offset_;
    plan.active = active_;
    plan.active_position = active_->size();
    plan.seals = pending_seals_;
    plan.sync_dir = dir_sync_needed_;
    dir_sync_needed_ = false;
    plan.checkpoint = checkpoint_after_roll_ ||
                      plan.active_position - last_checkpoint_position_ >=
                          config_.checkpoint_interval_bytes;
    if (plan.checkpoint) {
      plan.recovery_checkpoint = CheckpointLocked();
      plan.snapshot = StateSnapshotLocked();
      checkpoint_after_roll_ = false;
      last_checkpoint_position_ = plan.active_position;
    }
  }

  const Stopwatch stopwatch;
  absl::Status status;
  for (const PendingSeal& seal : plan.seals) {
    status = seal.segment->DataSync();
    if (!status.ok()) break;
  }
  if (status.ok() && plan.sync_dir) status = runtime_.fs->SyncDir(dir_);
  if (status.ok()) status = plan.active->DataSync();
  for (StorageStats* stats : StatsSinks()) {
    stats->fsyncs.fetch_add(1, std::memory_order_relaxed);
    stats->fsync_latency.Record(stopwatch.Elapsed());
    if (!status.ok()) {
      stats->fsync_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Phase 1: publish what the fsync made durable and complete its waiters
  // at once. The cycle stays in flight (and the watchdog armed) through
  // phase 2.
  Completions done;
  bool persist = false;
  {
    absl::MutexLock lock(&mu_);
    if (generation != sync_generation_) return;
    if (state_ != State::kClosed && !stalled_.load()) {
      if (!status.ok()) {
        if (plan.sync_dir) dir_sync_needed_ = true;
        StallLocked(absl::InternalError(
                        absl::StrCat("fdatasync failed: ", status.message())),
                    &done);
      } else {
        if (plan.active == active_) {
          active_durable_position_ =
              std::max(active_durable_position_, plan.active_position);
          active_durable_offset_ =
              std::max(active_durable_offset_, plan.target_offset);
        } else {
          // Rolled during the cycle: the sampled prefix of that segment is
          // durable now.
          for (PendingSeal& seal : pending_seals_) {
            if (seal.segment == plan.active) {
              seal.durable_position = plan.active_position;
              seal.durable_offset = plan.target_offset;
            }
          }
        }
        QueueBaseSnapshotsLocked(plan.seals);
        PublishDurableLocked(plan.target_offset, &done);
        linger_waiters_ = done.size() + waiters_.size();
        persist = true;
      }
    }
    if (!persist) {
      sync_in_flight_ = false;
      DisarmWatchdogLocked();
    }
  }
  Complete(done);
  if (!persist) return;

  // Phase 2: the index and checkpoint writes shorten the next recovery; the
  // acks above never wait for them (an extra fsync or four after every roll
  // and every checkpoint interval), nor does a caller that led the cycle.
  if (thread == CycleThread::kCaller &&
      (plan.checkpoint || !plan.seals.empty())) {
    std::weak_ptr<Partition> weak = weak_from_this();
    runtime_.io_pool->Schedule(
        [weak, plan = std::make_shared<SyncPlan>(std::move(plan)), generation] {
          if (std::shared_ptr<Partition> self = weak.lock()) {
            self->FinishCycle(*plan, generation);
          }
        });
    return;
  }
  FinishCycle(plan, generation);
}

void Partition::FinishCycle(const SyncPlan& plan, uint64_t generation) {
  PersistAfterSync(plan);
  std::vector<std::shared_ptr<segment::Segment>> released;
  {
    absl::MutexLock lock(&mu_);
    if (generation != sync_generation_) return;
    sync_in_flight_ = false;
    DisarmWatchdogLocked();
    if (state_ != State::kClosed && !stalled_.load()) {
      RemoveSyncedSealsLocked(plan.seals, &released);
      if ((sync_again_ && next_offset_ > durable_end_) || !waiters_.empty() ||
          dir_sync_needed_ || !pending_seals_.empty() ||
          checkpoint_after_roll_) {
        RequestSyncLocked();
      }
    }
  }
  for (const auto& segment : released) segment->ReleaseWriteHandle();
}

void Partition::PersistAfterSync(const SyncPlan& plan) {
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) return;
  }
  SegmentList sealed;
  for (const PendingSeal& seal : plan.seals) sealed.push_back(seal.segment);
  const bool sealed_indexes_durable = PersistSealedIndexes(sealed);
  {
    // This cycle's seals, and any that failed before (retried every cycle).
    absl::MutexLock checkpoint_lock(&checkpoint_mu_);
    WriteDueBaseSnapshots(/*final=*/false);
  }
  if (plan.checkpoint) {
    // Only what this cycle made durable: the index must never point past
    // the log a crash would leave.
    absl::Status persisted =
        sealed_indexes_durable
            ? plan.active->PersistIndexes(plan.active_position,
                                          plan.target_offset)
            : absl::UnavailableError(
                  "a sealed segment's indexes are not durable");
    if (persisted.ok() && PersistEpochsBeforeCheckpoint()) {
      WriteCheckpointAndSnapshot(plan.recovery_checkpoint, plan.snapshot);
    } else {
      LOG(WARNING) << dir_
                   << ": no recovery checkpoint this time: " << persisted;
    }
  }
}

bool Partition::PersistSealedIndexes(const SegmentList& sealed) {
  // Copied, not taken: Relinquish retries the list too, and must see it
  // whole while this runs.
  SegmentList pending;
  {
    absl::MutexLock lock(&mu_);
    pending = indexes_not_durable_;
  }
  pending.insert(pending.end(), sealed.begin(), sealed.end());
  // Indexes are rebuildable from the log: a failure here is logged, not
  // fatal (a segment deleted meanwhile persists nothing, successfully).
  SegmentList failed;
  SegmentList persisted;
  for (const auto& segment : pending) {
    absl::Status status = segment->PersistIndexes();
    if (status.ok()) {
      persisted.push_back(segment);
    } else {
      LOG(WARNING) << dir_ << ": could not persist the indexes of a sealed "
                   << "segment (no recovery checkpoint passes it until a "
                   << "retry succeeds): " << status;
      failed.push_back(segment);
    }
  }
  absl::MutexLock lock(&mu_);
  SegmentList& list = indexes_not_durable_;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const std::shared_ptr<segment::Segment>& s) {
                              return std::find(persisted.begin(),
                                               persisted.end(),
                                               s) != persisted.end();
                            }),
             list.end());
  for (const auto& segment : failed) {
    if (std::find(list.begin(), list.end(), segment) == list.end()) {
      list.push_back(segment);
    }
  }
  return list.empty();
}

bool Partition::PersistEpochsBeforeCheckpoint() {
  if (!metadata_mu_.TryLock()) return false;
  metadata::PartitionManifest manifest;
  EpochHistory epochs;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) {
      metadata_mu_.Unlock();
      return false;
    }
    if (epochs_.entries() == manifest_epochs_.entries()) {
      metadata_mu_.Unlock();
      return true;
    }
    manifest = ManifestLocked();
    epochs = epochs_;
  }
  absl::StatusOr<metadata::ManifestWrite> written =
      metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_, manifest);
  const bool ok = written.ok() && !written->superseded;
  if (ok) {
    manifest_epochs_ = std::move(epochs);
  } else {
    LOG(WARNING) << dir_ << ": epoch history not persisted, so no recovery "
                 << "checkpoint this time: "
                 << (written.ok() ? absl::Status(StorageError(
                                        StorageErrorCode::kNotLeader,
                                        "superseded by a newer leader"))
                                  : written.status());
  }
  metadata_mu_.Unlock();
  return ok;
}

void Partition::RemoveSyncedSealsLocked(
    const std::vector<PendingSeal>& synced,
    std::vector<std::shared_ptr<segment::Segment>>* released) {
  // Not by position: AdvanceLogStart removes seals from the middle and
  // SyncAllLocked clears the list while a cycle runs, so the front may be a
  // segment rolled after the sample, whose tail this cycle did not sync.
  auto was_synced = [&](const PendingSeal& seal) {
    return std::any_of(synced.begin(), synced.end(), [&](const PendingSeal& s) {
      return s.segment == seal.segment;
    });
  };
  for (const PendingSeal& seal : pending_seals_) {
    if (was_synced(seal)) released->push_back(seal.segment);
  }
  pending_seals_.erase(
      std::remove_if(pending_seals_.begin(), pending_seals_.end(), was_synced),
      pending_seals_.end());
}

void Partition::DisarmWatchdogLocked() {
  if (watchdog_.has_value()) {
    runtime_.timers->Cancel(*watchdog_);
    watchdog_.reset();
  }
}

void Partition::CheckSyncDeadline(uint64_t generation) {
  Completions done;
  {
    absl::MutexLock lock(&mu_);
    if (!sync_in_flight_ || generation != sync_generation_ ||
        state_ == State::kClosed || stalled_.load()) {
      return;
    }
    StallLocked(absl::DeadlineExceededError(absl::StrFormat(
                    "fdatasync did not complete within %s",
                    absl::FormatDuration(config_.fsync_max_latency))),
                &done);
  }
  Complete(done);
}

void Partition::StallLocked(const absl::Status& cause, Completions* done) {
  stall_status_ = StorageError(
      StorageErrorCode::kStalled,
      absl::StrCat(dir_, " is stalled: ", cause.message(),
                   " (appends fail until a new fsync of the log succeeds)"));
  stalled_.store(true, std::memory_order_release);
  LOG(ERROR) << stall_status_.message();
  for (Waiter& waiter : waiters_) {
    done->push_back({std::move(waiter.promise), stall_status_});
  }
  waiters_.clear();
  for (StorageStats* stats : StatsSinks()) {
    stats->stalls.fetch_add(1, std::memory_order_relaxed);
  }
  if (!rearm_scheduled_) {
    rearm_scheduled_ = true;
    ScheduleRearm();
  }
}

void Partition::ScheduleRearm() {
  std::weak_ptr<Partition> weak = weak_from_this();
  ThreadPool* pool = runtime_.io_pool;
  runtime_.timers->ScheduleAfter(runtime_.rearm_interval, [weak, pool] {
    pool->Schedule([weak] {
      if (std::shared_ptr<Partition> self = weak.lock()) self->RunRearm();
    });
  });
}

void Partition::RunRearm() {
  SyncPlan plan;
  uint64_t generation;
  int64_t active_offset;
  uint64_t active_position;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed || !stalled_.load()) {
      rearm_scheduled_ = false;
      return;
    }
    if (sync_in_flight_) {
      // The fsync that stalled us has not returned yet: probing the same
      // device now would only pile up blocked threads.
      ScheduleRearm();
      return;
    }
    sync_in_flight_ = true;
    generation = ++sync_generation_;
    plan.target_offset = next_offset_;
    plan.active = active_;
    plan.active_position = active_->size();
    plan.seals = pending_seals_;
    active_offset = active_durable_offset_;
    active_position = active_durable_position_;
  }
  // Bytes written since the last successful fsync may have been dropped by
  // the kernel when the fsync failed (their pages marked clean). They are
  // re-verified and written again before a new fsync can vouch for them.
  absl::Status status;
  for (const PendingSeal& seal : plan.seals) {
    status =
        seal.segment->RewriteTail(seal.durable_position, seal.durable_offset);
    if (status.ok()) status = seal.segment->DataSync();
    if (!status.ok()) break;
  }
  if (status.ok()) status = runtime_.fs->SyncDir(dir_);
  if (status.ok())
    status = plan.active->RewriteTail(active_position, active_offset);
  if (status.ok()) status = plan.active->DataSync();
  for (const PendingSeal& seal : plan.seals) {
    if (status.ok()) status = seal.segment->PersistIndexes();
  }

  Completions done;
  std::vector<std::shared_ptr<segment::Segment>> released;
  {
    absl::MutexLock lock(&mu_);
    if (generation != sync_generation_) return;
    sync_in_flight_ = false;
    if (state_ == State::kClosed) {
      rearm_scheduled_ = false;
      return;
    }
    if (!status.ok()) {
      LOG(WARNING) << dir_ << ": still stalled: " << status;
      ScheduleRearm();
      return;
    }
    RemoveSyncedSealsLocked(plan.seals, &released);
    dir_sync_needed_ = false;
    active_durable_position_ = plan.active_position;
    active_durable_offset_ = plan.target_offset;
    stalled_.store(false, std::memory_order_release);
    stall_status_ = absl::OkStatus();
    rearm_scheduled_ = false;
    PublishDurableLocked(plan.target_offset, &done);
    LOG(INFO) << dir_ << ": fsync succeeded again; the stall is cleared";
    for (StorageStats* stats : StatsSinks()) {
      stats->rearms.fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (const auto& segment : released) segment->ReleaseWriteHandle();
  Complete(done);
}

bool Partition::WriteCheckpointAndSnapshot(
    const metadata::RecoveryCheckpoint& checkpoint,
    const metadata::PartitionStateSnapshot& snapshot, bool final) {
  absl::MutexLock checkpoint_lock(&checkpoint_mu_);
  if (!final) {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) return false;
  }
  WriteDueBaseSnapshots(final);
  absl::Status status =
      metadata::WriteStateSnapshot(*runtime_.fs, dir_, snapshot);
  if (status.ok()) {
    // A snapshot at the base of the first live segment (a take-over's) lets
    // the segments below the log start go.
    SegmentList covered;
    {
      absl::MutexLock lock(&mu_);
      snapshot_offsets_.insert(snapshot.offset());
      if (state_ != State::kClosed) covered = TakeCoveredAwaitingLocked();
    }
    DeleteSegmentFiles(covered);
    status = metadata::WriteCheckpoint(*runtime_.fs, dir_, checkpoint);
  }
  if (!status.ok()) {
    LOG(WARNING) << dir_ << ": recovery checkpoint not written (the next "
                 << "recovery scans more): " << status;
    return false;
  }
  PruneSnapshots(snapshot.offset());
  return true;
}

void Partition::QueueBaseSnapshotsLocked(
    const std::vector<PendingSeal>& seals) {
  for (const PendingSeal& seal : seals) {
    if (seal.base_snapshot != nullptr) {
      due_base_snapshots_.push_back(seal.base_snapshot);
    }
  }
}

void Partition::WriteDueBaseSnapshots(bool final) {
  std::vector<std::shared_ptr<const metadata::PartitionStateSnapshot>> due;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed && !final) return;
    due.swap(due_base_snapshots_);
  }
  if (due.empty()) return;
  std::vector<int64_t> written;
  std::vector<std::shared_ptr<const metadata::PartitionStateSnapshot>> failed;
  for (const auto& snapshot : due) {
    absl::Status status =
        metadata::WriteStateSnapshot(*runtime_.fs, dir_, *snapshot);
    if (status.ok()) {
      written.push_back(snapshot->offset());
    } else {
      // Retried by the next writer; the segments before this base stay on
      // disk (below the log start, unread) until it is written.
      LOG(WARNING) << dir_ << ": state snapshot at segment base "
                   << snapshot->offset() << " not written: " << status;
      failed.push_back(snapshot);
    }
  }
  SegmentList covered;
  {
    absl::MutexLock lock(&mu_);
    due_base_snapshots_.insert(due_base_snapshots_.begin(), failed.begin(),
                               failed.end());
    snapshot_offsets_.insert(written.begin(), written.end());
    if (state_ != State::kClosed) covered = TakeCoveredAwaitingLocked();
  }
  DeleteSegmentFiles(covered);
}

Partition::SegmentList Partition::TakeCoveredAwaitingLocked() {
  size_t covered = 0;
  for (size_t i = awaiting_snapshot_.size(); i > 0; --i) {
    const std::shared_ptr<segment::Segment>& next =
        i < awaiting_snapshot_.size() ? awaiting_snapshot_[i]
        : segments_.empty()           ? nullptr
                                      : segments_.front();
    if (next != nullptr && snapshot_offsets_.contains(next->base_offset())) {
      covered = i;
      break;
    }
  }
  SegmentList taken(awaiting_snapshot_.begin(),
                    awaiting_snapshot_.begin() + covered);
  awaiting_snapshot_.erase(awaiting_snapshot_.begin(),
                           awaiting_snapshot_.begin() + covered);
  return taken;
}

void Partition::PruneSnapshots(int64_t newest) {
  absl::StatusOr<std::vector<std::string>> names = runtime_.fs->ListDir(dir_);
  if (!names.ok()) return;
  // The base offsets of the segment files on disk: a log start moved up to
  // one of them, or a truncation into its segment, replays from there.
  absl::btree_set<int64_t> bases;
  {
    absl::MutexLock lock(&mu_);
    for (const SegmentList* list : {&awaiting_snapshot_, &segments_}) {
      for (const auto& segment : *list) bases.insert(segment->base_offset());
    }
  }
  // Besides those, keep the newest and the one before it (a fallback if the
  // newest turns out unreadable); older ones only lengthen nothing.
  std::vector<int64_t> offsets;
  for (const std::string& name : *names) {
    if (std::optional<int64_t> offset = metadata::ParseSnapshotFileName(name)) {
      offsets.push_back(*offset);
    }
  }
  std::sort(offsets.rbegin(), offsets.rend());
  int kept = 0;
  for (int64_t offset : offsets) {
    if (bases.contains(offset)) continue;
    if (offset <= newest && kept < 2) {
      ++kept;
      continue;
    }
    absl::Status status = runtime_.fs->Unlink(
        fs::JoinPath(dir_, metadata::SnapshotFileName(offset)));
    if (status.ok() || absl::IsNotFound(status)) {
      absl::MutexLock lock(&mu_);
      snapshot_offsets_.erase(offset);
    } else {
      LOG(WARNING) << dir_ << ": could not remove an old snapshot: " << status;
    }
  }
}

}  // namespace kaas::partition
