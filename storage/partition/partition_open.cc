// Opening a partition: recovery of the directory into a consistent, durable
// log, and the producer/transaction state rebuilt from the newest valid
// snapshot plus a replay of the batch headers after it.
//
// Recovery steps (each finding is added to OpenReport::problems and logged):
//  1. Create the directory durably; remove stray atomic-write temp files.
//  2. Read the manifest. Corrupt: set aside as "manifest.corrupt" and go on
//     from the log (epoch = the highest segment epoch). Newer format: refuse
//     to open (never overwrite what this build cannot read). Unreadable
//     (an I/O error, too many open files, ...): refuse to open, the next
//     attempt may read it (setting it aside would lose the log start offset
//     and the epoch history).
//  3. List segments. Same base offset: the higher epoch wins (an empty loser
//     is deleted, a non-empty one quarantined). A segment whose epoch is
//     lower than an earlier segment's, or than the epoch the manifest's
//     history assigns to its base offset, was written by a deposed leader:
//     quarantined.
//  4. Pick the recovery start: the checkpoint's segment and position when
//     the checkpoint is valid (names a listed segment, within its size),
//     else the first segment. Verify every batch (CRC32C, framing, offsets)
//     from there to the end of the log; at the first invalid byte truncate
//     that segment and delete every later one, unless the valid part ends
//     exactly where the next segment begins (bytes of a failed append left
//     behind by a roll): then only that tail goes. Bytes of a closed segment
//     past the next segment's base offset are truncated too. An unreadable
//     checkpoint fails the open like the manifest; a corrupt or newer one is
//     set aside and every segment verified.
//  5. No segment left: create one at the highest offset any metadata
//     remembers, so offsets are never reused.
//  6. Rebuild producer and transaction state: the newest valid snapshot at
//     or before the recovery start, then the headers after it.
//  7. Make it durable (fdatasync of every touched segment, index files,
//     directory) and write a fresh checkpoint and snapshot at the end, so a
//     crash during the next run does not repeat this scan. A brand-new
//     (empty) directory gets none: its first TakeOver writes the manifest,
//     checkpoint and snapshot at the leader epoch.

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/common/storage_error.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition.h"
#include "storage/partition/state_replay.h"

namespace kaas {
namespace {

using segment::ParsedSegmentFile;
using segment::ParseSegmentFileName;
using segment::Segment;
using segment::SegmentFileKind;
using segment::SegmentId;

void Note(OpenReport* report, const std::string& dir, std::string problem) {
  LOG(WARNING) << dir << ": " << problem;
  report->problems.push_back(std::move(problem));
}

}  // namespace

absl::StatusOr<std::shared_ptr<Partition>> Partition::Open(
    const PartitionRuntime& runtime, std::string dir, PartitionConfig config,
    const metadata::ProducerFences& fences, OpenReport* report) {
  KAAS_RETURN_IF_ERROR(config.Validate());
  OpenReport local_report;
  if (report == nullptr) report = &local_report;
  absl::Time start = absl::Now();
  std::shared_ptr<Partition> partition(
      new Partition(runtime, std::move(dir), std::move(config)));
  absl::Status status = partition->Recover(fences, report);
  report->duration = absl::Now() - start;
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
  KAAS_RETURN_IF_ERROR(fs::CreateDirsDurably(fs, dir_));
  KAAS_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDir(dir_));
  // A partition being created: nothing to recover, and its first take-over
  // writes the manifest, checkpoint and snapshot (at the leader epoch), so
  // opening writes none of them.
  const bool brand_new = names.empty();
  bool dir_changed = false;

  // ---- 1. Classify the directory entries.
  std::vector<SegmentId> logs;
  std::vector<int64_t> snapshot_offsets;
  for (const std::string& name : names) {
    if (fs::IsAtomicTempFileName(name)) {
      // A metadata write cut short by a crash: never read.
      absl::Status status = fs.Unlink(fs::JoinPath(dir_, name));
      if (status.ok()) dir_changed = true;
      continue;
    }
    if (std::optional<ParsedSegmentFile> parsed = ParseSegmentFileName(name)) {
      if (parsed->kind == SegmentFileKind::kLog) logs.push_back(parsed->id);
      continue;
    }
    if (std::optional<int64_t> offset = metadata::ParseSnapshotFileName(name)) {
      snapshot_offsets.push_back(*offset);
    }
  }

  // ---- 2. Manifest.
  metadata::PartitionManifest manifest;
  bool manifest_valid = false;
  absl::StatusOr<metadata::PartitionManifest> read_manifest =
      metadata::ReadManifest(fs, dir_);
  if (read_manifest.ok()) {
    manifest = *std::move(read_manifest);
    manifest_valid = true;
  } else if (absl::IsFailedPrecondition(read_manifest.status())) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": ",
                     read_manifest.status().message(),
                     "; refusing to open it with an older kaas-storage"));
  } else if (!absl::IsNotFound(read_manifest.status()) &&
             !absl::IsDataLoss(read_manifest.status())) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": reading ",
                     fs::JoinPath(dir_, metadata::kManifestFileName),
                     " failed: ", read_manifest.status().message()));
  } else if (absl::IsDataLoss(read_manifest.status())) {
    Note(report, dir_,
         absl::StrCat("corrupt manifest set aside as manifest.corrupt, "
                      "recovering from the log: ",
                      read_manifest.status().message()));
    absl::Status status =
        metadata::QuarantineMetadataFile(fs, dir_, metadata::kManifestFileName);
    if (!status.ok()) Note(report, dir_, std::string(status.message()));
    report->quarantined.push_back(std::string(metadata::kManifestFileName));
    dir_changed = true;
  }
  EpochHistory epochs = EpochsOf(manifest);

  // ---- 3. Segments: sort, resolve duplicates and deposed leaders' files.
  std::sort(logs.begin(), logs.end(),
            [](const SegmentId& a, const SegmentId& b) {
              if (a.base_offset != b.base_offset)
                return a.base_offset < b.base_offset;
              return a.epoch > b.epoch;
            });
  SegmentList segments;
  uint32_t max_epoch = 0;
  for (const SegmentId& id : logs) {
    std::shared_ptr<Segment> segment;
    KAAS_ASSIGN_OR_RETURN(
        fs::FileInfo info,
        fs.Stat(fs::JoinPath(
            dir_, segment::SegmentFileName(id, SegmentFileKind::kLog))));
    segment = Segment::Listed(segment_options_, dir_, id, info.size);
    bool duplicate_base =
        !segments.empty() && segments.back()->base_offset() == id.base_offset;
    bool deposed = id.epoch < max_epoch || static_cast<int64_t>(id.epoch) <
                                               epochs.EpochAt(id.base_offset);
    if (duplicate_base && info.size == 0) {
      // An empty segment superseded by a take-over roll at the same base.
      KAAS_RETURN_IF_ERROR(segment->DeleteFiles());
      dir_changed = true;
      continue;
    }
    if (duplicate_base || deposed) {
      Note(report, dir_,
           absl::StrFormat(
               "segment %s (%d bytes) was written by a deposed "
               "leader (epoch %d, the log is at epoch %d there): "
               "quarantined, never served",
               segment::SegmentStem(id), info.size, id.epoch,
               std::max<int64_t>(max_epoch, epochs.EpochAt(id.base_offset))));
      KAAS_RETURN_IF_ERROR(segment->Quarantine());
      report->quarantined.push_back(
          segment::SegmentFileName(id, SegmentFileKind::kLog));
      dir_changed = true;
      continue;
    }
    max_epoch = std::max(max_epoch, id.epoch);
    segments.push_back(std::move(segment));
  }
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    segments[i]->SetNextOffset(segments[i + 1]->base_offset());
  }
  if (epochs.empty()) {
    // No history (new partition, or the manifest was lost): the segment
    // names tell each epoch's first offset.
    for (const auto& segment : segments) {
      epochs.Begin(segment->epoch(), segment->base_offset());
    }
  }

  // ---- 4. Recovery start and verification.
  size_t start_index = 0;
  segment::RecoveryStart start;
  if (!segments.empty()) start.expected_offset = segments[0]->base_offset();
  absl::StatusOr<metadata::RecoveryCheckpoint> checkpoint =
      metadata::ReadCheckpoint(fs, dir_);
  int64_t checkpoint_next_offset = -1;
  if (checkpoint.ok()) {
    checkpoint_next_offset = checkpoint->next_offset();
    bool matched = false;
    for (size_t i = 0; i < segments.size(); ++i) {
      if (segments[i]->base_offset() == checkpoint->segment_base_offset() &&
          segments[i]->epoch() == checkpoint->segment_epoch() &&
          checkpoint->position() <= segments[i]->size() &&
          checkpoint->next_offset() >= segments[i]->base_offset()) {
        start_index = i;
        start.position = checkpoint->position();
        start.expected_offset = checkpoint->next_offset();
        start.time_before = {checkpoint->max_timestamp(),
                             checkpoint->offset_of_max_timestamp()};
        matched = true;
        report->used_checkpoint = true;
        break;
      }
    }
    if (!matched && !segments.empty()) {
      Note(report, dir_,
           absl::StrFormat("recovery checkpoint (segment %d, position %d) "
                           "does not match the log: verifying every segment",
                           checkpoint->segment_base_offset(),
                           checkpoint->position()));
    }
  } else if (!absl::IsNotFound(checkpoint.status()) &&
             !absl::IsDataLoss(checkpoint.status()) &&
             !absl::IsFailedPrecondition(checkpoint.status())) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": reading ",
                     fs::JoinPath(dir_, metadata::kCheckpointFileName),
                     " failed: ", checkpoint.status().message()));
  } else if (!absl::IsNotFound(checkpoint.status())) {
    // Corrupt, or a newer format: only an optimisation, rebuilt below.
    Note(report, dir_,
         absl::StrCat("unreadable recovery checkpoint set aside (verifying "
                      "every segment): ",
                      checkpoint.status().message()));
    absl::Status status = metadata::QuarantineMetadataFile(
        fs, dir_, metadata::kCheckpointFileName);
    if (status.ok()) dir_changed = true;
    report->quarantined.push_back(std::string(metadata::kCheckpointFileName));
  }

  // The state snapshot to start from: the newest valid one at or before the
  // recovery start (what the verification below replays after it).
  StateReplay replay;
  int64_t replay_from = segments.empty() ? 0 : segments[0]->base_offset();
  std::sort(snapshot_offsets.rbegin(), snapshot_offsets.rend());
  for (int64_t offset : snapshot_offsets) {
    if (offset > start.expected_offset) continue;
    absl::StatusOr<metadata::PartitionStateSnapshot> snapshot =
        metadata::ReadStateSnapshot(fs, dir_, offset);
    absl::Status status = snapshot.status();
    int64_t log_epoch = offset > 0 ? epochs.EpochAt(offset - 1) : 0;
    if (status.ok() && snapshot->leader_epoch() < log_epoch) {
      status = absl::DataLossError(absl::StrFormat(
          "written by a deposed leader (epoch %d; the log before offset %d "
          "was written at epoch %d)",
          snapshot->leader_epoch(), offset, log_epoch));
    }
    if (status.ok()) status = replay.Load(*snapshot);
    if (status.ok()) {
      replay_from = offset;
      report->snapshot_offset = offset;
      break;
    }
    Note(report, dir_,
         absl::StrCat(
             "state snapshot ", metadata::SnapshotFileName(offset),
             " unusable (replaying more of the log): ", status.message()));
  }

  // Replay the trusted part between the snapshot and the recovery start.
  for (size_t i = 0; i < start_index && replay_from < start.expected_offset;
       ++i) {
    int64_t next = segments[i + 1]->base_offset();
    if (next <= replay_from) continue;
    KAAS_ASSIGN_OR_RETURN(
        segment::ScanResult walk,
        segments[i]->WalkFrom(replay_from,
                              [&](const RecordBatchView& batch, uint64_t) {
                                if (batch.base_offset() >= next) return false;
                                if (batch.base_offset() >= replay_from)
                                  replay.Apply(batch);
                                return true;
                              }));
    report->replayed_batches += walk.batches;
  }
  if (start_index < segments.size() && start.position > 0 &&
      replay_from < start.expected_offset) {
    KAAS_ASSIGN_OR_RETURN(
        segment::ScanResult walk,
        segments[start_index]->WalkFrom(
            replay_from, [&](const RecordBatchView& batch, uint64_t) {
              if (batch.base_offset() >= start.expected_offset) return false;
              if (batch.base_offset() >= replay_from) replay.Apply(batch);
              return true;
            }));
    report->replayed_batches += walk.batches;
  }

  // Verify from the start to the end of the log.
  std::vector<std::shared_ptr<Segment>> touched;
  for (size_t i = start_index; i < segments.size(); ++i) {
    std::shared_ptr<Segment>& segment = segments[i];
    KAAS_RETURN_IF_ERROR(segment->OpenForWrite());
    segment::RecoveryStart from = start;
    if (i != start_index) {
      from = segment::RecoveryStart{};
      from.expected_offset = segment->base_offset();
    }
    bool last = i + 1 == segments.size();
    if (!last) from.end_offset = segments[i + 1]->base_offset();
    KAAS_ASSIGN_OR_RETURN(
        segment::SegmentRecovery recovery,
        segment->Recover(from, [&](const RecordBatchView& batch, uint64_t) {
          if (batch.base_offset() >= replay_from) {
            replay.Apply(batch);
            ++report->replayed_batches;
          }
          return true;
        }));
    touched.push_back(segment);
    report->scanned_bytes += recovery.scan.scanned_bytes;
    report->truncated_bytes += recovery.truncated_bytes;
    if (!recovery.index_problem.empty()) {
      Note(report, dir_,
           absl::StrCat(segment->path(SegmentFileKind::kOffsetIndex),
                        ": rebuilt (", recovery.index_problem, ")"));
    }
    // (Recover stops with kEndOfFile only when it consumed the whole file,
    // so a truncation always comes with another stop reason.)
    bool ended_early = recovery.scan.stop != segment::ScanStop::kEndOfFile;
    if (ended_early) {
      Note(report, dir_,
           absl::StrFormat("%s: truncated %d bytes at position %d: %s",
                           segment->path(SegmentFileKind::kLog),
                           recovery.truncated_bytes, recovery.scan.valid_end,
                           recovery.scan.detail));
    }
    bool invalid_tail = ended_early && recovery.scan.stop !=
                                           segment::ScanStop::kStoppedByVisitor;
    bool reaches_next = !last && recovery.scan.next_offset == from.end_offset;
    bool gap = !last && !reaches_next &&
               recovery.scan.stop == segment::ScanStop::kEndOfFile;
    if (invalid_tail && reaches_next) {
      // The log is contiguous without the tail (e.g. a failed append's
      // bytes that a roll left behind): the later segments are intact.
      Note(report, dir_,
           absl::StrFormat("%s: the invalid tail ends a segment whose valid "
                           "part reaches the next segment's base offset %d: "
                           "the later segments are kept",
                           segment->path(SegmentFileKind::kLog),
                           from.end_offset));
    } else if (invalid_tail || gap) {
      if (gap) {
        Note(report, dir_,
             absl::StrFormat("%s ends at offset %d but the next segment "
                             "starts at %d: the later segments were never "
                             "durable",
                             segment->path(SegmentFileKind::kLog),
                             recovery.scan.next_offset, from.end_offset));
      }
      // Everything after the first invalid byte is not part of the log.
      for (size_t j = i + 1; j < segments.size(); ++j) {
        Note(report, dir_,
             absl::StrCat("deleting ", segments[j]->path(SegmentFileKind::kLog),
                          ", which follows the truncation point"));
        KAAS_RETURN_IF_ERROR(segments[j]->DeleteFiles());
        ++report->deleted_segments;
        dir_changed = true;
      }
      segments.resize(i + 1);
      break;
    }
    if (!last) {
      segment->Seal();
    }
  }
  report->segments = static_cast<int>(segments.size());

  // ---- 5. The active segment.
  int64_t leader_epoch = std::max<int64_t>(manifest.leader_epoch(), max_epoch);
  if (segments.empty()) {
    int64_t base =
        std::max({manifest.log_end_offset(), manifest.log_start_offset(),
                  checkpoint_next_offset, replay_from, int64_t{0}});
    KAAS_ASSIGN_OR_RETURN(
        std::shared_ptr<Segment> created,
        Segment::Create(segment_options_, dir_,
                        SegmentId{base, static_cast<uint32_t>(leader_epoch)}));
    segments.push_back(created);
    touched.push_back(created);
    dir_changed = true;
    if (replay_from < base) replay_from = base;
  }
  // The verification above always reaches the last segment (the recovery
  // start is in a listed segment), so it is open for writing.
  std::shared_ptr<Segment> active = segments.back();
  DCHECK(active->has_write_handle()) << active->path(SegmentFileKind::kLog);

  // ---- 6. Offsets, state, epochs.
  int64_t next_offset = active->next_offset();
  // Closed segments entirely below the durable log start are what a crash
  // left between persisting the log start and unlinking them.
  while (segments.size() > 1 &&
         segments[1]->base_offset() <= manifest.log_start_offset()) {
    Note(report, dir_,
         absl::StrCat("deleting ", segments[0]->path(SegmentFileKind::kLog),
                      ", which lies below the log start offset ",
                      manifest.log_start_offset()));
    KAAS_RETURN_IF_ERROR(segments[0]->DeleteFiles());
    ++report->deleted_segments;
    dir_changed = true;
    // Gone: nothing of it to make durable in step 7.
    touched.erase(std::remove(touched.begin(), touched.end(), segments[0]),
                  touched.end());
    segments.erase(segments.begin());
  }
  int64_t log_start =
      std::clamp<int64_t>(manifest.log_start_offset(),
                          segments.front()->base_offset(), next_offset);
  if (manifest_valid && manifest.log_start_offset() > next_offset) {
    Note(report, dir_,
         absl::StrFormat("manifest log start %d is past the recovered log "
                         "end %d: clamped",
                         manifest.log_start_offset(), next_offset));
  }
  replay.ApplyFences(fences);
  replay.EvictBelow(log_start);

  // ---- 7. Durable before anyone reads or appends.
  for (const auto& segment : touched) {
    KAAS_RETURN_IF_ERROR(segment->DataSync());
    KAAS_RETURN_IF_ERROR(segment->PersistIndexes());
    if (segment != active) segment->ReleaseWriteHandle();
  }
  if (dir_changed || !touched.empty()) {
    KAAS_RETURN_IF_ERROR(fs.SyncDir(dir_));
  }

  absl::StatusOr<int64_t> first_timestamp = active->FirstBatchMaxTimestamp();
  int64_t now_ms = runtime_.clock->NowMillis();
  {
    absl::MutexLock metadata_lock(&metadata_mu_);
    epochs_ = epochs;
    absl::MutexLock lock(&mu_);
    segments_ = segments;
    active_ = active;
    next_offset_ = next_offset;
    durable_end_ = next_offset;
    active_durable_position_ = active->size();
    last_checkpoint_position_ = active->size();
    log_start_offset_ = log_start;
    leader_epoch_ = leader_epoch;
    producers_ = replay.TakeProducers();
    {
      absl::MutexLock txn_lock(&txn_mu_);
      txns_ = replay.TakeTransactions();
    }
    active_birth_ms_ = first_timestamp.ok() && *first_timestamp >= 0 &&
                               *first_timestamp <= now_ms
                           ? *first_timestamp
                           : now_ms;
    state_ = State::kOpen;
    PublishSegmentsLocked();
    PublishOffsetsLocked();
  }

  // A fresh checkpoint and snapshot at the recovered end, and the manifest
  // if it was missing or corrupt.
  metadata::RecoveryCheckpoint fresh;
  metadata::PartitionStateSnapshot snapshot;
  metadata::PartitionManifest new_manifest;
  {
    absl::MutexLock metadata_lock(&metadata_mu_);
    absl::MutexLock lock(&mu_);
    fresh.set_segment_base_offset(active->base_offset());
    fresh.set_segment_epoch(active->epoch());
    fresh.set_position(active->size());
    fresh.set_next_offset(next_offset);
    absl::StatusOr<segment::SegmentTimeInfo> time = active->GetTimeInfo();
    if (time.ok()) {
      fresh.set_max_timestamp(time->max_timestamp);
      fresh.set_offset_of_max_timestamp(time->offset_of_max_timestamp);
    }
    snapshot = StateSnapshotLocked();
    new_manifest = ManifestLocked();
  }
  if (brand_new) return absl::OkStatus();
  bool need_checkpoint = !report->used_checkpoint ||
                         report->scanned_bytes > 0 ||
                         report->truncated_bytes > 0;
  if (need_checkpoint) WriteCheckpointAndSnapshot(fresh, snapshot);
  if (!manifest_valid) {
    KAAS_ASSIGN_OR_RETURN(
        metadata::ManifestWrite written,
        metadata::WriteManifestUnlessSuperseded(fs, dir_, new_manifest));
    if (written.superseded) {
      absl::MutexLock lock(&mu_);
      leader_epoch_ = std::max(leader_epoch_, written.on_disk.leader_epoch());
      PublishOffsetsLocked();
    }
  }
  return absl::OkStatus();
}

}  // namespace kaas
