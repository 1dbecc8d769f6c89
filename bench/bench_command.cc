// RunBench: validates the options, runs the selected scenarios of the
// standard workload in a private directory under the data dir, reports, and
// removes what it created.

#include "bench/bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/bench_report.h"
#include "bench/page_cache.h"
#include "bench/raw_baselines.h"
#include "bench/scenarios.h"
#include "bench/workload_batch.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"

namespace kaas::bench {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kFullDataSetBytes = 1024 * kMiB - kMiB;  // 1 GiB - 1 MiB
constexpr uint64_t kFullRawSequentialBytes = 2048 * kMiB;
constexpr uint64_t kQuickBytes = 256 * kMiB;
constexpr absl::Duration kQuickWindow = absl::Seconds(1);
constexpr absl::Duration kQuickWarmup = absl::Milliseconds(200);
constexpr int kDriverThreads = 2;
constexpr int kProducerCounts[] = {1, 4, 16, 64};

constexpr int kPartitionCounts[] = {1, 16, 256, 1024};

absl::Status Validate(const BenchOptions& options) {
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("the data dir is empty");
  }
  for (const std::string& scenario : options.scenarios) {
    const std::vector<std::string>& known = BenchScenarioNames();
    if (std::find(known.begin(), known.end(), scenario) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown scenario \"", scenario,
                       "\" (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  if (options.seconds <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the measured window must be positive, not ",
                     absl::FormatDuration(options.seconds)));
  }
  if (options.warmup_seconds < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the warm-up must not be negative, not ",
                     absl::FormatDuration(options.warmup_seconds)));
  }
  if (options.format != "table" && options.format != "json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown format \"", options.format, "\" (known: table, json)"));
  }
  const bool needs_child =
      options.scenarios.empty() || options.scenarios.count("c") > 0 ||
      options.scenarios.count("d") > 0 || options.scenarios.count("f") > 0;
  if (needs_child && options.self_executable.empty()) {
    return absl::InvalidArgumentError(
        "scenarios c, d and f need the path of this executable to run their "
        "writer child (self_executable)");
  }
  return absl::OkStatus();
}

std::string Summary(const BenchRow& row) {
  if (row.error.has_value()) return absl::StrCat("FAILED: ", *row.error);
  if (row.scenario == "a" || row.scenario == "b" || row.scenario == "e") {
    return absl::StrFormat(
        "%.0f batches/s, %.1f MB/s, p50 %.0f us, p99 %.0f us",
        row.batches_per_s.value_or(0), row.mb_per_s.value_or(0),
        row.p50_us.value_or(0), row.p99_us.value_or(0));
  }
  if (row.scenario == "c") {
    return absl::StrFormat("%.1f MB/s", row.mb_per_s.value_or(0));
  }
  if (row.scenario == "f") {
    return absl::StrFormat("%.1f MB/s (raw sendfile %.1f MB/s)",
                           row.mb_per_s.value_or(0),
                           row.sendfile_mb_per_s.value_or(0));
  }
  return absl::StrFormat("open %.1f ms, take-over %.1f ms, hwm %s",
                         row.open_ms.value_or(0), row.takeover_ms.value_or(0),
                         row.hwm_ok.value_or(false) ? "ok" : "BAD");
}

class Runner {
 public:
  Runner(const BenchOptions& options, std::ostream& progress)
      : options_(options), progress_(progress) {}

  // Runs the selected scenarios into `report`; false if any failed.
  bool Run(const std::string& root, BenchReport* report) {
    ScenarioContext context;
    context.fs = fs::PosixFileSystem::Default();
    context.root = root;
    context.warmup = report->warmup;
    context.window = report->window;
    context.driver_threads = report->driver_threads;
    // The probes around the 1-producer row belong to the raw baselines.
    if (Selected("raw")) context.adjacent_sync_probe = report->window / 5;
    context.data_set_bytes = report->data_set_bytes;
    context.self_executable = options_.self_executable;

    if (Selected("raw")) {
      RawBaselineSpec spec;
      spec.dir = root;
      spec.sync_window = report->window / 2;
      spec.sequential_bytes = report->raw_sequential_bytes;
      const absl::Time start = absl::Now();
      absl::StatusOr<RawBaselines> raw = MeasureRawBaselines(*context.fs, spec);
      if (raw.ok()) {
        report->raw = *raw;
        Progress("raw baselines",
                 absl::StrFormat("fdatasync %.0f ops/s (p50 %.0f us), write "
                                 "%.1f MB/s, read warm %.1f / cold %.1f MB/s",
                                 raw->fdatasync_ops_per_s,
                                 raw->fdatasync_p50_us, raw->seq_write_mb_per_s,
                                 raw->seq_read_warm_mb_per_s,
                                 raw->seq_read_cold_mb_per_s),
                 start);
      } else {
        failed_ = true;
        Progress("raw baselines",
                 absl::StrCat("FAILED: ", raw.status().ToString()), start);
      }
    }
    if (Selected("a")) {
      // Both write paths of the engine: through the page cache (the
      // default) and with direct I/O.
      for (bool direct_io : {false, true}) {
        for (const BatchShape& shape : {kBatch1KiB, kBatch16KiB}) {
          for (int producers : kProducerCounts) {
            Add(report, [&] {
              return RunAcksAllThroughput(context, shape, producers, direct_io);
            });
          }
        }
      }
    }
    if (Selected("b")) {
      for (const BatchShape& shape : {kBatch1KiB, kBatch16KiB}) {
        for (int64_t flush : {int64_t{1}, int64_t{0}}) {
          Add(report,
              [&] { return RunAcksOneThroughput(context, shape, flush); });
        }
        // What record validation costs the append path (off by default).
        Add(report, [&] {
          return RunAcksOneThroughput(context, shape, /*flush=*/0,
                                      /*validate_records=*/true);
        });
      }
    }
    if (Selected("c")) {
      Add(report, [&] {
        return RunSequentialRead(context, kBatch16KiB, CacheState::kWarm);
      });
      Add(report, [&] {
        return RunSequentialRead(context, kBatch16KiB, CacheState::kCold);
      });
      Add(report, [&] {
        return RunSequentialRead(context, kBatch1KiB, CacheState::kWarm);
      });
    }
    if (Selected("d")) {
      for (ReopenCase reopen :
           {ReopenCase::kCleanClose, ReopenCase::kCrashWithoutFsync,
            ReopenCase::kCrashWithFlushEvery}) {
        for (CacheState cache : {CacheState::kWarm, CacheState::kCold}) {
          Add(report,
              [&] { return RunReopen(context, kBatch16KiB, reopen, cache); });
        }
      }
      Add(report, [&] {
        return RunReopen(context, kBatch1KiB, ReopenCase::kCrashWithoutFsync,
                         CacheState::kWarm);
      });
    }
    if (Selected("e")) {
      std::vector<int> counts(std::begin(kPartitionCounts),
                              std::end(kPartitionCounts));
      if (!options_.partition_counts_for_test.empty()) {
        counts = options_.partition_counts_for_test;
      }
      for (int per_partition : {1, 4}) {
        for (int partitions : counts) {
          Add(report, [&] {
            return RunManyPartitions(context, partitions, per_partition);
          });
        }
      }
    }
    if (Selected("f")) {
      for (const BatchShape& shape : {kBatch16KiB, kBatch1KiB}) {
        for (CacheState cache : {CacheState::kWarm, CacheState::kCold}) {
          AddRows(report,
                  [&] { return RunFetchToSocket(context, shape, cache); });
        }
      }
    }
    return !failed_;
  }

 private:
  bool Selected(const std::string& scenario) const {
    return options_.scenarios.empty() || options_.scenarios.count(scenario) > 0;
  }

  void Add(BenchReport* report, const std::function<BenchRow()>& run) {
    AddRows(report, [&] { return std::vector<BenchRow>{run()}; });
  }

  void AddRows(BenchReport* report,
               const std::function<std::vector<BenchRow>()>& run) {
    const absl::Time start = absl::Now();
    for (BenchRow& row : run()) {
      failed_ |= row.error.has_value();
      Progress(row.name, Summary(row), start);
      report->rows.push_back(std::move(row));
    }
  }

  void Progress(absl::string_view what, absl::string_view summary,
                absl::Time start) {
    progress_ << absl::StrFormat("[bench] %s: %s (%.1f s)\n", what, summary,
                                 absl::ToDoubleSeconds(absl::Now() - start))
              << std::flush;
  }

  const BenchOptions& options_;
  std::ostream& progress_;
  bool failed_ = false;
};

}  // namespace

const std::vector<std::string>& BenchScenarioNames() {
  static const auto* const kNames =
      new std::vector<std::string>{"a", "b", "c", "d", "e", "f", "raw"};
  return *kNames;
}

int RunBench(const BenchOptions& options, std::ostream& out,
             std::ostream& progress) {
  if (absl::Status valid = Validate(options); !valid.ok()) {
    progress << "bench: " << valid.message() << "\n";
    return 2;
  }
  BenchReport report;
  report.data_dir = options.data_dir;
  report.quick = options.quick;
  report.window =
      options.quick ? std::min(options.seconds, kQuickWindow) : options.seconds;
  report.warmup = options.quick ? std::min(options.warmup_seconds, kQuickWarmup)
                                : options.warmup_seconds;
  report.driver_threads = kDriverThreads;
  report.data_set_bytes = options.quick ? kQuickBytes : kFullDataSetBytes;
  report.raw_sequential_bytes =
      options.quick ? kQuickBytes : kFullRawSequentialBytes;
  if (options.data_set_bytes_for_test > 0) {
    report.data_set_bytes = options.data_set_bytes_for_test;
    report.raw_sequential_bytes = options.data_set_bytes_for_test;
  }

  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  absl::StatusOr<bool> existed = fs.Exists(options.data_dir);
  // Everything goes into a private directory, removed at the end (with the
  // data dir itself if this run created it).
  const std::string root =
      fs::JoinPath(options.data_dir, absl::StrCat("kaas-bench-", getpid()));
  absl::Status ready = existed.status();
  if (ready.ok()) ready = fs.CreateDirs(options.data_dir);
  if (ready.ok()) ready = fs::RemoveTree(fs, root);
  if (ready.ok()) ready = fs.CreateDirs(root);
  if (!ready.ok()) {
    progress << "bench: cannot prepare " << root << ": " << ready << "\n";
    return 1;
  }

  bool ok = Runner(options, progress).Run(root, &report);

  absl::Status removed = fs::RemoveTree(fs, *existed ? root : options.data_dir);
  if (!removed.ok()) {
    progress << "bench: cleaning up: " << removed << "\n";
    ok = false;
  }
  out << (options.format == "json" ? RenderJson(report) : RenderTable(report))
      << std::flush;
  return ok ? 0 : 1;
}

}  // namespace kaas::bench
