#include "bench/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace kaas::bench {
namespace {

// The nearest-rank q-quantile: the smallest sample with at least q of the
// samples at or below it. REQUIRES: !samples->empty().
double QuantileUs(std::vector<int64_t>* samples, double q) {
  const size_t n = samples->size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  size_t index = rank == 0 ? 0 : std::min(rank, n) - 1;
  std::nth_element(samples->begin(), samples->begin() + index, samples->end());
  return static_cast<double>((*samples)[index]) / 1000.0;
}

}  // namespace

LatencySummary SummarizeLatencies(std::vector<int64_t>* samples_ns) {
  LatencySummary summary;
  summary.count = static_cast<int64_t>(samples_ns->size());
  if (samples_ns->empty()) return summary;
  summary.p50_us = QuantileUs(samples_ns, 0.50);
  summary.p99_us = QuantileUs(samples_ns, 0.99);
  summary.p999_us = QuantileUs(samples_ns, 0.999);
  return summary;
}

}  // namespace kaas::bench
