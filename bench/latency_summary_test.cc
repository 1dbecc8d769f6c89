#include "bench/latency_summary.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace kaas::bench {
namespace {

TEST(SummarizeLatencies, EmptyIsZero) {
  std::vector<int64_t> samples;
  LatencySummary summary = SummarizeLatencies(&samples);
  EXPECT_EQ(summary.count, 0);
  EXPECT_EQ(summary.p50_us, 0);
  EXPECT_EQ(summary.p999_us, 0);
}

TEST(SummarizeLatencies, NearestRankInMicroseconds) {
  // 1..2000 us, shuffled with a fixed seed.
  std::vector<int64_t> samples;
  for (int64_t us = 1; us <= 2000; ++us) samples.push_back(us * 1000);
  std::shuffle(samples.begin(), samples.end(), std::mt19937(42));
  LatencySummary summary = SummarizeLatencies(&samples);
  EXPECT_EQ(summary.count, 2000);
  EXPECT_EQ(summary.p50_us, 1000);
  EXPECT_EQ(summary.p99_us, 1980);
  EXPECT_EQ(summary.p999_us, 1998);
}

TEST(SummarizeLatencies, OneSampleIsEveryQuantile) {
  std::vector<int64_t> samples = {1500};
  LatencySummary summary = SummarizeLatencies(&samples);
  EXPECT_EQ(summary.p50_us, 1.5);
  EXPECT_EQ(summary.p99_us, 1.5);
  EXPECT_EQ(summary.p999_us, 1.5);
}

}  // namespace
}  // namespace kaas::bench
