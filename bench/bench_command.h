// File: bench/bench_command.h
//
// The contract between `kaaslog bench` (tools/, which parses the command
// line) and the standard benchmark workload (bench/, which runs it; see
// ../shared/bench/workload.md and README "Performance").
//
// Thread-safety: RunBench and RunBenchChild are called once per process from
// main().

#ifndef KAAS_BENCH_BENCH_COMMAND_H_
#define KAAS_BENCH_BENCH_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace kaas::bench {

struct BenchOptions {
  // Where every scenario creates its topics and the raw baselines their
  // files. Created if missing; what the benchmark creates is removed after.
  std::string data_dir = "./kaas-data/bench";
  // Any of BenchScenarioNames(); empty = all.
  std::set<std::string> scenarios;
  absl::Duration seconds = absl::Seconds(10);        // measured window
  absl::Duration warmup_seconds = absl::Seconds(1);  // not counted
  // Short windows (at most 1 s measured, 0.2 s warm-up) and a 256 MiB data
  // set (child writes and raw sequential file), for smoke runs.
  bool quick = false;
  // "table" (mirrors the workload document, with ratios to the raw
  // baselines) or "json" (one object: {"raw": {...}, "rows": [...]}).
  std::string format = "table";
  // This executable, re-run with the hidden child subcommand by the
  // scenarios that need a separate writer process ((c) and (d)).
  std::string self_executable;

  // ---- Not on the command line: for tests of the benchmark itself. ----
  // When non-zero, the size of the data set the (c)/(d) writer child
  // appends and of the raw sequential write/read, instead of 1 GiB - 1 MiB
  // and 2 GiB (256 MiB for both with `quick`), so that a test runs every
  // scenario in seconds. The raw fdatasync loop always runs for half of
  // `seconds`, so a test shrinks it with `seconds`.
  uint64_t data_set_bytes_for_test = 0;
  // When non-empty, the partition counts of (e) instead of 1, 16, 256 and
  // 1024.
  std::vector<int> partition_counts_for_test;
};

// The scenarios a run may select: "a" ... "f" and "raw" (the raw-device
// baselines).
const std::vector<std::string>& BenchScenarioNames();

// Runs the selected scenarios, writing one progress line per scenario to
// `progress` and the report to `out`. Returns the process exit code (0 ok,
// 1 a scenario failed, 2 bad options).
int RunBench(const BenchOptions& options, std::ostream& out,
             std::ostream& progress);

// The hidden `kaaslog bench-child ARGS...` subcommand: the writer process of
// scenarios (c) and (d). `args` are the arguments after the subcommand name.
int RunBenchChild(const std::vector<std::string>& args);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_BENCH_COMMAND_H_
