// The append path's CPU cost without I/O: DiskEngine::Append of the
// workload's 1 KiB batch on a NullFileSystem (writes and syncs do nothing).
//   BM_AppendAcks1/flush:0  validation, CRC32C, the partition lock, the
//                            (discarded) write, index and bookkeeping
//   BM_AppendAcks1/flush:1  the same plus the background sync cycles that
//                            flush.messages=1 requests (group commit)
//   BM_AppendAcksAll         append and wait for the ack: the round trip
//                            through the I/O pool of one acks=all producer
// Real time: the sync cycles run on the engine's I/O threads.

#include <memory>
#include <string>

#include "bench/bench_engine.h"
#include "bench/null_file_system.h"
#include "bench/workload_batch.h"
#include "benchmark/benchmark.h"
#include "storage/engine/disk_engine.h"

namespace kaas::bench {
namespace {

struct NullEngine {
  explicit NullEngine(int64_t flush_interval_messages) {
    DiskEngine::Options options;
    options.data_dir = "/null/engine";
    options.fs = &fs;
    options.default_config.flush_interval_messages = flush_interval_messages;
    absl::StatusOr<std::unique_ptr<DiskEngine>> created =
        DiskEngine::Create(std::move(options));
    if (created.ok()) {
      engine = *std::move(created);
      status = StartTopic(*engine, tp);
    } else {
      status = created.status();
    }
  }

  NullFileSystem fs;  // declared first: outlives the engine
  std::unique_ptr<DiskEngine> engine;
  const TopicPartition tp{"bench", kBenchPartition};
  absl::Status status;
};

void RunAppends(benchmark::State& state, int64_t flush, Acks acks) {
  NullEngine null(flush);
  if (!null.status.ok()) {
    state.SkipWithError(null.status.ToString().c_str());
    return;
  }
  const std::string batch = BuildWorkloadBatch(kBatch1KiB, /*seed=*/1, 0);
  for (auto _ : state) {
    absl::StatusOr<AppendResult> appended =
        null.engine->Append(null.tp, kWriterEpoch, acks, batch);
    absl::Status status = appended.ok() && acks == Acks::kAll
                              ? appended->durable.Wait()
                              : appended.status();
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(batch.size()));
}

void BM_AppendAcks1(benchmark::State& state) {
  RunAppends(state, /*flush=*/state.range(0), Acks::kLeader);
}
BENCHMARK(BM_AppendAcks1)->ArgName("flush")->Arg(0)->Arg(1)->UseRealTime();

void BM_AppendAcksAll(benchmark::State& state) {
  RunAppends(state, /*flush=*/1, Acks::kAll);
}
BENCHMARK(BM_AppendAcksAll)->UseRealTime();

}  // namespace
}  // namespace kaas::bench
