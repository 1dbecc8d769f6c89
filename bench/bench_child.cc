// RunBenchChild: the writer process of scenarios (c) and (d) (protocol in
// bench/child_protocol.h).

#include <stdio.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/bench_command.h"
#include "bench/bench_engine.h"
#include "bench/child_protocol.h"
#include "bench/workload_batch.h"
#include "storage/engine/disk_engine.h"

namespace kaas::bench {
namespace {

// Writes the data set. On success the engine is still open (a clean close
// is the caller's choice).
absl::StatusOr<ChildWriteReport> WriteDataSet(DiskEngine& engine,
                                              const ChildWriteSpec& spec) {
  const TopicPartition tp{spec.topic, kBenchPartition};
  KAAS_RETURN_IF_ERROR(StartTopic(engine, tp));
  const std::string batch = BuildWorkloadBatch(spec.shape, /*seed=*/1,
                                               absl::ToUnixMillis(absl::Now()));
  ChildWriteReport report;
  while (report.bytes + batch.size() <= spec.bytes) {
    KAAS_ASSIGN_OR_RETURN(
        AppendResult appended,
        engine.Append(tp, kWriterEpoch, Acks::kLeader, batch));
    report.end_offset = appended.last_offset + 1;
    report.bytes += batch.size();
    ++report.batches;
  }
  KAAS_ASSIGN_OR_RETURN(report.high_watermark, engine.HighWatermark(tp));
  return report;
}

}  // namespace

int RunBenchChild(const std::vector<std::string>& args) {
  absl::StatusOr<ChildWriteSpec> spec = ParseChildWriteArgs(args);
  if (!spec.ok()) {
    std::cerr << spec.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      OpenBenchEngine(spec->data_dir, spec->flush_interval_messages);
  if (!engine.ok()) {
    std::cerr << "bench-child: " << engine.status() << "\n";
    return 1;
  }
  absl::StatusOr<ChildWriteReport> report = WriteDataSet(**engine, *spec);
  if (!report.ok()) {
    std::cerr << "bench-child: " << report.status() << "\n";
    return 1;
  }
  if (spec->crash) {
    // A process crash: report, then exit without relinquishing, persisting
    // or syncing anything (no destructors, no atexit handlers). What was
    // written stays in the page cache, as after a real crash of the process.
    std::cout << FormatChildReport(*report) << std::flush;
    fflush(stdout);
    _exit(0);
  }
  absl::Status closed = (*engine)->Relinquish({spec->topic, kBenchPartition});
  if (!closed.ok()) {
    std::cerr << "bench-child: closing: " << closed << "\n";
    return 1;
  }
  engine->reset();
  std::cout << FormatChildReport(*report) << std::flush;
  return 0;
}

}  // namespace kaas::bench
