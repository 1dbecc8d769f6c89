// Leadership (take-over, relinquish, abandon), the log start offset and
// producer fences/expiry.

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/batch_state.h"
#include "storage/partition/partition.h"

namespace kaas::partition {

void Partition::SetEpochs(const EpochHistory& epochs,
                          metadata::PartitionManifest* manifest) {
  manifest->clear_epochs();
  for (const EpochHistory::Entry& entry : epochs.entries()) {
    metadata::EpochStart* start = manifest->add_epochs();
    start->set_epoch(entry.epoch);
    start->set_start_offset(entry.start_offset);
  }
}

EpochHistory Partition::EpochsOf(const metadata::PartitionManifest& manifest) {
  std::vector<EpochHistory::Entry> entries;
  for (const metadata::EpochStart& start : manifest.epochs()) {
    entries.push_back({start.epoch(), start.start_offset()});
  }
  return EpochHistory(std::move(entries));
}

metadata::PartitionManifest Partition::ManifestLocked() const {
  metadata_mu_.AssertHeld();
  metadata::PartitionManifest manifest;
  manifest.set_leader_epoch(leader_epoch_);
  manifest.set_log_start_offset(log_start_offset_);
  // What is durable, not what was written: recovery takes it for proof that
  // every offset below it reached the disk (its durable floor). Never below
  // the log start: records below it are gone whether they reached the disk
  // or not (DeleteRecords may pass the durable end when appends are not
  // synced), and a manifest with its log start past its log end is invalid.
  manifest.set_log_end_offset(std::max(durable_end_, log_start_offset_));
  SetEpochs(epochs_, &manifest);
  manifest.set_cleaner_offset(cleaner_offset_);
  if (next_delete_horizon_ms_ != std::numeric_limits<int64_t>::max()) {
    manifest.set_next_delete_horizon_ms(next_delete_horizon_ms_);
  }
  if (swap_in_progress_.has_value()) {
    *manifest.mutable_compaction_swap() = *swap_in_progress_;
  }
  return manifest;
}

absl::Status Partition::SyncAllLocked(Completions* done) {
  absl::Status status;
  for (const PendingSeal& seal : pending_seals_) {
    status = seal.segment->DataSync();
    if (status.ok()) status = seal.segment->PersistIndexes();
    if (!status.ok()) break;
  }
  if (status.ok()) status = runtime_.fs->SyncDir(dir_);
  if (status.ok()) status = active_->DataSync();
  for (StorageStats* stats : StatsSinks()) {
    stats->fsyncs.fetch_add(1, std::memory_order_relaxed);
    if (!status.ok()) {
      stats->fsync_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (!status.ok()) {
    if (!stalled_.load()) {
      StallLocked(absl::InternalError(
                      absl::StrCat("fdatasync failed: ", status.message())),
                  done);
    }
    return stall_status_.ok() ? status : stall_status_;
  }
  for (const PendingSeal& seal : pending_seals_) {
    seal.segment->ReleaseWriteHandle();
  }
  QueueBaseSnapshotsLocked(pending_seals_);
  pending_seals_.clear();
  dir_sync_needed_ = false;
  active_durable_position_ = active_->size();
  active_durable_offset_ = next_offset_;
  PublishDurableLocked(next_offset_, done);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Partition::TakeOver(int64_t leader_epoch, Role role) {
  if (leader_epoch < 0 || leader_epoch > kMaxLeaderEpoch) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        absl::StrCat("leader epoch ", leader_epoch,
                                     " is out of range [0, 2^31): Kafka "
                                     "leader epochs are int32"));
  }
  if (access_ == PartitionAccess::kReadOnly) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, " is opened read-only"));
  }
  absl::MutexLock metadata_lock(&metadata_mu_);
  Completions done;
  absl::Status failure;
  EpochHistory next_epochs;
  metadata::PartitionManifest manifest;
  metadata::RecoveryCheckpoint checkpoint;
  metadata::PartitionStateSnapshot snapshot;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) {
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(dir_, ": leadership was given up"));
    }
    // The file of an unfinished take-over is stamped with its epoch: a
    // lower one can never lead here again (a reopen would not allow it
    // either, the epoch comes back from the segment names).
    if (take_over_epoch_.has_value() && leader_epoch < *take_over_epoch_) {
      return StorageError(
          StorageErrorCode::kNotLeader,
          absl::StrFormat("%s: leader epoch %d is older than the take-over "
                          "to leader epoch %d in progress",
                          dir_, leader_epoch, *take_over_epoch_));
    }
    if (leader_epoch < leader_epoch_ ||
        (leader_epoch == leader_epoch_ && state_ == State::kLeading &&
         role_ == role)) {
      if (state_ == State::kLeading) return next_offset_;  // idempotent
      return StorageError(
          StorageErrorCode::kNotLeader,
          absl::StrFormat("%s: leader epoch %d is older than the durable "
                          "epoch %d",
                          dir_, leader_epoch, leader_epoch_));
    }
    if (stalled_.load()) return stall_status_;
    // A write never precedes the epoch roll: every byte of epoch E goes to a
    // file stamped E. A re-drive after a partial failure finds the roll
    // already done.
    if (active_->epoch() != static_cast<uint32_t>(leader_epoch)) {
      KAAS_RETURN_IF_ERROR(RollLocked(static_cast<uint32_t>(leader_epoch)));
    }
    // Until the epoch is adopted, appends at the old epoch would land in the
    // new epoch's file, and a roll at the old epoch would create a segment
    // that recovery quarantines as a deposed leader's: refuse both. After a
    // failure the refusal stays until a re-drive succeeds.
    take_over_epoch_ = leader_epoch;
    failure = SyncAllLocked(&done);
    if (failure.ok()) {
      // Sampled in the same critical section as the sync: the checkpoint
      // and snapshot claim exactly the bytes it made durable.
      next_epochs = epochs_;
      // A leader's epoch starts at the log end; a follower's epochs are the
      // leader's, and come with the batches it replicates.
      if (role == Role::kLeader) next_epochs.Begin(leader_epoch, next_offset_);
      manifest = ManifestLocked();
      manifest.set_leader_epoch(leader_epoch);
      SetEpochs(next_epochs, &manifest);
      checkpoint = CheckpointLocked();
      snapshot = StateSnapshotLocked();
      snapshot.set_leader_epoch(leader_epoch);
      checkpoint_after_roll_ = false;
      last_checkpoint_position_ = active_->size();
    }
  }
  Complete(done);
  if (!failure.ok()) return failure;
  KAAS_ASSIGN_OR_RETURN(
      metadata::ManifestWrite written,
      metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_, manifest));
  if (written.superseded) {
    // D-15: another leader took over with a higher epoch; adopting ours
    // would let this engine write under a fenced epoch. Appends stay
    // refused.
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: superseded by leader epoch %d on disk (asked "
                        "for %d)",
                        dir_, written.on_disk.leader_epoch(), leader_epoch));
  }
  manifest_epochs_ = next_epochs;
  int64_t log_end;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) {
      // Abandoned while the manifest was written: stay closed.
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(dir_, ": leadership was given up"));
    }
    epochs_ = std::move(next_epochs);
    leader_epoch_ = leader_epoch;
    role_ = role;
    state_ = State::kLeading;
    take_over_epoch_.reset();
    PublishOffsetsLocked();
    log_end = next_offset_;
  }
  WriteCheckpointAndSnapshot(checkpoint, snapshot);
  return log_end;
}

void Partition::CloseLocked(const absl::Status& waiter_error,
                            Completions* done) {
  state_ = State::kClosed;
  closed_.store(true, std::memory_order_release);
  DisarmWatchdogLocked();
  for (Waiter& waiter : waiters_) {
    done->push_back({std::move(waiter.promise), waiter_error});
  }
  waiters_.clear();
  pending_seals_.clear();
  for (const SegmentList* list : {&segments_, &awaiting_snapshot_}) {
    for (const auto& segment : *list) {
      segment->ReleaseWriteHandle();
      segment->DropReadState();
    }
  }
}

void Partition::AwaitPersistsAfterClose() {
  // A checkpoint writer holds checkpoint_mu_ from its state check to the
  // end of its write: taking it once waits for the one in flight.
  { absl::MutexLock checkpoint_lock(&checkpoint_mu_); }
  SegmentList segments;
  {
    absl::MutexLock lock(&mu_);
    segments = segments_;
  }
  // Outside mu_: this waits for an index write in flight.
  for (const auto& segment : segments) segment->StopPersisting();
}

void Partition::StopCompaction() {
  // A pass checks the flag between batches, so this waits for at most one
  // read or one swap: no compaction writes into the directory once the
  // partition lets go of it.
  stop_compaction_.store(true);
  absl::MutexLock pass(&compaction_mu_);
}

absl::Status Partition::Relinquish() {
  StopCompaction();
  absl::MutexLock metadata_lock(&metadata_mu_);
  Completions done;
  absl::Status result;
  metadata::PartitionManifest manifest;
  metadata::RecoveryCheckpoint checkpoint;
  metadata::PartitionStateSnapshot snapshot;
  bool persist = false;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) return absl::OkStatus();
    // New appends are refused from here on.
    bool was_leading = state_ == State::kLeading;
    state_ = State::kClosed;
    closed_.store(true, std::memory_order_release);
    absl::StatusOr<metadata::PartitionManifest> on_disk =
        metadata::ReadManifest(*runtime_.fs, dir_);
    bool superseded = on_disk.ok() && on_disk->leader_epoch() > leader_epoch_;
    if (superseded) {
      LOG(INFO) << dir_ << ": a newer leader (epoch " << on_disk->leader_epoch()
                << ") took over; relinquishing without persisting";
    } else if (was_leading && !stalled_.load()) {
      // The last sync of the active segment also cuts a direct-I/O log's
      // alignment padding, so a clean close leaves no zeros to truncate.
      if (active_ != nullptr) active_->FinishAppends();
      result = SyncAllLocked(&done);
      if (result.ok()) result = active_->PersistIndexes();
      // The sealed segments whose index persist failed: retried once more,
      // as the checkpoint must not pass them otherwise.
      for (const auto& segment : indexes_not_durable_) {
        if (!result.ok()) break;
        result = segment->PersistIndexes();
      }
      if (result.ok()) {
        indexes_not_durable_.clear();
        manifest = ManifestLocked();
        checkpoint = CheckpointLocked();
        snapshot = StateSnapshotLocked();
        persist = true;
      }
    }
    CloseLocked(StorageError(StorageErrorCode::kNotLeader,
                             absl::StrCat(dir_,
                                          ": leadership was given up "
                                          "before the append became "
                                          "durable")),
                &done);
  }
  Complete(done);
  AwaitPersistsAfterClose();
  if (persist) {
    WriteCheckpointAndSnapshot(checkpoint, snapshot, /*final=*/true);
    absl::StatusOr<metadata::ManifestWrite> written =
        metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_, manifest);
    if (!written.ok()) result = written.status();
  }
  ReleaseLock();
  return result;
}

void Partition::ReleaseLock() {
  std::unique_ptr<fs::FileLock> lock;
  {
    absl::MutexLock mu_lock(&mu_);
    lock = std::move(lock_);
  }
  // Destroyed here: another engine may take the partition over from now on.
}

void Partition::Abandon() {
  StopCompaction();
  Completions done;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kClosed) {
      CloseLocked(StorageError(StorageErrorCode::kNotLeader,
                               absl::StrCat(dir_,
                                            ": the partition was "
                                            "abandoned")),
                  &done);
    }
  }
  Complete(done);
  // Even if already closed: a caller may reuse the directory once this
  // returns.
  AwaitPersistsAfterClose();
  ReleaseLock();
}

PartitionStats Partition::Stats() const {
  return PartitionStatsOf(own_stats_, ack_latency_,
                          stalled_.load(std::memory_order_relaxed));
}

absl::StatusOr<std::vector<ProducerDescription>> Partition::DescribeProducers()
    const {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, ": not taken over here"));
  }
  absl::ReaderMutexLock txn_lock(&txn_mu_);
  return DescribeProducerState(producers_, txns_);
}

Role Partition::role() const {
  absl::MutexLock lock(&mu_);
  return role_;
}

absl::Status Partition::SetHighWatermark(int64_t offset) {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, ": not taken over here"));
  }
  KAAS_ASSIGN_OR_RETURN(
      broker_high_watermark_,
      AdvanceBrokerHighWatermark(dir_, config_.broker_managed_high_watermark,
                                 broker_high_watermark_, offset, next_offset_));
  PublishOffsetsLocked();
  return absl::OkStatus();
}

std::optional<absl::StatusOr<int64_t>> Partition::TruncationNeedsNothingLocked(
    int64_t offset, bool full) const {
  if (absl::Status writable =
          CheckWritableLocked(leader_epoch_, Role::kFollower);
      !writable.ok()) {
    return writable;
  }
  if (!full && offset < log_start_offset_) {
    return StorageError(
        StorageErrorCode::kOffsetOutOfRange,
        absl::StrFormat("%s: cannot truncate to %d, below the log start %d",
                        dir_, offset, log_start_offset_));
  }
  if (!full && offset >= next_offset_) return next_offset_;
  if (full && offset < 0) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrFormat("%s: cannot restart the log at %d", dir_, offset));
  }
  return std::nullopt;
}

absl::StatusOr<int64_t> Partition::PrepareTruncation(int64_t offset,
                                                     bool full) {
  // A refused or no-op truncation leaves the partition as it was, its
  // compaction too: the checks come before compaction is stopped (which
  // cannot wait under metadata_mu_), and again under the locks.
  {
    absl::MutexLock lock(&mu_);
    if (std::optional<absl::StatusOr<int64_t>> answer =
            TruncationNeedsNothingLocked(offset, full)) {
      return *std::move(answer);
    }
  }
  StopCompaction();
  absl::MutexLock metadata_lock(&metadata_mu_);
  Completions done;
  absl::Status failure;
  metadata::PartitionManifest manifest;
  std::optional<metadata::RecoveryCheckpoint> checkpoint;
  int64_t new_end = offset;
  {
    absl::MutexLock lock(&mu_);
    if (std::optional<absl::StatusOr<int64_t>> answer =
            TruncationNeedsNothingLocked(offset, full)) {
      // Raced with a close or a log start advance: nothing is cut after
      // all, and compaction stays stopped (a closer may be waiting for
      // metadata_mu_ after stopping it).
      return *std::move(answer);
    }
    if (!full) {
      // The whole batch holding `offset` goes: the log then ends at its
      // base offset, a batch boundary, where the recovery checkpoint goes.
      const std::shared_ptr<segment::Segment>* holder = &segments_.front();
      for (const auto& segment : segments_) {
        if (segment->base_offset() <= offset) holder = &segment;
      }
      const segment::Segment& segment = **holder;
      std::optional<uint64_t> position;
      int64_t max_timestamp = -1;
      int64_t offset_of_max = -1;
      KAAS_RETURN_IF_ERROR(
          (*holder)
              ->WalkFrom(segment.base_offset(),
                         [&](const RecordBatchView& batch, uint64_t at) {
                           if (batch.last_offset() >= offset) {
                             position = at;
                             new_end = batch.base_offset();
                             return false;
                           }
                           if (batch.max_timestamp() > max_timestamp) {
                             max_timestamp = batch.max_timestamp();
                             offset_of_max = batch.base_offset();
                           }
                           return true;
                         })
              .status());
      if (!position.has_value()) {
        position = segment.size();
        new_end = std::max(segment.base_offset(), offset);
      }
      if (new_end < log_start_offset_) {
        // The batch holding the log start goes too: nothing readable is
        // left, so the log restarts at `offset`.
        full = true;
        new_end = offset;
      } else {
        checkpoint.emplace();
        checkpoint->set_segment_base_offset(segment.base_offset());
        checkpoint->set_segment_epoch(segment.epoch());
        checkpoint->set_position(*position);
        checkpoint->set_next_offset(new_end);
        checkpoint->set_max_timestamp(max_timestamp);
        checkpoint->set_offset_of_max_timestamp(offset_of_max);
      }
    }
    // Everything below the cut is durable before the intent is.
    failure = SyncAllLocked(&done);
  }
  if (!failure.ok()) {
    Complete(done);
    return failure;
  }
  {
    absl::MutexLock lock(&mu_);
    manifest = ManifestLocked();
    EpochHistory epochs = epochs_;
    if (full) {
      manifest.set_truncate_fully(true);
      manifest.set_log_start_offset(new_end);
      manifest.set_log_end_offset(new_end);
      epochs = EpochHistory();
    } else {
      manifest.set_truncate_to(new_end);
      manifest.set_log_end_offset(new_end);
      epochs.TruncateFromEnd(new_end);
    }
    SetEpochs(epochs, &manifest);
    CloseLocked(StorageError(StorageErrorCode::kNotLeader,
                             absl::StrFormat("%s: truncated to %d (reopened)",
                                             dir_, new_end)),
                &done);
  }
  Complete(done);
  AwaitPersistsAfterClose();
  // The checkpoint first: it is true of the log before the cut as after it.
  absl::Status written_checkpoint =
      checkpoint.has_value()
          ? metadata::WriteCheckpoint(*runtime_.fs, dir_, *checkpoint)
          : absl::OkStatus();
  absl::StatusOr<metadata::ManifestWrite> written =
      written_checkpoint.ok()
          ? metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_,
                                                    manifest)
          : absl::StatusOr<metadata::ManifestWrite>(written_checkpoint);
  // Closed either way: the engine reopens the partition (and, if the intent
  // did not reach the disk, finds the log as it was).
  ReleaseLock();
  if (!written.ok()) return written.status();
  if (written->superseded) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrFormat("%s: superseded by leader epoch %d",
                                        dir_, written->on_disk.leader_epoch()));
  }
  manifest_epochs_ = EpochsOf(manifest);
  return new_end;
}

absl::StatusOr<int64_t> Partition::DeleteRecords(int64_t target) {
  if (target < 0) target = HighWatermark();
  KAAS_ASSIGN_OR_RETURN(LogStartAdvance advance, AdvanceLogStart(target));
  return advance.log_start_offset;
}

absl::StatusOr<LogStartAdvance> Partition::AdvanceLogStart(int64_t target) {
  absl::MutexLock metadata_lock(&metadata_mu_);
  metadata::PartitionManifest manifest;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kLeading) {
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(dir_, ": not led here"));
    }
    int64_t high_watermark = HighWatermark();
    if (target > high_watermark || target < 0) {
      return StorageError(
          StorageErrorCode::kOffsetOutOfRange,
          absl::StrFormat("%s: cannot delete records up to %d, the high "
                          "watermark is %d",
                          dir_, target, high_watermark));
    }
    if (target <= log_start_offset_) {
      return LogStartAdvance{log_start_offset_, 0, 0};
    }
    manifest = ManifestLocked();
    manifest.set_log_start_offset(target);
    manifest.set_log_end_offset(std::max(manifest.log_end_offset(), target));
  }
  // Kafka's leader-epoch cache forgets what lies below the log start,
  // keeping the epoch that covers it.
  EpochHistory epochs;
  {
    absl::MutexLock lock(&mu_);
    epochs = epochs_;
  }
  epochs.TrimBelow(target);
  SetEpochs(epochs, &manifest);

  // Durable before any file goes: a crash between the two never brings the
  // deleted records back, and never leaves a log start below the data.
  KAAS_ASSIGN_OR_RETURN(
      metadata::ManifestWrite written,
      metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_, manifest));
  if (written.superseded) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrFormat("%s: superseded by leader epoch %d",
                                        dir_, written.on_disk.leader_epoch()));
  }
  manifest_epochs_ = epochs;
  // The base snapshots of seals already durable, so that the segments they
  // follow go now rather than after the next cycle (after a snapshot write
  // of a cycle under way: the segments it covers go below, too).
  {
    absl::MutexLock checkpoint_lock(&checkpoint_mu_);
    WriteDueBaseSnapshots(/*final=*/false);
  }

  LogStartAdvance advance;
  SegmentList doomed;
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) {
      // Closed while the manifest was written: the directory may already
      // be reused, so no file of it is touched any more.
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(dir_, ": leadership was given up"));
    }
    log_start_offset_ = std::max(log_start_offset_, target);
    // Epochs a follower's appends began meanwhile stay.
    epochs_.TrimBelow(log_start_offset_);
    {
      absl::MutexLock txn_lock(&txn_mu_);
      txns_.EvictBelow(log_start_offset_);
    }
    // Closed segments entirely below the log start go; the active one never.
    size_t keep_from = 0;
    while (keep_from + 1 < segments_.size() &&
           segments_[keep_from + 1]->base_offset() <= log_start_offset_) {
      ++keep_from;
    }
    // Out of the log, they are written no more: a seal still pending lets
    // go of its write handle now (and of its lock, which would otherwise
    // keep a later open of this directory out).
    for (size_t i = 0; i < keep_from; ++i) segments_[i]->ReleaseWriteHandle();
    awaiting_snapshot_.insert(awaiting_snapshot_.end(), segments_.begin(),
                              segments_.begin() + keep_from);
    const int64_t first_kept = segments_[keep_from]->base_offset();
    pending_seals_.erase(
        std::remove_if(pending_seals_.begin(), pending_seals_.end(),
                       [first_kept](const PendingSeal& seal) {
                         return seal.segment->base_offset() < first_kept;
                       }),
        pending_seals_.end());
    segments_.erase(segments_.begin(), segments_.begin() + keep_from);
    // Producer state lives only in the log and the state snapshots, and a
    // recovery without a usable checkpoint replays from the first segment
    // file on disk: the files below the log start go only once a durable
    // snapshot lies at the base of the file after them (each roll writes
    // one at the new segment's base once the sealed one is durable). Until
    // then they stay on disk, out of the list and never read; a crash
    // meanwhile replays them again.
    doomed = TakeCoveredAwaitingLocked();
    // The raised log start before the shorter list: a reader that sees the
    // list without the doomed segments also sees the log start above them
    // (Read answers kOffsetOutOfRange instead of reading further on).
    PublishOffsetsLocked();
    PublishSegmentsLocked();
    advance.log_start_offset = log_start_offset_;
  }
  const SegmentsDeleted deleted = DeleteSegmentFiles(doomed);
  advance.segments_deleted = deleted.segments;
  advance.bytes_deleted = deleted.bytes;
  return advance;
}

Partition::SegmentsDeleted Partition::DeleteSegmentFiles(
    const SegmentList& doomed) {
  SegmentsDeleted deleted;
  for (const auto& segment : doomed) {
    uint64_t size = segment->size();
    absl::Status status = segment->DeleteFiles();
    if (!status.ok()) {
      // The log start is already durable: the segment is invisible; a later
      // open deletes what is left (it lies below the log start).
      LOG(WARNING) << dir_ << ": could not delete a segment below the log "
                   << "start: " << status;
      continue;
    }
    ++deleted.segments;
    deleted.bytes += size;
  }
  if (!doomed.empty()) {
    absl::Status status = runtime_.fs->SyncDir(dir_);
    LOG_IF(WARNING, !status.ok()) << dir_ << ": directory sync: " << status;
  }
  for (StorageStats* stats : StatsSinks()) {
    stats->segments_deleted.fetch_add(deleted.segments,
                                      std::memory_order_relaxed);
    stats->bytes_deleted.fetch_add(deleted.bytes, std::memory_order_relaxed);
  }
  return deleted;
}

absl::Status Partition::FenceProducer(int64_t producer_id, int16_t epoch) {
  absl::MutexLock lock(&mu_);
  return producers_.Fence(producer_id, epoch, runtime_.clock->NowMillis());
}

void Partition::ExpireProducers() {
  absl::MutexLock lock(&mu_);
  absl::ReaderMutexLock txn_lock(&txn_mu_);
  producers_.RemoveExpired(runtime_.clock->NowMillis(),
                           config_.producer_id_expiration_ms,
                           [this](int64_t producer_id) {
                             txn_mu_.AssertReaderHeld();
                             return txns_.HasOpenTransaction(producer_id);
                           });
}

}  // namespace kaas::partition
