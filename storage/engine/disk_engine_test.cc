// DiskEngine: start-up, leadership lifecycle, races, superseded leaders.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "base/process_stats.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine_testlib.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const TopicPartition kOrders0{"orders", 0};

TEST_F(DiskEngineTest, StartUpListsPartitionsButOpensNoFiles) {
  {
    auto engine = NewEngine();
    for (int p = 0; p < 5; ++p) {
      ASSERT_OK(engine->TakeOver({"orders", p}, 1).status());
      ASSERT_OK(engine->AppendAndWait({"orders", p}, 1, Acks::kAll, Batch())
                    .status());
    }
    ASSERT_OK(engine->Drain());
  }
  int before = CurrentOpenFileDescriptors();
  auto engine = NewEngine();
  EXPECT_EQ(CurrentOpenFileDescriptors(), before);
  EXPECT_EQ(engine->PartitionsOnDisk().size(), 5u);
  EXPECT_TRUE(engine->LedPartitions().empty());
  // Taking one over opens exactly its active segment and its lock file.
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  EXPECT_EQ(CurrentOpenFileDescriptors(), before + 2);
  ASSERT_OK(engine->Relinquish(kOrders0));
  EXPECT_EQ(CurrentOpenFileDescriptors(), before);
}

TEST_F(DiskEngineTest, EverythingRequiresATakeOver) {
  auto engine = NewEngine();
  ASSERT_OK(engine->CreatePartition(kOrders0));
  EXPECT_THAT(engine->Append(kOrders0, 0, Acks::kAll, Batch()).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(
      engine->Read(kOrders0, 0, 100, Isolation::kReadUncommitted).status(),
      HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(engine->HighWatermark(kOrders0).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_EQ(engine->PartitionEpoch(kOrders0), std::nullopt);
}

TEST_F(DiskEngineTest, RelinquishAndReTakeOverKeepsTheData) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 3).status());
  ASSERT_OK(engine->AppendAndWait(kOrders0, 3, Acks::kAll, Batch(4)).status());
  ASSERT_OK(engine->Relinquish(kOrders0));
  ASSERT_OK(engine->Relinquish(kOrders0));  // no-op
  ASSERT_OK_AND_ASSIGN(int64_t log_end, engine->TakeOver(kOrders0, 3));
  EXPECT_EQ(log_end, 4);
  EXPECT_EQ(engine->PartitionEpoch(kOrders0), 3);
  engine.reset();
  engine = NewEngine();
  ASSERT_OK_AND_ASSIGN(log_end, engine->TakeOver(kOrders0, 4));
  EXPECT_EQ(log_end, 4);
}

// With direct I/O the engine keeps the same files: a clean relinquish
// leaves each log exactly its batches (no alignment padding), and a power
// loss keeps every acknowledged batch.
TEST_F(DiskEngineTest, DirectIoKeepsTheSameFilesAndSurvivesPowerLoss) {
  fs().GrantDirectIo(true);
  DiskEngine::Options options = MakeOptions();
  options.direct_io = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(options));
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(
        engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2, 700)).status());
  }
  ASSERT_OK(engine->Relinquish(kOrders0));
  const std::string partition_dir = fs::JoinPath(data_dir(), "orders", "0");
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> names,
                       fs().ListDir(partition_dir));
  uint64_t log_bytes = 0;
  for (const std::string& name : names) {
    if (!absl::EndsWith(name, ".log")) continue;
    ASSERT_OK_AND_ASSIGN(fs::FileInfo info,
                         fs().Stat(fs::JoinPath(partition_dir, name)));
    log_bytes += info.size;
  }
  EXPECT_EQ(log_bytes, 3 * Batch(2, 700).size());

  ASSERT_OK(engine->TakeOver(kOrders0, 2).status());
  ASSERT_OK(
      engine->AppendAndWait(kOrders0, 2, Acks::kAll, Batch(1, 50)).status());
  ASSERT_OK(engine->Append(kOrders0, 2, Acks::kLeader, Batch(1, 60)).status());
  fs().Crash();
  engine.reset();
  ASSERT_OK_AND_ASSIGN(engine, DiskEngine::Create(options));
  ASSERT_OK_AND_ASSIGN(int64_t log_end, engine->TakeOver(kOrders0, 3));
  EXPECT_GE(log_end, 7);
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine->Read(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_GE(read.records.size(),
            3 * Batch(2, 700).size() + Batch(1, 50).size());
}

TEST_F(DiskEngineTest, ConcurrentTakeOversConvergeOnTheHighestEpoch) {
  auto engine = NewEngine();
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int epoch = 1; epoch <= 8; ++epoch) {
    threads.emplace_back([&, epoch] {
      absl::StatusOr<int64_t> result = engine->TakeOver(kOrders0, epoch);
      if (!result.ok()) failures.fetch_add(1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(engine->PartitionEpoch(kOrders0), 8);
  // Lower epochs arriving after a higher one are refused or no-ops, never
  // lowering the epoch; the partition is writable at 8.
  ASSERT_OK(engine->AppendAndWait(kOrders0, 8, Acks::kAll, Batch()).status());
  EXPECT_THAT(engine->LedPartitions(), ElementsAre(kOrders0));
}

// Leadership on a volume is exclusive: while one engine leads a partition,
// another cannot take it over, at the same epoch or a higher one, so it never
// acknowledges anything the leader's log does not hold (two engines in one
// process here; tools/append_read_test.sh does it with two processes).
TEST_F(DiskEngineTest, ASecondEngineCannotTakeOverAPartitionAnotherLeads) {
  auto leader = NewEngine();
  ASSERT_OK(leader->TakeOver(kOrders0, 1).status());
  ASSERT_OK(leader->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2)).status());
  auto other = NewEngine();
  for (int64_t epoch : {1, 2}) {
    EXPECT_THAT(other->TakeOver(kOrders0, epoch).status(),
                HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                           HasSubstr("led by another")));
  }
  EXPECT_THAT(other->LedPartitions(), IsEmpty());
  // Nor can it delete the partition under the leader.
  EXPECT_THAT(other->DeletePartition(kOrders0),
              HasStorageError(StorageErrorCode::kNotLeader));
  ASSERT_OK(leader->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(3)).status());
  ASSERT_OK(leader->Relinquish(kOrders0));
  // Released: the other engine takes over and serves everything acked.
  EXPECT_THAT(other->TakeOver(kOrders0, 2), IsOkAndHolds(5));
}

// If the filesystem drops a leader's lock while it runs (an evicted CephFS
// client, an expired NFS lease), another engine can take over. The epoch in
// the segment names still keeps the deposed leader's writes out of the new
// leader's log, and its relinquish persists nothing.
TEST_F(DiskEngineTest, ADeposedLeaderCannotSpliceIntoTheNewLeadersLog) {
  auto old_leader = NewEngine();
  ASSERT_OK(old_leader->TakeOver(kOrders0, 1).status());
  ASSERT_OK(
      old_leader->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2)).status());
  fs().BreakLocks();
  auto new_leader = NewEngine();
  ASSERT_OK_AND_ASSIGN(int64_t log_end, new_leader->TakeOver(kOrders0, 2));
  EXPECT_EQ(log_end, 2);
  // The old leader keeps appending (it has not heard yet): its bytes go to
  // its own epoch-1 file.
  ASSERT_OK(
      old_leader->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(3)).status());
  ASSERT_OK(
      new_leader->AppendAndWait(kOrders0, 2, Acks::kAll, Batch(1)).status());
  ASSERT_OK(old_leader->Relinquish(kOrders0));  // superseded: persists nothing
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      new_leader->Read(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(read.next_offset, 3);
  EXPECT_EQ(read.records.size(), Batch(2).size() + Batch(1).size());
  ASSERT_OK(new_leader->Relinquish(kOrders0));
  // A later open still sees the new leader's log and epoch.
  auto reopened = NewEngine();
  ASSERT_OK_AND_ASSIGN(log_end, reopened->TakeOver(kOrders0, 2));
  EXPECT_EQ(log_end, 3);
  EXPECT_THAT(old_leader->TakeOver(kOrders0, 1).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
}

TEST_F(DiskEngineTest, AbandonTopicClosesOnlyThatTopicPersistingNothing) {
  auto engine = NewEngine();
  for (int p = 0; p < 3; ++p) {
    ASSERT_OK(engine->TakeOver({"doomed", p}, 1).status());
  }
  ASSERT_OK(engine->TakeOver({"keeper", 0}, 1).status());
  ASSERT_OK(
      engine->AppendAndWait({"keeper", 0}, 1, Acks::kAll, Batch(5)).status());
  EXPECT_EQ(engine->AbandonTopic("doomed"), 3);
  EXPECT_EQ(engine->AbandonTopic("doomed"), 0);
  EXPECT_THAT(engine->LedPartitions(),
              ElementsAre(TopicPartition{"keeper", 0}));
  EXPECT_THAT(engine->HighWatermark({"keeper", 0}), IsOkAndHolds(5));
}

TEST_F(DiskEngineTest, AbandonThenRecreateWithANewIdentity) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  ASSERT_OK(engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(7)).status());
  ASSERT_EQ(engine->AbandonTopic("orders"), 1);
  // The operator renames the dead incarnation aside and recreates the topic.
  std::string topic_dir = fs::JoinPath(data_dir(), "orders");
  ASSERT_OK(
      fs().Rename(topic_dir, fs::JoinPath(data_dir(), ".deleting-orders")));
  ASSERT_OK(fs::CreateDirsDurably(fs(), topic_dir));
  ASSERT_OK_AND_ASSIGN(int64_t log_end, engine->TakeOver(kOrders0, 1));
  EXPECT_EQ(log_end, 0);
}

// A take-over that opened the deleted incarnation's directory before
// AbandonTopic must not lead it afterwards (it would serve dead data).
TEST_F(DiskEngineTest,
       ATakeOverStillOpeningWhenItsTopicIsAbandonedDoesNotLead) {
  auto engine = NewEngine();
  fs().BlockSyncs(test::PathPattern::Substring("orders/0"));
  std::thread taker([&] {
    EXPECT_THAT(engine->TakeOver(kOrders0, 1).status(),
                HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                           HasSubstr("abandoned")));
  });
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_EQ(engine->AbandonTopic("orders"), 0);
  fs().ReleaseSyncs();
  taker.join();
  EXPECT_TRUE(engine->LedPartitions().empty());
  // A take-over that begins after the abandon leads (the identity gate
  // decides whether the directory may be adopted).
  EXPECT_OK(engine->TakeOver(kOrders0, 1).status());
}

// A fence recorded while a take-over recovers (after it read the fences,
// before it joined the led partitions) still reaches the partition.
TEST_F(DiskEngineTest, AFenceDuringATakeOverReachesThePartition) {
  auto engine = NewEngine();
  fs().BlockSyncs(test::PathPattern::Substring("orders/0"));
  std::thread taker([&] { EXPECT_OK(engine->TakeOver(kOrders0, 1).status()); });
  fs().WaitUntilBlockedSyncs(1);
  // The fences file is in the data dir, not blocked.
  ASSERT_OK(engine->FenceProducerEpoch(/*producer_id=*/77, /*epoch=*/5));
  fs().ReleaseSyncs();
  taker.join();
  test::BatchBuilder zombie;
  zombie.Producer(77, 4, 0).AddRecord(absl::nullopt, "x");
  EXPECT_THAT(engine->Append(kOrders0, 1, Acks::kAll, zombie.Build()).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
}

TEST_F(DiskEngineTest, AnEpochOutOfRangeCreatesNothing) {
  auto engine = NewEngine();
  for (int64_t epoch : {int64_t{-1}, int64_t{1} << 31, int64_t{1} << 32}) {
    EXPECT_THAT(engine->TakeOver(kOrders0, epoch).status(),
                HasStorageError(StorageErrorCode::kInvalidRequest));
  }
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders")),
              IsOkAndHolds(false));
}

// Timer ticks hand work to the I/O pool: the engine stops its timers before
// its pool goes. A tick as often as the timer thread can run keeps one in
// flight whenever an engine is destroyed (the sanitizers catch a tick that
// reaches a destroyed pool).
TEST_F(DiskEngineTest, DestroyingTheEngineStopsTimersBeforeThePool) {
  DiskEngine::Options options = MakeOptions();
  options.producer_expiry_interval = absl::Nanoseconds(1);
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                         DiskEngine::Create(options));
    ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  }
}

TEST_F(DiskEngineTest, DeletePartitionRemovesItsFiles) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  ASSERT_OK(engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch()).status());
  ASSERT_OK(engine->DeletePartition(kOrders0));
  EXPECT_TRUE(engine->LedPartitions().empty());
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders", "0")),
              IsOkAndHolds(false));
}

TEST_F(DiskEngineTest, InvalidTopicNamesNeverBecomePaths) {
  auto engine = NewEngine();
  for (const char* topic : {"../escape", "", "a/b", ".."}) {
    EXPECT_THAT(engine->TakeOver({topic, 0}, 1).status(),
                HasStorageError(StorageErrorCode::kInvalidRequest))
        << topic;
    EXPECT_THAT(engine->CreatePartition({topic, 0}),
                HasStorageError(StorageErrorCode::kInvalidRequest));
  }
  EXPECT_THAT(engine->TakeOver({"ok", -1}, 1).status(),
              HasStorageError(StorageErrorCode::kInvalidRequest));
}

TEST_F(DiskEngineTest, RelinquishFailsParkedWaitersOfASupersededLeader) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  fs().BreakLocks();  // see ADeposedLeaderCannotSpliceIntoTheNewLeadersLog
  auto successor = NewEngine();
  ASSERT_OK(successor->TakeOver(kOrders0, 2).status());
  fs().BlockSyncs(test::PathPattern::Substring("00000001-"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       engine->Append(kOrders0, 1, Acks::kAll, Batch()));
  fs().WaitUntilBlockedSyncs(1);
  ASSERT_OK(engine->Relinquish(kOrders0));
  EXPECT_THAT(pending.durable.Wait(),
              HasStorageError(StorageErrorCode::kNotLeader));
  fs().ReleaseSyncs();
}

TEST_F(DiskEngineTest, StalledPartitionsAreCounted) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  test::Fault eio(test::FsOp::kDataSync, EIO);
  eio.path = test::PathPattern::Substring(".log");
  eio.count = test::Fault::kForever;
  fs().InjectFault(eio);
  EXPECT_THAT(engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch()).status(),
              HasStorageError(StorageErrorCode::kStalled));
  EXPECT_EQ(engine->StalledPartitions(), 1);
  EXPECT_GE(engine->Stats().stalls.load(), 1u);
  fs().ClearFaults();
}

TEST_F(DiskEngineTest, LogDirUsageIsReported) {
  auto engine = NewEngine({"fast"});
  std::vector<LogDirUsage> usages = engine->LogDirUsages();
  ASSERT_EQ(usages.size(), 2u);
  EXPECT_EQ(usages[0].name, "default");
  EXPECT_EQ(usages[1].name, "fast");
  EXPECT_GT(usages[0].total_bytes, 0);
  EXPECT_GE(usages[0].usable_bytes, 0);
}

}  // namespace
}  // namespace kaas
