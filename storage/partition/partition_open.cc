// Opening a partition: take the lock (leader), run the recovery phases of
// partition_recovery.h, adopt what they recovered, and make the recovery's
// result cheap to repeat (a fresh checkpoint and snapshot, and the manifest if
// it was missing or corrupt). A brand-new, empty directory gets none of these:
// its first TakeOver writes the manifest, checkpoint and snapshot at the
// leader epoch.

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/stopwatch.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition.h"
#include "storage/partition/partition_recovery.h"

namespace kaas::partition {

absl::StatusOr<std::shared_ptr<Partition>> Partition::Open(
    const PartitionRuntime& runtime, std::string dir, PartitionConfig config,
    const metadata::ProducerFences& fences, OpenReport* report,
    PartitionAccess access) {
  KAAS_RETURN_IF_ERROR(config.Validate());
  OpenReport local_report;
  if (report == nullptr) report = &local_report;
  const Stopwatch stopwatch;
  std::shared_ptr<Partition> partition(
      new Partition(runtime, std::move(dir), std::move(config), access));
  absl::Status status = partition->Recover(fences, report);
  report->duration = stopwatch.Elapsed();
  if (!status.ok()) {
    partition->Abandon();
    return status;
  }
  if (StorageStats* stats = runtime.stats) {
    stats->partitions_opened.fetch_add(1, std::memory_order_relaxed);
    stats->recovery_scanned_bytes.fetch_add(report->scanned_bytes,
                                            std::memory_order_relaxed);
    stats->recovery_truncated_bytes.fetch_add(report->truncated_bytes,
                                              std::memory_order_relaxed);
    stats->quarantined_files.fetch_add(report->quarantined.size(),
                                       std::memory_order_relaxed);
    stats->recovery_time.Record(report->duration);
  }
  return partition;
}

absl::Status Partition::Recover(const metadata::ProducerFences& fences,
                                OpenReport* report) {
  fs::FileSystem& fs = *runtime_.fs;
  const bool leader = access_ == PartitionAccess::kLeader;
  if (leader) {
    KAAS_RETURN_IF_ERROR(fs::CreateDirsDurably(fs, dir_));
    // Before anything is read: whoever changes a partition's files holds
    // its lock, so no other engine recovers or appends meanwhile.
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileLock> lock,
                          metadata::LockPartitionDir(fs, dir_));
    absl::MutexLock mu_lock(&mu_);
    lock_ = std::move(lock);
  }
  PartitionRecovery recovery(fs, dir_, segment_options_, access_, report);
  KAAS_ASSIGN_OR_RETURN(RecoveredLog log, recovery.Run(fences));
  const bool brand_new = log.brand_new;
  const bool manifest_valid = log.manifest.valid;
  Adopt(std::move(log));
  if (!leader || brand_new) return absl::OkStatus();

  // A fresh checkpoint and snapshot at the recovered end, and the manifest
  // if it was missing or corrupt.
  metadata::RecoveryCheckpoint checkpoint;
  metadata::PartitionStateSnapshot snapshot;
  metadata::PartitionManifest manifest;
  {
    absl::MutexLock metadata_lock(&metadata_mu_);
    absl::MutexLock lock(&mu_);
    checkpoint = CheckpointLocked();
    snapshot = StateSnapshotLocked();
    manifest = ManifestLocked();
  }
  const bool need_checkpoint = !report->used_checkpoint ||
                               report->scanned_bytes > 0 ||
                               report->truncated_bytes > 0;
  if (need_checkpoint) {
    WriteCheckpointAndSnapshot(checkpoint, snapshot);
  } else {
    absl::MutexLock checkpoint_lock(&checkpoint_mu_);
    WriteDueBaseSnapshots(/*final=*/false);
  }
  // A completed truncation's intent goes last, once what it cut is gone
  // and the rest is durable (Adopt's state; ManifestLocked records none).
  if (!manifest_valid || report->completed_truncation.has_value()) {
    KAAS_ASSIGN_OR_RETURN(
        metadata::ManifestWrite written,
        metadata::WriteManifestUnlessSuperseded(fs, dir_, manifest));
    if (written.superseded) {
      absl::MutexLock lock(&mu_);
      leader_epoch_ = std::max(leader_epoch_, written.on_disk.leader_epoch());
      PublishOffsetsLocked();
    }
  }
  return absl::OkStatus();
}

void Partition::Adopt(RecoveredLog log) {
  std::shared_ptr<segment::Segment> active =
      log.segments.empty() ? nullptr : log.segments.back();
  absl::StatusOr<int64_t> first_timestamp =
      active != nullptr ? active->FirstBatchMaxTimestamp()
                        : absl::StatusOr<int64_t>(-1);
  const int64_t now_ms = runtime_.clock->NowMillis();
  absl::MutexLock metadata_lock(&metadata_mu_);
  manifest_epochs_ = log.epochs;
  cleaner_offset_ = log.manifest.manifest.cleaner_offset();
  next_delete_horizon_ms_ = log.manifest.manifest.has_next_delete_horizon_ms()
                                ? log.manifest.manifest.next_delete_horizon_ms()
                                : std::numeric_limits<int64_t>::max();
  absl::MutexLock lock(&mu_);
  epochs_ = std::move(log.epochs);
  segments_ = std::move(log.segments);
  awaiting_snapshot_ = std::move(log.below_log_start);
  if (log.log_start_snapshot.has_value()) {
    due_base_snapshots_.push_back(
        std::make_shared<const metadata::PartitionStateSnapshot>(
            *std::move(log.log_start_snapshot)));
  }
  snapshot_offsets_ = absl::btree_set<int64_t>(log.snapshot_offsets.begin(),
                                               log.snapshot_offsets.end());
  active_ = active;
  next_offset_ = log.next_offset;
  durable_end_ = log.next_offset;
  const uint64_t active_size = active != nullptr ? active->size() : 0;
  active_durable_position_ = active_size;
  active_durable_offset_ = log.next_offset;
  last_checkpoint_position_ = active_size;
  log_start_offset_ = log.log_start_offset;
  leader_epoch_ = log.leader_epoch;
  producers_ = std::move(log.producers);
  {
    absl::MutexLock txn_lock(&txn_mu_);
    txns_ = std::move(log.txns);
  }
  active_birth_ms_ = first_timestamp.ok() && *first_timestamp >= 0 &&
                             *first_timestamp <= now_ms
                         ? *first_timestamp
                         : now_ms;
  state_ = State::kOpen;
  PublishSegmentsLocked();
  PublishOffsetsLocked();
}

}  // namespace kaas::partition
