// File: tools/dump.cc
//
// `kaaslog dump PATH`: every file of a partition dir (or a topic dir, or a
// whole data dir), or one file, decoded to readable text. Reads only, through
// a ReadOnlyFileSystem.

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/partition_files.h"
#include "storage/segment/log_scanner.h"
#include "storage/segment/segment_name.h"
#include "tools/cli.h"
#include "tools/log_dump.h"
#include "tools/metadata_dump.h"
#include "tools/read_only_file_system.h"
#include "tools/subcommands.h"

ABSL_FLAG(bool, records, false,
          "Also print each record (offset, timestamp, key, value, headers) "
          "of every batch, compressed ones decompressed.");
ABSL_FLAG(bool, indexes, false,
          "Print every entry of the .index and .timeindex files (otherwise a "
          "directory dump prints one summary line per index file).");
ABSL_FLAG(int64_t, print_limit, 256,
          "Bytes shown of each key, value and header value with --records "
          "(0: all).");

namespace kaas::tools {
namespace {

using segment::ParsedSegmentFile;
using segment::SegmentFileKind;
using segment::SegmentId;

// Where a segment's framed batches end, for validating its index files.
struct LogExtent {
  uint64_t valid_end = std::numeric_limits<uint64_t>::max();
  int64_t next_offset = std::numeric_limits<int64_t>::max();
};

class Dumper {
 public:
  Dumper(fs::FileSystem& fs, const LogDumpOptions& log_options, bool indexes,
         std::ostream& out)
      : fs_(fs), log_options_(log_options), indexes_(indexes), out_(out) {}

  void DumpPath(const std::string& path) {
    absl::StatusOr<fs::FileInfo> info = fs_.Stat(path);
    if (!info.ok()) {
      Damage(absl::StrCat("cannot dump ", path, ": ", info.status().message()));
      return;
    }
    if (info->is_directory && IsEngineFileName(fs::Basename(path))) {
      NotAFile(path, "a directory");
    } else if (info->is_directory) {
      DumpDirectory(path);
    } else {
      DumpFile(fs::Dirname(path), fs::Basename(path));
    }
  }

  bool damaged() const { return damaged_; }

 private:
  // A name the engine gives one of its files (not a directory).
  static bool IsEngineFileName(absl::string_view name) {
    return segment::ParseSegmentFileName(name).has_value() ||
           MetadataKindOfFileName(name).has_value() ||
           name == kTopicConfigFileName || name == kTopicIdFileName ||
           name == metadata::kLockFileName;
  }

  // Something other than a regular file where the engine keeps one: the
  // engine refuses the partition (or the data dir) until it is removed.
  void NotAFile(const std::string& path, absl::string_view what) {
    Damage(absl::StrCat("NOT A FILE: ", path, " is ", what,
                        " where the engine keeps a file; the engine refuses "
                        "to open it until it is removed"));
  }

  void Damage(const std::string& message) {
    damaged_ = true;
    out_ << message << "\n";
  }

  void Note(bool valid) {
    if (!valid) damaged_ = true;
  }

  void DumpDirectory(const std::string& dir) {
    absl::StatusOr<std::vector<std::string>> names = fs_.ListDir(dir);
    if (!names.ok()) {
      Damage(absl::StrCat("cannot list ", dir, ": ", names.status().message()));
      return;
    }
    // Metadata first, then the segments in log order, then the rest.
    std::vector<std::string> metadata_files, other_files, subdirs;
    std::vector<SegmentId> logs;
    std::vector<ParsedSegmentFile> index_files;
    for (const std::string& name : *names) {
      std::string path = fs::JoinPath(dir, name);
      absl::StatusOr<fs::FileInfo> info = fs_.Stat(path);
      if (info.ok() && info->is_directory && IsEngineFileName(name)) {
        NotAFile(path, "a directory");
      } else if (info.ok() && info->is_directory) {
        subdirs.push_back(path);
      } else if (std::optional<ParsedSegmentFile> parsed =
                     segment::ParseSegmentFileName(name)) {
        if (parsed->kind == SegmentFileKind::kLog) {
          logs.push_back(parsed->id);
        } else {
          index_files.push_back(*parsed);
        }
      } else if (MetadataKindOfFileName(name).has_value() ||
                 name == kTopicConfigFileName || name == kTopicIdFileName) {
        metadata_files.push_back(name);
      } else {
        other_files.push_back(name);
      }
    }
    for (const std::string& name : metadata_files) DumpFile(dir, name);
    std::sort(
        logs.begin(), logs.end(), [](const SegmentId& a, const SegmentId& b) {
          return a.base_offset != b.base_offset ? a.base_offset < b.base_offset
                                                : a.epoch < b.epoch;
        });
    for (const SegmentId& id : logs) {
      LogExtent extent =
          DumpLog(fs::JoinPath(
                      dir, segment::SegmentFileName(id, SegmentFileKind::kLog)),
                  id.base_offset);
      for (SegmentFileKind kind :
           {SegmentFileKind::kOffsetIndex, SegmentFileKind::kTimeIndex}) {
        std::string name = segment::SegmentFileName(id, kind);
        if (std::find(names->begin(), names->end(), name) == names->end()) {
          if (extent.valid_end == 0) continue;  // an empty segment needs none
          Damage(absl::StrCat("MISSING: ", fs::JoinPath(dir, name),
                              " (recovery or the first read rebuilds it)"));
          continue;
        }
        DumpIndex(fs::JoinPath(dir, name), kind, id.base_offset, extent,
                  indexes_);
      }
    }
    for (const ParsedSegmentFile& index : index_files) {
      if (std::find_if(logs.begin(), logs.end(), [&](const SegmentId& id) {
            return id == index.id;
          }) != logs.end()) {
        continue;
      }
      std::string path =
          fs::JoinPath(dir, segment::SegmentFileName(index.id, index.kind));
      out_ << "ORPHAN: " << path << " has no .log file\n";
      DumpIndex(path, index.kind, index.id.base_offset, LogExtent{}, indexes_);
    }
    for (const std::string& name : other_files) DescribeOtherFile(dir, name);
    for (const std::string& subdir : subdirs) {
      out_ << "\n";
      DumpDirectory(subdir);
    }
  }

  // One file, chosen by its name.
  void DumpFile(const std::string& dir, const std::string& name) {
    std::string path = fs::JoinPath(dir, name);
    absl::string_view segment_name = name;
    bool quarantined =
        absl::ConsumeSuffix(&segment_name, segment::kQuarantineSuffix);
    if (std::optional<ParsedSegmentFile> parsed =
            segment::ParseSegmentFileName(segment_name)) {
      if (quarantined) {
        out_ << "QUARANTINED: " << path
             << " was set aside by recovery (a deposed leader's segment); it "
                "is never served\n";
      }
      if (parsed->kind == SegmentFileKind::kLog) {
        DumpLog(path, parsed->id.base_offset);
        return;
      }
      // The sibling log bounds the index entries.
      std::string log_path = fs::JoinPath(
          dir, segment::SegmentFileName(parsed->id, SegmentFileKind::kLog));
      DumpIndex(path, parsed->kind, parsed->id.base_offset,
                ExtentOf(log_path, parsed->id.base_offset), /*entries=*/true);
      return;
    }
    if (std::optional<metadata::MetadataKind> kind =
            MetadataKindOfFileName(name)) {
      if (absl::EndsWith(name, ".corrupt")) {
        out_ << "SET ASIDE: " << path
             << " was found unreadable and set aside by the engine\n";
      }
      Note(DumpMetadataFile(fs_, path, *kind, out_));
      return;
    }
    if (name == kTopicConfigFileName) {
      Note(DumpTopicConfigFile(fs_, dir, out_));
      return;
    }
    if (name == kTopicIdFileName) {
      Note(DumpTopicIdFile(fs_, dir, out_));
      return;
    }
    if (std::optional<segment::SegmentId> cleaned =
            segment::ParseCleanedFileName(name)) {
      out_ << "CLEANED: " << path
           << ": compaction output not yet swapped in (the manifest's "
              "compaction_swap says whether the next open completes the swap "
              "or deletes it)\n";
      DumpLog(path, cleaned->base_offset);
      return;
    }
    if (absl::EndsWith(name, ".log")) {
      out_ << "NOTE: " << name << " is not a segment file name\n";
      DumpLog(path, std::nullopt);
      return;
    }
    DescribeOtherFile(dir, name);
  }

  LogExtent DumpLog(const std::string& path,
                    std::optional<int64_t> base_offset) {
    absl::StatusOr<LogDumpSummary> summary =
        DumpLogFile(fs_, path, base_offset, log_options_, out_);
    if (!summary.ok()) {
      Damage(
          absl::StrCat("cannot dump ", path, ": ", summary.status().message()));
      return LogExtent{};
    }
    if (summary->damaged()) damaged_ = true;
    return LogExtent{summary->valid_end, summary->next_offset};
  }

  void DumpIndex(const std::string& path, SegmentFileKind kind,
                 int64_t base_offset, const LogExtent& extent, bool entries) {
    if (kind == SegmentFileKind::kOffsetIndex) {
      Note(DumpOffsetIndexFile(fs_, path, base_offset, extent.valid_end,
                               entries, out_));
    } else {
      Note(DumpTimeIndexFile(fs_, path, base_offset, extent.next_offset,
                             entries, out_));
    }
  }

  // The framed extent of the log at `path` (no CRC check), or "unbounded"
  // when it cannot be read.
  LogExtent ExtentOf(const std::string& path, int64_t base_offset) {
    absl::StatusOr<std::unique_ptr<fs::ReadableFile>> file =
        fs::FileOpener::OpenForRead(fs_, path);
    if (!file.ok()) {
      out_ << "NOTE: " << path << " is not readable ("
           << file.status().message()
           << "): index entries are not checked against the log\n";
      return LogExtent{};
    }
    segment::ScanOptions options;
    options.verify_crc = false;
    absl::StatusOr<segment::ScanResult> scan =
        segment::ScanLog(**file, 0, base_offset, options,
                         [](const RecordBatchView&, uint64_t) { return true; });
    if (!scan.ok()) return LogExtent{};
    return LogExtent{scan->valid_end, scan->next_offset};
  }

  void DescribeOtherFile(const std::string& dir, const std::string& name) {
    std::string path = fs::JoinPath(dir, name);
    absl::StatusOr<fs::FileInfo> info = fs_.Stat(path);
    uint64_t size = info.ok() ? info->size : 0;
    if (name == metadata::kLockFileName) {
      if (info.ok() && !info->is_regular) {
        NotAFile(path, "a special file (FIFO, device or socket)");
      } else {
        out_ << "LOCK: " << path
             << ": the partition's lock file (its leader holds it)\n";
      }
    } else if (absl::EndsWith(name, segment::kQuarantineSuffix)) {
      out_ << "QUARANTINED: " << path << " (" << size
           << " bytes): set aside by recovery, never served; dump it by path "
              "to see its content\n";
    } else if (fs::IsAtomicTempFileName(name)) {
      out_ << "TEMPORARY: " << path << " (" << size
           << " bytes): an interrupted atomic write, removed when the "
              "partition is next opened\n";
    } else {
      out_ << "OTHER: " << path << " (" << size
           << " bytes): not a kaas-storage file\n";
    }
  }

  fs::FileSystem& fs_;
  const LogDumpOptions log_options_;
  const bool indexes_;
  std::ostream& out_;
  bool damaged_ = false;
};

int RunDump(const CommandLine& command_line) {
  const Subcommand& self = DumpSubcommand();
  int64_t print_limit = absl::GetFlag(FLAGS_print_limit);
  if (print_limit < 0) return UsageError(self, "--print_limit must be >= 0");
  LogDumpOptions options;
  options.records = absl::GetFlag(FLAGS_records);
  options.print_limit = static_cast<size_t>(print_limit);
  ReadOnlyFileSystem fs(fs::PosixFileSystem::Default());
  Dumper dumper(fs, options, absl::GetFlag(FLAGS_indexes), std::cout);
  dumper.DumpPath(command_line.positional[0]);
  std::cout.flush();
  return dumper.damaged() ? kExitProblems : kExitOk;
}

}  // namespace

const Subcommand& DumpSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "dump";
    subcommand->arguments = "PATH";
    subcommand->positional_arguments = 1;
    subcommand->summary =
        "Decode a partition dir (or a topic or data dir) or one file.";
    subcommand->details =
        "Like Kafka's kafka-dump-log. For a .log segment: one line per batch\n"
        "(position, base and last offset, record count, timestamps, producer\n"
        "id/epoch/base sequence, transactional and control flags with the\n"
        "marker type, CRC valid or not). A torn or corrupt tail is reported\n"
        "where it starts. Metadata files (manifest, recovery-checkpoint,\n"
        "*.snapshot, ~producer-fences, .config.json, .topic-id.json) and\n"
        "index files (.index, .timeindex) are decoded to text. A directory is\n"
        "dumped file by file (metadata, then segments in offset order), and\n"
        "its subdirectories after it. Opens files read-only; changes\n"
        "nothing.\n";
    subcommand->exit_status =
        "0 everything decoded, 1 damage found (CRC mismatch, torn tail, "
        "unreadable or missing file)";
    subcommand->flags = {"records", "indexes", "print_limit"};
    subcommand->run = RunDump;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
