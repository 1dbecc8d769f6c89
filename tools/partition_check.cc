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
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/partition_files.h"
#include "storage/segment/log_scanner.h"
#include "tools/segment_index_check.h"

namespace kaas::tools {

using ::kaas::partition::Partition;
namespace {

using segment::ParsedSegmentFile;
using segment::SegmentFileKind;
using segment::SegmentId;

bool HasSegmentSuffix(absl::string_view name) {
  return absl::EndsWith(name, ".log") || absl::EndsWith(name, ".index") ||
         absl::EndsWith(name, ".timeindex");
}

class PartitionChecker {
 public:
  PartitionChecker(DiskEngine& engine, PartitionCheck* check)
      : engine_(engine), fs_(engine.fs()), check_(*check) {}

  void Run() {
    absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(check_.dir);
    if (!names.ok()) {
      Problem(check_.dir, absl::StrCat("cannot list the partition dir: ",
                                       names.status().message()));
      return;
    }
    ClassifyEntries(*names);
    // What opening does needs the partition's config; an invalid one (the
    // topic dir's findings say why) makes every take-over fail, but the
    // partition's files are still worth checking.
    std::optional<PartitionConfig> fallback;
    if (absl::Status config = engine_.EffectiveConfig(check_.tp).status();
        !config.ok()) {
      Problem(check_.dir,
              "the engine refuses to take it over while its topic's config is "
              "invalid; checked with the engine's defaults");
      fallback = engine_.default_config();
    }
    absl::StatusOr<std::shared_ptr<Partition>> partition = engine_.OpenReadOnly(
        check_.tp, &check_.recovery, fallback ? &*fallback : nullptr);
    if (!partition.ok()) {
      Problem(check_.dir, absl::StrCat("the engine refuses to open it: ",
                                       partition.status().message()));
      return;
    }
    check_.opens = true;
    for (const std::string& problem : check_.recovery.problems) {
      // "<file>: <what recovery does>" is about that file of the dir.
      const size_t colon = problem.find(": ");
      const absl::string_view head =
          absl::string_view(problem).substr(0, colon);
      if (colon != std::string::npos &&
          head.find_first_of(" /") == absl::string_view::npos) {
        Problem(PathOf(head),
                absl::StrCat("recovery: ", problem.substr(colon + 2)));
      } else {
        Problem(check_.dir, absl::StrCat("recovery: ", problem));
      }
    }
    check_.leader_epoch = (*partition)->LeaderEpoch();
    check_.first_offset = (*partition)->LogStartOffset();
    check_.next_offset = (*partition)->LogEndOffset();
    segments_ = (*partition)->Segments();
    (*partition)->Abandon();
    const bool has_data = std::any_of(
        segments_.begin(), segments_.end(),
        [](const SegmentSummary& segment) { return segment.size_bytes > 0; });
    if (!has_manifest_ && has_data) {
      Problem(PathOf(metadata::kManifestFileName),
              "missing: recovery recreates it, taking the leader epoch from "
              "the segment names (the log start offset and the epoch history "
              "it held are gone)");
    }
    for (size_t i = 0; i < segments_.size(); ++i) {
      if (segments_[i].base_offset == FirstVerified().base_offset &&
          segments_[i].epoch == FirstVerified().epoch) {
        verified_from_index_ = i;
      }
    }
    for (size_t i = 0; i < segments_.size(); ++i) CheckSegment(i);
    CheckSnapshots();
  }

 private:
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
  SegmentId FirstVerified() const {
    std::optional<ParsedSegmentFile> parsed =
        segment::ParseSegmentFileName(check_.recovery.verified_from_file);
    return parsed.has_value() ? parsed->id : SegmentId{-1, 0};
  }
  // Whether recovery verifies the bytes of segment `i` from `position` on
  // (then it has already said what it does with damage there).
  bool Verified(size_t i, uint64_t position) const {
    return i > verified_from_index_ ||
           (i == verified_from_index_ &&
            position >= check_.recovery.verified_from_position);
  }

  void ClassifyEntries(const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      if (segment::ParseSegmentFileName(name).has_value() ||
          name == metadata::kCheckpointFileName ||
          name == metadata::kLockFileName) {
        continue;  // the open reads them
      }
      if (name == metadata::kManifestFileName) {
        has_manifest_ = true;
      } else if (std::optional<int64_t> offset =
                     metadata::ParseSnapshotFileName(name)) {
        snapshot_offsets_.push_back(*offset);
      } else if (absl::EndsWith(name, segment::kQuarantineSuffix)) {
        Note(PathOf(name),
             "set aside by an earlier recovery (a deposed leader's segment, "
             "or one that did not fit the log); never served");
      } else if (absl::EndsWith(name, ".corrupt")) {
        Note(PathOf(name),
             "a metadata file set aside by an earlier recovery; never read "
             "again");
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
                "{epoch:08x}-{base offset:020d}.log/.index/.timeindex, epoch "
                "at most 7fffffff): the engine ignores it, so its batches are "
                "not part of the log");
      } else {
        Note(PathOf(name), "not a kaas-storage file; the engine ignores it");
      }
    }
  }

  void CheckSegment(size_t i) {
    const SegmentSummary& summary = segments_[i];
    const SegmentId id{summary.base_offset,
                       static_cast<uint32_t>(summary.epoch)};
    const bool last = i + 1 == segments_.size();
    const std::string path = SegmentPath(id, SegmentFileKind::kLog);
    SegmentCheck segment_check;
    segment_check.id = id;
    segment_check.closed = !last;
    absl::StatusOr<std::unique_ptr<fs::ReadableFile>> file =
        fs::FileOpener::OpenForRead(fs_, path);
    if (!file.ok()) {
      Problem(path, absl::StrCat("cannot open: ", file.status().message()));
      check_.segments.push_back(segment_check);
      return;
    }
    // Framing and offsets stop the walk (as they stop reads); CRCs and field
    // values are checked batch by batch so that the walk, and the index
    // checks, go on past a damaged batch.
    const int64_t end_offset = last ? INT64_MAX : segments_[i + 1].base_offset;
    LogLayout scanned;
    std::optional<std::pair<uint64_t, int64_t>> foreign;
    int64_t max_timestamp = -1;
    segment::ScanOptions options;
    options.verify_crc = false;
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
          CheckBatch(i, path, batch, position);
          return true;
        });
    if (!scan.ok()) {
      Problem(path, absl::StrCat("cannot read: ", scan.status().message()));
      check_.segments.push_back(segment_check);
      return;
    }
    segment_check.size = scan->file_size;
    scanned.valid_end = foreign ? foreign->first : scan->valid_end;
    scanned.next_offset = foreign ? foreign->second : scan->next_offset;
    if (!Verified(i, scanned.valid_end)) {
      const std::string trusted =
          "; it lies before where recovery starts verifying (the recovery "
          "checkpoint), so recovery does not see it";
      if (foreign.has_value()) {
        Problem(path,
                absl::StrFormat(
                    "batch at position %d has base offset %d, at or "
                    "past where the next segment begins (%d): never "
                    "served%s",
                    foreign->first, foreign->second, end_offset, trusted));
      } else if (scan->stop != segment::ScanStop::kEndOfFile) {
        Problem(path, absl::StrCat(scan->detail, trusted,
                                   ": reads of these offsets fail"));
      } else if (!last && scan->next_offset != end_offset) {
        Problem(path, absl::StrFormat("offsets %d..%d are missing (the "
                                      "segment ends at %d, the next one "
                                      "starts at %d): reads skip them",
                                      scan->next_offset, end_offset - 1,
                                      scan->next_offset, end_offset));
      }
    }
    if (crc_failures_ > 1) {
      Problem(path, absl::StrCat(crc_failures_ - 1,
                                 " more batches after it fail their CRC too"));
    }
    crc_failures_ = 0;
    check_.batches += static_cast<int64_t>(scanned.boundaries.size());
    check_.log_bytes += scanned.valid_end;
    const std::string rebuilt =
        Verified(i, 0) || last
            ? " (recovery rebuilds it from the log)"
            : " (rebuilt from the log when the segment is first read)";
    CheckIndexFile(id, SegmentFileKind::kOffsetIndex, scanned, rebuilt,
                   &segment_check);
    CheckIndexFile(id, SegmentFileKind::kTimeIndex, scanned, rebuilt,
                   &segment_check);
    check_.segments.push_back(segment_check);
  }

  // One batch of segment `i`: its CRC, then its fields (RecordBatchView::
  // Parse), where recovery does not look.
  void CheckBatch(size_t i, const std::string& path,
                  const RecordBatchView& batch, uint64_t position) {
    if (Verified(i, position)) return;  // recovery said what it does
    const uint32_t computed = batch.ComputeCrc();
    if (computed != batch.crc()) {
      if (crc_failures_++ > 0) return;
      Problem(path,
              absl::StrFormat(
                  "batch at position %d (offset %d): crc mismatch (stored "
                  "0x%08x, computed 0x%08x); it lies before where recovery "
                  "starts verifying (the recovery checkpoint), so it is "
                  "served as it is and a consumer that checks CRCs fails "
                  "there: no repair restores it (restore the partition from "
                  "a replica, or delete the records up to offset %d)",
                  position, batch.base_offset(), batch.crc(), computed,
                  batch.last_offset() + 1));
      return;
    }
    absl::Status fields = RecordBatchView::Parse(batch.bytes()).status();
    if (!fields.ok()) {
      Problem(path,
              absl::StrFormat("batch at position %d (offset %d): %s; "
                              "its CRC matches, so it was written so, "
                              "and recovery keeps it",
                              position, batch.base_offset(), fields.message()));
    }
  }

  // The .index or .timeindex file of a segment against its log.
  void CheckIndexFile(const SegmentId& id, SegmentFileKind kind,
                      const LogLayout& log, const std::string& rebuilt,
                      SegmentCheck* segment_check) {
    const std::string path = SegmentPath(id, kind);
    const std::string name = segment::SegmentFileName(id, kind);
    const bool reported = std::any_of(
        check_.recovery.problems.begin(), check_.recovery.problems.end(),
        [&](const std::string& problem) {
          return absl::StartsWith(problem, absl::StrCat(name, ": "));
        });
    absl::StatusOr<std::string> bytes = fs::ReadFileToString(fs_, path);
    if (!bytes.ok()) {
      if (absl::IsNotFound(bytes.status()) && log.valid_end == 0) return;
      segment_check->index_damaged = true;
      if (reported) return;  // recovery said what it does about it
      Problem(path, absl::StrCat(absl::IsNotFound(bytes.status())
                                     ? "missing"
                                     : absl::StrCat("unreadable: ",
                                                    bytes.status().message()),
                                 rebuilt));
      return;
    }
    IndexCheck index_check = kind == SegmentFileKind::kOffsetIndex
                                 ? CheckOffsetIndex(id.base_offset, *bytes, log)
                                 : CheckTimeIndex(id.base_offset, *bytes, log);
    if (index_check.problems.empty()) return;
    segment_check->index_damaged = true;
    if (reported) return;
    for (const std::string& problem : index_check.problems) {
      Problem(path, absl::StrCat(problem, rebuilt));
    }
  }

  void CheckSnapshots() {
    std::sort(snapshot_offsets_.begin(), snapshot_offsets_.end());
    const std::vector<std::string>& set_aside = check_.recovery.quarantined;
    for (int64_t offset : snapshot_offsets_) {
      const std::string name = metadata::SnapshotFileName(offset);
      // Recovery found it unusable and said so already.
      if (std::find(set_aside.begin(), set_aside.end(), name) !=
          set_aside.end()) {
        continue;
      }
      const std::string path = PathOf(name);
      absl::StatusOr<metadata::PartitionStateSnapshot> snapshot =
          metadata::ReadStateSnapshot(fs_, check_.dir, offset);
      if (!snapshot.ok()) {
        Problem(path, absl::StrCat(snapshot.status().message(),
                                   " (recovery uses an older snapshot and "
                                   "replays more of the log)"));
      } else if (offset > check_.next_offset) {
        Note(path, absl::StrFormat("past the log end %d: recovery ignores it",
                                   check_.next_offset));
      }
    }
  }

  DiskEngine& engine_;
  fs::FileSystem& fs_;
  PartitionCheck& check_;
  bool has_manifest_ = false;
  std::vector<int64_t> snapshot_offsets_;
  std::vector<SegmentSummary> segments_;
  size_t verified_from_index_ = 0;
  int crc_failures_ = 0;
};

}  // namespace

int CountFindings(const std::vector<Finding>& findings, bool problems) {
  return static_cast<int>(
      std::count_if(findings.begin(), findings.end(),
                    [&](const Finding& f) { return f.problem == problems; }));
}

int PartitionCheck::problems() const { return CountFindings(findings, true); }
int PartitionCheck::notes() const { return CountFindings(findings, false); }

PartitionCheck CheckPartition(DiskEngine& engine, const TopicPartition& tp,
                              const std::string& dir) {
  PartitionCheck check;
  check.tp = tp;
  check.dir = dir;
  PartitionChecker(engine, &check).Run();
  return check;
}

}  // namespace kaas::tools
