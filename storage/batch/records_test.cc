#include "storage/batch/records.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

namespace layout = batch_layout;
using ::kaas::test::BatchBuilder;
using ::kaas::test::EncodeRecord;
using ::kaas::test::FixCrc;
using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::StatusIs;
using ::kaas::test::TestRecord;
using ::testing::Optional;

TEST(RecordReader, IteratesRecordsInOrder) {
  const std::string batch = BatchBuilder()
                                .BaseTimestamp(1000)
                                .AddRecord("a", "1", 0)
                                .AddRecord(absl::nullopt, "2", 5)
                                .AddRecord("c", absl::nullopt, 9)
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  ASSERT_OK_AND_ASSIGN(RecordReader reader, RecordReader::Create(view));
  Record record;
  ASSERT_TRUE(reader.Next(&record));
  EXPECT_EQ(record.offset_delta, 0);
  EXPECT_THAT(record.key, Optional(absl::string_view("a")));
  ASSERT_TRUE(reader.Next(&record));
  EXPECT_EQ(record.offset_delta, 1);
  EXPECT_EQ(record.timestamp_delta, 5);
  EXPECT_EQ(record.key, absl::nullopt);
  ASSERT_TRUE(reader.Next(&record));
  EXPECT_EQ(record.offset_delta, 2);
  EXPECT_EQ(record.value, absl::nullopt);
  EXPECT_FALSE(reader.Next(&record));
  EXPECT_OK(reader.status());
  EXPECT_FALSE(reader.Next(&record));
  EXPECT_OK(reader.status());
}

TEST(RecordReader, DecodesTheRecordsOfEveryCodec) {
  for (CompressionCodec codec :
       {CompressionCodec::kGzip, CompressionCodec::kSnappy,
        CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    SCOPED_TRACE(CompressionCodecName(codec));
    const std::string batch = BatchBuilder()
                                  .Compression(codec)
                                  .AddRecord("k", "v")
                                  .AddRecord(absl::nullopt, "w", 5)
                                  .Build();
    ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
    ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(view));
    ASSERT_EQ(records.size(), 2u);
    EXPECT_THAT(records[0].key, Optional(absl::string_view("k")));
    EXPECT_THAT(records[1].value, Optional(absl::string_view("w")));
    EXPECT_EQ(records[1].timestamp_delta, 5);
    EXPECT_OK(ValidateRecords(view));
  }
}

// Codec bits on records that are not compressed: Kafka's broker refuses the
// batch (CORRUPT_MESSAGE); so does validation.
TEST(RecordReader, CodecBitsOnUncompressedRecordsAreACorruptMessage) {
  const std::string batch = BatchBuilder()
                                .CodecBitsOnly(CompressionCodec::kGzip)
                                .AddRecord("k", "v")
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(ValidateRecords(view),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         ::testing::HasSubstr("gzip")));
}

// Garbage records behind a valid CRC: what LogValidator refuses, validation
// refuses (kInvalidRecord), and a sound batch passes.
// Whatever validated them on append, records decode only with offsets
// inside their batch, ascending (compaction keeps both).
TEST(RecordReader, OffsetDeltasAscendInsideTheBatch) {
  TestRecord record;
  record.value = "v";
  for (const auto& [first, second] : std::vector<std::pair<int32_t, int32_t>>{
           {1, 0}, {0, 0}, {-1, 1}, {0, 2}}) {
    std::string batch =
        BatchBuilder().AddRecord("k", "v").AddRecord("k", "v").Build();
    batch.replace(layout::kRecords, std::string::npos,
                  EncodeRecord(record, first) + EncodeRecord(record, second));
    OverwriteBigEndian32(&batch, layout::kBatchLength,
                         static_cast<int32_t>(batch.size() - 12));
    FixCrc(&batch);
    ASSERT_OK_AND_ASSIGN(RecordBatchView view,
                         RecordBatchView::ParseStored(batch));
    EXPECT_THAT(DecodeRecords(view),
                HasStorageErrorWithMessage(
                    StorageErrorCode::kInvalidRecord,
                    ::testing::HasSubstr("lies outside the batch's 0..1")))
        << first << ", " << second;
  }
}

TEST(ValidateRecords, RefusesRecordsKafkasBrokerRefuses) {
  EXPECT_OK(ValidateRecords(
      *RecordBatchView::Parse(BatchBuilder().AddRecord("k", "v").Build())));
  // Inner offsets out of sequence.
  TestRecord skipped;
  skipped.value = "v";
  std::string records = EncodeRecord(skipped, 0) + EncodeRecord(skipped, 2);
  std::string batch =
      BatchBuilder().AddRecord("k", "v").AddRecord("k", "v").Build();
  batch.replace(layout::kRecords, std::string::npos, records);
  OverwriteBigEndian32(&batch, layout::kBatchLength,
                       static_cast<int32_t>(batch.size() - 12));
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(
      ValidateRecords(view),
      HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                 ::testing::HasSubstr("offsetDelta 2")));
  // A record length past the batch, and bytes after the last record.
  std::string truncated = BatchBuilder().AddRecord("k", "value").Build();
  truncated[layout::kRecords] = 0x7e;  // a length far past the end
  FixCrc(&truncated);
  EXPECT_THAT(ValidateRecords(*RecordBatchView::Parse(truncated)),
              HasStorageError(StorageErrorCode::kInvalidRecord));
  std::string extra = BatchBuilder().AddRecord("k", "v").Build() + "xyz";
  OverwriteBigEndian32(&extra, layout::kBatchLength,
                       static_cast<int32_t>(extra.size() - 12));
  FixCrc(&extra);
  EXPECT_THAT(
      ValidateRecords(*RecordBatchView::Parse(extra)),
      HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                 ::testing::HasSubstr("3 bytes after")));
}

TEST(RecordReader, RefusesANegativeRecordCount) {
  std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  OverwriteBigEndian32(&batch, layout::kRecordCount, -3);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view,
                       RecordBatchView::ParseHeader(batch));
  EXPECT_THAT(RecordReader::Create(view),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         "invalid recordCount -3"));
}

TEST(RecordReader, ReportsMissingRecords) {
  std::string batch =
      BatchBuilder().AddRecord("a", "1").AddRecord("b", "2").Build();
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, 2);
  OverwriteBigEndian32(&batch, layout::kRecordCount, 3);
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(DecodeRecords(view),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         "batch ends after 2 of 3 records"));
}

TEST(RecordReader, ReportsBytesAfterTheLastRecord) {
  std::string batch =
      BatchBuilder().AddRecord("a", "1").AddRecord("b", "2").Build();
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, 0);
  OverwriteBigEndian32(&batch, layout::kRecordCount, 1);
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  const size_t second = 61 + EncodeRecord(TestRecord{"a", "1"}, 0).size();
  EXPECT_THAT(DecodeRecords(view),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidRecord,
                  absl::StrCat(batch.size() - second,
                               " bytes after the last of the 1 records, at "
                               "byte ",
                               second)));
}

TEST(RecordReader, NamesTheMalformedRecordAndItsPosition) {
  std::string batch =
      BatchBuilder().AddRecord("a", "1").AddRecord("b", "2").Build();
  // The second record's keyLength: after its length, attributes,
  // timestampDelta and offsetDelta bytes.
  const size_t second = 61 + EncodeRecord(TestRecord{"a", "1"}, 0).size();
  batch[second + 4] = 0x7e;  // zigzag(63)
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  ASSERT_OK_AND_ASSIGN(RecordReader reader, RecordReader::Create(view));
  Record record;
  EXPECT_TRUE(reader.Next(&record));
  EXPECT_FALSE(reader.Next(&record));
  EXPECT_THAT(reader.status(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidRecord,
                  absl::StrCat("record 1 at byte ", second,
                               ": keyLength 63 exceeds the 4 bytes left in "
                               "the record")));
  // The error is sticky.
  EXPECT_FALSE(reader.Next(&record));
  EXPECT_FALSE(reader.status().ok());
}

}  // namespace
}  // namespace kaas
