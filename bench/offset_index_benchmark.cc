// OffsetIndex::Lookup, the first step of every fetch: an index the size of
// a full 1 GiB segment of 1 KiB batches has ~260k entries (one per 4 KiB of
// log). Run with 1 and 2 threads: lookups take a reader lock.

#include <cstdint>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "storage/segment/offset_index.h"

namespace kaas::segment {
namespace {

constexpr int64_t kBaseOffset = 1000000;
constexpr int64_t kRecordsPerBatch = 8;  // the workload's 1KiB batch
constexpr int64_t kBatchesPerEntry = 4;  // 4 x 1029 bytes >= 4096

std::unique_ptr<OffsetIndex> IndexWithEntries(int64_t entries) {
  auto index = std::make_unique<OffsetIndex>(kBaseOffset);
  for (int64_t i = 1; i <= entries; ++i) {
    index->Append(kBaseOffset + i * kBatchesPerEntry * kRecordsPerBatch,
                  static_cast<uint64_t>(i * kBatchesPerEntry * 1029));
  }
  return index;
}

void BM_Lookup(benchmark::State& state) {
  static std::unique_ptr<OffsetIndex> index;
  const int64_t entries = state.range(0);
  if (state.thread_index() == 0) index = IndexWithEntries(entries);
  // Targets spread over the whole segment: a fixed LCG per thread, so every
  // run looks up the same offsets. (The loop's start is a barrier: thread 0
  // has built the index before anyone looks it up.)
  std::vector<int64_t> targets(4096);
  uint64_t x =
      0x9E3779B97F4A7C15u + static_cast<uint64_t>(state.thread_index());
  const int64_t span = entries * kBatchesPerEntry * kRecordsPerBatch;
  for (int64_t& target : targets) {
    x = x * 6364136223846793005u + 1442695040888963407u;
    target = kBaseOffset + static_cast<int64_t>((x >> 17) % span);
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(index->Lookup(targets[i]));
    i = (i + 1) & (targets.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Lookup)
    ->ArgName("entries")
    ->Arg(1 << 10)
    ->Arg(1 << 14)
    ->Arg(260000)
    ->Threads(1)
    ->Threads(2);

}  // namespace
}  // namespace kaas::segment
