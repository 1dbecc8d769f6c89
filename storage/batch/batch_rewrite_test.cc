#include "storage/batch/batch_rewrite.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using test::BatchBuilder;

std::string ThreeRecords(CompressionCodec codec) {
  return BatchBuilder()
      .BaseOffset(100)
      .PartitionLeaderEpoch(3)
      .BaseTimestamp(1000)
      .Producer(7, 1, 40)
      .Compression(codec)
      .AddRecord("a", "1", 0)
      .AddRecord("b", absl::nullopt, 5)
      .AddRecord("c", "3", 9)
      .Build();
}

class RewriteBatchTest : public testing::TestWithParam<CompressionCodec> {};

TEST_P(RewriteBatchTest, KeepsOffsetsProducerAndCodecOfTheKeptRecords) {
  const std::string original = ThreeRecords(GetParam());
  ASSERT_OK_AND_ASSIGN(RecordBatchView batch, RecordBatchView::Parse(original));
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(batch));
  std::vector<Record> kept = {records[0], records[2]};
  ASSERT_OK_AND_ASSIGN(std::string rewritten,
                       RewriteBatch(batch, kept, std::nullopt));
  // Parse refuses it (fewer records than offsets); a stored batch may be so.
  EXPECT_FALSE(RecordBatchView::Parse(rewritten).ok());
  ASSERT_OK_AND_ASSIGN(RecordBatchView out,
                       RecordBatchView::ParseStored(rewritten));
  EXPECT_EQ(out.base_offset(), 100);
  EXPECT_EQ(out.last_offset(), 102);
  EXPECT_EQ(out.partition_leader_epoch(), 3);
  EXPECT_EQ(out.producer_id(), 7);
  EXPECT_EQ(out.producer_epoch(), 1);
  EXPECT_EQ(out.base_sequence(), 40);
  EXPECT_EQ(out.max_timestamp(), 1009);
  EXPECT_EQ(out.compression(), GetParam());
  EXPECT_EQ(out.record_count(), 2);
  EXPECT_FALSE(out.has_delete_horizon());
  ASSERT_OK_AND_ASSIGN(DecodedRecords back, DecodeRecords(out));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(*back[0].key, "a");
  EXPECT_EQ(back[0].offset_delta, 0);
  EXPECT_EQ(*back[1].key, "c");
  EXPECT_EQ(back[1].offset_delta, 2);
  EXPECT_EQ(back[1].timestamp_delta, 9);
}

TEST_P(RewriteBatchTest, StampsTheDeleteHorizonAndKeepsRecordTimestamps) {
  const std::string original = ThreeRecords(GetParam());
  ASSERT_OK_AND_ASSIGN(RecordBatchView batch, RecordBatchView::Parse(original));
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(batch));
  ASSERT_OK_AND_ASSIGN(
      std::string rewritten,
      RewriteBatch(batch, records.records, /*delete_horizon_ms=*/50000));
  ASSERT_OK_AND_ASSIGN(RecordBatchView out,
                       RecordBatchView::ParseStored(rewritten));
  EXPECT_TRUE(out.has_delete_horizon());
  EXPECT_EQ(out.base_timestamp(), 50000);
  EXPECT_EQ(out.max_timestamp(), 1009);
  ASSERT_OK_AND_ASSIGN(DecodedRecords back, DecodeRecords(out));
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out.base_timestamp() + back[i].timestamp_delta,
              1000 + records[i].timestamp_delta);
  }
  // A batch stamped once keeps its horizon.
  ASSERT_OK_AND_ASSIGN(std::string again,
                       RewriteBatch(out, back.records, 90000));
  ASSERT_OK_AND_ASSIGN(RecordBatchView twice,
                       RecordBatchView::ParseStored(again));
  EXPECT_EQ(twice.base_timestamp(), 50000);
}

TEST_P(RewriteBatchTest, AnEmptiedBatchIsUncompressedAndKeepsItsHeader) {
  const std::string original = ThreeRecords(GetParam());
  ASSERT_OK_AND_ASSIGN(RecordBatchView batch, RecordBatchView::Parse(original));
  ASSERT_OK_AND_ASSIGN(std::string rewritten,
                       RewriteBatch(batch, {}, std::nullopt));
  ASSERT_OK_AND_ASSIGN(RecordBatchView out,
                       RecordBatchView::ParseStored(rewritten));
  EXPECT_EQ(out.record_count(), 0);
  EXPECT_EQ(out.size(), batch_layout::kHeaderSize);
  EXPECT_EQ(out.compression(), CompressionCodec::kNone);
  EXPECT_EQ(out.last_offset(), 102);
  EXPECT_EQ(out.base_sequence(), 40);
}

INSTANTIATE_TEST_SUITE_P(Codecs, RewriteBatchTest,
                         testing::Values(CompressionCodec::kNone,
                                         CompressionCodec::kGzip,
                                         CompressionCodec::kSnappy,
                                         CompressionCodec::kLz4,
                                         CompressionCodec::kZstd));

TEST(EmptyBatchTest, CoversItsSpanWithoutProducerOrTimestamp) {
  const std::string batch = EmptyBatch(500, 42, 6);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view,
                       RecordBatchView::ParseStored(batch));
  EXPECT_EQ(view.base_offset(), 500);
  EXPECT_EQ(view.next_offset(), 542);
  EXPECT_EQ(view.record_count(), 0);
  EXPECT_EQ(view.partition_leader_epoch(), 6);
  EXPECT_FALSE(view.has_producer_id());
  EXPECT_EQ(view.max_timestamp(), -1);
  EXPECT_TRUE(view.CrcMatches());
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
  EXPECT_EQ(records.size(), 0u);
}

TEST(ParseStoredTest, RefusesMoreRecordsThanOffsets) {
  std::string batch =
      BatchBuilder().AddRecord("k", "v").AddRecord("k", "w").Build();
  test::OverwriteBigEndian32(&batch, batch_layout::kLastOffsetDelta, 0);
  test::FixCrc(&batch);
  EXPECT_FALSE(RecordBatchView::ParseStored(batch).ok());
}

}  // namespace
}  // namespace kaas
