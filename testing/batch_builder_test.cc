#include "testing/batch_builder.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "testing/status_matchers.h"

namespace kaas::test {
namespace {

namespace layout = batch_layout;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

TEST(BatchBuilder, DefaultsAreThoseOfANonIdempotentProducer) {
  const std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.base_offset(), 0);
  EXPECT_EQ(view.partition_leader_epoch(), -1);
  EXPECT_EQ(view.magic(), 2);
  EXPECT_EQ(view.attributes(), 0);
  EXPECT_EQ(view.base_timestamp(), 0);
  EXPECT_EQ(view.producer_id(), -1);
  EXPECT_EQ(view.producer_epoch(), -1);
  EXPECT_EQ(view.base_sequence(), -1);
  EXPECT_EQ(view.record_count(), 1);
  EXPECT_EQ(view.last_offset_delta(), 0);
}

TEST(BatchBuilder, EverySetterReadsBack) {
  const std::string batch = BatchBuilder()
                                .BaseOffset(1000)
                                .PartitionLeaderEpoch(7)
                                .BaseTimestamp(1'700'000'000'000)
                                .Producer(42, 3, 17)
                                .Transactional()
                                .LogAppendTime()
                                .AddRecord("a", "1")
                                .AddRecord("b", "2")
                                .AddRecord("c", "3")
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.size(), batch.size());
  EXPECT_EQ(view.batch_length(), static_cast<int32_t>(batch.size() - 12));
  EXPECT_EQ(view.base_offset(), 1000);
  EXPECT_EQ(view.partition_leader_epoch(), 7);
  EXPECT_EQ(view.base_timestamp(), 1'700'000'000'000);
  EXPECT_EQ(view.producer_id(), 42);
  EXPECT_EQ(view.producer_epoch(), 3);
  EXPECT_EQ(view.base_sequence(), 17);
  EXPECT_TRUE(view.is_transactional());
  EXPECT_FALSE(view.is_control());
  EXPECT_EQ(view.timestamp_type(), TimestampType::kLogAppendTime);
  EXPECT_EQ(view.record_count(), 3);
  EXPECT_EQ(view.last_offset_delta(), 2);
  EXPECT_EQ(view.last_offset(), 1002);
}

TEST(BatchBuilder, MaxTimestampIsTheLargestRecordTimestamp) {
  const std::string batch = BatchBuilder()
                                .BaseTimestamp(5000)
                                .AddRecord("a", "1", /*timestamp_delta=*/-3)
                                .AddRecord("b", "2", /*timestamp_delta=*/40)
                                .AddRecord("c", "3", /*timestamp_delta=*/12)
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.max_timestamp(), 5040);

  const std::string all_negative =
      BatchBuilder().BaseTimestamp(5000).AddRecord("a", "1", -3).Build();
  ASSERT_OK_AND_ASSIGN(view, RecordBatchView::Parse(all_negative));
  EXPECT_EQ(view.max_timestamp(), 4997);
}

TEST(BatchBuilder, RecordsRoundTripThroughTheRecordDecoder) {
  TestRecord with_headers;
  with_headers.key = "key";
  with_headers.value = std::string(300, 'x');  // multi-byte length varint
  with_headers.timestamp_delta = 123456789;
  with_headers.headers = {{"h1", std::string("v1")}, {"h2", absl::nullopt}};
  const std::string batch = BatchBuilder()
                                .AddRecord(absl::nullopt, "no key")
                                .AddRecord("no value", absl::nullopt)
                                .AddRecord(with_headers)
                                .AddRecord("", "")
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
  ASSERT_EQ(records.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(records[i].offset_delta, i);

  EXPECT_EQ(records[0].key, absl::nullopt);
  EXPECT_THAT(records[0].value, Optional(absl::string_view("no key")));
  EXPECT_THAT(records[1].key, Optional(absl::string_view("no value")));
  EXPECT_EQ(records[1].value, absl::nullopt);

  EXPECT_THAT(records[2].key, Optional(absl::string_view("key")));
  EXPECT_THAT(records[2].value,
              Optional(absl::string_view(*with_headers.value)));
  EXPECT_EQ(records[2].timestamp_delta, 123456789);
  ASSERT_EQ(records[2].headers.size(), 2u);
  EXPECT_EQ(records[2].headers[0].key, "h1");
  EXPECT_THAT(records[2].headers[0].value, Optional(absl::string_view("v1")));
  EXPECT_EQ(records[2].headers[1].key, "h2");
  EXPECT_EQ(records[2].headers[1].value, absl::nullopt);

  // Empty is not null.
  EXPECT_THAT(records[3].key, Optional(absl::string_view("")));
  EXPECT_THAT(records[3].value, Optional(absl::string_view("")));
}

TEST(BatchBuilder, RandomRecordsAreDeterministicDistinctAndIncompressible) {
  const std::string a = BatchBuilder().AddRandomRecords(3, 1024, 9).Build();
  const std::string b = BatchBuilder().AddRandomRecords(3, 1024, 9).Build();
  const std::string c = BatchBuilder().AddRandomRecords(3, 1024, 10).Build();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);

  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(a));
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
  ASSERT_EQ(records.size(), 3u);
  std::set<absl::string_view> values;
  for (const Record& record : records) {
    EXPECT_EQ(record.key, absl::nullopt);
    ASSERT_TRUE(record.value.has_value());
    ASSERT_EQ(record.value->size(), 1024u);
    values.insert(*record.value);
    // Uniform bytes: a 1 KiB value uses most of the 256 byte values.
    const std::set<char> distinct(record.value->begin(), record.value->end());
    EXPECT_GT(distinct.size(), 200u);
  }
  EXPECT_EQ(values.size(), 3u);
}

TEST(BatchBuilder, CompressionCompressesTheRecords) {
  const std::string batch = BatchBuilder()
                                .Transactional()
                                .Producer(1, 0, 0)
                                .Compression(CompressionCodec::kZstd)
                                .AddRecord("k", std::string(1000, 'v'))
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.compression(), CompressionCodec::kZstd);
  EXPECT_EQ(view.attributes(), 0x10 | 4);
  EXPECT_LT(batch.size(), 500u);
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
  EXPECT_EQ(records.at(0).value->size(), 1000u);
}

TEST(BatchBuilder, CodecBitsOnlyLeavesTheRecordsUncompressed) {
  const std::string batch = BatchBuilder()
                                .CodecBitsOnly(CompressionCodec::kZstd)
                                .AddRecord("k", "v")
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.compression(), CompressionCodec::kZstd);
  EXPECT_THAT(DecodeRecords(view),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("do not decompress")));
}

TEST(BatchBuilder, BuildWithoutRecordsIsRejectedByParse) {
  const std::string batch = BatchBuilder().Build();
  EXPECT_EQ(batch.size(), layout::kHeaderSize);
  EXPECT_THAT(RecordBatchView::Parse(batch),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         "invalid lastOffsetDelta -1"));
}

TEST(ControlBatch, HasTheCanonicalMarkerLayout) {
  const std::string batch = ControlBatch(ControlType::kCommit, /*producer_id=*/
                                         77, /*producer_epoch=*/4,
                                         /*coordinator_epoch=*/9,
                                         /*timestamp=*/123000);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.attributes(), 0x30);
  EXPECT_EQ(view.base_offset(), 0);
  EXPECT_EQ(view.partition_leader_epoch(), 0);
  EXPECT_EQ(view.last_offset_delta(), 0);
  EXPECT_EQ(view.record_count(), 1);
  EXPECT_EQ(view.base_timestamp(), 123000);
  EXPECT_EQ(view.max_timestamp(), 123000);
  EXPECT_EQ(view.producer_id(), 77);
  EXPECT_EQ(view.producer_epoch(), 4);
  EXPECT_EQ(view.base_sequence(), -1);
  EXPECT_THAT(view.control_type(), IsOkAndHolds(ControlType::kCommit));

  // The fixed offsets the original engine relied on (reference section 8.1):
  // key length 4 (zigzag 0x08) at byte 65, the type at bytes 68..70.
  EXPECT_EQ(batch[65], 0x08);
  EXPECT_EQ(ReadBigEndian16(batch.data() + 68), 1);
  // 61 header + 1 length + 1 attributes + 1 timestampDelta + 1 offsetDelta
  // + 1 keyLength + 4 key + 1 valueLength + 6 value + 1 headers count.
  EXPECT_EQ(batch.size(), 78u);

  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
  ASSERT_EQ(records.size(), 1u);
  ASSERT_TRUE(records[0].value.has_value());
  ASSERT_EQ(records[0].value->size(), 6u);
  EXPECT_EQ(ReadBigEndian16(records[0].value->data()), 0);
  EXPECT_EQ(ReadBigEndian32(records[0].value->data() + 2), 9);
  EXPECT_TRUE(records[0].headers.empty());
}

TEST(ControlBatch, AbortDecodesAsAbort) {
  const std::string batch = ControlBatch(ControlType::kAbort, 1, 0, 0, 0);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(), IsOkAndHolds(ControlType::kAbort));
}

TEST(CorruptionHelpers, FlipBitChangesExactlyOneBit) {
  std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  const std::string original = batch;
  FlipBit(&batch, 66, 3);
  ASSERT_EQ(batch.size(), original.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(batch[i] ^ original[i], i == 66 ? 0x08 : 0) << "byte " << i;
  }
  EXPECT_THAT(RecordBatchView::Parse(batch),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         HasSubstr("crc mismatch")));
}

TEST(CorruptionHelpers, OverwriteThenFixCrcReportsTheField) {
  std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  OverwriteBigEndian64(&batch, layout::kProducerId, 5);
  OverwriteBigEndian16(&batch, layout::kProducerEpoch, 6);
  OverwriteBigEndian32(&batch, layout::kBaseSequence, 7);
  EXPECT_THAT(RecordBatchView::Parse(batch),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         HasSubstr("crc mismatch")));
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.producer_id(), 5);
  EXPECT_EQ(view.producer_epoch(), 6);
  EXPECT_EQ(view.base_sequence(), 7);
}

TEST(CorruptionHelpersDeathTest, WritingOutsideTheBatchIsAProgrammerError) {
  std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  EXPECT_DEATH(OverwriteBigEndian32(&batch, batch.size() - 2, 1),
               "lies outside");
}

}  // namespace
}  // namespace kaas::test
