// File: testing/torture/torture_run.h
//
// The torture run behind `./dev torture` (testing/torture/torture_main.cc):
// rounds of concurrent acks=all writers (torture_workload.h), each round
// ended by a crash, then recovery and the full check of torture_check.h.
//
//   * Power-loss rounds run the engine in this process over the
//     fault-injecting filesystem (testing/fault_injecting_file_system.h) and
//     end with a simulated power loss at a random moment while the writers
//     are appending: unsynced bytes are dropped, or survive in part or in
//     full as what was written, zeros or garbage (torn tails).
//   * Kill rounds run the writers in a child process (this executable again,
//     --torture_child) on the real filesystem and SIGKILL it mid-stream; the
//     child reports each acknowledgement on a pipe.
//
// After each crash the engine is opened again at a new leader epoch, the log
// is checked, and each writer's unit in doubt is settled the way a client
// would: an idempotent or transactional writer retries it (the engine must
// answer with the stored copy's offsets if the log kept it, and append it
// otherwise); a plain writer resends it only if the log lost it. Then the
// next round appends on top of the recovered log. Thread scheduling makes a
// run with the same seed vary; the seed fixes the crash options and the
// number of acknowledgements before each crash.
//
// Thread-safety: RunTorture is not reentrant (it owns the data dir).

#ifndef KAAS_TESTING_TORTURE_TORTURE_RUN_H_
#define KAAS_TESTING_TORTURE_TORTURE_RUN_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kaas::torture {

struct TortureOptions {
  // Scratch dir; the run uses <dir>/power-loss and <dir>/kill.
  std::string dir;
  uint64_t seed = 1;
  int power_loss_rounds = 20;
  int kill_rounds = 5;
  int writers = 6;
  int partitions = 3;
  // Each round crashes after a random number of acknowledgements in
  // [1, max_acks_per_round].
  int max_acks_per_round = 150;
  // This executable, for the kill rounds' child (/proc/self/exe).
  std::string self = "/proc/self/exe";
};

// Runs the rounds, printing one line per round to `out`. Errors: kDataLoss
// for a broken invariant (naming the round), other codes for a harness
// failure (the engine could not be opened, the child could not start).
absl::Status RunTorture(const TortureOptions& options, std::ostream& out);

// The child of a kill round: leads the torture partitions at `epoch` in
// `data_dir` (active segments written with direct I/O if `direct_io`), runs
// the writers from unit resume[w] on, and prints
// "acked <writer> <unit> <offset>" for each acknowledgement until killed.
// Returns a process exit code.
int RunTortureChild(const std::string& data_dir, int writers, int partitions,
                    int64_t epoch, bool direct_io,
                    const std::vector<int64_t>& resume);

}  // namespace kaas::torture

#endif  // KAAS_TESTING_TORTURE_TORTURE_RUN_H_
