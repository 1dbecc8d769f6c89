// File: testing/torture/torture_main.cc
//
// `./dev torture`: the torture run of testing/torture/torture_run.h.
//
//   torture [--rounds=N] [--kill_rounds=N] [--seed=S] [--dir=D] [--keep]
//           [--verbose]
//
// Prints one line per round and ends with "torture: ok ..." (exit 0) or
// "torture: FAILED ..." with the seed and the data dir kept (exit 1).

#include <stdlib.h>

#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "glog/logging.h"
#include "testing/torture/torture_run.h"

ABSL_FLAG(int32_t, rounds, 20, "Power-loss rounds (in-process engine).");
ABSL_FLAG(int32_t, kill_rounds, 5, "SIGKILL rounds (child process).");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the crash points and crash options.");
ABSL_FLAG(int32_t, writers, 6,
          "Concurrent writers (plain, idempotent, transactional in turn).");
ABSL_FLAG(int32_t, partitions, 3, "Partitions the writers share.");
ABSL_FLAG(int32_t, max_acks_per_round, 150,
          "Each round crashes after 1..N acknowledgements.");
ABSL_FLAG(std::string, dir, "",
          "Scratch dir (default: a new one under $TEST_TMPDIR or /tmp).");
ABSL_FLAG(bool, keep, false, "Keep the scratch dir after a passing run.");
ABSL_FLAG(bool, verbose, false,
          "Log the engine's errors (every crash makes some) to stderr.");
// The kill rounds' child (internal).
ABSL_FLAG(bool, torture_child, false,
          "(internal) Run as a kill round's child.");
ABSL_FLAG(int64_t, epoch, 0, "(internal) The child's leader epoch.");
ABSL_FLAG(std::string, resume, "", "(internal) The child's first units.");
ABSL_FLAG(bool, direct_io, false,
          "(internal) The child writes with direct I/O.");

namespace {

std::string MakeScratchDir() {
  const char* base = getenv("TEST_TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base ? base : "/tmp") + "/torture-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    PLOG(FATAL) << "mkdtemp " << pattern;
  }
  return pattern;
}

int RunChild() {
  std::vector<int64_t> resume;
  for (absl::string_view part :
       absl::StrSplit(absl::GetFlag(FLAGS_resume), ',', absl::SkipEmpty())) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 0) {
      std::cerr << "torture child: bad --resume\n";
      return 2;
    }
    resume.push_back(n);
  }
  return kaas::torture::RunTortureChild(
      absl::GetFlag(FLAGS_dir), absl::GetFlag(FLAGS_writers),
      absl::GetFlag(FLAGS_partitions), absl::GetFlag(FLAGS_epoch),
      absl::GetFlag(FLAGS_direct_io), resume);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Crash-and-recover rounds of concurrent acks=all writers; checks that "
      "every acknowledged batch survives byte for byte.");
  absl::ParseCommandLine(argc, argv);
  google::InitGoogleLogging(argv[0]);
  // Log to stderr only; the crashes make the engine log errors by design, so
  // only fatal ones are shown unless asked.
  FLAGS_logtostderr = true;
  if (!absl::GetFlag(FLAGS_verbose)) FLAGS_minloglevel = google::GLOG_FATAL;
  if (absl::GetFlag(FLAGS_torture_child)) return RunChild();

  kaas::torture::TortureOptions options;
  options.dir = absl::GetFlag(FLAGS_dir);
  const bool own_dir = options.dir.empty();
  if (own_dir) options.dir = MakeScratchDir();
  options.seed = absl::GetFlag(FLAGS_seed);
  options.power_loss_rounds = absl::GetFlag(FLAGS_rounds);
  options.kill_rounds = absl::GetFlag(FLAGS_kill_rounds);
  options.writers = absl::GetFlag(FLAGS_writers);
  options.partitions = absl::GetFlag(FLAGS_partitions);
  options.max_acks_per_round = absl::GetFlag(FLAGS_max_acks_per_round);

  const absl::Time start = absl::Now();
  absl::Status status = kaas::torture::RunTorture(options, std::cout);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!status.ok()) {
    std::cout << "torture: FAILED (seed " << options.seed << "): " << status
              << "\ntorture: the data dir is kept in " << options.dir
              << std::endl;
    return 1;
  }
  std::cout << "torture: ok: seed " << options.seed << ", "
            << options.power_loss_rounds << " power-loss rounds, "
            << options.kill_rounds << " kill rounds, " << options.writers
            << " writers on " << options.partitions << " partitions, in "
            << seconds << " s" << std::endl;
  if (own_dir && !absl::GetFlag(FLAGS_keep)) {
    (void)kaas::fs::RemoveTree(*kaas::fs::PosixFileSystem::Default(),
                               options.dir);
  }
  return 0;
}
