// File: bench/producer_driver.h
//
// The producers of the throughput scenarios (a) and (b) of the standard
// workload, modelled the way an event-loop broker serves them:
//
//   * P logical producers, each with exactly one append in flight: append,
//     wait for the ack, append again. A producer is not a thread.
//   * A small, fixed set of driver threads (the broker's event loops; 2 by
//     default) issues the appends. Producer i belongs to driver i % D, as a
//     connection belongs to one event loop.
//   * An append's ack is its durability future (AppendResult::durable).
//     The driver attaches a completion callback with Then() and moves on to
//     the next ready producer; it never blocks on an fsync. The callback,
//     which runs on the engine's I/O thread that completed the sync (or
//     inline when the future is already complete, as with acks=1), records
//     the latency and hands the producer back to its driver's ready queue.
//   * Exception: when every driver serves a single producer (P <= D, so
//     P = 1 by default), the driver has nothing else to do while its
//     producer waits, and it behaves as a thread-per-producer client does:
//     it calls AppendAndWait, in which the engine may run the fdatasync on
//     the driver's own thread (see Partition::AppendAndWait).
//   * Ack latency = completion time - time of the Append call.
//
// Timeline: the drivers start, `warmup` passes (not counted), then appends
// whose ack completes inside the `window` are counted. The engine's fsync
// counter and fsync latency histogram are sampled at the window's edges. After
// the window no new append is issued; the run returns once every in-flight
// append has completed.
//
// Thread-safety: RunProducers may be called from any thread; it blocks for
// warmup + window + the drain of in-flight appends.

#ifndef KAAS_BENCH_PRODUCER_DRIVER_H_
#define KAAS_BENCH_PRODUCER_DRIVER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/latency_summary.h"
#include "bench/workload_batch.h"
#include "storage/common/api_types.h"
#include "storage/engine/storage_engine.h"

namespace kaas::bench {

struct ProducerRunSpec {
  // The engine to append to (not owned); `tp` must be led at
  // `leader_epoch`, and so must the `partitions - 1` partitions of its topic
  // after it.
  StorageEngine* engine = nullptr;
  TopicPartition tp;
  // Producer i appends to partition tp.partition + i % partitions.
  int partitions = 1;  // >= 1, <= producers
  int64_t leader_epoch = 1;
  Acks acks = Acks::kAll;
  BatchShape shape = kBatch1KiB;
  int producers = 1;       // P >= 1
  int driver_threads = 2;  // D >= 1 (capped at P)
  absl::Duration warmup = absl::Seconds(1);
  absl::Duration window = absl::Seconds(10);
};

struct ProducerRunResult {
  absl::Duration window;
  int64_t batches = 0;  // acks completed inside the window
  int64_t bytes = 0;    // their batch bytes
  int64_t fsyncs = 0;   // engine fsyncs (StorageStats::fsyncs) in the window
  // Their mean duration (StorageStats::fsync_latency over the window): how
  // long one group-commit cycle's syncs kept the device busy.
  absl::Duration fsync_mean;
  LatencySummary latency;  // of the acks counted in `batches`
};

// Runs the producers (see the file comment). Fails with the first error an
// append or its durability future returned (the run stops issuing then).
absl::StatusOr<ProducerRunResult> RunProducers(const ProducerRunSpec& spec);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_PRODUCER_DRIVER_H_
