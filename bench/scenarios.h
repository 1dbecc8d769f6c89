// File: bench/scenarios.h
//
// The engine scenarios of the standard workload (../shared/bench/
// workload.md), one case (one table row) per call:
//   (a) RunAcksAllThroughput  acks=all, P producers, flush interval 1
//   (b) RunAcksOneThroughput  acks=1, one producer, flush 1 or never
//   (c) RunSequentialRead     a child writes the data set and closes; one
//                             consumer reads it all, 1 MiB per fetch
//   (d) RunReopen             a child writes the data set and closes or
//                             crashes; recovery and take-over are timed
//   (e) RunManyPartitions     acks=all over N partitions of one topic, one
//                             or more producers each
//   (f) RunFetchToSocket      a child writes the data set and closes; one
//                             consumer fetches it all into a loopback TCP
//                             socket, by copy and zero-copy (two rows)
// Each case works in a fresh engine on its own sub-directory of
// `ScenarioContext::root`, which it removes before returning. A failure is
// reported in the row (BenchRow::error), never thrown away.
//
// Thread-safety: thread-compatible; the benchmark runs one case at a time.

#ifndef KAAS_BENCH_SCENARIOS_H_
#define KAAS_BENCH_SCENARIOS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "bench/bench_report.h"
#include "bench/page_cache.h"
#include "bench/workload_batch.h"
#include "fs/file_system.h"

namespace kaas::bench {

struct ScenarioContext {
  fs::FileSystem* fs = nullptr;  // the real filesystem; not owned
  std::string root;              // an existing directory
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration window = absl::Seconds(10);
  int driver_threads = 2;
  // (a) 1KiB P=1: the raw pwrite+fdatasync probe run right before and right
  // after the row (BenchRow::adjacent_fdatasync_ops_per_s); zero: none.
  absl::Duration adjacent_sync_probe = absl::ZeroDuration();
  // (c), (d), (f): the batch bytes the writer child appends.
  uint64_t data_set_bytes = (uint64_t{1} << 30) - (uint64_t{1} << 20);
  // (c), (d), (f): this binary, re-run as `<self> bench-child ...`.
  std::string self_executable;
};

// A context on the real filesystem over the existing directory `root`, for
// a benchmark outside this package that runs one of these scenarios beside
// its own (the broker's, examples/broker/broker_bench.cc).
ScenarioContext RealFileSystemContext(std::string root, absl::Duration warmup,
                                      absl::Duration window);

// How the child of (d) writes and ends.
enum class ReopenCase {
  kCleanClose,           // flush never, relinquished
  kCrashWithoutFsync,    // flush never, exits without closing: full scan
  kCrashWithFlushEvery,  // flush interval 1 (recovery checkpoints), crash
};

// `direct_io`: the engine writes active segments with direct I/O
// (DiskEngine::Options::direct_io), else through the page cache.
BenchRow RunAcksAllThroughput(const ScenarioContext& context,
                              const BatchShape& shape, int producers,
                              bool direct_io = false);
// `flush_interval_messages` <= 0: never.
BenchRow RunAcksOneThroughput(const ScenarioContext& context,
                              const BatchShape& shape,
                              int64_t flush_interval_messages,
                              bool validate_records = false);
BenchRow RunSequentialRead(const ScenarioContext& context,
                           const BatchShape& shape, CacheState cache);
BenchRow RunReopen(const ScenarioContext& context, const BatchShape& shape,
                   ReopenCase reopen, CacheState cache);
// (e): `partitions` partitions of one topic led by one engine, each with
// `producers_per_partition` acks=all producers of 1 KiB batches.
BenchRow RunManyPartitions(const ScenarioContext& context, int partitions,
                           int producers_per_partition);
// (f): the rows "copy" and "zero-copy" of one data set, each with the raw
// sendfile rate of the same files measured in the case.
std::vector<BenchRow> RunFetchToSocket(const ScenarioContext& context,
                                       const BatchShape& shape,
                                       CacheState cache);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_SCENARIOS_H_
