// CRC32C throughput, portable (slicing-by-8) vs hardware (SSE4.2, three
// interleaved streams), on buffers from one small record to a large batch.

#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"
#include "storage/batch/crc32c.h"

namespace kaas::crc32c {
namespace {

std::string RandomBuffer(size_t size) {
  std::string buffer(size, '\0');
  uint64_t x = 0x9E3779B97F4A7C15u;
  for (char& c : buffer) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x);
  }
  return buffer;
}

void BM_Portable(benchmark::State& state) {
  const std::string buffer = RandomBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExtendPortable(0, buffer.data(), buffer.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_Portable)->Arg(64)->Arg(1 << 10)->Arg(16 << 10)->Arg(1 << 20);

void BM_Hardware(benchmark::State& state) {
  if (!IsHardwareAccelerated()) {
    state.SkipWithError("no SSE4.2 on this CPU");
    return;
  }
  const std::string buffer = RandomBuffer(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(ExtendHardware(0, buffer.data(), buffer.size()));
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}
BENCHMARK(BM_Hardware)->Arg(64)->Arg(1 << 10)->Arg(16 << 10)->Arg(1 << 20);

}  // namespace
}  // namespace kaas::crc32c
