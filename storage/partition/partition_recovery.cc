// File: storage/partition/partition_recovery.cc
//
// The phases of partition_recovery.h. Run() reads as their sequence; each
// phase states what it takes and what it leaves.

#include "storage/partition/partition_recovery.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/state_replay.h"

namespace kaas::partition {
namespace {

using segment::ParsedSegmentFile;
using segment::ParseSegmentFileName;
using segment::Segment;
using segment::SegmentFileKind;
using segment::SegmentId;

std::string LogName(const SegmentId& id) {
  return segment::SegmentFileName(id, SegmentFileKind::kLog);
}

// Names of the files the engine keeps in a partition dir: they must be
// regular files (the engine never follows a link or reads a FIFO there).
bool IsEngineFileName(absl::string_view name) {
  return ParseSegmentFileName(name).has_value() ||
         segment::ParseCleanedFileName(name).has_value() ||
         metadata::ParseSnapshotFileName(name).has_value() ||
         name == metadata::kManifestFileName ||
         name == metadata::kCheckpointFileName ||
         name == metadata::kLockFileName;
}

EpochHistory EpochsOfManifest(const metadata::PartitionManifest& manifest) {
  std::vector<EpochHistory::Entry> entries;
  for (const metadata::EpochStart& start : manifest.epochs()) {
    entries.push_back({start.epoch(), start.start_offset()});
  }
  return EpochHistory(std::move(entries));
}

absl::Status Refuse(const std::string& dir, absl::string_view why) {
  return StorageError(StorageErrorCode::kStorageError,
                      absl::StrCat("refusing to open ", dir, ": ", why));
}

}  // namespace

PartitionRecovery::PartitionRecovery(fs::FileSystem& fs, std::string dir,
                                     const segment::SegmentOptions& options,
                                     PartitionAccess access, OpenReport* report)
    : fs_(fs),
      dir_(std::move(dir)),
      options_(options),
      access_(access),
      report_(*report) {
  CHECK_EQ(options_.read_only, access_ == PartitionAccess::kReadOnly);
  report_.read_only = !leader();
}

void PartitionRecovery::Note(std::string problem) {
  LOG(WARNING) << dir_ << ": " << problem;
  report_.problems.push_back(std::move(problem));
}

absl::Status PartitionRecovery::Drop(Segment& segment, const std::string& why) {
  Note(absl::StrCat(LogName(segment.id()), ": deletes it: ", why));
  report_.deleted.push_back(LogName(segment.id()));
  ++report_.deleted_segments;
  dir_changed_ = true;
  if (!leader()) return absl::OkStatus();
  return segment.DeleteFiles();
}

absl::Status PartitionRecovery::CheckNoOtherWriter(
    const DirectoryListing& listing) {
  auto led_elsewhere = [&](absl::string_view why) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrCat(dir_,
                     " is written by another engine although its lock "
                     "file was free (was it removed?): ",
                     why));
  };
  for (auto listed = listing.logs.rbegin(); listed != listing.logs.rend();
       ++listed) {
    std::shared_ptr<Segment> probe =
        Segment::Listed(options_, dir_, listed->id, listed->size);
    absl::Status opened = probe->OpenForWrite();
    if (absl::IsUnavailable(opened)) return led_elsewhere(opened.message());
    if (absl::IsNotFound(opened)) {
      return led_elsewhere(
          absl::StrCat(LogName(listed->id), " vanished while opening"));
    }
    KAAS_RETURN_IF_ERROR(opened);
    probe->ReleaseWriteHandle();
    if (listed->size > 0) break;
  }
  std::set<std::string> before;
  for (const ListedSegment& listed : listing.logs) {
    before.insert(LogName(listed.id));
  }
  KAAS_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.ListDir(dir_));
  std::set<std::string> after;
  for (std::string& name : names) {
    std::optional<segment::ParsedSegmentFile> parsed =
        segment::ParseSegmentFileName(name);
    if (parsed.has_value() && parsed->kind == SegmentFileKind::kLog) {
      after.insert(std::move(name));
    }
  }
  if (after != before) {
    return led_elsewhere("its segment files changed while it was opened");
  }
  return absl::OkStatus();
}

absl::StatusOr<EpochHistory> PartitionRecovery::EpochsOfBatches(
    const std::vector<std::shared_ptr<Segment>>& segments) {
  // Batches carry the epoch of the leader that appended them (-1 from
  // engines that did not stamp it: the segment's name says then).
  EpochHistory epochs;
  for (const std::shared_ptr<Segment>& segment : segments) {
    const int64_t named = segment->epoch();
    KAAS_RETURN_IF_ERROR(
        segment
            ->WalkFrom(segment->base_offset(),
                       [&](const RecordBatchView& batch, uint64_t) {
                         const int64_t stamped = batch.partition_leader_epoch();
                         epochs.Begin(stamped >= 0 ? stamped : named,
                                      batch.base_offset());
                         return true;
                       })
            .status());
  }
  // The last take-over's epoch, which may have written nothing yet.
  const Segment& last = *segments.back();
  epochs.Begin(last.epoch(),
               last.size() == 0 ? last.base_offset() : last.next_offset());
  return epochs;
}

std::optional<int64_t> TruncationCut(const ManifestState& manifest) {
  if (!manifest.valid) return std::nullopt;
  if (manifest.manifest.truncate_fully()) {
    return std::numeric_limits<int64_t>::min();
  }
  if (manifest.manifest.has_truncate_to()) {
    return manifest.manifest.truncate_to();
  }
  return std::nullopt;
}

// ---- Run -------------------------------------------------------------------

absl::StatusOr<RecoveredLog> PartitionRecovery::Run(
    const metadata::ProducerFences& fences) {
  RecoveredLog out;
  KAAS_ASSIGN_OR_RETURN(DirectoryListing listing, ListDirectory());
  if (leader()) KAAS_RETURN_IF_ERROR(CheckNoOtherWriter(listing));
  out.brand_new = listing.brand_new;
  KAAS_ASSIGN_OR_RETURN(out.manifest, LoadManifest());
  KAAS_RETURN_IF_ERROR(CompleteCompaction(listing, out.manifest));
  const metadata::PartitionManifest& manifest = out.manifest.manifest;
  cut_ = TruncationCut(out.manifest);
  if (cut_.has_value()) {
    Note(manifest.truncate_fully()
             ? absl::StrFormat("manifest: completes a follower's full "
                               "truncation: the log restarts at offset %d",
                               manifest.log_start_offset())
             : absl::StrFormat("manifest: completes a follower's truncation "
                               "to offset %d",
                               *cut_));
    report_.completed_truncation =
        manifest.truncate_fully() ? manifest.log_start_offset() : *cut_;
  }
  SegmentPlan plan = PlanSegments(listing, out.manifest);
  KAAS_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<Segment>> segments,
                        ApplyPlan(plan));
  KAAS_ASSIGN_OR_RETURN(RecoveryStartPoint start, ChooseStart(segments));
  report_.used_checkpoint = start.from_checkpoint;
  if (!segments.empty()) {
    report_.verified_from_file = LogName(segments[start.segment_index]->id());
    report_.verified_from_position = start.start.position;
  }
  const int64_t floor = DurableFloor(out.manifest, start, listing);
  report_.durable_floor = floor;

  // ---- 6. State: the newest usable snapshot at or before the start.
  StateReplay replay;
  int64_t replay_from = segments.empty() ? 0 : segments[0]->base_offset();
  // A snapshot is usable at or before where verification starts; with no
  // segment left (a truncation to the log start, a lost empty segment), at
  // or before the log the metadata remembers as durable (a snapshot is
  // written only once its offset is durable; those past a cut go below).
  const int64_t snapshot_limit =
      segments.empty() && out.manifest.valid
          ? std::max(manifest.log_start_offset(), manifest.log_end_offset())
          : start.start.expected_offset;
  // The snapshots left on disk (those past a cut or set aside leave).
  absl::btree_set<int64_t> snapshots(listing.snapshot_offsets.begin(),
                                     listing.snapshot_offsets.end());
  for (int64_t offset : listing.snapshot_offsets) {
    if (cut_.has_value() && offset > *cut_) {
      snapshots.erase(offset);
      // The state after the cut: never the truncated log's.
      Note(absl::StrCat(metadata::SnapshotFileName(offset),
                        ": deletes it: it lies past the truncation"));
      if (leader()) {
        KAAS_RETURN_IF_ERROR(
            fs_.Unlink(fs::JoinPath(dir_, metadata::SnapshotFileName(offset))));
        dir_changed_ = true;
      }
      continue;
    }
    if (offset > snapshot_limit) continue;
    absl::StatusOr<metadata::PartitionStateSnapshot> snapshot =
        metadata::ReadStateSnapshot(fs_, dir_, offset);
    absl::Status status = snapshot.status();
    int64_t log_epoch = offset > 0 ? plan.epochs.EpochAt(offset - 1) : 0;
    if (status.ok() && snapshot->leader_epoch() < log_epoch) {
      status = absl::DataLossError(absl::StrFormat(
          "written by a deposed leader (epoch %d; the log before offset %d "
          "was written at epoch %d)",
          snapshot->leader_epoch(), offset, log_epoch));
    }
    if (status.ok()) status = replay.Load(*snapshot);
    if (status.ok()) {
      replay_from = offset;
      report_.snapshot_offset = offset;
      break;
    }
    const std::string name = metadata::SnapshotFileName(offset);
    if (!absl::IsDataLoss(status)) {
      // Unreadable (I/O) or of a newer format: left as it is.
      Note(absl::StrCat(name, ": unusable, replays more of the log instead: ",
                        status.message()));
      continue;
    }
    // Corrupt, invalid or a deposed leader's: set aside, so that it is
    // reported once (a repair clears it) and never read again.
    Note(absl::StrCat(
        name, ": sets it aside as ", name,
        ".corrupt and replays more of the log instead: ", status.message()));
    report_.quarantined.push_back(name);
    snapshots.erase(offset);
    if (leader()) {
      absl::Status moved = metadata::QuarantineMetadataFile(fs_, dir_, name);
      if (!moved.ok()) Note(std::string(moved.message()));
      dir_changed_ = true;
    }
  }
  // Segments wholly below the log start stay on disk until a snapshot lies
  // at the base of the first one that is not (they hold producer state no
  // snapshot has yet); the replay passes that base, so it takes one there.
  std::optional<int64_t> capture_at;
  {
    size_t below = 0;
    while (below + 1 < segments.size() &&
           segments[below + 1]->base_offset() <= manifest.log_start_offset()) {
      ++below;
    }
    const int64_t base = segments.empty() ? 0 : segments[below]->base_offset();
    if (below > 0 && replay_from < base &&
        !(snapshots.contains(base) &&
          metadata::ReadStateSnapshot(fs_, dir_, base).ok())) {
      capture_at = base;
    }
  }
  auto capture_at_segment_start = [&](const Segment& segment) {
    if (capture_at.has_value() && segment.base_offset() == *capture_at) {
      out.log_start_snapshot = replay.Snapshot(
          *capture_at,
          std::max<int64_t>(manifest.leader_epoch(), plan.max_epoch));
      capture_at.reset();
    }
  };
  // The trusted part between the snapshot and the verification start.
  for (size_t i = 0; i <= start.segment_index && i < segments.size(); ++i) {
    capture_at_segment_start(*segments[i]);
    const bool at_start = i == start.segment_index;
    if (at_start && start.start.position == 0) break;
    int64_t end =
        at_start ? start.start.expected_offset : segments[i + 1]->base_offset();
    if (end <= replay_from) continue;
    KAAS_ASSIGN_OR_RETURN(
        segment::ScanResult walk,
        segments[i]->WalkFrom(replay_from,
                              [&](const RecordBatchView& batch, uint64_t) {
                                if (batch.base_offset() >= end) return false;
                                if (batch.base_offset() >= replay_from) {
                                  replay.Apply(batch);
                                }
                                return true;
                              }));
    report_.replayed_batches += walk.batches;
  }

  // ---- 7. Verify from the start to the end of the log.
  std::vector<std::shared_ptr<Segment>> touched;
  for (size_t i = start.segment_index; i < segments.size(); ++i) {
    std::shared_ptr<Segment>& segment = segments[i];
    if (i != start.segment_index) capture_at_segment_start(*segment);
    KAAS_RETURN_IF_ERROR(segment->OpenForRecovery());
    if (!leader()) {
      // What a leader's open, which writes what it verifies, would meet.
      KAAS_ASSIGN_OR_RETURN(
          fs::FileInfo info,
          fs_.Stat(segment->path(segment::SegmentFileKind::kLog)));
      if (info.link_count > 1) {
        Note(absl::StrFormat(
            "%s: refuses to open it for writing: it has %d hard links (it "
            "may be shared with a file outside the data dir); a leader's "
            "open fails here",
            LogName(segment->id()), info.link_count));
      }
    }
    segment::RecoveryStart from = start.start;
    if (i != start.segment_index) {
      from = segment::RecoveryStart{};
      from.expected_offset = segment->base_offset();
    }
    const bool last = i + 1 == segments.size();
    if (!last) from.end_offset = segments[i + 1]->base_offset();
    // A follower's truncation cuts the last segment there.
    if (last && cut_.has_value()) {
      from.end_offset = std::min(from.end_offset, *cut_);
    }
    KAAS_ASSIGN_OR_RETURN(
        segment::SegmentRecovery recovery,
        segment->Recover(from, [&](const RecordBatchView& batch, uint64_t) {
          // A follower's epochs past the checkpoint may not have reached
          // the manifest yet (it is written before a checkpoint passes
          // them): the verified batches name them.
          // (Not those of batches wholly below the log start, which
          // DeleteRecords forgot.)
          if (plan.epochs_from_manifest &&
              batch.partition_leader_epoch() >= 0 &&
              batch.last_offset() >= manifest.log_start_offset()) {
            plan.epochs.Begin(batch.partition_leader_epoch(),
                              batch.base_offset());
          }
          if (batch.base_offset() >= replay_from) {
            replay.Apply(batch);
            ++report_.replayed_batches;
          }
          return true;
        }));
    touched.push_back(segment);
    report_.scanned_bytes += recovery.scan.scanned_bytes;
    report_.truncated_bytes += recovery.truncated_bytes;
    if (!recovery.index_problem.empty()) {
      Note(absl::StrCat(segment::SegmentFileName(segment->id(),
                                                 SegmentFileKind::kOffsetIndex),
                        ": rebuilds it from the log (", recovery.index_problem,
                        ")"));
    }
    // (Recover stops with kEndOfFile only when it consumed the whole file,
    // so a truncation always comes with another stop reason.)
    const bool ended_early =
        recovery.scan.stop != segment::ScanStop::kEndOfFile;
    if (ended_early) {
      report_.truncations.push_back(
          {LogName(segment->id()), recovery.scan.valid_end,
           recovery.truncated_bytes, recovery.scan.detail});
      if (leader()) dir_changed_ = true;
      Note(absl::StrFormat("%s: truncates %d bytes at position %d: %s",
                           LogName(segment->id()), recovery.truncated_bytes,
                           recovery.scan.valid_end, recovery.scan.detail));
    }
    const bool invalid_tail =
        ended_early &&
        recovery.scan.stop != segment::ScanStop::kStoppedByVisitor;
    const bool reaches_next =
        !last && recovery.scan.next_offset == from.end_offset;
    const bool hole = !last && !reaches_next &&
                      recovery.scan.stop == segment::ScanStop::kEndOfFile;
    if (invalid_tail && reaches_next) {
      // The log is contiguous without the tail (e.g. a failed append's
      // bytes that a roll left behind): the later segments are intact.
      Note(
          absl::StrFormat("%s: the invalid tail ends a segment whose valid "
                          "part reaches the next segment's base offset %d: "
                          "the later segments are kept",
                          LogName(segment->id()), from.end_offset));
    } else if (!last && (invalid_tail || hole)) {
      const int64_t lost_from = recovery.scan.next_offset;
      if (lost_from < floor) {
        // Data past this point was durable: damage, not a crash's torn
        // tail. The later segments are kept (they verify on their own); the
        // offsets in between are gone.
        Note(absl::StrFormat(
            "%s: offsets %d..%d are lost (the segment ends there, the next "
            "one starts at %d); data up to offset %d was durable, so this is "
            "damage, not a torn tail: the later segments are kept",
            LogName(segment->id()), lost_from, from.end_offset - 1,
            from.end_offset, floor));
      } else {
        // A crash's tail: everything after the first invalid byte (or the
        // hole) was never durable.
        for (size_t j = i + 1; j < segments.size(); ++j) {
          KAAS_RETURN_IF_ERROR(
              Drop(*segments[j],
                   absl::StrFormat("it follows the end of the valid log "
                                   "(offset %d), which was never durable "
                                   "past there",
                                   lost_from)));
        }
        segments.resize(i + 1);
        break;
      }
    }
    if (!last) segment->Seal();
  }
  report_.segments = static_cast<int>(segments.size());

  // ---- 8. The active segment, offsets, state, epochs.
  out.leader_epoch = std::max<int64_t>(manifest.leader_epoch(), plan.max_epoch);
  // A log ending short of the durable log start (DeleteRecords passed
  // unsynced records, which a crash then took) holds nothing readable. It
  // goes, and the log continues at the log start below: no offset below it,
  // which consumers may have been given, is ever assigned again.
  if (!segments.empty() &&
      segments.back()->next_offset() < manifest.log_start_offset()) {
    for (const std::shared_ptr<Segment>& segment : segments) {
      KAAS_RETURN_IF_ERROR(Drop(
          *segment, absl::StrFormat("the log ends at %d, below the log start "
                                    "offset %d",
                                    segments.back()->next_offset(),
                                    manifest.log_start_offset())));
    }
    touched.clear();
    segments.clear();
  }
  if (segments.empty()) {
    // Offsets are never reused: start at the highest offset the metadata
    // remembers.
    int64_t base =
        std::max({manifest.log_end_offset(), manifest.log_start_offset(),
                  replay_from, int64_t{0}});
    out.next_offset = base;
    if (leader()) {
      KAAS_ASSIGN_OR_RETURN(
          std::shared_ptr<Segment> created,
          Segment::Create(
              options_, dir_,
              SegmentId{base, static_cast<uint32_t>(out.leader_epoch)}));
      segments.push_back(created);
      touched.push_back(created);
      dir_changed_ = true;
    }
    if (replay_from < base) replay_from = base;
  } else {
    out.next_offset = segments.back()->next_offset();
  }
  // Closed segments entirely below the durable log start: a crash left
  // them between persisting the log start and unlinking them, or they wait
  // for a state snapshot at the base of the segment after them. Such a
  // snapshot lets a later recovery begin there without forgetting the
  // producer state they hold, so they go up to the last one followed by
  // one; the rest stay on disk, out of the log, until it is written.
  size_t below = 0;
  while (below + 1 < segments.size() &&
         segments[below + 1]->base_offset() <= manifest.log_start_offset()) {
    ++below;
  }
  size_t droppable = 0;
  for (size_t i = below; i > 0; --i) {
    const int64_t next_base = segments[i]->base_offset();
    if (snapshots.contains(next_base) &&
        metadata::ReadStateSnapshot(fs_, dir_, next_base).ok()) {
      droppable = i;
      break;
    }
  }
  for (size_t i = 0; i < below; ++i) {
    if (i < droppable) {
      KAAS_RETURN_IF_ERROR(
          Drop(*segments[i], absl::StrCat("it lies below the log start offset ",
                                          manifest.log_start_offset())));
      touched.erase(std::remove(touched.begin(), touched.end(), segments[i]),
                    touched.end());
    } else {
      Note(absl::StrFormat(
          "%s: lies below the log start offset %d: kept out of the log until "
          "a state snapshot at offset %d is written",
          LogName(segments[i]->id()), manifest.log_start_offset(),
          segments[below]->base_offset()));
      out.below_log_start.push_back(segments[i]);
    }
  }
  segments.erase(segments.begin(), segments.begin() + below);
  out.snapshot_offsets.assign(snapshots.begin(), snapshots.end());
  const int64_t first_offset =
      segments.empty() ? out.next_offset : segments.front()->base_offset();
  out.log_start_offset = std::clamp<int64_t>(manifest.log_start_offset(),
                                             first_offset, out.next_offset);
  if (out.manifest.valid && manifest.log_start_offset() > out.next_offset) {
    Note(
        absl::StrFormat("manifest: its log start %d is past the recovered "
                        "log end %d: clamped",
                        manifest.log_start_offset(), out.next_offset));
  }
  replay.ApplyFences(fences);
  replay.EvictBelow(out.log_start_offset);
  out.producers = replay.TakeProducers();
  out.txns = replay.TakeTransactions();
  if (!plan.epochs_from_manifest && !segments.empty()) {
    absl::StatusOr<EpochHistory> stamped = EpochsOfBatches(segments);
    if (stamped.ok()) {
      plan.epochs = *std::move(stamped);
    } else {
      Note(
          absl::StrCat("epoch history: rebuilt from segment names only (the "
                       "batches could not be walked: ",
                       stamped.status().message(), ")"));
    }
  }
  // Nothing below the log start (as DeleteRecords trims the history; the
  // batches walked may begin below it).
  plan.epochs.TrimBelow(out.log_start_offset);
  // Epochs that began past where the log now ends wrote nothing that is
  // left (an epoch beginning exactly there is a take-over's that has not
  // written yet, and stays).
  const size_t known_epochs = plan.epochs.entries().size();
  plan.epochs.TruncateFromEnd(out.next_offset + 1);
  if (plan.epochs.entries().size() != known_epochs) {
    Note(absl::StrFormat(
        "epoch history: forgets %d epochs that began past the recovered log "
        "end %d",
        known_epochs - plan.epochs.entries().size(), out.next_offset));
  }
  out.epochs = std::move(plan.epochs);

  // Durable before anyone reads or appends (leader).
  if (leader()) {
    for (const auto& segment : touched) {
      KAAS_RETURN_IF_ERROR(segment->DataSync());
      KAAS_RETURN_IF_ERROR(segment->PersistIndexes());
    }
    if (dir_changed_ || !touched.empty()) {
      KAAS_RETURN_IF_ERROR(fs_.SyncDir(dir_));
    }
  }
  // Closed segments are read through the read-handle cache from now on.
  for (const auto& segment : touched) {
    if (segment != segments.back()) segment->ReleaseWriteHandle();
  }
  out.segments = std::move(segments);
  return out;
}

// ---- 1. ListDirectory ------------------------------------------------------

absl::StatusOr<DirectoryListing> PartitionRecovery::ListDirectory() {
  // The partition dir and its topic dir are the engine's own: never a link
  // out of the log dir (a log dir itself, configured by the operator, may
  // be one).
  for (const std::string& path : {fs::Dirname(dir_), dir_}) {
    absl::StatusOr<fs::FileInfo> info = fs_.Stat(path);
    if (info.ok() && (info->is_symlink || !info->is_directory)) {
      return Refuse(dir_, absl::StrCat(path,
                                       info->is_symlink ? " is a symbolic link"
                                                        : " is not a directory",
                                       " (the engine writes only into "
                                       "directories of its own)"));
    }
  }
  KAAS_ASSIGN_OR_RETURN(std::vector<fs::DirEntry> entries,
                        fs_.ListDirEntries(dir_));
  DirectoryListing listing;
  listing.brand_new = true;
  for (const fs::DirEntry& entry : entries) {
    const std::string& name = entry.name;
    if (name != metadata::kLockFileName) listing.brand_new = false;
    if (entry.type != fs::FileType::kRegular && IsEngineFileName(name)) {
      return Refuse(
          dir_, absl::StrCat(name, " is a ", fs::FileTypeName(entry.type),
                             ", not a regular file: the engine never follows a "
                             "link or opens anything else in place of its own "
                             "files (replace it with the file itself)"));
    }
    if (fs::IsAtomicTempFileName(name)) {
      listing.temp_files.push_back(name);
      continue;
    }
    if (std::optional<ParsedSegmentFile> parsed = ParseSegmentFileName(name)) {
      if (parsed->kind != SegmentFileKind::kLog) continue;
      KAAS_ASSIGN_OR_RETURN(fs::FileInfo info,
                            fs_.Stat(fs::JoinPath(dir_, name)));
      listing.logs.push_back({parsed->id, info.size});
      continue;
    }
    if (std::optional<SegmentId> cleaned =
            segment::ParseCleanedFileName(name)) {
      listing.cleaned.push_back(*cleaned);
      continue;
    }
    if (std::optional<int64_t> offset = metadata::ParseSnapshotFileName(name)) {
      listing.snapshot_offsets.push_back(*offset);
    }
  }
  std::sort(listing.logs.begin(), listing.logs.end(),
            [](const ListedSegment& a, const ListedSegment& b) {
              if (a.id.base_offset != b.id.base_offset) {
                return a.id.base_offset < b.id.base_offset;
              }
              return a.id.epoch > b.id.epoch;
            });
  std::sort(listing.snapshot_offsets.rbegin(), listing.snapshot_offsets.rend());
  // A metadata write cut short by a crash: never read.
  if (leader()) {
    for (const std::string& name : listing.temp_files) {
      if (fs_.Unlink(fs::JoinPath(dir_, name)).ok()) dir_changed_ = true;
    }
  }
  return listing;
}

// ---- 2b. CompleteCompaction -------------------------------------------------

absl::Status PartitionRecovery::CompleteCompaction(DirectoryListing& listing,
                                                   ManifestState& manifest) {
  std::optional<metadata::CompactionSwap> swap;
  if (manifest.valid && manifest.manifest.has_compaction_swap()) {
    swap = manifest.manifest.compaction_swap();
  }
  auto log_path = [&](const SegmentId& id) {
    return fs::JoinPath(dir_, SegmentFileName(id, SegmentFileKind::kLog));
  };
  std::optional<SegmentId> output;
  if (swap.has_value()) {
    output =
        SegmentId{swap->replaced(0).base_offset(), swap->replaced(0).epoch()};
  }
  // Cleaned files no swap names: an interrupted pass's output, never part
  // of the log.
  bool output_cleaned = false;
  for (const SegmentId& id : listing.cleaned) {
    if (output.has_value() && id == *output) {
      output_cleaned = true;
      continue;
    }
    Note(absl::StrCat(segment::CleanedFileName(id),
                      ": deletes it: an interrupted compaction's output"));
    if (leader()) {
      KAAS_RETURN_IF_ERROR(
          fs_.Unlink(fs::JoinPath(dir_, segment::CleanedFileName(id))));
      dir_changed_ = true;
    }
  }
  if (!swap.has_value()) return absl::OkStatus();
  std::vector<SegmentId> replaced;
  for (const metadata::SegmentRef& ref : swap->replaced()) {
    replaced.push_back(SegmentId{ref.base_offset(), ref.epoch()});
  }
  if (output_cleaned) {
    Note(absl::StrFormat(
        "manifest: completes a compaction swap: %s replaces %d segments "
        "from %s",
        segment::CleanedFileName(*output), replaced.size(), LogName(*output)));
  } else {
    Note(absl::StrFormat(
        "manifest: completes a compaction swap: %s was swapped in; the other "
        "%d segments it replaces go",
        LogName(*output), replaced.size() - 1));
  }
  // What the log is once the swap is complete: read-only access plans with
  // it and changes nothing. A read-only open before the rename sees the old
  // segments, which are all still there and intact.
  auto is_replaced_later = [&](const ListedSegment& listed) {
    return std::find(replaced.begin() + 1, replaced.end(), listed.id) !=
           replaced.end();
  };
  if (!leader()) {
    if (!output_cleaned) {
      listing.logs.erase(std::remove_if(listing.logs.begin(),
                                        listing.logs.end(), is_replaced_later),
                         listing.logs.end());
    }
    return absl::OkStatus();
  }
  // The output's index files describe the old segment (or are missing): they
  // are rebuilt from the log when it is first read.
  for (SegmentFileKind kind :
       {SegmentFileKind::kOffsetIndex, SegmentFileKind::kTimeIndex}) {
    absl::Status status =
        fs_.Unlink(fs::JoinPath(dir_, SegmentFileName(*output, kind)));
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  if (output_cleaned) {
    KAAS_RETURN_IF_ERROR(
        fs_.Rename(fs::JoinPath(dir_, segment::CleanedFileName(*output)),
                   log_path(*output)));
  }
  for (size_t i = 1; i < replaced.size(); ++i) {
    for (SegmentFileKind kind :
         {SegmentFileKind::kLog, SegmentFileKind::kOffsetIndex,
          SegmentFileKind::kTimeIndex}) {
      absl::Status status =
          fs_.Unlink(fs::JoinPath(dir_, SegmentFileName(replaced[i], kind)));
      if (!status.ok() && !absl::IsNotFound(status)) return status;
    }
  }
  KAAS_RETURN_IF_ERROR(fs_.SyncDir(dir_));
  manifest.manifest.clear_compaction_swap();
  KAAS_RETURN_IF_ERROR(
      metadata::WriteManifestUnlessSuperseded(fs_, dir_, manifest.manifest)
          .status());
  // The listing as the directory now is.
  KAAS_ASSIGN_OR_RETURN(fs::FileInfo info, fs_.Stat(log_path(*output)));
  listing.logs.erase(std::remove_if(listing.logs.begin(), listing.logs.end(),
                                    is_replaced_later),
                     listing.logs.end());
  for (ListedSegment& listed : listing.logs) {
    if (listed.id == *output) listed.size = info.size;
  }
  listing.cleaned.clear();
  return absl::OkStatus();
}

// ---- 2. LoadManifest -------------------------------------------------------

absl::StatusOr<ManifestState> PartitionRecovery::LoadManifest() {
  ManifestState state;
  absl::StatusOr<metadata::PartitionManifest> read =
      metadata::ReadManifest(fs_, dir_);
  if (read.ok()) {
    state.manifest = *std::move(read);
    state.valid = true;
    return state;
  }
  if (absl::IsNotFound(read.status())) return state;
  if (absl::IsFailedPrecondition(read.status())) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": ", read.status().message(),
                     "; refusing to open it with an older kaas-storage"));
  }
  if (!absl::IsDataLoss(read.status())) {
    // Unreadable (an I/O error, too many open files, ...): the next attempt
    // may read it; setting it aside would lose the log start offset and the
    // epoch history.
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": reading ",
                     fs::JoinPath(dir_, metadata::kManifestFileName),
                     " failed: ", read.status().message()));
  }
  state.corrupt = true;
  Note(
      absl::StrCat("manifest: sets the corrupt manifest aside as "
                   "manifest.corrupt and recovers from the log: ",
                   read.status().message()));
  report_.quarantined.push_back(std::string(metadata::kManifestFileName));
  if (leader()) {
    absl::Status status = metadata::QuarantineMetadataFile(
        fs_, dir_, metadata::kManifestFileName);
    if (!status.ok()) Note(std::string(status.message()));
    dir_changed_ = true;
  }
  return state;
}

// ---- 3. PlanSegments -------------------------------------------------------

SegmentPlan PartitionRecovery::PlanSegments(const DirectoryListing& listing,
                                            const ManifestState& manifest) {
  SegmentPlan plan;
  auto remove = [&](const ListedSegment& segment, bool quarantine,
                    std::string reason) {
    plan.removals.push_back({segment, quarantine, std::move(reason)});
  };
  // A follower's truncation first: what it cut is not part of the log.
  std::vector<ListedSegment> logs;
  const std::optional<int64_t> cut = TruncationCut(manifest);
  for (const ListedSegment& listed : listing.logs) {
    if (cut.has_value() && listed.id.base_offset >= *cut) {
      remove(listed, false,
             manifest.manifest.truncate_fully()
                 ? std::string("a follower's full truncation")
                 : absl::StrCat("a follower's truncation to offset ", *cut));
      continue;
    }
    logs.push_back(listed);
  }
  const int64_t last_base = logs.empty() ? 0 : logs.back().id.base_offset;
  const int64_t known_epoch = manifest.valid
                                  ? manifest.manifest.leader_epoch()
                                  : std::numeric_limits<int64_t>::max();
  plan.epochs = EpochsOfManifest(manifest.manifest);

  // Files the engine never leaves behind, set apart before the epoch rules
  // look at the rest (a stray's epoch must not make the log's segments look
  // like a deposed leader's).
  std::vector<ListedSegment> candidates;
  for (size_t i = 0; i < logs.size(); ++i) {
    const ListedSegment& file = logs[i];
    if (file.size == 0 && file.id.base_offset < last_base) {
      remove(file, false,
             "an empty segment before the last one, which no roll leaves "
             "behind");
      // Between two kept segments: maybe a real segment emptied by damage.
      if (file.id.base_offset > logs.front().id.base_offset) {
        plan.removed_between.push_back(file.id.base_offset);
      }
      continue;
    }
    const bool followed = std::any_of(
        logs.begin() + i + 1, logs.end(), [&](const ListedSegment& later) {
          return later.id.base_offset > file.id.base_offset &&
                 (later.size > 0 || later.id.base_offset == last_base);
        });
    if (manifest.valid && file.id.epoch > known_epoch && followed) {
      remove(file, true,
             absl::StrFormat("its epoch %d is above the manifest's leader "
                             "epoch %d, yet later segments follow it (a "
                             "take-over's segment is the last one until its "
                             "epoch is persisted): not the log's",
                             file.id.epoch, known_epoch));
      continue;
    }
    candidates.push_back(file);
  }

  for (const ListedSegment& file : candidates) {
    const SegmentId& id = file.id;
    const bool same_base =
        !plan.log.empty() && plan.log.back().id.base_offset == id.base_offset;
    if (same_base && file.size == 0) {
      remove(file, false,
             absl::StrFormat("an empty segment superseded by a take-over at "
                             "the same base (epoch %d)",
                             plan.log.back().id.epoch));
      continue;
    }
    if (same_base && plan.log.back().size == 0 &&
        plan.log.back().id.epoch > known_epoch) {
      // The higher-epoch file is empty and its epoch unknown to the
      // manifest, while this one holds data: the empty one is the stray.
      remove(
          plan.log.back(), false,
          absl::StrFormat("an empty segment whose epoch %d the manifest "
                          "does not know, where segment %s holds data",
                          plan.log.back().id.epoch, segment::SegmentStem(id)));
      plan.log.pop_back();
      plan.max_epoch = 0;
      for (const ListedSegment& kept : plan.log) {
        plan.max_epoch = std::max<int64_t>(plan.max_epoch, kept.id.epoch);
      }
    }
    const int64_t log_epoch =
        std::max<int64_t>(plan.max_epoch, plan.epochs.EpochAt(id.base_offset));
    if ((!plan.log.empty() &&
         plan.log.back().id.base_offset == id.base_offset) ||
        static_cast<int64_t>(id.epoch) < log_epoch) {
      remove(file, true,
             absl::StrFormat("written by a deposed leader (epoch %d, the log "
                             "is at epoch %d there): never served",
                             id.epoch, log_epoch));
      continue;
    }
    plan.max_epoch = std::max<int64_t>(plan.max_epoch, id.epoch);
    plan.log.push_back(file);
  }
  // A valid manifest's history is the history, even empty (a follower's
  // that has replicated nothing since a full truncation: the segment names
  // carry its own epoch, which wrote nothing).
  plan.epochs_from_manifest = manifest.valid || !plan.epochs.empty();
  if (!plan.epochs_from_manifest) {
    // No history (new partition, or the manifest was lost): the segment
    // names tell each epoch's first offset.
    for (const ListedSegment& segment : plan.log) {
      plan.epochs.Begin(segment.id.epoch, segment.id.base_offset);
    }
  }
  return plan;
}

// ---- 4. ApplyPlan ----------------------------------------------------------

namespace {

// A segment left the plan: its epoch counts for nothing (nor in a history
// rebuilt from names).
void RecomputeEpochs(SegmentPlan& plan) {
  plan.max_epoch = 0;
  for (const ListedSegment& kept : plan.log) {
    plan.max_epoch = std::max<int64_t>(plan.max_epoch, kept.id.epoch);
  }
  if (!plan.epochs_from_manifest) {
    plan.epochs = EpochHistory();
    for (const ListedSegment& kept : plan.log) {
      plan.epochs.Begin(kept.id.epoch, kept.id.base_offset);
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<std::shared_ptr<Segment>>>
PartitionRecovery::ApplyPlan(SegmentPlan& plan) {
  for (const SegmentPlan::Removal& removal : plan.removals) {
    std::shared_ptr<Segment> segment = Segment::Listed(
        options_, dir_, removal.segment.id, removal.segment.size);
    if (!removal.quarantine) {
      KAAS_RETURN_IF_ERROR(Drop(*segment, removal.reason));
      continue;
    }
    Note(absl::StrFormat(
        "%s: sets it aside as %s%s (%d bytes, never "
        "served): %s",
        LogName(removal.segment.id), LogName(removal.segment.id),
        segment::kQuarantineSuffix, removal.segment.size, removal.reason));
    report_.quarantined.push_back(LogName(removal.segment.id));
    dir_changed_ = true;
    if (leader()) KAAS_RETURN_IF_ERROR(segment->Quarantine());
  }
  std::vector<std::shared_ptr<Segment>> segments;
  std::vector<ListedSegment> fitting;
  for (const ListedSegment& listed : plan.log) {
    std::shared_ptr<Segment> segment =
        Segment::Listed(options_, dir_, listed.id, listed.size);
    // A file whose first batch is not at the base offset of its name (a copy
    // or a rename of another segment) is no segment of this log: kept in
    // it, it would end the segment before it early and serve its batches
    // under other offsets.
    KAAS_ASSIGN_OR_RETURN(std::optional<int64_t> first,
                          segment->FirstBatchOffset());
    if (first.has_value() && *first != listed.id.base_offset) {
      Note(absl::StrFormat(
          "%s: sets it aside as %s%s (%d bytes, never served): its first "
          "batch is at offset %d, not at the base offset %d its name says",
          LogName(listed.id), LogName(listed.id), segment::kQuarantineSuffix,
          listed.size, *first, listed.id.base_offset));
      report_.quarantined.push_back(LogName(listed.id));
      dir_changed_ = true;
      if (leader()) KAAS_RETURN_IF_ERROR(segment->Quarantine());
      continue;
    }
    segments.push_back(std::move(segment));
    fitting.push_back(listed);
  }
  if (fitting.size() != plan.log.size()) {
    plan.log = std::move(fitting);
    RecomputeEpochs(plan);
  }
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    segments[i]->SetNextOffset(segments[i + 1]->base_offset());
  }
  // An empty last segment must begin where the one before it ends: rolls
  // happen at the log end. Elsewhere it is a stray.
  if (segments.size() >= 2 && segments.back()->size() == 0) {
    Segment& previous = *segments[segments.size() - 2];
    KAAS_ASSIGN_OR_RETURN(segment::ScanResult end, previous.FindEnd());
    if (end.next_offset != segments.back()->base_offset()) {
      KAAS_RETURN_IF_ERROR(Drop(
          *segments.back(),
          absl::StrFormat("an empty last segment at offset %d, but the log "
                          "ends at %d: no roll made it",
                          segments.back()->base_offset(), end.next_offset)));
      segments.pop_back();
      segments.back()->SetNextOffset(-1);
      plan.log.pop_back();
      RecomputeEpochs(plan);
    }
  }
  // Where an empty stray lay between two segments, say whether they meet.
  for (int64_t base : plan.removed_between) {
    auto next =
        std::upper_bound(segments.begin(), segments.end(), base,
                         [](int64_t value, const std::shared_ptr<Segment>& s) {
                           return value < s->base_offset();
                         });
    if (next == segments.begin() || next == segments.end()) continue;
    Segment& previous = **(next - 1);
    KAAS_ASSIGN_OR_RETURN(segment::ScanResult end, previous.FindEnd());
    if (end.next_offset != (*next)->base_offset()) {
      Note(absl::StrFormat(
          "%s: offsets %d..%d are missing: the segment ends at %d and the "
          "next one starts at %d (the empty file at %d was probably a "
          "segment emptied by damage); reads skip them",
          LogName(previous.id()), end.next_offset, (*next)->base_offset() - 1,
          end.next_offset, (*next)->base_offset(), base));
    }
  }
  return segments;
}

// ---- 5. ChooseStart --------------------------------------------------------

absl::StatusOr<RecoveryStartPoint> PartitionRecovery::ChooseStart(
    const std::vector<std::shared_ptr<Segment>>& segments) {
  RecoveryStartPoint point;
  if (!segments.empty()) {
    point.start.expected_offset = segments[0]->base_offset();
  }
  absl::StatusOr<metadata::RecoveryCheckpoint> checkpoint =
      metadata::ReadCheckpoint(fs_, dir_);
  if (absl::IsNotFound(checkpoint.status())) return point;
  if (!checkpoint.ok() && !absl::IsDataLoss(checkpoint.status()) &&
      !absl::IsFailedPrecondition(checkpoint.status())) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot open ", dir_, ": reading ",
                     fs::JoinPath(dir_, metadata::kCheckpointFileName),
                     " failed: ", checkpoint.status().message()));
  }
  if (!checkpoint.ok()) {
    // Corrupt, or a newer format: only an optimisation, rebuilt after.
    Note(
        absl::StrCat("recovery-checkpoint: sets it aside and verifies every "
                     "segment: ",
                     checkpoint.status().message()));
    report_.quarantined.push_back(std::string(metadata::kCheckpointFileName));
    if (leader()) {
      absl::Status status = metadata::QuarantineMetadataFile(
          fs_, dir_, metadata::kCheckpointFileName);
      if (status.ok()) dir_changed_ = true;
    }
    return point;
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& segment = *segments[i];
    if (segment.base_offset() != checkpoint->segment_base_offset() ||
        segment.epoch() != checkpoint->segment_epoch()) {
      continue;
    }
    const bool last = i + 1 == segments.size();
    bool agrees =
        (!cut_.has_value() || checkpoint->next_offset() <= *cut_) &&
        checkpoint->position() <= segment.size() &&
        (last || checkpoint->next_offset() <= segments[i + 1]->base_offset());
    if (agrees) {
      KAAS_ASSIGN_OR_RETURN(
          agrees, segments[i]->IsBatchBoundary(checkpoint->position(),
                                               checkpoint->next_offset()));
    }
    if (!agrees) break;
    point.segment_index = i;
    point.start.position = checkpoint->position();
    point.start.expected_offset = checkpoint->next_offset();
    point.start.time_before = {checkpoint->max_timestamp(),
                               checkpoint->offset_of_max_timestamp()};
    point.from_checkpoint = true;
    return point;
  }
  if (!segments.empty()) {
    Note(
        absl::StrFormat("recovery-checkpoint: ignores it (segment %s, "
                        "position %d, next offset %d): it does not agree "
                        "with the log; verifies every segment",
                        segment::SegmentStem({checkpoint->segment_base_offset(),
                                              checkpoint->segment_epoch()}),
                        checkpoint->position(), checkpoint->next_offset()));
  }
  return point;
}

int64_t PartitionRecovery::DurableFloor(const ManifestState& manifest,
                                        const RecoveryStartPoint& start,
                                        const DirectoryListing& listing) {
  int64_t floor = 0;
  if (start.from_checkpoint) floor = start.start.expected_offset;
  // The manifest's log end is what was durable when it was written.
  if (manifest.valid) {
    floor = std::max(floor, manifest.manifest.log_end_offset());
  }
  // Snapshots are written only after the sync that made their offset
  // durable; the newest one that reads is proof enough.
  for (int64_t offset : listing.snapshot_offsets) {
    if (offset <= floor) break;
    if (cut_.has_value() && offset > *cut_) continue;  // truncated away
    if (metadata::ReadStateSnapshot(fs_, dir_, offset).ok()) {
      floor = offset;
      break;
    }
  }
  return floor;
}

}  // namespace kaas::partition
