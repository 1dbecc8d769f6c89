// A follower's partition across crashes (simulated power loss through the
// fault-injecting filesystem): the epoch history it learns from replicated
// batches survives, and a truncation is all or nothing.
#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/partition_testlib.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::OverwriteBigEndian64;

class FollowerTest : public PartitionTest {
 protected:
  // `batch` as the leader stored it at `base_offset` in `leader_epoch`.
  static std::string Stored(std::string batch, int64_t base_offset,
                            int32_t leader_epoch) {
    OverwriteBigEndian64(&batch, batch_layout::kBaseOffset, base_offset);
    OverwriteBigEndian32(&batch, batch_layout::kPartitionLeaderEpoch,
                         leader_epoch);
    return batch;
  }

  std::shared_ptr<Partition> OpenFollower(int64_t epoch,
                                          const PartitionConfig& config) {
    std::shared_ptr<Partition> partition = Open(config);
    if (partition == nullptr) return nullptr;
    EXPECT_OK(partition->TakeOver(epoch, Role::kFollower).status());
    return partition;
  }

  // Replicates `count` batches of 4 records at `leader_epoch` from the log
  // end, durably.
  void Replicate(Partition& partition, int count, int32_t leader_epoch,
                 int64_t follower_epoch) {
    for (int i = 0; i < count; ++i) {
      const int64_t end = partition.LogEndOffset();
      absl::StatusOr<AppendResult> result = partition.AppendAsFollower(
          Stored(Batch(4, 100), end, leader_epoch), follower_epoch, Acks::kAll);
      ASSERT_OK(result.status());
      ASSERT_OK(result->durable.Wait());
    }
  }

  // Crashes, drops the dead process's handles and reopens as follower.
  std::shared_ptr<Partition> CrashAndReopen(std::shared_ptr<Partition> old,
                                            int64_t epoch,
                                            const PartitionConfig& config) {
    test::CrashOptions crash;
    crash.tail = test::UnsyncedTail::kDrop;
    fs().Crash(crash);
    if (old != nullptr) old->Abandon();
    old.reset();
    return OpenFollower(epoch, config);
  }
};

// Recovery verifies, and so learns epochs from, only the log past the
// recovery checkpoint: before a checkpoint passes the start of an epoch the
// follower learned from its leader's batches, the manifest holds it.
TEST_F(FollowerTest, EpochsBelowTheCheckpointSurviveACrash) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 256;  // a checkpoint every cycle
  auto partition = OpenFollower(7, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 3, /*leader_epoch=*/2, 7);  // [0, 12)
  Replicate(*partition, 3, /*leader_epoch=*/5, 7);  // [12, 24)
  Replicate(*partition, 3, /*leader_epoch=*/6, 7);  // [24, 36): past it
  partition = CrashAndReopen(std::move(partition), 7, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 36);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 12);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(5).end_offset, 24);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(6).end_offset, 36);
}

// Without any checkpoint after the take-over, the manifest has not heard of
// the replicated epochs: recovery learns them from the batches it verifies.
TEST_F(FollowerTest, EpochsPastTheCheckpointAreLearnedFromTheBatches) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 1 << 30;  // none after the take-over
  auto partition = OpenFollower(7, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 2, /*leader_epoch=*/2, 7);  // [0, 8)
  Replicate(*partition, 2, /*leader_epoch=*/5, 7);  // [8, 16)
  partition = CrashAndReopen(std::move(partition), 7, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 16);
  EpochEndOffset epoch2 = partition->OffsetForLeaderEpoch(2);
  EXPECT_EQ(epoch2.leader_epoch, 2);
  EXPECT_EQ(epoch2.end_offset, 8);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(5).end_offset, 16);
}

// The intent is durable when PrepareTruncation returns; a crash before the
// reopen carries it out leaves the log cut, never whole and never a mix,
// even if every unsynced byte of the removed tail survived.
TEST_F(FollowerTest, ACrashAfterTheIntentLeavesTheLogTruncated) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;  // several segments: whole ones go too
  auto partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 10, /*leader_epoch=*/2, 3);  // [0, 40)
  Replicate(*partition, 5, /*leader_epoch=*/3, 3);   // [40, 60)
  const std::string whole = ReadAll(*partition, 0);
  const size_t batch_size = Batch(4, 100).size();
  ASSERT_OK_AND_ASSIGN(int64_t end, partition->PrepareTruncation(22, false));
  EXPECT_EQ(end, 20) << "the whole batch holding offset 22 goes";
  test::CrashOptions crash;
  crash.tail = test::UnsyncedTail::kKeepAll;
  fs().Crash(crash);
  partition->Abandon();
  partition.reset();
  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  EXPECT_EQ(ReadAll(*partition, 0), whole.substr(0, 5 * batch_size))
      << "batches [0, 20), byte for byte";
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 20);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(3).leader_epoch, -1)
      << "epoch 3 began past the cut: unknown";
  // Stable: another open finds the same log, and the fetcher continues.
  partition = CrashAndReopen(std::move(partition), 3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  Replicate(*partition, 1, /*leader_epoch=*/3, 3);
  EXPECT_EQ(partition->LogEndOffset(), 24);
}

// The intent did not reach the disk (the manifest write failed): the
// partition is closed, and the reopen finds the log as it was.
TEST_F(FollowerTest, ATruncationWhoseIntentFailedLeavesTheLogWhole) {
  PartitionConfig config = SmallConfig();
  auto partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 5, /*leader_epoch=*/3, 3);  // [0, 20)
  const std::string whole = ReadAll(*partition, 0);
  test::Fault fault(test::FsOp::kRename, EIO);
  fault.path = test::PathPattern::Substring("manifest");
  fault.count = test::Fault::kForever;
  fs().InjectFault(fault);
  EXPECT_FALSE(partition->PrepareTruncation(8, false).ok());
  fs().ClearFaults();
  partition = CrashAndReopen(std::move(partition), 3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  EXPECT_EQ(ReadAll(*partition, 0), whole);
}

}  // namespace
}  // namespace kaas::partition
