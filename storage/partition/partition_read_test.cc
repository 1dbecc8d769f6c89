// Read path: KIP-74, bounds, out-of-range, visibility, timestamps, epochs.
#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <thread>  // NOLINT(build/c++11)
#include <vector>

#include "base/storage_error.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/partition_testlib.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST_F(PartitionTest, ReadStartsAtTheBatchContainingTheOffset) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch(4));  // offsets 0..3
  AppendDurably(*partition, Batch(4));  // 4..7
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      partition->Read(6, 1 << 20, Isolation::kReadUncommitted));
  ASSERT_EQ(read.batches, 1);
  EXPECT_EQ(ReadBigEndian64(std::string(read.records).data()), 4);
  EXPECT_EQ(read.next_offset, 8);
  EXPECT_EQ(read.high_watermark, 8);
}

// D-8: KIP-74, the first batch is returned whole even when larger than
// max_bytes; later batches only if they fit.
TEST_F(PartitionTest, FirstBatchIsWholeEvenWhenLargerThanMaxBytes) {
  auto partition = OpenLeader();
  std::string big = Batch(1, 2000);
  AppendDurably(*partition, big);
  AppendDurably(*partition, Batch(1, 10));
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       partition->Read(0, 100, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 1);
  EXPECT_EQ(read.records.size(), big.size());
  ASSERT_OK_AND_ASSIGN(
      read, partition->Read(0, big.size() + 10, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 1);  // the second batch does not fit whole
}

// D-7: out-of-range offsets are errors, not silent clamping.
TEST_F(PartitionTest, OffsetsOutsideTheLogAreOutOfRange) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch(3));
  ASSERT_OK_AND_ASSIGN(ReadResult at_end,
                       partition->Read(3, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(at_end.batches, 0);
  EXPECT_THAT(partition->Read(4, 1024, Isolation::kReadUncommitted).status(),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  ASSERT_OK(partition->DeleteRecords(2).status());
  EXPECT_THAT(partition->Read(1, 1024, Isolation::kReadUncommitted).status(),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  // The log start may fall inside a batch: that batch is returned whole.
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       partition->Read(2, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 1);
}

// D-5: a closed segment is read only up to the next segment's base offset,
// even if a deposed leader appended more bytes to its file.
TEST_F(PartitionTest, ClosedSegmentReadsStopAtTheNextSegmentBase) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(2));
  ASSERT_OK(partition->TakeOver(2).status());  // rolls: segment 0 is closed
  AppendDurably(*partition, Batch(2), 2);
  // A deposed leader's late write into the closed segment's file.
  std::string zombie = Batch(2);
  WriteBigEndian64(zombie.data(), 2);
  std::string closed_log = PathOf("00000001-00000000000000000000.log");
  ASSERT_OK(fs::AppendToFile(fs(), closed_log, zombie));
  std::string all = ReadAll(*partition);
  EXPECT_EQ(all.size(), 2 * Batch(2).size());
  EXPECT_EQ(ReadBigEndian64(all.data() + Batch(2).size()), 2);
}

// D-6: with flush.messages = 1 a consumer never sees a record that is not
// durable yet.
TEST_F(PartitionTest, ReadsStopAtTheDurableEndWithFlushIntervalOne) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch());
  fs().BlockSyncs(test::PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 1, Acks::kLeader));
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_EQ(partition->LogEndOffset(), 2);
  EXPECT_EQ(partition->HighWatermark(), 1);
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      partition->Read(0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 1);
  fs().ReleaseSyncs();
  ASSERT_OK(partition->WhenDurable(2).Wait());
  EXPECT_EQ(partition->HighWatermark(), 2);
}

TEST_F(PartitionTest, ReadsRunToTheLogEndWithALargerFlushInterval) {
  PartitionConfig config = SmallConfig();
  config.flush_interval_messages = 100;
  auto partition = OpenLeader(1, config);
  ASSERT_OK(partition->Append(Batch(), 1, Acks::kLeader).status());
  EXPECT_EQ(partition->HighWatermark(), 1);
  EXPECT_EQ(ReadAll(*partition).size(), Batch().size());
}

TEST_F(PartitionTest, OffsetForTimestamp) {
  auto partition = OpenLeader();
  for (int i = 0; i < 5; ++i) {
    test::BatchBuilder builder;
    builder.BaseTimestamp(1000 * (i + 1));
    builder.AddRecord(absl::nullopt, "a", 0).AddRecord(absl::nullopt, "b", 1);
    AppendDurably(*partition, builder.Build());
  }
  // Batch i holds offsets 2i, 2i+1 with timestamps 1000(i+1) and +1.
  ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                       partition->OffsetForTimestamp(3000));
  EXPECT_EQ(hit.offset, 4);
  EXPECT_EQ(hit.timestamp, 3000);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(3001));
  EXPECT_EQ(hit.offset, 5);  // refined to the record
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(3500));
  EXPECT_EQ(hit.offset, 6);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(9999));
  EXPECT_EQ(hit.offset, -1);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(-1));
  EXPECT_EQ(hit.offset, 10);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(-2));
  EXPECT_EQ(hit.offset, 0);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(-3));
  EXPECT_EQ(hit.offset, 9);
  EXPECT_EQ(hit.timestamp, 5001);
  EXPECT_THAT(partition->OffsetForTimestamp(-7).status(),
              HasStorageError(StorageErrorCode::kInvalidRequest));
}

TEST_F(PartitionTest, OffsetForTimestampSurvivesReopen) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 30; ++i) {
      AppendDurably(*partition, Batch(1, 200, /*timestamp=*/100 * i));
    }
    ASSERT_OK(partition->Relinquish());
  }
  auto partition = OpenLeader(1, config);
  EXPECT_GT(partition->Segments().size(), 3u);
  ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                       partition->OffsetForTimestamp(1750));
  EXPECT_EQ(hit.offset, 18);
  ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(-3));
  EXPECT_EQ(hit.offset, 29);
}

// Kafka answers at record level inside compressed batches too, also when the
// next batch, which answers a timestamp above every record of one, lies in
// the next segment.
TEST_F(PartitionTest, OffsetForTimestampIsRecordLevelInCompressedBatches) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;  // a roll every two or three batches
  auto partition = OpenLeader(1, config);
  const CompressionCodec codecs[] = {
      CompressionCodec::kGzip, CompressionCodec::kSnappy,
      CompressionCodec::kLz4, CompressionCodec::kZstd};
  uint32_t noise = 1;
  for (int i = 0; i < 4; ++i) {
    test::BatchBuilder builder;
    builder.BaseTimestamp(10000 * (i + 1)).Compression(codecs[i]);
    for (int r = 0; r < 5; ++r) {
      std::string value(60, '\0');  // incompressible, so that segments roll
      for (char& c : value) c = static_cast<char>(noise = noise * 69069 + 1);
      builder.AddRecord(absl::nullopt, value, 10 * r);
    }
    AppendDurably(*partition, builder.Build());  // 5i..5i+4
  }
  AppendDurably(*partition, Batch(1, 16, 90000));  // 20
  ASSERT_GT(partition->Segments().size(), 1u);
  // Batch i holds offsets 5i..5i+4 at 10000(i+1) + 0, 10, ..., 40.
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(CompressionCodecName(codecs[i]));
    const int64_t base = 10000 * (i + 1);
    ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                         partition->OffsetForTimestamp(base + 20));
    EXPECT_EQ(hit.offset, 5 * i + 2) << "a middle record";
    EXPECT_EQ(hit.timestamp, base + 20);
    ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(base + 15));
    EXPECT_EQ(hit.offset, 5 * i + 2) << "between two records: the later";
    EXPECT_EQ(hit.timestamp, base + 20);
    ASSERT_OK_AND_ASSIGN(hit, partition->OffsetForTimestamp(base + 41));
    EXPECT_EQ(hit.offset, 5 * i + 5) << "above every record: the next batch";
    EXPECT_EQ(hit.timestamp, i < 3 ? base + 10000 : 90000);
  }
}

// A batch whose records do not decompress (records are not validated by
// default) fails the lookup that reaches it with a typed error naming the
// partition and the batch, rather than an answer from its header.
TEST_F(PartitionTest, OffsetForTimestampFailsOnRecordsThatDoNotDecompress) {
  auto partition = OpenLeader();
  AppendDurably(*partition, Batch(1, 16, 1000));  // 0
  test::BatchBuilder builder;
  builder.BaseTimestamp(2000).CodecBitsOnly(CompressionCodec::kSnappy);
  builder.AddRecord(absl::nullopt, "a", 0).AddRecord(absl::nullopt, "b", 1);
  AppendDurably(*partition, builder.Build());  // 1..2
  EXPECT_THAT(partition->OffsetForTimestamp(2001),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kCorruptMessage,
                  AllOf(HasSubstr(dir()), HasSubstr("batch at offset 1"))));
  ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                       partition->OffsetForTimestamp(1000));
  EXPECT_EQ(hit.offset, 0) << "a lookup answered before it";
  // Records that decode wrongly are the codec layer's kInvalidRecord.
  std::string malformed = Batch(2, 16, 3000);
  malformed[batch_layout::kRecords] = 0x7e;  // a record longer than the batch
  test::FixCrc(&malformed);
  AppendDurably(*partition, malformed);  // 3..4
  EXPECT_THAT(partition->OffsetForTimestamp(3000),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         HasSubstr("batch at offset 3")));
}

// Only a leader holds descriptors: once relinquished, the calls that would
// open segment files (a time index, a closed segment's log) refuse.
TEST_F(PartitionTest, TimestampLookupsOpenNothingOnceClosed) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 20; ++i) {
    AppendDurably(*partition, Batch(1, 200, /*timestamp=*/100 * i));
  }
  ASSERT_GT(partition->Segments().size(), 2u);
  ASSERT_OK(partition->Relinquish());
  const int64_t opens = fs().Count(test::FsOp::kOpenForRead);
  const auto not_leader = HasStorageError(StorageErrorCode::kNotLeader);
  EXPECT_THAT(partition->OffsetForTimestamp(750).status(), not_leader);
  EXPECT_THAT(partition->OffsetForTimestamp(-3).status(), not_leader);
  EXPECT_THAT(partition->SegmentsWithTimestamps().status(), not_leader);
  EXPECT_THAT(partition->Read(0, 1 << 20, Isolation::kReadUncommitted).status(),
              not_leader);
  EXPECT_EQ(fs().Count(test::FsOp::kOpenForRead), opens);
}

// A reader following next_offset while the writer rolls a segment every few
// batches skips nothing: the segment list a read uses covers every offset
// below the bounds it read. (A list taken before the bounds could miss the
// segment rolled in between; a read at the old active segment's end then
// returned no batch and a next_offset past the records it skipped.)
TEST_F(PartitionTest, AReaderFollowingNextOffsetSkipsNothingWhileSegmentsRoll) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;         // a roll every few batches
  config.flush_interval_messages = 0;  // reads run to the log end
  auto partition = OpenLeader(1, config);
  constexpr int64_t kBatches = 2000;
  std::thread writer([&] {
    for (int64_t i = 0; i < kBatches; ++i) {
      ASSERT_OK(partition->Append(Batch(1, 200), 1, Acks::kLeader).status());
    }
  });
  int64_t next = 0;
  int64_t skipped = 0;
  while (next < kBatches && skipped == 0) {
    absl::StatusOr<ReadResult> read =
        partition->Read(next, 1 << 20, Isolation::kReadUncommitted);
    ASSERT_OK(read.status());
    // One record per batch: every offset in [next, next_offset) came back.
    skipped = read->next_offset - next - read->batches;
    next = read->next_offset;
  }
  writer.join();
  EXPECT_EQ(skipped, 0) << "at offset " << next;
}

// A reader at the log start while DeleteRecords keeps advancing it either
// gets the batch holding the offset it asked for or kOffsetOutOfRange, never
// batches from further on (the segments it asked for were deleted between
// its look at the bounds and at the segment list).
TEST_F(PartitionTest, AReaderAtTheLogStartGetsItsOffsetOrOutOfRange) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;
  config.flush_interval_messages = 0;
  auto partition = OpenLeader(1, config);
  constexpr int64_t kBatches = 1200;
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int64_t i = 0; i < kBatches; ++i) {
      ASSERT_OK(partition->Append(Batch(1, 200), 1, Acks::kLeader).status());
      if (i % 4 == 3) {  // about one segment deleted each time
        ASSERT_OK(partition->DeleteRecords(i - 1).status());
      }
    }
    done.store(true);
  });
  int64_t wrong_starts = 0;
  int64_t reads = 0;
  while (!done.load() && wrong_starts == 0) {
    const int64_t asked = partition->LogStartOffset();
    absl::StatusOr<ReadResult> read =
        partition->Read(asked, 1 << 20, Isolation::kReadUncommitted);
    ++reads;
    if (!read.ok()) {
      ASSERT_THAT(read.status(),
                  HasStorageError(StorageErrorCode::kOffsetOutOfRange));
      continue;
    }
    if (read->batches == 0) continue;
    const std::string base(read->records.Subcord(0, 8));
    if (ReadBigEndian64(base.data()) != asked) ++wrong_starts;
  }
  writer.join();
  EXPECT_EQ(wrong_starts, 0) << "after " << reads << " reads";
}

// Races with a reader: the reader passed its leadership check and took the
// segment list, then something happens exactly when it has opened its first
// closed segment (AtFirstSegmentOpen).
class ReadRaceTest : public PartitionTest {
 protected:
  // Writes 20 timestamped batches (timestamp 100 * offset) over several
  // 2 KiB segments at epoch 1, then reopens the partition as leader at epoch
  // 2: its closed segments are not in the read-handle cache.
  void SetUp() override {
    config_.segment_bytes = 2048;
    {
      auto writer = OpenLeader(1, config_);
      for (int i = 0; i < 20; ++i) {
        AppendDurably(*writer, Batch(1, 200, /*timestamp=*/100 * i));
      }
      ASSERT_GE(writer->Segments().size(), 3u);
      ASSERT_OK(writer->Relinquish());
    }
    partition_ = OpenLeader(2, config_);
    ASSERT_NE(partition_, nullptr);
  }

  void TearDown() override {
    fs().OnNextOpenForRead(test::PathPattern::Any(), nullptr);
  }

  // Runs `action` once a reader has opened the first segment's log, then
  // records whether any segment log is opened after it.
  void AtFirstSegmentOpen(std::function<void()> action) {
    fs().OnNextOpenForRead(
        test::PathPattern::Regex("-0{20}\\.log$"), [this, action] {
          action();
          fs().OnNextOpenForRead(test::PathPattern::Regex("\\.log$"),
                                 [this] { opened_after_action_ = true; });
        });
  }

  int64_t SegmentBase(size_t i) {
    return partition_->Segments().at(i).base_offset;
  }

  PartitionConfig config_ = SmallConfig();
  std::shared_ptr<Partition> partition_;
  bool opened_after_action_ = false;
};

// The read's open under way finishes without caching its descriptor (a
// deposed leader holds none of the shared volume's files), the next segment
// is not opened, and the read fails with kNotLeader.
TEST_F(ReadRaceTest, AReadRacingRelinquishKeepsNoDescriptor) {
  AtFirstSegmentOpen([&] { EXPECT_OK(partition_->Relinquish()); });
  EXPECT_THAT(
      partition_->Read(0, 1 << 20, Isolation::kReadUncommitted).status(),
      HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_FALSE(opened_after_action_);
  EXPECT_EQ(read_cache().size(), 0u);
}

TEST_F(ReadRaceTest, ATimestampLookupRacingRelinquishKeepsNoDescriptor) {
  AtFirstSegmentOpen([&] { EXPECT_OK(partition_->Relinquish()); });
  EXPECT_THAT(partition_->SegmentsWithTimestamps().status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_FALSE(opened_after_action_);
  EXPECT_EQ(read_cache().size(), 0u);
}

// DeleteRecords removes the first two segments while a read is in the first:
// the read's offsets are gone, which is kOffsetOutOfRange (not a storage
// error), as for a read starting after the deletion.
TEST_F(ReadRaceTest, AReadRacingDeleteRecordsIsOutOfRange) {
  const int64_t third = SegmentBase(2);
  AtFirstSegmentOpen([&] { EXPECT_OK(partition_->DeleteRecords(third)); });
  EXPECT_THAT(
      partition_->Read(0, 1 << 20, Isolation::kReadUncommitted).status(),
      HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(
      partition_->Read(0, 1 << 20, Isolation::kReadUncommitted).status(),
      HasStorageError(StorageErrorCode::kOffsetOutOfRange));
}

// A timestamp lookup whose segments are deleted under it answers from the
// segments that remain: the first record at or after the new log start.
TEST_F(ReadRaceTest,
       ATimestampLookupRacingDeleteRecordsAnswersFromWhatRemains) {
  const int64_t third = SegmentBase(2);
  AtFirstSegmentOpen([&] { EXPECT_OK(partition_->DeleteRecords(third)); });
  ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                       partition_->OffsetForTimestamp(0));
  EXPECT_EQ(hit.offset, third);
  EXPECT_EQ(hit.timestamp, 100 * third);
}

TEST_F(ReadRaceTest, SegmentTimestampsRacingDeleteRecordsListWhatRemains) {
  const int64_t third = SegmentBase(2);
  const size_t segments = partition_->Segments().size();
  AtFirstSegmentOpen([&] { EXPECT_OK(partition_->DeleteRecords(third)); });
  ASSERT_OK_AND_ASSIGN(std::vector<SegmentSummary> listed,
                       partition_->SegmentsWithTimestamps());
  ASSERT_EQ(listed.size(), segments - 2);
  EXPECT_EQ(listed.front().base_offset, third);
  int64_t max_timestamp = -1;
  for (const SegmentSummary& segment : listed) {
    max_timestamp = std::max(max_timestamp, segment.max_timestamp);
  }
  EXPECT_EQ(max_timestamp, 1900);
}

// A lookup chasing deletions gives up: here every attempt's first segment is
// deleted under it, and after the fourth attempt it fails (typed) instead of
// following a retention that deletes faster than it reads.
TEST_F(ReadRaceTest, ATimestampLookupGivesUpAfterFourDeletionsUnderIt) {
  for (int i = 20; i < 60; ++i) {
    AppendDurably(*partition_, Batch(1, 200, /*timestamp=*/100 * i), 2);
  }
  // Reopened, so that no segment's log is open for reading yet: each
  // attempt opens its first segment anew.
  ASSERT_OK(partition_->Relinquish());
  partition_ = OpenLeader(3, config_);
  ASSERT_GE(partition_->Segments().size(), 7u);
  int deletions = 0;
  std::function<void()> delete_first = [&] {
    ++deletions;
    EXPECT_OK(partition_->DeleteRecords(SegmentBase(1)));
    fs().OnNextOpenForRead(test::PathPattern::Regex("\\.log$"), delete_first);
  };
  fs().OnNextOpenForRead(test::PathPattern::Regex("\\.log$"), delete_first);
  const absl::StatusOr<OffsetAndTimestamp> hit =
      partition_->OffsetForTimestamp(0);
  fs().OnNextOpenForRead(test::PathPattern::Any(), nullptr);
  EXPECT_EQ(deletions, 4);
  EXPECT_THAT(hit.status(), HasStorageError(StorageErrorCode::kStorageError));
  EXPECT_THAT(hit.status().message(), HasSubstr("timestamp lookup"));
  // Once the deletions stop, the lookup answers from what remains.
  ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp after,
                       partition_->OffsetForTimestamp(0));
  EXPECT_EQ(after.offset, partition_->LogStartOffset());
}

TEST_F(PartitionTest, OffsetForLeaderEpoch) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);  // epoch 1: [0, 3)
  ASSERT_OK(partition->TakeOver(3).status());
  AppendDurably(*partition, Batch(2), 3);  // epoch 3: [3, 5)
  ASSERT_OK(partition->TakeOver(4).status());
  AppendDurably(*partition, Batch(1), 4);  // epoch 4: [5, 6)
  auto expect = [&](int64_t asked, int64_t epoch, int64_t end) {
    EpochEndOffset answer = partition->OffsetForLeaderEpoch(asked);
    EXPECT_EQ(answer.leader_epoch, epoch) << asked;
    EXPECT_EQ(answer.end_offset, end) << asked;
  };
  expect(1, 1, 3);
  expect(2, 1, 3);  // no epoch 2: the largest below it
  expect(3, 3, 5);
  expect(4, 4, 6);  // current: the log end
  expect(5, -1, -1);
  expect(0, 0, 0);  // below the first known epoch
}

}  // namespace
}  // namespace kaas::partition
