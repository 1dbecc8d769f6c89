// Take-over, relinquish, abandon, delete_records.
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/storage_error.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition_test_fixture.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::testing::HasStorageError;
using ::kaas::testing::HasStorageErrorWithMessage;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

int CountSuffix(const std::vector<std::string>& names,
                absl::string_view suffix) {
  int n = 0;
  for (const std::string& name : names) n += absl::EndsWith(name, suffix);
  return n;
}

TEST_F(PartitionTest, TakeOverRollsToASegmentOfTheNewEpoch) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(4), 1);
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(6));
  EXPECT_EQ(log_end, 4);
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_THAT(ListDir(), Contains("00000001-00000000000000000000.log"));
  EXPECT_THAT(ListDir(), Contains("00000006-00000000000000000004.log"));
  // The old leader's epoch is fenced; the new one appends at offset 4.
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_EQ(AppendDurably(*partition, Batch(), 6), 4);
  EXPECT_EQ(ReadAll(*partition).size(), Batch(4).size() + Batch().size());
}

TEST_F(PartitionTest, TakeOverOverAnEmptySegmentLeavesOneFile) {
  auto partition = OpenLeader(7);
  EXPECT_EQ(CountSuffix(ListDir(), ".log"), 1);
  EXPECT_THAT(ListDir(), Contains("00000007-00000000000000000000.log"));
  EXPECT_EQ(partition->Segments().size(), 1u);
}

// Creating a partition costs one round of metadata writes, not two: the
// open of an empty directory writes no manifest, checkpoint or snapshot
// (the take-over that follows writes them at its epoch), and a crash between
// the two leaves a directory that opens and takes over normally.
TEST_F(PartitionTest, OpeningABrandNewPartitionWritesMetadataOnlyAtTakeOver) {
  auto partition = Open();
  EXPECT_THAT(ListDir(),
              Not(Contains(std::string(metadata::kManifestFileName))));
  EXPECT_THAT(ListDir(),
              Not(Contains(std::string(metadata::kCheckpointFileName))));
  EXPECT_EQ(CountSuffix(ListDir(), metadata::kSnapshotSuffix), 0);

  fs().Crash();
  partition.reset();
  partition = Open();
  ASSERT_OK(partition->TakeOver(3).status());
  EXPECT_THAT(ListDir(), Contains(std::string(metadata::kManifestFileName)));
  EXPECT_THAT(ListDir(), Contains(std::string(metadata::kCheckpointFileName)));
  EXPECT_EQ(CountSuffix(ListDir(), metadata::kSnapshotSuffix), 1);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 3), 0);
}

TEST_F(PartitionTest, TakeOverAtOrBelowTheCurrentEpochIsANoOp) {
  auto partition = OpenLeader(4);
  AppendDurably(*partition, Batch(2), 4);
  for (int64_t epoch : {4, 3, 0}) {
    ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(epoch));
    EXPECT_EQ(log_end, 2);
  }
  EXPECT_EQ(partition->LeaderEpoch(), 4);
  EXPECT_EQ(partition->Segments().size(), 1u);
}

TEST_F(PartitionTest, TakeOverBelowTheDurableEpochAfterReopenIsRefused) {
  {
    auto partition = OpenLeader(9);
    ASSERT_OK(partition->Relinquish());
  }
  auto partition = Open();
  EXPECT_EQ(partition->LeaderEpoch(), 9);
  EXPECT_THAT(partition->TakeOver(8).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("older than the durable")));
  EXPECT_OK(partition->TakeOver(9).status());
}

TEST_F(PartitionTest, FailedTakeOverRollLeavesThePartitionUntouched) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  testing::Fault fault(testing::FsOp::kOpenForWrite, ENOENT);
  fault.path = testing::PathPattern::Substring("00000005-");
  fs().InjectFault(fault);
  EXPECT_THAT(partition->TakeOver(5).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  EXPECT_EQ(partition->Segments().size(), 1u);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 1), 3);  // still writable
  EXPECT_OK(partition->TakeOver(5).status());           // re-drive
  EXPECT_EQ(partition->LeaderEpoch(), 5);
}

// D-15 and the re-drive rule: a failed manifest write leaves the epoch
// where it was; the re-drive completes without truncating.
TEST_F(PartitionTest, FailedTakeOverPersistIsReDrivenToCompletion) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  testing::Fault fault(testing::FsOp::kOpenForWrite, ENOSPC);
  fault.path = testing::PathPattern::Substring("manifest");
  fs().InjectFault(fault);
  EXPECT_FALSE(partition->TakeOver(6).ok());
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(6));
  EXPECT_EQ(log_end, 3);
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_EQ(CountSuffix(ListDir(), ".log"), 2);
  ASSERT_OK(partition->Relinquish());
  partition = Open();
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_EQ(partition->LogEndOffset(), 3);
}

TEST_F(PartitionTest, TakeOverSupersededByANewerLeaderFails) {
  auto partition = OpenLeader(2);
  metadata::PartitionManifest newer;
  newer.set_leader_epoch(9);
  ASSERT_OK(
      metadata::WriteManifestUnlessSuperseded(fs(), dir(), newer).status());
  EXPECT_THAT(partition->TakeOver(3).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("superseded by leader "
                                                   "epoch 9")));
  EXPECT_EQ(partition->LeaderEpoch(), 2);
}

TEST_F(PartitionTest, TakeOverEpochSurvivesReopen) {
  {
    auto partition = OpenLeader(9);
    AppendDurably(*partition, Batch(3), 9);
    ASSERT_OK(partition->Relinquish());
  }
  auto partition = OpenLeader(9);
  EXPECT_EQ(partition->LeaderEpoch(), 9);
  EXPECT_EQ(partition->LogEndOffset(), 3);
  EXPECT_THAT(partition->Append(Batch(), 8, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
}

TEST_F(PartitionTest, CleanRelinquishMakesTheNextOpenScanNothing) {
  {
    auto partition = OpenLeader(1);
    for (int i = 0; i < 20; ++i) AppendDurably(*partition, Batch(2, 100));
    ASSERT_OK(partition->Relinquish());
    ASSERT_OK(partition->Relinquish());  // idempotent
  }
  OpenReport report;
  auto partition = OpenLeader(1, SmallConfig(), &report);
  EXPECT_TRUE(report.used_checkpoint);
  EXPECT_EQ(report.scanned_bytes, 0u);
  EXPECT_EQ(report.replayed_batches, 0);
  EXPECT_EQ(partition->LogEndOffset(), 40);
}

// D-16: waiters parked on durability are failed (retriable), never left
// hanging, when leadership goes without persisting.
TEST_F(PartitionTest, AbandonFailsParkedWaiters) {
  auto partition = OpenLeader(1);
  fs().BlockSyncs(testing::PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_FALSE(pending.durable.IsReady());
  partition->Abandon();
  EXPECT_THAT(pending.durable.Wait(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  fs().ReleaseSyncs();
}

TEST_F(PartitionTest, SupersededRelinquishPersistsNothingAndFailsWaiters) {
  auto partition = OpenLeader(2);
  AppendDurably(*partition, Batch(3), 2);
  metadata::PartitionManifest newer;
  newer.set_leader_epoch(5);
  newer.set_log_end_offset(3);
  ASSERT_OK(
      metadata::WriteManifestUnlessSuperseded(fs(), dir(), newer).status());
  fs().BlockSyncs(testing::PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 2, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  std::vector<std::string> before = ListDir();
  ASSERT_OK(partition->Relinquish());
  EXPECT_THAT(pending.durable.Wait(),
              HasStorageError(StorageErrorCode::kNotLeader));
  fs().ReleaseSyncs();
  EXPECT_EQ(ListDir(), before);
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest on_disk,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(on_disk.leader_epoch(), 5);
}

TEST_F(PartitionTest, AbandonPersistsNothing) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3));
  std::vector<std::string> before = ListDir();
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest_before,
                       metadata::ReadManifest(fs(), dir()));
  partition->Abandon();
  EXPECT_EQ(ListDir(), before);
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest_after,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(manifest_after.SerializeAsString(),
            manifest_before.SerializeAsString());
}

TEST_F(PartitionTest, DeleteRecordsAdvancesDurablyAndDeletesCoveredSegments) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 30; ++i) AppendDurably(*partition, Batch(1, 300));
    size_t segments = partition->Segments().size();
    ASSERT_GT(segments, 4u);
    ASSERT_OK_AND_ASSIGN(int64_t log_start, partition->DeleteRecords(9));
    EXPECT_EQ(log_start, 9);
    EXPECT_LT(partition->Segments().size(), segments);
    EXPECT_LE(partition->Segments().front().base_offset, 9);
    // Never lowered; past the high watermark is out of range.
    ASSERT_OK_AND_ASSIGN(log_start, partition->DeleteRecords(3));
    EXPECT_EQ(log_start, 9);
    EXPECT_THAT(partition->DeleteRecords(31).status(),
                HasStorageError(StorageErrorCode::kOffsetOutOfRange));
    EXPECT_GE(stats().segments_deleted.load(), 1u);
  }
  // Durable without a relinquish: abandon persists nothing more.
  auto partition = OpenLeader(1, config);
  EXPECT_EQ(partition->LogStartOffset(), 9);
  EXPECT_THAT(partition->Read(8, 100, Isolation::kReadUncommitted).status(),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  ASSERT_OK_AND_ASSIGN(int64_t purged, partition->DeleteRecords(-1));
  EXPECT_EQ(purged, 30);
}

// D-12 (log start part): a crash between persisting the log start and
// unlinking the segments never brings the records back, and the leftovers
// are removed by the next open.
TEST_F(PartitionTest, CrashBetweenLogStartAndUnlinkNeverResurrectsRecords) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
  testing::Fault fault(testing::FsOp::kUnlink, EIO);
  fault.path = testing::PathPattern::Substring(".log");
  fault.count = testing::Fault::kForever;
  fs().InjectFault(fault);
  ASSERT_OK(partition->DeleteRecords(8).status());
  fs().Crash();
  fs().ClearFaults();
  partition.reset();
  OpenReport report;
  partition = OpenLeader(1, config, &report);
  EXPECT_EQ(partition->LogStartOffset(), 8);
  EXPECT_GE(report.deleted_segments, 1);
  EXPECT_LE(partition->Segments().front().base_offset, 8);
  EXPECT_GT(partition->Segments().front().base_offset, 0);
}

TEST_F(PartitionTest, DeleteRecordsTrimsTheEpochHistory) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  ASSERT_OK(partition->TakeOver(2).status());
  AppendDurably(*partition, Batch(3), 2);
  ASSERT_OK(partition->DeleteRecords(4).status());
  EpochEndOffset answer = partition->OffsetForLeaderEpoch(1);
  EXPECT_EQ(answer.leader_epoch, 1);  // below the first kept epoch
  EXPECT_EQ(answer.end_offset, 4);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 6);
}

}  // namespace
}  // namespace kaas
