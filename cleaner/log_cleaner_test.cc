// The log cleaner over a real DiskEngine: choosing by dirty ratio and lag,
// uncleanable partitions, the I/O throttle, threads and Stop.
#include "cleaner/log_cleaner.h"

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "cleaner/io_throttle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/common/offset_map.h"
#include "storage/common/partition_config.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/topic_config.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"
#include "testing/stored_records.h"

namespace kaas::cleaner {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::testing::HasSubstr;
using ::testing::Optional;

constexpr int64_t kEpoch = 1;
const TopicPartition kTp{"orders", 0};

CleaningCandidate Candidate(int partition, uint64_t clean, uint64_t dirty,
                            int64_t first_dirty_timestamp = -1) {
  CleaningCandidate candidate;
  candidate.tp = TopicPartition{"t", partition};
  candidate.view.compact = true;
  candidate.view.clean_bytes = clean;
  candidate.view.dirty_bytes = dirty;
  candidate.view.first_dirty_timestamp = first_dirty_timestamp;
  candidate.view.min_cleanable_dirty_ratio = 0.5;
  candidate.view.max_compaction_lag_ms = 1000;
  return candidate;
}

TEST(ChooseFilthiestTest, TheHighestDirtyRatioAboveTheMinimum) {
  std::vector<CleaningCandidate> candidates = {
      Candidate(0, 60, 40),  // 0.4: below 0.5
      Candidate(1, 40, 60),  // 0.6
      Candidate(2, 10, 90),  // 0.9
  };
  EXPECT_THAT(ChooseFilthiest(candidates, 0), Optional(2u));
  candidates[2].view.compact = false;
  EXPECT_THAT(ChooseFilthiest(candidates, 0), Optional(1u));
  candidates[1].view.dirty_bytes = 30;  // 30/70 < 0.5
  EXPECT_EQ(ChooseFilthiest(candidates, 0), std::nullopt);
}

TEST(ChooseFilthiestTest, MaxCompactionLagAndHorizonsComeFirst) {
  std::vector<CleaningCandidate> candidates = {
      Candidate(0, 10, 90, /*first_dirty=*/5000),
      Candidate(1, 90, 10, /*first_dirty=*/100),  // ratio 0.1, but lagging
  };
  EXPECT_THAT(ChooseFilthiest(candidates, /*now_ms=*/2000), Optional(1u));
  EXPECT_THAT(ChooseFilthiest(candidates, /*now_ms=*/1000), Optional(0u));
  candidates[0].view.dirty_bytes = 0;
  candidates[0].view.delete_horizon_due = true;
  candidates[1].view.first_dirty_timestamp = -1;
  EXPECT_THAT(ChooseFilthiest(candidates, 1000), Optional(0u));
}

TEST(IoThrottleTest, PacesToTheRateAfterAOneSecondBurst) {
  ManualClock clock;
  IoThrottle throttle(1000, &clock);                        // 1000 bytes/s
  EXPECT_EQ(throttle.Acquire(1000), absl::ZeroDuration());  // the burst
  EXPECT_EQ(throttle.Acquire(500), absl::Milliseconds(500));
  clock.Advance(absl::Milliseconds(500));
  EXPECT_EQ(throttle.Acquire(1000), absl::Seconds(1));
  // Idle time beyond a second is not banked.
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(throttle.Acquire(1000), absl::ZeroDuration());
  EXPECT_EQ(throttle.Acquire(1000), absl::Seconds(1));
  IoThrottle unlimited(0, &clock);
  EXPECT_EQ(unlimited.Acquire(1 << 30), absl::ZeroDuration());
}

class LogCleanerTest : public DiskEngineTest {
 protected:
  std::unique_ptr<DiskEngine> NewCompactingEngine() {
    PartitionConfig config = SmallConfig();
    config.segment_bytes = 1024;
    DiskEngine::Options options = MakeOptions();
    options.default_config = config;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  LogCleaner::Options CleanerOptions() {
    LogCleaner::Options options;
    options.clock = &clock();
    options.dedupe_buffer_bytes = 1 << 20;
    return options;
  }

  std::map<std::string, std::string> Overwrite(DiskEngine& engine,
                                               const TopicPartition& tp,
                                               int keys, int rounds) {
    std::map<std::string, std::string> model;
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < keys; ++k) {
        const std::string key = absl::StrCat("k", k);
        const std::string value = absl::StrCat("v", round, "-", k);
        EXPECT_OK(engine
                      .AppendAndWait(tp, kEpoch, Acks::kAll,
                                     test::BatchBuilder()
                                         .BaseTimestamp(1000)
                                         .AddRecord(key, value)
                                         .Build())
                      .status());
        model[key] = value;
      }
    }
    return model;
  }
};

TEST_F(LogCleanerTest, CleansOnlyCompactedTopicsAndReportsProgress) {
  WriteTopicFile(kTp.topic, kTopicConfigFileName,
                 R"({"cleanupPolicy": "compact"})");
  const TopicPartition plain{"plain", 0};
  auto engine = NewCompactingEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  ASSERT_OK(engine->TakeOver(plain, kEpoch).status());
  Overwrite(*engine, kTp, 5, 10);
  const uint64_t plain_bytes = [&] {
    for (int i = 0; i < 30; ++i) {
      EXPECT_OK(
          engine->AppendAndWait(plain, kEpoch, Acks::kAll, Batch()).status());
    }
    return engine->PartitionStatsOf(plain)->appended_bytes;
  }();
  EXPECT_GT(plain_bytes, 0u);

  LogCleaner cleaner(engine.get(), CleanerOptions());
  EXPECT_EQ(cleaner.RunOnce(), kTp);
  std::map<TopicPartition, PartitionCleaning> states = cleaner.States();
  ASSERT_TRUE(states.count(kTp));
  EXPECT_FALSE(states.count(plain));
  EXPECT_EQ(states[kTp].passes, 1);
  EXPECT_GT(states[kTp].last.records_removed, 0);
  EXPECT_OK(states[kTp].uncleanable);
  EXPECT_EQ(engine->PartitionStatsOf(kTp)->compaction_passes, 1u);
  EXPECT_GT(engine->Stats().compaction_bytes_reclaimed.load(), 0u);
  // Nothing dirty left: the next round has nothing to do.
  EXPECT_EQ(cleaner.RunOnce(), std::nullopt);
}

TEST_F(LogCleanerTest, ADamagedPartitionIsUncleanableUntilItsConfigChanges) {
  WriteTopicFile(kTp.topic, kTopicConfigFileName,
                 R"({"cleanupPolicy": "compact"})");
  auto engine = NewCompactingEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  ASSERT_OK(engine
                ->AppendAndWait(kTp, kEpoch, Acks::kAll,
                                test::BatchBuilder()
                                    .AddRecord("a", "1")
                                    .AddRecord("b", "2")
                                    .AddRecord("c", "3")
                                    .Build())
                .status());
  Overwrite(*engine, kTp, 5, 10);
  LogCleaner::Options options = CleanerOptions();
  options.dedupe_buffer_bytes = 2 * 24;  // one key: not the first batch's
  LogCleaner cleaner(engine.get(), options);
  EXPECT_EQ(cleaner.RunOnce(), kTp);
  PartitionCleaning state = cleaner.States()[kTp];
  EXPECT_THAT(state.uncleanable.message(), HasSubstr("dedupe.buffer.size"));
  // Skipped from now on...
  EXPECT_EQ(cleaner.RunOnce(), std::nullopt);
  EXPECT_EQ(engine->PartitionStatsOf(kTp)->compaction_failures, 1u);
  // ...until the config changes.
  WriteTopicFile(kTp.topic, kTopicConfigFileName,
                 R"({"cleanupPolicy": "compact", "deleteRetentionMs": 5})");
  EXPECT_EQ(cleaner.RunOnce(), kTp);
  EXPECT_EQ(engine->PartitionStatsOf(kTp)->compaction_failures, 2u);
}

// A move relinquishes the partition, which ends a pass between two batches
// or waits out its swap; the partition is cleaned again in its new place.
// Each round starts a move from inside a pass (its I/O callback), at a
// later point each time.
TEST_F(LogCleanerTest, MovesDuringPassesLoseNothing) {
  WriteTopicFile(kTp.topic, kTopicConfigFileName,
                 R"({"cleanupPolicy": "compact"})");
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;
  DiskEngine::Options engine_options = MakeOptions({"fast"});
  engine_options.default_config = config;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(std::move(engine_options)));
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  std::map<std::string, std::string> model;
  OffsetMap map(1 << 20);
  for (int round = 0; round < 8; ++round) {
    for (const auto& [key, value] : Overwrite(*engine, kTp, 8, 3)) {
      model[key] = value;
    }
    const char* target = round % 2 == 0 ? "fast" : "default";
    std::thread mover;
    absl::Status moved;
    int calls = 0;
    CompactionRequest request;
    request.now_ms = clock().NowMillis();
    request.map = &map;
    request.throttle = [&](uint64_t) {
      if (++calls != round + 1) return;
      mover = std::thread(
          [&] { moved = engine->MovePartitionToLogDir(kTp, target).status(); });
    };
    absl::StatusOr<CompactionReport> pass = engine->Compact(kTp, request);
    if (!pass.ok()) {
      EXPECT_THAT(pass.status(), HasStorageError(StorageErrorCode::kNotLeader))
          << "round " << round;
    }
    if (mover.joinable()) mover.join();
    ASSERT_OK(moved) << "round " << round;
    EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds(target));
  }
  // A pass in the final place; then the latest value of every key is read.
  CompactionRequest request;
  request.now_ms = clock().NowMillis();
  request.map = &map;
  ASSERT_OK_AND_ASSIGN(CompactionReport last, engine->Compact(kTp, request));
  EXPECT_GT(last.records_removed, 0);
  std::string bytes;
  for (int64_t offset = *engine->LogStartOffset(kTp);;) {
    ASSERT_OK_AND_ASSIGN(
        ReadResult read,
        engine->Read(kTp, offset, 1 << 20, Isolation::kReadUncommitted));
    if (read.batches == 0) break;
    bytes += std::string(read.records);
    offset = read.next_offset;
  }
  ASSERT_OK_AND_ASSIGN(std::vector<test::StoredRecord> records,
                       test::StoredRecordsOf(bytes));
  EXPECT_EQ(
      test::LatestByKey(records),
      (std::map<std::string, test::RecordValue>(model.begin(), model.end())));
}

TEST_F(LogCleanerTest, ThreadsCleanAndStopJoinsThem) {
  WriteTopicFile(kTp.topic, kTopicConfigFileName,
                 R"({"cleanupPolicy": "compact"})");
  auto engine = NewCompactingEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  std::map<std::string, std::string> model = Overwrite(*engine, kTp, 5, 10);
  LogCleaner::Options options = CleanerOptions();
  options.threads = 2;
  LogCleaner cleaner(engine.get(), options);
  cleaner.Start();
  // More writes while the threads clean; then Stop, then Drain.
  Overwrite(*engine, kTp, 5, 5);
  cleaner.Stop();
  ASSERT_OK(engine->Drain());
}

}  // namespace
}  // namespace kaas::cleaner
