// Group commit, acks, fsync failures (sticky stall and re-arm), watchdog.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/storage_error.h"
#include "storage/partition/partition_test_fixture.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::testing::FsOp;
using ::kaas::testing::HasStorageError;
using ::kaas::testing::PathPattern;

TEST_F(PartitionTest,
       AcksAllCompletesOnlyAfterAnFdatasyncThatStartedAfterTheWrite) {
  auto partition = OpenLeader();
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult result,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_FALSE(result.durable.IsReady());
  int64_t syncs_before = fs().Count(FsOp::kDataSync);
  fs().ReleaseSyncs();
  ASSERT_OK(result.durable.Wait());
  EXPECT_GE(fs().Count(FsOp::kDataSync), syncs_before);
  EXPECT_EQ(partition->HighWatermark(), 1);
}

TEST_F(PartitionTest, AppendsAreNotHeldBackWhileAnFdatasyncRuns) {
  auto partition = OpenLeader();
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult first,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  // While the first cycle's fdatasync is blocked, more appends go through
  // (they would deadlock here if the sync held the partition lock).
  std::vector<StatusFuture> pending;
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK_AND_ASSIGN(AppendResult result,
                         partition->Append(Batch(), 1, Acks::kAll));
    EXPECT_EQ(result.base_offset, i + 1);
    pending.push_back(result.durable);
  }
  EXPECT_FALSE(first.durable.IsReady());
  fs().ReleaseSyncs();
  ASSERT_OK(first.durable.Wait());
  for (const StatusFuture& future : pending) ASSERT_OK(future.Wait());
  EXPECT_EQ(partition->HighWatermark(), 21);
}

// One fdatasync covers every append that arrived before it started; the next
// covers those that arrived while it ran.
TEST_F(PartitionTest, GroupCommitCoversManyAppendsWithFewFsyncs) {
  auto partition = OpenLeader();
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult first,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  std::vector<std::thread> producers;
  std::vector<StatusFuture> futures(40, StatusFuture::Ready(absl::OkStatus()));
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        absl::StatusOr<AppendResult> result =
            partition->Append(Batch(), 1, Acks::kAll);
        ASSERT_OK(result.status());
        futures[t * 10 + i] = result->durable;
      }
    });
  }
  for (std::thread& producer : producers) producer.join();
  int64_t log_syncs = stats().fsyncs.load();
  fs().ReleaseSyncs();
  ASSERT_OK(first.durable.Wait());
  for (const StatusFuture& future : futures) ASSERT_OK(future.Wait());
  // The blocked cycle plus one cycle for the 40 appends behind it.
  EXPECT_LE(stats().fsyncs.load() - log_syncs, 2u);
}

TEST_F(PartitionTest, AcksOneDoesNotWaitButFlushIntervalStillSyncs) {
  PartitionConfig config = SmallConfig();
  config.flush_interval_messages = 3;
  auto partition = OpenLeader(1, config);
  fs().BlockSyncs(PathPattern::Substring(".log"));
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(AppendResult result,
                         partition->Append(Batch(), 1, Acks::kLeader));
    EXPECT_TRUE(result.durable.IsReady());
  }
  EXPECT_EQ(fs().BlockedSyncs(), 0);  // below the interval: no sync
  ASSERT_OK(partition->Append(Batch(), 1, Acks::kLeader).status());
  fs().WaitUntilBlockedSyncs(1);  // the third record triggers one
  fs().ReleaseSyncs();
  ASSERT_OK(partition->WhenDurable(3).Wait());
}

TEST_F(PartitionTest, FlushIntervalZeroSyncsOnlyForAcksAllRollAndClose) {
  PartitionConfig config = SmallConfig();
  config.flush_interval_messages = 0;
  config.segment_bytes = 4096;
  auto partition = OpenLeader(1, config);
  int64_t before = fs().Count(FsOp::kDataSync);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(partition->Append(Batch(1, 100), 1, Acks::kLeader).status());
  }
  EXPECT_EQ(fs().Count(FsOp::kDataSync), before);
  // A roll makes the sealed segment durable in the background.
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(partition->Append(Batch(1, 100), 1, Acks::kLeader).status());
  }
  ASSERT_GT(partition->Segments().size(), 1u);
  ASSERT_OK(
      partition->WhenDurable(partition->Segments()[1].base_offset).Wait());
}

// D-23: an acks=all duplicate is acknowledged only once the original is
// durable.
TEST_F(PartitionTest, DuplicateWaitsForTheOriginalsDurability) {
  auto partition = OpenLeader();
  std::string batch = ProducerBatch(7, 0, 0);
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult original,
                       partition->Append(batch, 1, Acks::kLeader));
  ASSERT_OK_AND_ASSIGN(AppendResult retry,
                       partition->Append(batch, 1, Acks::kAll));
  EXPECT_TRUE(retry.duplicate);
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_FALSE(retry.durable.IsReady());
  fs().ReleaseSyncs();
  ASSERT_OK(retry.durable.Wait());
  EXPECT_EQ(retry.base_offset, original.base_offset);
}

// A failed fdatasync is never retried and assumed safe: the partition
// stalls, waiters fail, appends fail fast; a probe re-verifies, rewrites and
// syncs the unsynced bytes before clearing the stall.
TEST_F(PartitionTest, FdatasyncFailureStallsUntilAProbeSucceeds) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch());
  testing::Fault eio(FsOp::kDataSync, EIO);
  eio.path = PathPattern::Substring(".log");
  eio.count = testing::Fault::kForever;
  fs().InjectFault(eio);
  ASSERT_OK_AND_ASSIGN(AppendResult doomed,
                       partition->Append(Batch(), 1, Acks::kAll));
  EXPECT_THAT(doomed.durable.Wait(),
              HasStorageError(StorageErrorCode::kStalled));
  EXPECT_TRUE(partition->IsStalled());
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kStalled));
  EXPECT_THAT(partition->WhenDurable(2).Wait(),
              HasStorageError(StorageErrorCode::kStalled));
  // The device recovers: the probe (every 10 ms here) clears the stall.
  int64_t writes_before = fs().Count(FsOp::kWrite);
  fs().ClearFaults();
  while (partition->IsStalled()) std::this_thread::yield();
  EXPECT_GT(fs().Count(FsOp::kWrite), writes_before);  // the tail rewritten
  EXPECT_EQ(AppendDurably(*partition, Batch()), 2);
  EXPECT_EQ(ReadAll(*partition).size(), 3 * Batch().size());
  EXPECT_GE(stats().rearms.load(), 1u);
}

TEST_F(PartitionTest, WatchdogStallsASlowFdatasync) {
  PartitionConfig config = SmallConfig();
  config.fsync_max_latency = absl::Milliseconds(20);
  auto partition = OpenLeader(1, config);
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult result,
                       partition->Append(Batch(), 1, Acks::kAll));
  EXPECT_THAT(result.durable.Wait(),
              HasStorageError(StorageErrorCode::kStalled));
  EXPECT_TRUE(partition->IsStalled());
  EXPECT_THAT(partition->StallStatus(),
              HasStorageError(StorageErrorCode::kStalled));
  fs().ReleaseSyncs();
  // Once the hung fdatasync returns, the probe's own sync clears the stall.
  while (partition->IsStalled()) std::this_thread::yield();
  EXPECT_EQ(AppendDurably(*partition, Batch()), 1);
}

}  // namespace
}  // namespace kaas
