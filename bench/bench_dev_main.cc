// A development entry point for the standard benchmark until `kaaslog bench`
// (tools/) exists, and the writer child of the benchmark's own test:
//
//   bench_dev [--data_dir=DIR] [--scenarios=a,b,c,d,raw] [--seconds=S]
//             [--warmup_seconds=S] [--quick] [--format=table|json]
//   bench_dev bench-child ARGS...      (the hidden writer subcommand)

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "bench/bench_command.h"
#include "bench/child_protocol.h"

namespace {

bool ParseSeconds(absl::string_view text, absl::Duration* out) {
  double seconds;
  if (!absl::SimpleAtod(text, &seconds)) return false;
  *out = absl::Seconds(seconds);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == kaas::bench::kBenchChildCommand) {
    return kaas::bench::RunBenchChild(
        std::vector<std::string>(args.begin() + 1, args.end()));
  }
  kaas::bench::BenchOptions options;
  options.self_executable = "/proc/self/exe";
  for (const std::string& arg : args) {
    absl::string_view value = arg;
    if (absl::ConsumePrefix(&value, "--data_dir=")) {
      options.data_dir = std::string(value);
    } else if (absl::ConsumePrefix(&value, "--scenarios=")) {
      for (absl::string_view s :
           absl::StrSplit(value, ',', absl::SkipEmpty())) {
        options.scenarios.insert(std::string(s));
      }
    } else if (absl::ConsumePrefix(&value, "--seconds=")) {
      if (!ParseSeconds(value, &options.seconds)) {
        std::cerr << "bad --seconds: " << value << "\n";
        return 2;
      }
    } else if (absl::ConsumePrefix(&value, "--warmup_seconds=")) {
      if (!ParseSeconds(value, &options.warmup_seconds)) {
        std::cerr << "bad --warmup_seconds: " << value << "\n";
        return 2;
      }
    } else if (absl::ConsumePrefix(&value, "--format=")) {
      options.format = std::string(value);
    } else if (arg == "--quick") {
      options.quick = true;
    } else {
      std::cerr << "unknown argument: " << arg << "\n";
      return 2;
    }
  }
  return kaas::bench::RunBench(options, std::cout, std::cerr);
}
