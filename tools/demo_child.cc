// File: tools/demo_child.cc
//
// `kaaslog demo-child` (hidden): the process `kaaslog demo` crashes. Takes
// the demo topic's partitions over at --child_epoch, then runs
// --crash_writers idempotent producers appending demo batches with
// acks=all, and prints one line per acknowledged (durable) batch:
//   acked producer=<p> batch=<n> offset=<base offset>
// until it is killed (the parent sends SIGKILL; the child also dies with its
// parent) or reaches a safety cap.

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "storage/engine/disk_engine.h"
#include "tools/child_process.h"
#include "tools/cli.h"
#include "tools/demo_flags.h"
#include "tools/demo_workload.h"
#include "tools/subcommands.h"

ABSL_FLAG(int32_t, child_first_producer, 0,
          "Demo producer index of the child's first writer.");
ABSL_FLAG(int64_t, child_base_timestamp_ms, 0,
          "Base timestamp of the child's batches.");
ABSL_FLAG(int64_t, child_epoch, 2, "Leader epoch the child takes over at.");

namespace kaas::tools {
namespace {

int RunDemoChild(const CommandLine& command_line) {
  const Subcommand& self = DemoChildSubcommand();
  // Never outlive the demo that watches us.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return Failure(self, "the demo is gone");

  DemoShape shape{absl::GetFlag(FLAGS_records_per_batch),
                  absl::GetFlag(FLAGS_value_bytes)};
  const int partitions = absl::GetFlag(FLAGS_partitions);
  const int writers = absl::GetFlag(FLAGS_crash_writers);
  const int first_producer = absl::GetFlag(FLAGS_child_first_producer);
  const int64_t base_timestamp = absl::GetFlag(FLAGS_child_base_timestamp_ms);
  const int64_t epoch = absl::GetFlag(FLAGS_child_epoch);
  if (shape.records_per_batch < 1 || shape.value_bytes < 0 || partitions < 1 ||
      writers < 1 || first_producer < 0) {
    return UsageError(self, "invalid demo shape");
  }
  // Sequences are int32: stop well before they wrap.
  const int64_t max_batches =
      std::min<int64_t>(int64_t{1} << 20, INT32_MAX / shape.records_per_batch);

  DiskEngine::Options options;
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.default_config.segment_bytes =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_segment_bytes));
  options.io_threads = 2;
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(std::move(options));
  if (!engine.ok()) return Failure(self, engine.status().ToString());
  for (int p = 0; p < partitions; ++p) {
    absl::Status status = (*engine)->TakeOver({kDemoTopic, p}, epoch).status();
    if (!status.ok()) return Failure(self, status.ToString());
  }

  LineWriter out;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, producer = first_producer + w] {
      TopicPartition tp{kDemoTopic, producer % partitions};
      for (int64_t n = 0; n < max_batches && !failed.load(); ++n) {
        absl::StatusOr<AppendResult> result = (*engine)->AppendAndWait(
            tp, epoch, Acks::kAll,
            DemoBatch(shape, producer, n, base_timestamp));
        if (!result.ok()) {
          std::cerr << "kaaslog demo-child: producer " << producer << " batch "
                    << n << ": " << result.status() << "\n";
          failed = true;
          return;
        }
        if (!out.Write(absl::StrFormat("acked producer=%d batch=%d offset=%d\n",
                                       producer, n, result->base_offset))) {
          failed = true;  // the demo stopped listening
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return failed ? kExitProblems : kExitOk;
}

}  // namespace

const Subcommand& DemoChildSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "demo-child";
    subcommand->summary =
        "(internal) The process `kaaslog demo` crashes on purpose.";
    subcommand->details =
        "Appends demo batches with acks=all and prints \"acked producer=P "
        "batch=N\noffset=O\" for each acknowledged batch until killed.\n";
    subcommand->flags = {"data_dir",
                         "partitions",
                         "records_per_batch",
                         "value_bytes",
                         "crash_writers",
                         "segment_bytes",
                         "child_first_producer",
                         "child_base_timestamp_ms",
                         "child_epoch"};
    subcommand->hidden = true;
    subcommand->run = RunDemoChild;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
