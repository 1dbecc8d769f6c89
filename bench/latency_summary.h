// File: bench/latency_summary.h
//
// Exact latency quantiles of a benchmark window: every sample is kept (a
// 10 s window at 100k acks/s is 8 MB), so p99.9 is a real sample rather
// than a histogram bucket bound.
//
// Thread-safety: pure functions.

#ifndef KAAS_BENCH_LATENCY_SUMMARY_H_
#define KAAS_BENCH_LATENCY_SUMMARY_H_

#include <cstdint>
#include <vector>

namespace kaas::bench {

struct LatencySummary {
  int64_t count = 0;
  // Nearest-rank quantiles in microseconds; 0 when there are no samples.
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
};

// Summarises `samples_ns` (nanoseconds), which it reorders.
LatencySummary SummarizeLatencies(std::vector<int64_t>* samples_ns);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_LATENCY_SUMMARY_H_
