// Scenario (e): acks=all appends spread over many partitions of one topic,
// each led by the same engine, with the producer driver of (a).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/process_stats.h"
#include "base/status_macros.h"
#include "bench/bench_engine.h"
#include "bench/producer_driver.h"
#include "bench/scenarios.h"
#include "fs/fs_util.h"

namespace kaas::bench {

BenchRow RunManyPartitions(const ScenarioContext& context, int partitions,
                           int producers_per_partition) {
  BenchRow row;
  row.scenario = "e";
  row.name = absl::StrCat("(e) ", partitions, " partitions x ",
                          producers_per_partition);
  row.batch = std::string(kBatch1KiB.name);
  row.partitions = partitions;
  row.producers_per_partition = producers_per_partition;
  row.producers = partitions * producers_per_partition;
  row.flush_interval = 1;
  row.acks = "all";
  const std::string dir = fs::JoinPath(
      context.root,
      absl::StrCat("e-", partitions, "x", producers_per_partition));
  absl::Status status = [&]() -> absl::Status {
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenBenchEngine(dir, /*flush_interval_messages=*/1));
    const int64_t resident_before = CurrentResidentBytes();
    for (int p = 0; p < partitions; ++p) {
      KAAS_RETURN_IF_ERROR(StartTopic(*engine, {"bench", p}));
    }
    const int64_t resident_after = CurrentResidentBytes();
    row.open_fds = CurrentOpenFileDescriptors();
    row.threads = CurrentThreadCount();
    if (resident_before >= 0 && resident_after >= 0) {
      row.rss_bytes_per_partition =
          static_cast<double>(resident_after - resident_before) / partitions;
    }

    ProducerRunSpec spec;
    spec.engine = engine.get();
    spec.tp = {"bench", 0};
    spec.partitions = partitions;
    spec.leader_epoch = kWriterEpoch;
    spec.acks = Acks::kAll;
    spec.shape = kBatch1KiB;
    spec.producers = *row.producers;
    spec.driver_threads = context.driver_threads;
    spec.warmup = context.warmup;
    spec.window = context.window;
    KAAS_ASSIGN_OR_RETURN(ProducerRunResult result, RunProducers(spec));
    // As in (a): close without persisting, and join the I/O threads, before
    // the files are removed.
    engine->AbandonTopic("bench");
    engine.reset();

    const double seconds = absl::ToDoubleSeconds(result.window);
    row.batches_per_s = static_cast<double>(result.batches) / seconds;
    row.mb_per_s = static_cast<double>(result.bytes) / 1e6 / seconds;
    row.p50_us = result.latency.p50_us;
    row.p99_us = result.latency.p99_us;
    row.p999_us = result.latency.p999_us;
    row.fsyncs_per_s = static_cast<double>(result.fsyncs) / seconds;
    if (result.fsyncs > 0) {
      row.fsync_mean_us = absl::ToDoubleMicroseconds(result.fsync_mean);
      row.batches_per_fsync = static_cast<double>(result.batches) /
                              static_cast<double>(result.fsyncs);
    }
    return absl::OkStatus();
  }();
  absl::Status removed = fs::RemoveTree(*context.fs, dir);
  if (status.ok()) status = removed;
  if (!status.ok()) row.error = std::string(status.ToString());
  return row;
}

}  // namespace kaas::bench
