// Group commit, acks, fsync failures (sticky stall and re-arm), watchdog.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/partition/partition_testlib.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::FsOp;
using ::kaas::test::HasStorageError;
using ::kaas::test::PathPattern;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

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

// Which thread synced which path, as FaultInjectingFileSystem::OnSync
// reports it. Shared with the observer, which a pool thread may still be
// running when the test body ends.
class SyncLog {
 public:
  static std::shared_ptr<SyncLog> Observe(test::FaultInjectingFileSystem& fs) {
    auto log = std::make_shared<SyncLog>();
    fs.OnSync([log](const std::string& path) {
      absl::MutexLock lock(&log->mu_);
      log->syncs_.push_back({std::this_thread::get_id(), path});
    });
    return log;
  }

  // The paths `thread` synced, in order.
  std::vector<std::string> PathsSyncedBy(std::thread::id thread) const {
    return Paths(thread, /*by_thread=*/true);
  }

  // The paths other threads than `thread` synced, in order.
  std::vector<std::string> PathsSyncedByOthersThan(
      std::thread::id thread) const {
    return Paths(thread, /*by_thread=*/false);
  }

 private:
  std::vector<std::string> Paths(std::thread::id thread, bool by_thread) const {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> paths;
    for (const auto& [syncer, path] : syncs_) {
      if ((syncer == thread) == by_thread) paths.push_back(path);
    }
    return paths;
  }

  mutable absl::Mutex mu_;
  std::vector<std::pair<std::thread::id, std::string>> syncs_
      ABSL_GUARDED_BY(mu_);
};

// A caller of AppendAndWait waits anyway: with no cycle in flight it runs
// the fdatasync itself instead of waking a pool thread and being woken back.
TEST_F(PartitionTest,
       AppendAndWaitRunsTheFdatasyncItselfWhenNoCycleIsInFlight) {
  auto partition = OpenLeader();
  io_pool().WaitUntilIdle();  // the take-over's cycles are over
  std::shared_ptr<SyncLog> syncs = SyncLog::Observe(fs());
  ASSERT_OK_AND_ASSIGN(AppendResult result,
                       partition->AppendAndWait(Batch(), 1, Acks::kAll));
  EXPECT_TRUE(result.durable.IsReady());
  EXPECT_OK(result.durable.Wait());
  EXPECT_EQ(partition->HighWatermark(), 1);
  EXPECT_THAT(syncs->PathsSyncedBy(std::this_thread::get_id()),
              ElementsAre(EndsWith(".log")));
  io_pool().WaitUntilIdle();
  EXPECT_THAT(syncs->PathsSyncedByOthersThan(std::this_thread::get_id()),
              Not(Contains(EndsWith(".log"))));
  fs().OnSync(nullptr);
}

// With a cycle in flight, AppendAndWait waits for the pool's next cycle
// (two cycles never sync at once) and still gets its ack.
TEST_F(PartitionTest, AppendAndWaitFindingACycleInFlightWaitsForThePool) {
  auto partition = OpenLeader();
  io_pool().WaitUntilIdle();
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult first,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  std::shared_ptr<SyncLog> syncs = SyncLog::Observe(fs());
  std::thread::id waiter_id;
  absl::StatusOr<AppendResult> second;
  std::thread waiter([&] {
    waiter_id = std::this_thread::get_id();
    second = partition->AppendAndWait(Batch(), 1, Acks::kAll);
  });
  // Appended (and the cycle question settled under the same lock) before
  // the blocked fdatasync is let go.
  while (partition->LogEndOffset() < 2) std::this_thread::yield();
  fs().ReleaseSyncs();
  waiter.join();
  ASSERT_OK(second.status());
  EXPECT_EQ(second->base_offset, 1);
  EXPECT_OK(first.durable.Wait());
  EXPECT_EQ(partition->HighWatermark(), 2);
  EXPECT_THAT(syncs->PathsSyncedBy(waiter_id), IsEmpty());
  fs().OnSync(nullptr);
}

// The index and checkpoint writes a led cycle owes are the pool's: the
// caller is acknowledged after its fdatasync alone.
TEST_F(PartitionTest, AppendAndWaitLeavesTheCyclesCheckpointWritesToThePool) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 1;  // every cycle writes a checkpoint
  auto partition = OpenLeader(1, config);
  io_pool().WaitUntilIdle();
  std::shared_ptr<SyncLog> syncs = SyncLog::Observe(fs());
  ASSERT_OK(partition->AppendAndWait(Batch(), 1, Acks::kAll).status());
  EXPECT_THAT(syncs->PathsSyncedBy(std::this_thread::get_id()),
              ElementsAre(EndsWith(".log")));
  io_pool().WaitUntilIdle();
  // They did happen, on the pool.
  EXPECT_THAT(syncs->PathsSyncedByOthersThan(std::this_thread::get_id()),
              Contains(HasSubstr("checkpoint")));
  fs().OnSync(nullptr);
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

// Producers A and B take turns: one cycle acknowledges A's append of
// `batch` while B's waits for the next. Returns B's append.
AppendResult AcknowledgeAWhileBWaits(Partition& partition,
                                     test::FaultInjectingFileSystem& fs,
                                     absl::string_view batch) {
  fs.BlockSyncs(PathPattern::Substring(".log"));
  absl::StatusOr<AppendResult> a = partition.Append(batch, 1, Acks::kAll);
  EXPECT_OK(a.status());
  fs.WaitUntilBlockedSyncs(1);
  absl::StatusOr<AppendResult> b = partition.Append(batch, 1, Acks::kAll);
  EXPECT_OK(b.status());
  fs.ReleaseSyncs();
  if (a.ok()) {
    EXPECT_OK(a->durable.Wait());
  }
  return *std::move(b);
}

// The cycle after the one that acknowledged A waits for A to append again,
// so that one fdatasync carries A and B instead of each getting its own.
TEST_F(PartitionTest, ACycleWaitsForTheProducersTheLastOneAcknowledged) {
  PartitionConfig config = SmallConfig();
  config.group_commit_linger_max = absl::Hours(1);  // only appends end it
  auto partition = OpenLeader(1, config);
  const int64_t cycles = stats().fsyncs.load();
  AppendResult b = AcknowledgeAWhileBWaits(*partition, fs(), Batch());
  EXPECT_FALSE(b.durable.IsReady());
  ASSERT_OK_AND_ASSIGN(AppendResult a_again,
                       partition->Append(Batch(), 1, Acks::kAll));
  ASSERT_OK(b.durable.Wait());
  ASSERT_OK(a_again.durable.Wait());
  EXPECT_EQ(stats().fsyncs.load() - cycles, 2);
}

// A lingering cycle does not hold up a relinquish, which makes the waiting
// append durable itself.
TEST_F(PartitionTest, ARelinquishEndsALinger) {
  PartitionConfig config = SmallConfig();
  config.group_commit_linger_max = absl::Hours(1);
  auto partition = OpenLeader(1, config);
  AppendResult b = AcknowledgeAWhileBWaits(*partition, fs(), Batch());
  ASSERT_OK(partition->Relinquish());
  ASSERT_OK(b.durable.Wait());
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
  test::Fault eio(FsOp::kDataSync, EIO);
  eio.path = PathPattern::Substring(".log");
  eio.count = test::Fault::kForever;
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

// A recovery checkpoint tells the next open that the segments before it
// need no verification, their indexes included: while a sealed segment's
// indexes could not be made durable (an fdatasync failed), no checkpoint
// passes it, and a power loss then rebuilds them by verifying the segment,
// so timestamp lookups still find its records.
TEST_F(PartitionTest,
       ACheckpointNeverPassesASealedSegmentWithoutDurableIndexes) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;
  config.checkpoint_interval_bytes = 1 << 30;  // checkpoints at rolls only
  auto partition = OpenLeader(1, config);
  test::Fault enospc(FsOp::kDataSync, ENOSPC);
  enospc.path = PathPattern::Substring(".timeindex");
  enospc.count = test::Fault::kForever;
  fs().InjectFault(enospc);
  int64_t timestamp = 1000;
  while (partition->Segments().size() < 3) {
    AppendDurably(*partition, Batch(1, 100, timestamp));
    timestamp += 10;
  }
  fs().ClearFaults();
  const int64_t sealed_end = partition->Segments()[1].base_offset;
  ASSERT_GT(sealed_end, 2);
  AppendDurably(*partition, Batch(1, 100, timestamp));
  fs().Crash();
  partition.reset();

  partition = OpenLeader(2, config);
  for (int64_t offset = 0; offset < sealed_end; ++offset) {
    ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp found,
                         partition->OffsetForTimestamp(1000 + 10 * offset - 5));
    EXPECT_EQ(found.offset, offset);
  }
}

TEST_F(PartitionTest, WatchdogStallsASlowFdatasync) {
  auto partition = OpenLeader(1);
  // Armed once no cycle is in flight: the take-over's own cycle must not
  // trip it on a slow machine.
  AppendDurably(*partition, Batch());
  PartitionConfig config = SmallConfig();
  config.fsync_max_latency = absl::Milliseconds(20);
  ASSERT_OK(partition->SetConfig(config));
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
  EXPECT_EQ(AppendDurably(*partition, Batch()), 2);
}

// A cycle removes from the pending seals exactly those it synced. Here the
// one it synced is deleted by DeleteRecords meanwhile, and the segment that
// was active when it sampled rolls and becomes pending: that segment's tail,
// written after the cycle's fdatasync started, must still be synced before
// the appends in it are acknowledged.
TEST_F(PartitionTest, ACycleRemovesOnlyThePendingSealsItSynced) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.flush_interval_messages = 0;  // acks=1 appends request no cycle
  const std::string batch = Batch(1, 300);
  const int64_t per_segment = config.segment_bytes / batch.size();
  auto partition = OpenLeader(1, config);
  // The roll to S2 starts a cycle that samples S1 as pending and S2 as
  // active; it is held in S2's fdatasync.
  fs().BlockSyncs(PathPattern::Substring(LogFileName(1, per_segment)));
  for (int64_t i = 0; i <= per_segment; ++i) {
    ASSERT_OK(partition->Append(batch, 1, Acks::kLeader).status());
  }
  ASSERT_EQ(partition->Segments().size(), 2u);
  fs().WaitUntilBlockedSyncs(1);
  ASSERT_OK(partition->DeleteRecords(per_segment).status());  // S1 goes
  std::vector<StatusFuture> acks;
  while (partition->Segments().size() < 2) {  // S2 fills up and rolls
    ASSERT_OK_AND_ASSIGN(AppendResult result,
                         partition->Append(batch, 1, Acks::kAll));
    acks.push_back(result.durable);
  }
  fs().ReleaseSyncs();
  for (const StatusFuture& ack : acks) ASSERT_OK(ack.Wait());
  const int64_t acked_end = partition->LogEndOffset();

  fs().Crash();
  partition.reset();
  partition = Open(config);
  EXPECT_EQ(partition->LogEndOffset(), acked_end);
  EXPECT_EQ(ReadAll(*partition, per_segment).size(),
            (acked_end - per_segment) * batch.size());
}

// A cycle completes its acks before it persists the indexes and writes the
// recovery checkpoint: a slow metadata fsync never delays acks=all.
TEST_F(PartitionTest, AcksDoNotWaitForTheCyclesIndexAndCheckpointWrites) {
  PartitionConfig config = SmallConfig();  // a checkpoint every 16 KiB
  config.flush_interval_messages = 0;      // no cycle before the acks=all one
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK(partition->Append(Batch(1, 4000), 1, Acks::kLeader).status());
  }
  fs().BlockSyncs(PathPattern::Regex("snapshot|checkpoint|index"));
  ASSERT_OK_AND_ASSIGN(AppendResult result,
                       partition->Append(Batch(), 1, Acks::kAll));
  const std::optional<absl::Status> acked =
      result.durable.WaitFor(absl::Seconds(30));
  if (acked.has_value()) fs().WaitUntilBlockedSyncs(1);  // then it persists
  fs().ReleaseSyncs();
  ASSERT_TRUE(acked.has_value()) << "the ack waited for a metadata fsync";
  EXPECT_OK(*acked);
  // The next cycle starts once this one has finished persisting.
  AppendDurably(*partition, Batch());
  EXPECT_EQ(partition->HighWatermark(), 7);
  ASSERT_OK(partition->Relinquish());
}

// A cycle that sampled a segment which the take-over then synced and
// released finds nothing left to sync there: the partition does not stall.
TEST_F(PartitionTest, ACycleOutlivedByATakeOverDoesNotStall) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.flush_interval_messages = 0;
  auto partition = OpenLeader(1, config);
  // The roll's cycle samples S1 (pending) and S2 (active), syncs S1 and is
  // held in the directory sync, before S2's fdatasync.
  fs().BlockSyncs(PathPattern::Regex("/topic/0$"));
  while (partition->Segments().size() < 2) {
    ASSERT_OK(partition->Append(Batch(1, 300), 1, Acks::kLeader).status());
  }
  fs().WaitUntilBlockedSyncs(1);
  // The take-over's own syncs go through; it syncs and releases S1 and S2.
  fs().BlockSyncs(PathPattern::Substring("no such file"));
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(2));
  fs().ReleaseSyncs();
  EXPECT_EQ(AppendDurably(*partition, Batch(), 2), log_end);
  EXPECT_FALSE(partition->IsStalled());
  EXPECT_EQ(stats().stalls.load(), 0u);
}

// The watchdog check takes the partition lock, which a take-over holds
// across its fdatasync. A hung one must not hold up the timer thread, which
// serves every partition's deadlines and probes.
TEST_F(PartitionTest, AHungTakeOverSyncDoesNotHoldUpTheTimerThread) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch());  // and no cycle left in flight
  PartitionConfig config = SmallConfig();
  config.fsync_max_latency = absl::Milliseconds(1);
  ASSERT_OK(partition->SetConfig(config));
  // The take-over's roll requests a cycle (arming its watchdog), then the
  // take-over holds the partition lock across its hung fdatasync of the new
  // segment.
  fs().BlockSyncs(PathPattern::Substring(LogFileName(2, 1)));
  std::thread take_over([&] { partition->TakeOver(2).status().IgnoreError(); });
  fs().WaitUntilBlockedSyncs(1);
  // Due after the watchdog, so it runs only once the watchdog task returned.
  absl::Notification ran;
  timers().ScheduleAfter(config.fsync_max_latency, [&] { ran.Notify(); });
  ran.WaitForNotification();
  fs().ReleaseSyncs();
  take_over.join();
}

}  // namespace
}  // namespace kaas::partition
