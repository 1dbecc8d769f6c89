// MemoryEngine: the conformance suite, and the differences from the disk
// engine that memory_engine.h lists.

#include "storage/engine/memory_engine.h"

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/engine/engine_conformance_testlib.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

INSTANTIATE_TEST_SUITE_P(
    Memory, EngineConformanceTest,
    ::testing::Values(EngineFactory{
        "Memory",
        [](const EngineSettings& settings) {
          MemoryEngine::Options options;
          options.partition_config.validate_records = settings.validate_records;
          options.partition_config.broker_managed_high_watermark =
              settings.broker_managed_high_watermark;
          return std::make_unique<MemoryEngine>(options);
        }}),
    EngineFactoryName);

std::string Batch(int records = 1, size_t value_size = 16,
                  int64_t timestamp = 1000) {
  test::BatchBuilder builder;
  builder.BaseTimestamp(timestamp);
  builder.AddRandomRecords(records, value_size);
  return builder.Build();
}

class MemoryEngineTest : public ::testing::Test {
 protected:
  // Takes `tp` over at epoch 1 and appends `batch` with acks=all.
  int64_t LeadAndAppend(MemoryEngine& engine, const TopicPartition& tp,
                        const std::string& batch) {
    EXPECT_OK(engine.TakeOver(tp, 1).status());
    absl::StatusOr<AppendResult> result =
        engine.Append(tp, 1, Acks::kAll, batch);
    EXPECT_OK(result.status());
    return result.ok() ? result->base_offset : -1;
  }

  const TopicPartition tp_{"orders", 0};
};

TEST_F(MemoryEngineTest, NothingPersistsAcrossInstances) {
  {
    MemoryEngine engine;
    LeadAndAppend(engine, tp_, Batch(3));
    ASSERT_OK(engine.Drain());
  }
  MemoryEngine engine;
  EXPECT_THAT(engine.TakeOver(tp_, 1), IsOkAndHolds(0));
}

TEST_F(MemoryEngineTest, EveryAcksLevelIsDurableAtOnce) {
  MemoryEngine engine;
  ASSERT_OK(engine.TakeOver(tp_, 1).status());
  for (Acks acks : {Acks::kNone, Acks::kLeader, Acks::kAll}) {
    ASSERT_OK_AND_ASSIGN(AppendResult result,
                         engine.Append(tp_, 1, acks, Batch()));
    EXPECT_TRUE(result.durable.IsReady());
    EXPECT_OK(result.durable.Wait());
  }
  EXPECT_EQ(engine.StalledPartitions(), 0);
}

TEST_F(MemoryEngineTest, HasOneMemoryLogDir) {
  MemoryEngine engine;
  ASSERT_EQ(engine.LogDirs().size(), 1u);
  const placement::LogDirInfo dir = engine.LogDirs().front();
  EXPECT_EQ(dir.name, "default");
  EXPECT_EQ(dir.path, "memory://");
  EXPECT_TRUE(dir.default_eligible);
  EXPECT_FALSE(dir.cordoned);
  ASSERT_EQ(engine.LogDirUsages().size(), 1u);
  const LogDirUsage usage = engine.LogDirUsages().front();
  EXPECT_EQ(usage.name, "default");
  EXPECT_EQ(usage.path, "memory://");
  EXPECT_EQ(usage.total_bytes, -1);
  EXPECT_EQ(usage.usable_bytes, -1);
}

TEST_F(MemoryEngineTest, MovesOnlyToTheDefaultDir) {
  MemoryEngine engine;
  LeadAndAppend(engine, tp_, Batch(2));
  EXPECT_THAT(engine.MovePartitionToLogDir(tp_, "default"),
              IsOkAndHolds("default"));
  EXPECT_THAT(engine.MovePartitionToLogDir(tp_, "fast"),
              HasStorageErrorWithMessage(StorageErrorCode::kLogDirNotFound,
                                         HasSubstr("\"fast\"")));
  EXPECT_THAT(engine.PartitionLogDir(tp_), IsOkAndHolds("default"));
  EXPECT_THAT(engine.HighWatermark(tp_), IsOkAndHolds(2));
}

TEST_F(MemoryEngineTest, PartitionSizeIsTheBytesStored) {
  MemoryEngine engine;
  const std::string first = Batch(2, 100);
  const std::string second = Batch(2, 50);
  LeadAndAppend(engine, tp_, first);
  ASSERT_OK(engine.Append(tp_, 1, Acks::kAll, second).status());
  EXPECT_THAT(engine.PartitionSize(tp_),
              IsOkAndHolds(first.size() + second.size()));
  // A batch partly below the log start stays; one entirely below is freed.
  ASSERT_OK(engine.DeleteRecords(tp_, 1).status());
  EXPECT_THAT(engine.PartitionSize(tp_),
              IsOkAndHolds(first.size() + second.size()));
  ASSERT_OK(engine.DeleteRecords(tp_, 2).status());
  EXPECT_THAT(engine.PartitionSize(tp_), IsOkAndHolds(second.size()));
  EXPECT_EQ(engine.Stats().bytes_deleted.load(), first.size());
}

TEST_F(MemoryEngineTest, ReadsOutliveTheBatchesTheyReturned) {
  MemoryEngine engine;
  const std::string batch = Batch(2, 100);
  LeadAndAppend(engine, tp_, batch);
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine.Read(tp_, 0, 1 << 20, Isolation::kReadUncommitted));
  ASSERT_OK(engine.DeleteRecords(tp_, -1).status());
  ASSERT_OK(engine.DeletePartition(tp_));
  // The Cord still holds the bytes (ASan checks the access).
  EXPECT_TRUE(SameBatchButForLeaderFields(std::string(read.records), batch));
}

TEST_F(MemoryEngineTest, KeepsTheTopicConfigItIsGiven) {
  MemoryEngine engine;
  EXPECT_THAT(engine.GetTopicConfig("orders"), IsOkAndHolds(std::nullopt));
  TopicConfigOverrides overrides;
  overrides.retention_ms = 60000;
  ASSERT_OK(engine.SetTopicConfig("orders", overrides));
  EXPECT_THAT(engine.GetTopicConfig("orders"),
              IsOkAndHolds(std::optional<TopicConfigOverrides>(overrides)));
  // Validated as the disk engine validates a config file.
  overrides.retention_ms = -5;
  EXPECT_THAT(engine.SetTopicConfig("orders", overrides),
              HasStorageError(StorageErrorCode::kInvalidConfig));
  EXPECT_THAT(engine.GetTopicConfig("orders"),
              IsOkAndHolds(std::optional<TopicConfigOverrides>(
                  TopicConfigOverrides{.retention_ms = 60000})));
}

TEST_F(MemoryEngineTest, AppliesTheConfiguredBatchLimits) {
  MemoryEngine::Options options;
  options.partition_config.segment_bytes = 4096;
  options.partition_config.max_message_bytes = 1000;
  MemoryEngine engine(options);
  ASSERT_OK(engine.TakeOver(tp_, 1).status());
  EXPECT_THAT(engine.Append(tp_, 1, Acks::kAll, Batch(1, 5000)),
              HasStorageError(StorageErrorCode::kRecordListTooLarge));
  EXPECT_THAT(engine.Append(tp_, 1, Acks::kAll, Batch(1, 2000)),
              HasStorageError(StorageErrorCode::kMessageTooLarge));
  EXPECT_OK(engine.Append(tp_, 1, Acks::kAll, Batch(1, 500)).status());
}

// The disk engine leaves an abandoned directory to the operator's reclaim;
// the memory engine drops the data at once.
TEST_F(MemoryEngineTest, AbandonTopicAloneDropsTheData) {
  MemoryEngine engine;
  LeadAndAppend(engine, tp_, Batch(5));
  ASSERT_OK(engine.CreatePartition({"orders", 1}));  // exists, not led
  EXPECT_EQ(engine.AbandonTopic("orders"), 1);       // counts the led ones
  EXPECT_THAT(engine.TakeOver(tp_, 1), IsOkAndHolds(0));
  EXPECT_THAT(engine.HighWatermark(tp_), IsOkAndHolds(0));
}

TEST_F(MemoryEngineTest, AbandonTopicDropsPartitionsNotLed) {
  MemoryEngine engine;
  LeadAndAppend(engine, tp_, Batch(5));
  ASSERT_OK(engine.Relinquish(tp_));
  EXPECT_EQ(engine.AbandonTopic("orders"), 0);
  EXPECT_THAT(engine.TakeOver(tp_, 1), IsOkAndHolds(0));
}

// A take-over racing a delete of the same partition leads either the old
// partition (then deleted) or a new one; never a deleted one.
TEST_F(MemoryEngineTest, TakeOverRacingDeletePartitionNeverLeadsADeletedOne) {
  MemoryEngine engine;
  for (int round = 0; round < 50; ++round) {
    std::thread deleter([&] { EXPECT_OK(engine.DeletePartition(tp_)); });
    absl::StatusOr<int64_t> log_end = engine.TakeOver(tp_, 1);
    deleter.join();
    ASSERT_OK(log_end.status());
    // Whatever the interleaving, a fresh take-over now serves a partition in
    // the map.
    ASSERT_OK(engine.TakeOver(tp_, 1).status());
    EXPECT_THAT(engine.LedPartitions(), ElementsAre(tp_));
    ASSERT_OK(engine.DeletePartition(tp_));
  }
}

// FenceProducerEpoch racing the creation of partitions never loses a fence.
TEST_F(MemoryEngineTest, FencesRacingPartitionCreationAreNeverLost) {
  MemoryEngine engine;
  constexpr int kPartitions = 20;
  std::thread fencer([&] { EXPECT_OK(engine.FenceProducerEpoch(9, 3)); });
  for (int p = 0; p < kPartitions; ++p) {
    ASSERT_OK(engine.TakeOver({"orders", p}, 1).status());
  }
  fencer.join();
  for (int p = 0; p < kPartitions; ++p) {
    test::BatchBuilder builder;
    builder.Producer(9, 2, 0).AddRecord(absl::nullopt, "v");
    EXPECT_THAT(engine.Append({"orders", p}, 1, Acks::kAll, builder.Build()),
                HasStorageError(StorageErrorCode::kInvalidProducerEpoch))
        << "partition " << p;
  }
}

}  // namespace
}  // namespace kaas
