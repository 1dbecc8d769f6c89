// Append path: validation, offsets, fencing, rolls, idempotence.
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/partition_testlib.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::testing::HasSubstr;

TEST_F(PartitionTest, AppendAssignsContiguousOffsetsAndRewritesTheBaseOffset) {
  auto partition = OpenLeader();
  std::string batch = Batch(/*records=*/5);
  ASSERT_OK_AND_ASSIGN(AppendResult first,
                       partition->Append(batch, 1, Acks::kAll));
  EXPECT_EQ(first.base_offset, 0);
  EXPECT_EQ(first.last_offset, 4);
  ASSERT_OK(first.durable.Wait());
  ASSERT_OK_AND_ASSIGN(AppendResult second,
                       partition->Append(Batch(3), 1, Acks::kAll));
  EXPECT_EQ(second.base_offset, 5);
  ASSERT_OK(second.durable.Wait());
  EXPECT_EQ(partition->LogEndOffset(), 8);
  EXPECT_EQ(partition->HighWatermark(), 8);

  std::string stored = ReadAll(*partition);
  ASSERT_EQ(stored.size(), batch.size() + Batch(3).size());
  // Byte-exact except the base offset and the leader epoch, which the engine
  // assigned.
  EXPECT_EQ(ReadBigEndian64(stored.data()), 0);
  EXPECT_TRUE(
      SameBatchButForLeaderFields(stored.substr(0, batch.size()), batch));
  EXPECT_EQ(ReadBigEndian64(stored.data() + batch.size()), 5);
}

TEST_F(PartitionTest, AppendRequiresATakeOver) {
  auto partition = Open();
  EXPECT_THAT(partition->Append(Batch(), 0, Acks::kAll).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("take it over first")));
}

TEST_F(PartitionTest, StaleLeaderEpochIsFenced) {
  auto partition = OpenLeader(/*epoch=*/5);
  EXPECT_THAT(partition->Append(Batch(), 4, Acks::kAll).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("older than")));
  // A higher caller epoch is accepted and does not raise the partition's.
  EXPECT_OK(partition->Append(Batch(), 6, Acks::kAll).status());
  EXPECT_EQ(partition->LeaderEpoch(), 5);
}

// D-1: invalid batches are rejected before anything is written.
TEST_F(PartitionTest, InvalidBatchesAreRejectedAndNothingIsWritten) {
  auto partition = OpenLeader();
  std::string good = Batch(2);
  std::string bad_crc = good;
  test::FlipBit(&bad_crc, batch_layout::kRecords + 2);
  EXPECT_THAT(partition->Append(bad_crc, 1, Acks::kAll).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         HasSubstr("crc mismatch")));
  EXPECT_THAT(partition->Append(good + good, 1, Acks::kAll).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         HasSubstr("trailing bytes")));
  EXPECT_THAT(partition->Append(good.substr(0, good.size() - 1), 1, Acks::kAll)
                  .status(),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         HasSubstr("truncated")));
  std::string v1 = good;
  v1[batch_layout::kMagic] = 1;
  EXPECT_THAT(partition->Append(v1, 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kCorruptMessage));
  EXPECT_EQ(partition->LogEndOffset(), 0);
  EXPECT_EQ(partition->SizeBytes(), 0u);
  EXPECT_EQ(stats().rejected_batches.load(), 4u);
}

TEST_F(PartitionTest, BatchLargerThanASegmentIsRejected) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 4096;
  auto partition = OpenLeader(1, config);
  EXPECT_THAT(partition->Append(Batch(1, 5000), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kRecordListTooLarge));
}

TEST_F(PartitionTest, MaxMessageBytesIsEnforced) {
  PartitionConfig config = SmallConfig();
  config.max_message_bytes = 200;
  auto partition = OpenLeader(1, config);
  EXPECT_THAT(partition->Append(Batch(1, 300), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kMessageTooLarge));
  EXPECT_OK(partition->Append(Batch(1, 50), 1, Acks::kAll).status());
}

TEST_F(PartitionTest, RollsBySizeAndKeepsReadsAcrossSegments) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 4096;
  auto partition = OpenLeader(1, config);
  std::string expected;
  for (int i = 0; i < 20; ++i) {
    AppendDurably(*partition, Batch(2, 400));
  }
  EXPECT_GT(partition->Segments().size(), 3u);
  for (const SegmentSummary& segment : partition->Segments()) {
    EXPECT_LE(segment.size_bytes, 4096u);
  }
  EXPECT_EQ(ReadAll(*partition).size(), partition->SizeBytes());
  EXPECT_GE(stats().segments_rolled.load(), 3u);
}

TEST_F(PartitionTest, RollsByAgeOnAppendAndOnMaybeRoll) {
  PartitionConfig config = SmallConfig();
  config.segment_ms = absl::Minutes(10);
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, Batch());
  clock().Advance(absl::Minutes(9));
  AppendDurably(*partition, Batch());
  EXPECT_EQ(partition->Segments().size(), 1u);
  clock().Advance(absl::Minutes(2));
  AppendDurably(*partition, Batch());  // rolls before writing
  EXPECT_EQ(partition->Segments().size(), 2u);
  // A quiet partition rolls through MaybeRoll.
  clock().Advance(absl::Minutes(11));
  ASSERT_OK_AND_ASSIGN(bool rolled, partition->MaybeRoll());
  EXPECT_TRUE(rolled);
  EXPECT_EQ(partition->Segments().size(), 3u);
  // An empty active segment never rolls.
  clock().Advance(absl::Minutes(11));
  ASSERT_OK_AND_ASSIGN(rolled, partition->MaybeRoll());
  EXPECT_FALSE(rolled);
}

// D-2: a failing roll leaves the partition as it was, still writable.
TEST_F(PartitionTest, FailedRollLeavesThePartitionWritable) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 4096;
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, Batch(1, 3000));
  test::Fault fault(test::FsOp::kOpenForWrite, ENOSPC);
  fault.path = test::PathPattern::Substring("00000000000000000001.log");
  fs().InjectFault(fault);
  EXPECT_THAT(partition->Append(Batch(1, 3000), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  EXPECT_EQ(partition->Segments().size(), 1u);
  EXPECT_EQ(partition->LogEndOffset(), 1);
  // The fault was one-shot: the next append rolls and succeeds.
  EXPECT_EQ(AppendDurably(*partition, Batch(1, 3000)), 1);
  EXPECT_EQ(partition->Segments().size(), 2u);
}

TEST_F(PartitionTest, FailedWriteIsReportedAndOverwritten) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch());
  test::Fault fault(test::FsOp::kWrite, EIO);
  fault.path = test::PathPattern::Substring(".log");
  fault.torn_write_bytes = 20;
  fs().InjectFault(fault);
  if (direct_io()) {
    // The direct-I/O log writes at the sync: the append is taken, the
    // write of its sync fails, and nothing is acknowledged; the partition
    // stalls until its probe has written the bytes again.
    auto appended = partition->Append(Batch(), 1, Acks::kAll);
    ASSERT_OK(appended.status());
    EXPECT_THAT(appended->durable.Wait(),
                HasStorageError(StorageErrorCode::kStalled));
    while (partition->IsStalled()) std::this_thread::yield();
    EXPECT_EQ(AppendDurably(*partition, Batch()), 2);
    EXPECT_EQ(ReadAll(*partition).size(), 3 * Batch().size());
    return;
  }
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  EXPECT_EQ(partition->LogEndOffset(), 1);
  EXPECT_EQ(AppendDurably(*partition, Batch()), 1);
  EXPECT_EQ(ReadAll(*partition).size(), 2 * Batch().size());
}

TEST_F(PartitionTest, IdempotentRetryReturnsTheOriginalOffsets) {
  auto partition = OpenLeader();
  std::string batch = ProducerBatch(/*producer_id=*/42, /*epoch=*/0,
                                    /*base_sequence=*/0, /*records=*/3);
  ASSERT_OK_AND_ASSIGN(AppendResult first,
                       partition->Append(batch, 1, Acks::kAll));
  ASSERT_OK(first.durable.Wait());
  ASSERT_OK_AND_ASSIGN(AppendResult retry,
                       partition->Append(batch, 1, Acks::kAll));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.base_offset, first.base_offset);
  EXPECT_EQ(retry.last_offset, 2);
  EXPECT_OK(retry.durable.Wait());
  EXPECT_EQ(partition->LogEndOffset(), 3);
  EXPECT_THAT(
      partition->Append(ProducerBatch(42, 0, 7), 1, Acks::kAll).status(),
      HasStorageError(StorageErrorCode::kOutOfOrderSequence));
}

// D-26: metrics count records and bytes, not calls.
TEST_F(PartitionTest, StatsCountRecordsNotBatchesOrCalls) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch(3));
  AppendDurably(*partition, Batch(5));
  AppendDurably(*partition, Batch(1));
  EXPECT_EQ(stats().appended_batches.load(), 3u);
  EXPECT_EQ(stats().appended_records.load(), 9u);
  EXPECT_EQ(stats().appended_bytes.load(),
            Batch(3).size() + Batch(5).size() + Batch(1).size());
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      partition->Read(0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 3);
  EXPECT_EQ(stats().read_calls.load(), 1u);
  EXPECT_EQ(stats().read_batches.load(), 3u);
  EXPECT_EQ(stats().read_records.load(), 9u);
  EXPECT_EQ(stats().read_bytes.load(), read.records.size());
  EXPECT_GE(stats().fsyncs.load(), 1u);
  EXPECT_GE(stats().fsync_latency.Take().count, 1u);
}

}  // namespace
}  // namespace kaas::partition
