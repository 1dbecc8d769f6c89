// RecordBatchView::Parse on typical producer batches: header validation plus
// the CRC32C of everything after byte 21, i.e. the per-batch cost of Append's
// pre-lock parse.

#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"
#include "storage/batch/record_batch.h"
#include "testing/batch_builder.h"

namespace kaas {
namespace {

std::string BatchOf(int records) {
  return test::BatchBuilder()
      .Producer(1, 0, 0)
      .AddRandomRecords(records, /*value_size=*/64)
      .Build();
}

// The largest batch of 64-byte incompressible records that fits in `size`.
std::string BatchOfSize(size_t size) {
  int records = 1;
  while (BatchOf(records + 1).size() <= size) ++records;
  return BatchOf(records);
}

void BM_Parse(benchmark::State& state) {
  const std::string batch = BatchOfSize(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    absl::StatusOr<RecordBatchView> view = RecordBatchView::Parse(batch);
    if (!view.ok()) {
      state.SkipWithError("Parse failed");
      return;
    }
    benchmark::DoNotOptimize(view->next_offset());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(batch.size()));
  state.counters["batch_bytes"] = static_cast<double>(batch.size());
}
BENCHMARK(BM_Parse)->Arg(1 << 10)->Arg(16 << 10);

}  // namespace
}  // namespace kaas
