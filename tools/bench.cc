// File: tools/bench.cc
//
// `kaaslog bench`: the command line of the standard benchmark workload,
// which bench/bench_command.h runs; and its hidden writer child,
// `kaaslog bench-child`, whose arguments bench/ parses itself.

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "bench/bench_command.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

ABSL_FLAG(
    std::vector<std::string>, scenarios, {},
    "Comma-separated scenarios to run, of a,b,c,d,e,f,raw (default: all).");
ABSL_FLAG(double, seconds, 10, "Measured window of each row, in seconds.");
ABSL_FLAG(double, warmup_seconds, 1,
          "Warm-up before each measured window, in seconds (not counted).");
ABSL_FLAG(bool, quick, false,
          "Short windows and a 256 MiB data set, for smoke runs.");
ABSL_FLAG(std::string, format, "table", "table or json.");

namespace kaas::tools {
namespace {

// The path of this executable, which the (c) and (d) scenarios re-run.
std::string SelfExecutable() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(path, static_cast<size_t>(n));
}

int RunBenchCommand(const CommandLine& command_line) {
  const Subcommand& self = BenchSubcommand();
  bench::BenchOptions options;
  // Unless told otherwise, a subdirectory of the default data dir.
  if (command_line.Specified("data_dir")) {
    options.data_dir = absl::GetFlag(FLAGS_data_dir);
  }
  const std::vector<std::string>& known = bench::BenchScenarioNames();
  for (const std::string& scenario : absl::GetFlag(FLAGS_scenarios)) {
    if (std::find(known.begin(), known.end(), scenario) == known.end()) {
      return UsageError(
          self, absl::StrCat("unknown scenario \"", scenario,
                             "\" (known: ", absl::StrJoin(known, ","), ")"));
    }
    options.scenarios.insert(scenario);
  }
  double seconds = absl::GetFlag(FLAGS_seconds);
  double warmup = absl::GetFlag(FLAGS_warmup_seconds);
  if (!(seconds > 0) || !(warmup >= 0)) {
    return UsageError(self, "--seconds must be > 0 and --warmup_seconds >= 0");
  }
  options.seconds = absl::Seconds(seconds);
  options.warmup_seconds = absl::Seconds(warmup);
  options.quick = absl::GetFlag(FLAGS_quick);
  options.format = absl::GetFlag(FLAGS_format);
  if (options.format != "table" && options.format != "json") {
    return UsageError(self, "--format must be table or json");
  }
  options.self_executable = SelfExecutable();
  return bench::RunBench(options, std::cout, std::cerr);
}

int RunBenchChild(const CommandLine& command_line) {
  return bench::RunBenchChild(command_line.positional);
}

}  // namespace

const Subcommand& BenchSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "bench";
    subcommand->summary =
        "Run the standard benchmark workload (shared/bench/workload.md).";
    subcommand->details =
        "Runs the selected scenarios on the production engine in --data_dir\n"
        "(what the benchmark creates there is removed after), with the\n"
        "raw-device baselines measured in the same run, and prints one table\n"
        "per scenario (or one JSON object). Progress goes to stderr. Build\n"
        "with --config=opt for meaningful figures.\n";
    subcommand->exit_status = "0 ok, 1 a scenario failed";
    subcommand->flags = {"data_dir",       "scenarios", "seconds",
                         "warmup_seconds", "quick",     "format"};
    subcommand->help_defaults = {{"data_dir", "\"./kaas-data/bench\""}};
    subcommand->run = RunBenchCommand;
    return subcommand;
  }();
  return *subcommand;
}

const Subcommand& BenchChildSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "bench-child";
    subcommand->arguments = "ARGS...";
    subcommand->summary =
        "(internal) The writer process of bench scenarios (c) and (d).";
    subcommand->hidden = true;
    subcommand->raw_arguments = true;
    subcommand->run = RunBenchChild;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
