// File: tools/verify.cc
//
// `kaaslog verify DATA_DIR [--repair]`: the read-only check of
// tools/partition_check.h, printed; with --repair, what the engine itself
// does to a damaged partition (DiskEngine::RecoverPartition, then the index
// rebuild a first read of a closed segment does), reported, and a second
// check.

#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "fs/posix_file_system.h"
#include "storage/engine/disk_engine.h"
#include "storage/metadata/partition_files.h"
#include "storage/segment/read_handle_cache.h"
#include "storage/segment/segment.h"
#include "tools/cli.h"
#include "tools/data_dir_check.h"
#include "tools/partition_check.h"
#include "tools/read_only_file_system.h"
#include "tools/subcommands.h"

ABSL_FLAG(bool, repair, false,
          "Repair the partitions with problems exactly the way the engine "
          "does when it opens them (what the check says recovery does: "
          "truncate a torn tail, delete strays, quarantine a deposed leader's "
          "segment, rebuild indexes, recreate a lost manifest) and nothing "
          "more, report what was done, and check again. Damage recovery does "
          "not see (below the recovery checkpoint) stays, reported.");

namespace kaas::tools {

using ::kaas::partition::OpenReport;
namespace {

void PrintFindings(const std::vector<Finding>& findings, std::ostream& out) {
  for (const Finding& finding : findings) {
    // Messages of the storage layers often name the path already.
    absl::string_view message = finding.message;
    absl::ConsumePrefix(&message, absl::StrCat(finding.path, ": "));
    out << "  " << (finding.problem ? "problem: " : "note: ") << finding.path
        << ": " << message << "\n";
  }
}

void PrintPartition(const PartitionCheck& check, std::ostream& out) {
  out << check.tp.ToString() << ": "
      << Plural(check.segments.size(), "segment", "segments") << ", "
      << Plural(check.batches, "batch", "batches") << " (" << check.log_bytes
      << " bytes)";
  if (check.batches > 0) {
    out << ", offsets " << check.first_offset << ".." << check.next_offset - 1;
  }
  if (check.leader_epoch >= 0) out << ", leader epoch " << check.leader_epoch;
  int problems = check.problems();
  out << ": "
      << (problems == 0 ? "OK" : Plural(problems, "problem", "problems"))
      << "\n";
  PrintFindings(check.findings, out);
}

void PrintCheck(const DataDirCheck& check, std::ostream& out) {
  PrintFindings(check.findings, out);
  for (const PartitionCheck& partition : check.partitions) {
    PrintPartition(partition, out);
  }
  out << "verify: "
      << Plural(check.partitions.size(), "partition", "partitions")
      << " checked, " << Plural(check.problems(), "problem", "problems") << ", "
      << Plural(check.notes(), "note", "notes") << "\n";
}

void PrintOpenReport(const TopicPartition& tp, const OpenReport& report,
                     std::ostream& out) {
  out << "repair " << tp.ToString() << ": recovery took "
      << absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(report.duration))
      << ", verified " << report.scanned_bytes << " bytes ("
      << (report.used_checkpoint ? "from the recovery checkpoint"
                                 : "every segment")
      << "), truncated " << report.truncated_bytes << " bytes, deleted "
      << Plural(report.deleted_segments, "segment", "segments")
      << ", quarantined "
      << (report.quarantined.empty() ? "nothing"
                                     : absl::StrJoin(report.quarantined, ", "))
      << "\n";
  for (const std::string& problem : report.problems) {
    out << "  recovery: " << problem << "\n";
  }
}

// Rebuilds a closed segment's index files from its log and writes them back,
// as the first read of the segment would for invalid ones; unlike a read, it
// also replaces files that are well-formed but disagree with the log.
absl::Status RebuildClosedSegmentIndexes(fs::FileSystem& fs,
                                         const std::string& dir,
                                         const SegmentCheck& segment,
                                         int64_t next_offset,
                                         uint64_t index_interval_bytes) {
  segment::ReadHandleCache cache(1);
  segment::SegmentOptions options;
  options.fs = &fs;
  options.cache = &cache;
  options.index_interval_bytes = index_interval_bytes;
  std::shared_ptr<segment::Segment> listed =
      segment::Segment::Listed(options, dir, segment.id, segment.size);
  listed->SetNextOffset(next_offset);
  return listed->RebuildIndexFiles();
}

// Repairs one partition the way opening it does (a leader's recovery), then
// does what the first read of a closed segment with damaged indexes does;
// returns false if something could not be done.
bool RepairPartition(DiskEngine& engine, const PartitionCheck& before,
                     std::ostream& out) {
  absl::StatusOr<OpenReport> report = engine.RecoverPartition(before.tp);
  if (!report.ok()) {
    out << "repair " << before.tp.ToString()
        << ": recovery failed: " << ErrorLine(report.status()) << "\n";
    return false;
  }
  PrintOpenReport(before.tp, *report, out);
  absl::StatusOr<PartitionConfig> config = engine.EffectiveConfig(before.tp);
  const uint64_t index_interval =
      config.ok() ? config->index_interval_bytes : 4096;
  // Closed segments' index files are recovery's to leave to their first
  // read: do it now, holding the partition's lock as any writer does.
  absl::StatusOr<std::unique_ptr<fs::FileLock>> lock =
      metadata::LockPartitionDir(engine.fs(), before.dir);
  if (!lock.ok()) {
    out << "repair " << before.tp.ToString() << ": " << ErrorLine(lock.status())
        << "\n";
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i + 1 < before.segments.size(); ++i) {
    const SegmentCheck& segment = before.segments[i];
    if (!segment.closed || !segment.index_damaged) continue;
    absl::Status status = RebuildClosedSegmentIndexes(
        engine.fs(), before.dir, segment, before.segments[i + 1].id.base_offset,
        index_interval);
    out << "repair " << before.tp.ToString() << ": indexes of segment "
        << segment::SegmentStem(segment.id)
        << (status.ok() ? " rebuilt from the log"
                        : absl::StrCat(" not rebuilt: ", status.ToString()))
        << "\n";
    ok &= status.ok();
  }
  return ok;
}

// A read-only engine over `read_only` (nothing it does can change the dir).
absl::StatusOr<std::unique_ptr<DiskEngine>> InspectingEngine(
    ReadOnlyFileSystem& read_only, const std::string& data_dir) {
  DiskEngine::Options options;
  options.data_dir = data_dir;
  options.fs = &read_only;
  options.read_only = true;
  options.io_threads = 1;
  options.producer_expiry_interval = absl::ZeroDuration();
  return DiskEngine::Create(std::move(options));
}

int RunVerify(const CommandLine& command_line) {
  const Subcommand& self = VerifySubcommand();
  const std::string& data_dir = command_line.positional[0];
  ReadOnlyFileSystem read_only(fs::PosixFileSystem::Default());
  absl::StatusOr<fs::FileInfo> info = read_only.Stat(data_dir);
  if (!info.ok()) {
    return Failure(self, absl::IsNotFound(info.status())
                             ? absl::StrCat(data_dir, " does not exist")
                             : absl::StrCat("cannot stat ", data_dir, ": ",
                                            info.status().message()));
  }
  if (!info->is_directory) {
    return Failure(self, absl::StrCat(data_dir, " is not a directory"));
  }
  std::cout << "Checking data dir " << data_dir << " (read-only)\n";
  DataDirCheck check;
  {
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        InspectingEngine(read_only, data_dir);
    if (!engine.ok()) return Failure(self, ErrorLine(engine.status()));
    check = CheckDataDir(**engine, data_dir);
  }
  PrintCheck(check, std::cout);
  if (!absl::GetFlag(FLAGS_repair) || check.problems() == 0) {
    return check.problems() == 0 ? kExitOk : kExitProblems;
  }

  std::cout << "\nRepairing " << data_dir
            << " (what opening each partition does)\n";
  bool repaired = true;
  {
    DiskEngine::Options options;
    options.data_dir = data_dir;
    options.io_threads = 1;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    if (!engine.ok()) {
      return Failure(self, absl::StrCat("cannot open the data dir: ",
                                        ErrorLine(engine.status())));
    }
    for (const PartitionCheck& partition : check.partitions) {
      if (partition.problems() == 0) continue;
      repaired &= RepairPartition(**engine, partition, std::cout);
    }
  }
  std::cout << "\nChecking " << data_dir << " again\n";
  DataDirCheck after;
  {
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        InspectingEngine(read_only, data_dir);
    if (!engine.ok()) return Failure(self, ErrorLine(engine.status()));
    after = CheckDataDir(**engine, data_dir);
  }
  PrintCheck(after, std::cout);
  return repaired && after.problems() == 0 ? kExitOk : kExitProblems;
}

}  // namespace

const Subcommand& VerifySubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "verify";
    subcommand->arguments = "DATA_DIR";
    subcommand->positional_arguments = 1;
    subcommand->summary =
        "Check every partition of a data dir without changing anything.";
    subcommand->details =
        "Checks, read-only (every file is opened through a filesystem that\n"
        "refuses changes): the CRC32C, framing and field values of every "
        "batch;\n"
        "offsets contiguous and increasing within and across segments; "
        "segment\n"
        "naming and leader epochs (a deposed leader's segment); the .index "
        "and\n"
        "the .timeindex of every segment against its log; the manifest, the\n"
        "recovery checkpoint (against the log), the state snapshots, the\n"
        "producer fences and the topics' .config.json / .topic-id.json.\n"
        "Prints each problem with its file and position, and says what\n"
        "recovery would do about it. Notes are benign leftovers.\n"
        "With --repair, each partition with problems is recovered as the "
        "engine\n"
        "recovers it when opening it (DiskEngine::RecoverPartition), closed\n"
        "segments' damaged indexes are rebuilt, what was done is reported, "
        "and\n"
        "the data dir is checked again.\n";
    subcommand->exit_status =
        "0 no problems (after repair, with --repair), 1 problems";
    subcommand->flags = {"repair"};
    subcommand->run = RunVerify;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
