// File: tools/partition_check.cc

#include "tools/partition_check.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fs/fs_util.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/disk_engine.h"
#include "storage/metadata/partition_files.h"
#include "storage/segment/log_scanner.h"
#include "tools/segment_index_check.h"

namespace kaas::tools {
namespace {

using segment::ParsedSegmentFile;
using segment::SegmentFileKind;
using segment::SegmentId;

// The epoch the manifest's history assigns to `offset`, as recovery computes
// it: the epoch of the last entry starting at or before it (0 when none).
int64_t EpochAt(const metadata::PartitionManifest& manifest, int64_t offset) {
  int64_t epoch = 0;
  for (const metadata::EpochStart& start : manifest.epochs()) {
    if (start.start_offset() > offset) break;
    epoch = std::max(epoch, start.epoch());
  }
  return epoch;
}

bool HasSegmentSuffix(absl::string_view name) {
  return absl::EndsWith(name, ".log") || absl::EndsWith(name, ".index") ||
         absl::EndsWith(name, ".timeindex");
}

class PartitionChecker {
 public:
  PartitionChecker(fs::FileSystem& fs, PartitionCheck* check)
      : fs_(fs), check_(*check) {}

  void Run() {
    absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(check_.dir);
    if (!names.ok()) {
      Problem(check_.dir, absl::StrCat("cannot list the partition dir: ",
                                       names.status().message()));
      return;
    }
    ClassifyEntries(*names);
    ReadManifest();
    SelectSegments();
    ReadCheckpoint();
    for (size_t i = 0; i < kept_.size(); ++i) CheckSegment(i);
    CheckCheckpointMatched();
    CheckSnapshots();
    CheckLogStart();
  }

 private:
  // The files of one segment present in the directory.
  struct SegmentFiles {
    bool log = false;
    bool index = false;
    bool time_index = false;
  };

  void Problem(const std::string& path, std::string message) {
    check_.findings.push_back({true, path, std::move(message)});
  }
  void Note(const std::string& path, std::string message) {
    check_.findings.push_back({false, path, std::move(message)});
  }
  std::string PathOf(absl::string_view name) const {
    return fs::JoinPath(check_.dir, name);
  }
  std::string SegmentPath(const SegmentId& id, SegmentFileKind kind) const {
    return PathOf(segment::SegmentFileName(id, kind));
  }

  void ClassifyEntries(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (std::optional<ParsedSegmentFile> parsed =
              segment::ParseSegmentFileName(name)) {
        SegmentFiles& files =
            files_[{parsed->id.base_offset, parsed->id.epoch}];
        switch (parsed->kind) {
          case SegmentFileKind::kLog:
            files.log = true;
            break;
          case SegmentFileKind::kOffsetIndex:
            files.index = true;
            break;
          case SegmentFileKind::kTimeIndex:
            files.time_index = true;
            break;
        }
      } else if (std::optional<int64_t> offset =
                     metadata::ParseSnapshotFileName(name)) {
        snapshot_offsets_.push_back(*offset);
      } else if (name == metadata::kManifestFileName ||
                 name == metadata::kCheckpointFileName) {
        // Read below.
      } else if (absl::EndsWith(name, segment::kQuarantineSuffix)) {
        Note(PathOf(name),
             "set aside by an earlier recovery (a deposed leader's segment); "
             "never served");
      } else if (absl::EndsWith(name, ".corrupt")) {
        Note(PathOf(name),
             "a metadata file set aside (unreadable, or vouching for damaged "
             "bytes) by an earlier recovery or repair; never read again");
      } else if (fs::IsAtomicTempFileName(name)) {
        Note(PathOf(name),
             "temp file of an interrupted atomic write; removed at the next "
             "open");
      } else if (name == kMovingToFileName) {
        Note(PathOf(name),
             "an interrupted move to another log dir; the engine finishes it "
             "when it next resolves the partition");
      } else if (HasSegmentSuffix(name)) {
        Problem(PathOf(name),
                "not a valid segment file name (expected "
                "{epoch:08x}-{base offset:020d}.log/.index/.timeindex): the "
                "engine ignores it, so its batches are not part of the log");
      } else {
        Note(PathOf(name), "not a kaas-storage file; the engine ignores it");
      }
    }
  }

  void ReadManifest() {
    absl::StatusOr<metadata::PartitionManifest> manifest =
        metadata::ReadManifest(fs_, check_.dir);
    const std::string path = PathOf(metadata::kManifestFileName);
    if (manifest.ok()) {
      manifest_ = *std::move(manifest);
      check_.leader_epoch = manifest_->leader_epoch();
      const auto& epochs = manifest_->epochs();
      for (int i = 1; i < epochs.size(); ++i) {
        if (epochs[i].epoch() <= epochs[i - 1].epoch() ||
            epochs[i].start_offset() < epochs[i - 1].start_offset()) {
          Problem(path,
                  absl::StrFormat(
                      "epoch history is not ascending: epoch %d from "
                      "offset %d follows epoch %d from offset %d",
                      epochs[i].epoch(), epochs[i].start_offset(),
                      epochs[i - 1].epoch(), epochs[i - 1].start_offset()));
          break;
        }
      }
      return;
    }
    bool has_segments = std::any_of(files_.begin(), files_.end(),
                                    [](const auto& f) { return f.second.log; });
    if (absl::IsNotFound(manifest.status())) {
      if (has_segments) {
        Problem(path,
                "missing: recovery recreates it, taking the leader epoch from "
                "the segment names");
      } else {
        Note(check_.dir,
             "no manifest and no segment: the partition was never taken over");
      }
    } else if (absl::IsFailedPrecondition(manifest.status())) {
      Problem(path, absl::StrCat(manifest.status().message(),
                                 ": this build refuses to open the partition"));
    } else {
      Problem(path, absl::StrCat(manifest.status().message(),
                                 " (recovery sets it aside as manifest.corrupt "
                                 "and rebuilds it from the log)"));
    }
  }

  // Recovery's step 3: which segments it keeps, and which it sets aside.
  void SelectSegments() {
    std::vector<SegmentId> logs;
    for (const auto& [key, files] : files_) {
      SegmentId id{key.first, key.second};
      if (!files.log) {
        for (SegmentFileKind kind :
             {SegmentFileKind::kOffsetIndex, SegmentFileKind::kTimeIndex}) {
          if (kind == SegmentFileKind::kOffsetIndex ? files.index
                                                    : files.time_index) {
            Note(SegmentPath(id, kind),
                 "index file without a .log file; the engine ignores it");
          }
        }
        continue;
      }
      logs.push_back(id);
    }
    std::sort(
        logs.begin(), logs.end(), [](const SegmentId& a, const SegmentId& b) {
          return a.base_offset != b.base_offset ? a.base_offset < b.base_offset
                                                : a.epoch > b.epoch;
        });
    uint32_t max_epoch = 0;
    for (const SegmentId& id : logs) {
      const std::string path = SegmentPath(id, SegmentFileKind::kLog);
      absl::StatusOr<fs::FileInfo> info = fs_.Stat(path);
      if (!info.ok()) {
        Problem(path, absl::StrCat("cannot stat: ", info.status().message()));
        continue;
      }
      bool duplicate_base =
          !kept_.empty() && kept_.back().base_offset == id.base_offset;
      int64_t history_epoch =
          manifest_ ? EpochAt(*manifest_, id.base_offset) : 0;
      bool deposed = id.epoch < max_epoch ||
                     static_cast<int64_t>(id.epoch) < history_epoch;
      if (duplicate_base && info->size == 0) {
        Note(path,
             "an empty segment superseded by a take-over at the same base "
             "offset; recovery deletes it");
        continue;
      }
      if (duplicate_base || deposed) {
        Problem(path, absl::StrFormat(
                          "written by a deposed leader (epoch %d; the log is "
                          "at epoch %d at offset %d): recovery quarantines "
                          "it (%d bytes never served)",
                          id.epoch, std::max<int64_t>(max_epoch, history_epoch),
                          id.base_offset, info->size));
        continue;
      }
      max_epoch = std::max(max_epoch, id.epoch);
      kept_.push_back(id);
      kept_sizes_.push_back(info->size);
    }
    if (!kept_.empty()) check_.first_offset = kept_.front().base_offset;
    if (manifest_ && manifest_->leader_epoch() < max_epoch) {
      Note(PathOf(metadata::kManifestFileName),
           absl::StrFormat("leader epoch %d is below the newest segment's "
                           "epoch %d: an interrupted take-over (recovery "
                           "adopts %d)",
                           manifest_->leader_epoch(), max_epoch, max_epoch));
    }
  }

  void ReadCheckpoint() {
    absl::StatusOr<metadata::RecoveryCheckpoint> checkpoint =
        metadata::ReadCheckpoint(fs_, check_.dir);
    const std::string path = PathOf(metadata::kCheckpointFileName);
    if (!checkpoint.ok()) {
      if (!absl::IsNotFound(checkpoint.status())) {
        Problem(path, absl::StrCat(checkpoint.status().message(),
                                   " (recovery sets it aside and verifies "
                                   "every segment)"));
      } else if (!kept_.empty()) {
        Note(path, "absent: recovery verifies every segment");
      }
      return;
    }
    checkpoint_ = *std::move(checkpoint);
    // Where recovery starts verifying, as partition_open.cc decides it.
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (kept_[i].base_offset == checkpoint_->segment_base_offset() &&
          kept_[i].epoch == checkpoint_->segment_epoch() &&
          checkpoint_->position() <= kept_sizes_[i] &&
          checkpoint_->next_offset() >= kept_[i].base_offset) {
        recovery_start_index_ = i;
        recovery_start_position_ = checkpoint_->position();
        break;
      }
    }
  }

  // What recovery does about damage at `position` of kept segment `i`: it
  // truncates there if it verifies those bytes; bytes below the recovery
  // checkpoint it trusts without looking.
  std::string RecoveryAction(size_t i, uint64_t position, uint64_t file_size) {
    const size_t later = kept_.size() - i - 1;
    std::string truncation = absl::StrFormat(
        "truncates the log at position %d (%d bytes)%s", position,
        file_size - position,
        later == 0
            ? ""
            : absl::StrCat(" and deletes the ", later, " later segment(s)"));
    if (i > recovery_start_index_ ||
        (i == recovery_start_index_ && position >= recovery_start_position_)) {
      return absl::StrCat("recovery ", truncation);
    }
    check_.damage_below_checkpoint = true;
    return absl::StrCat(
        "recovery does NOT see this: it lies below the recovery checkpoint, "
        "which recovery trusts, so the damaged batch would be served; "
        "`verify --repair` sets the checkpoint aside so that recovery "
        "verifies every segment, which ",
        truncation);
  }

  void CheckSegment(size_t i) {
    const SegmentId& id = kept_[i];
    const bool last = i + 1 == kept_.size();
    const std::string path = SegmentPath(id, SegmentFileKind::kLog);
    SegmentCheck segment_check;
    segment_check.id = id;
    segment_check.size = kept_sizes_[i];
    segment_check.closed = !last;

    absl::StatusOr<std::unique_ptr<fs::ReadableFile>> file =
        fs_.OpenForRead(path);
    if (!file.ok()) {
      Problem(path, absl::StrCat("cannot open: ", file.status().message()));
      check_.segments.push_back(segment_check);
      return;
    }
    // Framing and offsets stop the walk (as they stop reads); CRCs and field
    // values are checked batch by batch so that the walk, and the checks of
    // the indexes and the checkpoint, go on past a damaged batch.
    const int64_t end_offset = last ? INT64_MAX : kept_[i + 1].base_offset;
    LogLayout scanned;
    std::optional<std::pair<uint64_t, int64_t>> foreign;
    std::optional<uint64_t> first_crc_failure;
    std::string crc_detail, fields_detail;
    int crc_failures = 0, invalid_fields = 0;
    int64_t max_timestamp = -1;
    segment::ScanOptions options;
    options.verify_crc = false;
    options.buffer_bytes = 1 << 20;
    absl::StatusOr<segment::ScanResult> scan = segment::ScanLog(
        **file, 0, id.base_offset, options,
        [&](const RecordBatchView& batch, uint64_t position) {
          if (batch.base_offset() >= end_offset) {
            foreign.emplace(position, batch.base_offset());
            return false;
          }
          scanned.boundaries.emplace_back(position, batch.base_offset());
          max_timestamp = std::max(max_timestamp, batch.max_timestamp());
          scanned.running_max_timestamp.push_back(max_timestamp);
          const uint32_t computed = batch.ComputeCrc();
          if (computed != batch.crc()) {
            if (crc_failures++ == 0) {
              first_crc_failure = position;
              crc_detail = absl::StrFormat(
                  "batch at position %d (offset %d): crc mismatch (stored "
                  "0x%08x, computed 0x%08x)",
                  position, batch.base_offset(), batch.crc(), computed);
            }
            return true;
          }
          absl::Status fields = RecordBatchView::Parse(batch.bytes()).status();
          if (!fields.ok() && invalid_fields++ == 0) {
            fields_detail = absl::StrFormat(
                "batch at position %d (offset %d): %s", position,
                batch.base_offset(), fields.message());
          }
          return true;
        });
    if (!scan.ok()) {
      Problem(path, absl::StrCat("cannot read: ", scan.status().message()));
      check_.segments.push_back(segment_check);
      return;
    }
    scanned.valid_end = foreign ? foreign->first : scan->valid_end;
    scanned.next_offset = foreign ? foreign->second : scan->next_offset;
    const uint64_t file_size = scan->file_size;
    if (first_crc_failure.has_value()) {
      Problem(
          path,
          absl::StrCat(crc_detail,
                       crc_failures > 1
                           ? absl::StrCat(" (", crc_failures - 1,
                                          " more batches after it fail too)")
                           : "",
                       "; ", RecoveryAction(i, *first_crc_failure, file_size)));
    }
    if (invalid_fields > 0) {
      Problem(path,
              absl::StrCat(fields_detail,
                           invalid_fields > 1
                               ? absl::StrCat(" (and ", invalid_fields - 1,
                                              " more batches with invalid "
                                              "fields)")
                               : "",
                           "; its CRC matches, so it was written so, and "
                           "recovery keeps it"));
    }
    if (foreign.has_value()) {
      Problem(path, absl::StrFormat(
                        "batch at position %d has base offset %d, at or past "
                        "where the next segment begins (%d): bytes appended "
                        "after a take-over, never served; %s",
                        foreign->first, foreign->second, end_offset,
                        RecoveryAction(i, foreign->first, file_size)));
    } else if (scan->stop != segment::ScanStop::kEndOfFile) {
      Problem(path,
              absl::StrCat(scan->detail, "; ",
                           RecoveryAction(i, scan->valid_end, file_size)));
    } else if (!last && scan->next_offset != end_offset) {
      Problem(path,
              absl::StrFormat("the segment ends at offset %d but the next "
                              "segment starts at %d: offsets are not "
                              "contiguous; %s",
                              scan->next_offset, end_offset,
                              RecoveryAction(i, file_size, file_size)));
    }
    check_.batches += static_cast<int64_t>(scanned.boundaries.size());
    check_.log_bytes += scanned.valid_end;
    check_.next_offset = scanned.next_offset;
    if (checkpoint_ && checkpoint_->segment_base_offset() == id.base_offset &&
        checkpoint_->segment_epoch() == id.epoch) {
      CheckCheckpointAgainst(scanned, file_size);
    }
    CheckIndexFile(id, SegmentFileKind::kOffsetIndex, scanned, &segment_check);
    CheckIndexFile(id, SegmentFileKind::kTimeIndex, scanned, &segment_check);
    check_.segments.push_back(segment_check);
  }

  // The .index or .timeindex file of a segment against its log.
  void CheckIndexFile(const SegmentId& id, SegmentFileKind kind,
                      const LogLayout& log, SegmentCheck* segment_check) {
    const std::string path = SegmentPath(id, kind);
    const SegmentFiles& files = files_[{id.base_offset, id.epoch}];
    std::optional<std::string> bytes = ReadIndexFile(
        path,
        kind == SegmentFileKind::kOffsetIndex ? files.index : files.time_index,
        log, segment_check);
    if (!bytes.has_value()) return;
    IndexCheck index_check = kind == SegmentFileKind::kOffsetIndex
                                 ? CheckOffsetIndex(id.base_offset, *bytes, log)
                                 : CheckTimeIndex(id.base_offset, *bytes, log);
    if (index_check.problems.empty()) return;
    segment_check->index_damaged = true;
    if (index_check.misplaced_offset.has_value()) {
      segment_check->misplaced_index_offset = index_check.misplaced_offset;
    }
    for (const std::string& problem : index_check.problems) {
      Problem(path, absl::StrCat(problem, RebuiltBy(*segment_check)));
    }
  }

  // The content of an index file, or nullopt (with a finding if it should
  // have been there).
  std::optional<std::string> ReadIndexFile(const std::string& path,
                                           bool present,
                                           const LogLayout& scanned,
                                           SegmentCheck* segment_check) {
    if (!present) {
      if (scanned.valid_end > 0) {
        segment_check->index_damaged = true;
        Problem(path, absl::StrCat("missing", RebuiltBy(*segment_check)));
      }
      return std::nullopt;
    }
    absl::StatusOr<std::string> bytes = fs::ReadFileToString(fs_, path);
    if (!bytes.ok()) {
      segment_check->index_damaged = true;
      Problem(path, absl::StrCat("unreadable: ", bytes.status().message(),
                                 RebuiltBy(*segment_check)));
      return std::nullopt;
    }
    return *std::move(bytes);
  }

  static std::string RebuiltBy(const SegmentCheck& segment_check) {
    return segment_check.closed
               ? " (rebuilt from the log when the segment is first read)"
               : " (recovery rebuilds it from the log)";
  }

  void CheckCheckpointAgainst(const LogLayout& scanned, uint64_t file_size) {
    checkpoint_matched_ = true;
    const std::string path = PathOf(metadata::kCheckpointFileName);
    const uint64_t position = checkpoint_->position();
    std::string where = absl::StrFormat(
        "says bytes [0, %d) of segment %s are durable with next offset %d",
        position,
        segment::SegmentStem(SegmentId{checkpoint_->segment_base_offset(),
                                       checkpoint_->segment_epoch()}),
        checkpoint_->next_offset());
    if (position > file_size) {
      Problem(path, absl::StrFormat("%s, but the file has only %d bytes: "
                                    "durable data is missing (recovery "
                                    "ignores the checkpoint)",
                                    where, file_size));
      return;
    }
    int64_t offset_there = -1;
    if (position == scanned.valid_end) {
      offset_there = scanned.next_offset;
    } else {
      auto it =
          std::lower_bound(scanned.boundaries.begin(), scanned.boundaries.end(),
                           std::make_pair(position, INT64_MIN));
      if (it != scanned.boundaries.end() && it->first == position) {
        offset_there = it->second;
      }
    }
    if (offset_there < 0) {
      Problem(path, absl::StrFormat("%s, but position %d is not where a batch "
                                    "starts (the framed log ends at %d)",
                                    where, position, scanned.valid_end));
    } else if (offset_there != checkpoint_->next_offset()) {
      Problem(path, absl::StrFormat("%s, but the batch at position %d has "
                                    "offset %d",
                                    where, position, offset_there));
    }
  }

  void CheckCheckpointMatched() {
    if (!checkpoint_ || checkpoint_matched_ || kept_.empty()) return;
    Problem(PathOf(metadata::kCheckpointFileName),
            absl::StrFormat("names segment %s, which is not in the log "
                            "(recovery ignores it and verifies every segment)",
                            segment::SegmentStem(
                                SegmentId{checkpoint_->segment_base_offset(),
                                          checkpoint_->segment_epoch()})));
  }

  void CheckSnapshots() {
    std::sort(snapshot_offsets_.begin(), snapshot_offsets_.end());
    for (int64_t offset : snapshot_offsets_) {
      const std::string path = PathOf(metadata::SnapshotFileName(offset));
      absl::StatusOr<metadata::PartitionStateSnapshot> snapshot =
          metadata::ReadStateSnapshot(fs_, check_.dir, offset);
      if (!snapshot.ok()) {
        Problem(path, absl::StrCat(snapshot.status().message(),
                                   " (recovery falls back to an older "
                                   "snapshot and replays more of the log)"));
        continue;
      }
      if (!kept_.empty() && offset > check_.next_offset) {
        Note(path, absl::StrFormat("past the log end %d: recovery ignores it",
                                   check_.next_offset));
        continue;
      }
      int64_t log_epoch =
          manifest_ && offset > 0 ? EpochAt(*manifest_, offset - 1) : 0;
      if (snapshot->leader_epoch() < log_epoch) {
        Note(path,
             absl::StrFormat("written by a deposed leader (epoch %d; "
                             "the log before offset %d is at epoch %d): "
                             "recovery ignores it",
                             snapshot->leader_epoch(), offset, log_epoch));
      }
    }
  }

  void CheckLogStart() {
    if (!manifest_ || kept_.empty()) return;
    const std::string path = PathOf(metadata::kManifestFileName);
    const int64_t log_start = manifest_->log_start_offset();
    if (log_start > check_.next_offset) {
      Problem(path, absl::StrFormat("log start offset %d is past the log end "
                                    "%d (recovery clamps it)",
                                    log_start, check_.next_offset));
    }
    for (size_t i = 0; i + 1 < kept_.size(); ++i) {
      if (kept_[i + 1].base_offset > log_start) break;
      Note(SegmentPath(kept_[i], SegmentFileKind::kLog),
           absl::StrFormat("entirely below the log start offset %d (left by "
                           "an interrupted deletion): recovery deletes it",
                           log_start));
    }
  }

  fs::FileSystem& fs_;
  PartitionCheck& check_;
  std::map<std::pair<int64_t, uint32_t>, SegmentFiles> files_;
  std::vector<int64_t> snapshot_offsets_;
  std::optional<metadata::PartitionManifest> manifest_;
  std::optional<metadata::RecoveryCheckpoint> checkpoint_;
  bool checkpoint_matched_ = false;
  // Where recovery starts verifying (segment index into kept_, position).
  size_t recovery_start_index_ = 0;
  uint64_t recovery_start_position_ = 0;
  // The segments recovery keeps, in log order, and their file sizes.
  std::vector<SegmentId> kept_;
  std::vector<uint64_t> kept_sizes_;
};

}  // namespace

int CountFindings(const std::vector<Finding>& findings, bool problems) {
  return static_cast<int>(
      std::count_if(findings.begin(), findings.end(),
                    [&](const Finding& f) { return f.problem == problems; }));
}

int PartitionCheck::problems() const { return CountFindings(findings, true); }
int PartitionCheck::notes() const { return CountFindings(findings, false); }

PartitionCheck CheckPartition(fs::FileSystem& fs, const TopicPartition& tp,
                              const std::string& dir) {
  PartitionCheck check;
  check.tp = tp;
  check.dir = dir;
  PartitionChecker(fs, &check).Run();
  return check;
}

}  // namespace kaas::tools
