// File: bench/subprocess.h
//
// Runs a child process and captures its standard output: the writer process
// of the read and reopen scenarios (a re-exec of the benchmark binary with
// the hidden `bench-child` subcommand) reports what it wrote on stdout.
//
// Thread-safety: thread-safe; blocks until the child exits.

#ifndef KAAS_BENCH_SUBPROCESS_H_
#define KAAS_BENCH_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kaas::bench {

struct ChildOutcome {
  // The exit status, or 128 + the signal number if a signal killed it.
  int exit_code = 0;
  std::string stdout_text;
};

// Spawns `argv[0]` (a path, not looked up in PATH) with `argv` and this
// process's environment, standard input and standard error; collects its
// standard output until it exits. Errors: spawning or waiting failed
// (the message names the executable). REQUIRES: !argv.empty().
absl::StatusOr<ChildOutcome> RunChild(const std::vector<std::string>& argv);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_SUBPROCESS_H_
