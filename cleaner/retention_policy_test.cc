#include "cleaner/retention_policy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/engine/retention_host.h"

namespace kaas::cleaner {

namespace {

constexpr int64_t kNowMs = 1'000'000;
const absl::Time kNow = absl::FromUnixMillis(kNowMs);
constexpr int64_t kNoTimestamp = -1;

struct Seg {
  uint64_t size_bytes;
  int64_t max_timestamp;
};

// Segments based at 0, 10, 20, ..., the last one active.
std::vector<SegmentSummary> Segments(const std::vector<Seg>& segs) {
  std::vector<SegmentSummary> out;
  for (size_t i = 0; i < segs.size(); ++i) {
    SegmentSummary summary;
    summary.base_offset = static_cast<int64_t>(i) * 10;
    summary.next_offset = summary.base_offset + 10;
    summary.size_bytes = segs[i].size_bytes;
    summary.max_timestamp = segs[i].max_timestamp;
    summary.active = i + 1 == segs.size();
    out.push_back(summary);
  }
  return out;
}

// Segments of 100 bytes with these largest timestamps.
std::vector<SegmentSummary> Dated(const std::vector<int64_t>& timestamps) {
  std::vector<Seg> segs;
  for (int64_t timestamp : timestamps) segs.push_back({100, timestamp});
  return Segments(segs);
}

// Segments of these sizes, all dated now.
std::vector<SegmentSummary> Sized(const std::vector<uint64_t>& sizes) {
  std::vector<Seg> segs;
  for (uint64_t size : sizes) segs.push_back({size, kNowMs});
  return Segments(segs);
}

struct TimeCase {
  std::string name;
  std::vector<int64_t> timestamps;  // the last is the active segment's
  absl::Duration retention;
  std::optional<int64_t> want;
};

TEST(TimeRetentionTarget, Table) {
  const absl::Duration r = absl::Milliseconds(100);  // cutoff 999'900
  const std::vector<TimeCase> cases = {
      {"no segments", {}, r, std::nullopt},
      {"only the active segment, expired", {1}, r, std::nullopt},
      {"expired prefix", {999'000, 999'500, 999'950, 999'990}, r, 20},
      {"stops at the first in-window segment (contiguous log start)",
       {999'000, 999'950, 999'000, 999'990},
       r,
       10},
      {"everything in the window",
       {999'950, 999'960, 999'990},
       r,
       std::nullopt},
      {"a segment dated exactly at the cutoff is still in the window",
       {999'900, 999'990},
       r,
       std::nullopt},
      {"one millisecond older is out", {999'899, 999'990}, r, 10},
      {"every closed segment expired, the active one never", {1, 2, 3}, r, 20},
      {"retention 0 expires every closed segment dated before now",
       {999'998, 999'999, kNowMs},
       absl::ZeroDuration(),
       20},
      {"retention 0 keeps a segment dated now (Kafka: now - ts > 0)",
       {999'999, kNowMs, kNowMs},
       absl::ZeroDuration(),
       10},
      {"negative retention keeps everything (Kafka -1)",
       {1, 2, 3},
       absl::Milliseconds(-1),
       std::nullopt},
      {"an infinite retention does not overflow",
       {1, 2, 3},
       absl::InfiniteDuration(),
       std::nullopt},
      // An undated segment takes the nearest later segment's timestamp.
      {"undated before an expired segment goes with it",
       {kNoTimestamp, 999'000, 999'950, 999'990},
       r,
       20},
      {"undated before an in-window segment stays",
       {kNoTimestamp, 999'950, 999'990},
       r,
       std::nullopt},
      {"undated runs take the next dated segment's timestamp",
       {999'000, kNoTimestamp, kNoTimestamp, 999'500, 999'950, 999'990},
       r,
       40},
      {"the active segment's timestamp dates the closed ones before it",
       {kNoTimestamp, kNoTimestamp, 999'000},
       r,
       20},
      {"undated with no later timestamp is never deleted by time",
       {999'000, kNoTimestamp, kNoTimestamp, kNoTimestamp},
       r,
       10},
      {"nothing dated at all, even with retention 0",
       {kNoTimestamp, kNoTimestamp},
       absl::ZeroDuration(),
       std::nullopt},
  };
  for (const TimeCase& c : cases) {
    EXPECT_EQ(TimeRetentionTarget(Dated(c.timestamps), kNow, c.retention),
              c.want)
        << c.name;
  }
}

struct SizeCase {
  std::string name;
  std::vector<uint64_t> sizes;  // the last is the active segment's
  uint64_t retention_bytes;
  std::optional<int64_t> want;
};

TEST(SizeRetentionTarget, Table) {
  const std::vector<SizeCase> cases = {
      {"no segments", {}, 0, std::nullopt},
      {"under the cap", {100, 100, 100}, 1000, std::nullopt},
      {"exactly at the cap", {100, 100, 100}, 300, std::nullopt},
      {"deleting the oldest lands exactly on the cap",
       {100, 100, 100},
       200,
       10},
      {"a segment whose deletion would overshoot is kept",
       {100, 150, 100},
       200,
       10},
      {"an oversized oldest segment stops the walk",
       {300, 100, 100},
       250,
       std::nullopt},
      {"every closed segment goes, the active one never",
       {100, 100, 5000},
       1000,
       20},
      {"retention 0: every closed segment", {100, 100, 0}, 0, 20},
      {"only the active segment", {5000}, 0, std::nullopt},
  };
  for (const SizeCase& c : cases) {
    EXPECT_EQ(SizeRetentionTarget(Sized(c.sizes), c.retention_bytes), c.want)
        << c.name;
  }
}

TEST(RetentionApplies, NeedsDeletePolicyAndAKnob) {
  PartitionConfig config;
  EXPECT_TRUE(RetentionApplies(config));  // Kafka defaults: 7 days
  config.retention_ms.reset();
  EXPECT_FALSE(RetentionApplies(config));  // both -1
  config.retention_bytes = 1;
  EXPECT_TRUE(RetentionApplies(config));
  config.cleanup_delete = false;
  EXPECT_FALSE(RetentionApplies(config));  // compact only (D-18)
}

struct DecisionCase {
  std::string name;
  std::vector<Seg> segments;  // the last is the active segment
  std::optional<absl::Duration> retention_ms;
  std::optional<uint64_t> retention_bytes;
  bool cleanup_delete;
  int64_t log_start;
  std::optional<RetentionDecision> want;
  // Default: the end of the log (everything is visible).
  int64_t high_watermark = INT64_MAX;
};

TEST(DecideRetention, Table) {
  const absl::Duration r = absl::Milliseconds(100);  // cutoff 999'900
  // Time removes two segments (target 20); size one at 200 (target 10), two
  // at 100 (target 20).
  const std::vector<Seg> old_small = {
      {100, 999'000}, {100, 999'000}, {100, 999'950}, {0, 999'990}};
  // Time removes one segment (target 10), size three (target 30) at 100.
  const std::vector<Seg> young_big = {
      {100, 999'000}, {100, 999'950}, {100, 999'950}, {100, 999'990}};
  const std::vector<DecisionCase> cases = {
      {"time only", old_small, r, std::nullopt, true, 0,
       RetentionDecision{20, RetentionReason::kTime}},
      {"size only", old_small, std::nullopt, 200, true, 0,
       RetentionDecision{10, RetentionReason::kSize}},
      {"time removes more", old_small, r, 200, true, 0,
       RetentionDecision{20, RetentionReason::kTime}},
      {"size removes more", young_big, r, 100, true, 0,
       RetentionDecision{30, RetentionReason::kSize}},
      {"a tie is reported as size", old_small, r, 100, true, 0,
       RetentionDecision{20, RetentionReason::kSize}},
      {"both -1 keep forever", old_small, std::nullopt, std::nullopt, true, 0,
       std::nullopt},
      {"compact-only topics are not deleted (D-18)", old_small, r, 0, false, 0,
       std::nullopt},
      {"neither knob removes anything", old_small, absl::Hours(1), 10'000, true,
       0, std::nullopt},
      {"a target at the log start is nothing to do", old_small, r, std::nullopt,
       true, 20, std::nullopt},
      {"a target below the log start is nothing to do", old_small, std::nullopt,
       200, true, 15, std::nullopt},
      {"a log start inside a segment still advances to the target", old_small,
       r, std::nullopt, true, 15,
       RetentionDecision{20, RetentionReason::kTime}},
      {"the high watermark holds the target back to a segment boundary",
       young_big, r, 100, true, 0,
       RetentionDecision{20, RetentionReason::kSize, /*held_back=*/true}, 25},
      {"everything due lies above the high watermark", old_small, r,
       std::nullopt, true, 0, std::nullopt, 5},
  };
  for (const DecisionCase& c : cases) {
    RetentionView view;
    view.config.retention_ms = c.retention_ms;
    view.config.retention_bytes = c.retention_bytes;
    view.config.cleanup_delete = c.cleanup_delete;
    view.segments = Segments(c.segments);
    view.log_start_offset = c.log_start;
    view.high_watermark = c.high_watermark == INT64_MAX
                              ? view.segments.back().next_offset
                              : c.high_watermark;
    EXPECT_EQ(DecideRetention(view, kNow), c.want) << c.name;
  }
}

TEST(DecideRetention, KafkaDefaultsComeFromPartitionConfig) {
  // 7 days by time, unlimited by size.
  const absl::Time now = absl::FromUnixMillis(int64_t{1700000000000});
  auto days_ago = [&](int days) {
    return absl::ToUnixMillis(now - absl::Hours(24 * days));
  };
  RetentionView view;
  view.segments = Segments(
      {{1 << 30, days_ago(8)}, {1 << 30, days_ago(6)}, {1 << 30, days_ago(0)}});
  view.high_watermark = view.segments.back().next_offset;
  EXPECT_EQ(DecideRetention(view, now),
            (RetentionDecision{10, RetentionReason::kTime}));
}

TEST(RetentionReasonName, NamesBothReasons) {
  EXPECT_EQ(RetentionReasonName(RetentionReason::kTime), "time");
  EXPECT_EQ(RetentionReasonName(RetentionReason::kSize), "size");
}

}  // namespace
}  // namespace kaas::cleaner
