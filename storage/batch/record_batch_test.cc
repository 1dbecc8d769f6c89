#include "storage/batch/record_batch.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/crc32c.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

namespace layout = batch_layout;
using ::kaas::test::BatchBuilder;
using ::kaas::test::ControlBatch;
using ::kaas::test::FixCrc;
using ::kaas::test::FlipBit;
using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::OverwriteBigEndian16;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::OverwriteBigEndian64;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TwoRecordBatch() {
  return BatchBuilder().AddRecord("k1", "v1").AddRecord("k2", "v2").Build();
}

// Asserts that Parse rejects `batch` with exactly `message` and `code`.
void ExpectParseError(const std::string& batch, StorageErrorCode code,
                      const std::string& message) {
  EXPECT_THAT(RecordBatchView::Parse(batch),
              HasStorageErrorWithMessage(code, message));
}

TEST(BigEndian, RoundTripsSignedValues) {
  char buffer[8];
  for (int16_t v : {int16_t{0}, int16_t{1}, int16_t{-1}, int16_t{0x1234},
                    std::numeric_limits<int16_t>::min()}) {
    WriteBigEndian16(buffer, v);
    EXPECT_EQ(ReadBigEndian16(buffer), v);
  }
  for (int32_t v : {0, 1, -1, 0x12345678, std::numeric_limits<int32_t>::min(),
                    std::numeric_limits<int32_t>::max()}) {
    WriteBigEndian32(buffer, v);
    EXPECT_EQ(ReadBigEndian32(buffer), v);
  }
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{0x0102030405060708},
                    std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    WriteBigEndian64(buffer, v);
    EXPECT_EQ(ReadBigEndian64(buffer), v);
  }
}

TEST(BigEndian, MostSignificantByteFirst) {
  char buffer[8];
  WriteBigEndian32(buffer, 0x01020304);
  EXPECT_EQ(std::string(buffer, 4), std::string("\x01\x02\x03\x04", 4));
  WriteBigEndian64(buffer, 0x0102030405060708);
  EXPECT_EQ(std::string(buffer, 8),
            std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8));
  WriteBigEndian16(buffer, 0x0102);
  EXPECT_EQ(std::string(buffer, 2), std::string("\x01\x02", 2));
}

TEST(RecordBatchView, ReadsEveryHeaderField) {
  const std::string batch = BatchBuilder()
                                .BaseOffset(0x0102030405060708)
                                .PartitionLeaderEpoch(11)
                                .BaseTimestamp(1'600'000'000'000)
                                .Producer(987654321012, 12, 345)
                                .Transactional()
                                .AddRecord("a", "1", 0)
                                .AddRecord("b", "2", 250)
                                .AddRecord("c", "3", 100)
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.bytes().data(), batch.data());
  EXPECT_EQ(view.size(), batch.size());
  EXPECT_EQ(view.base_offset(), 0x0102030405060708);
  EXPECT_EQ(view.batch_length(), static_cast<int32_t>(batch.size()) - 12);
  EXPECT_EQ(view.partition_leader_epoch(), 11);
  EXPECT_EQ(view.magic(), 2);
  EXPECT_EQ(view.crc(), crc32c::Value(batch.data() + 21, batch.size() - 21));
  EXPECT_TRUE(view.CrcMatches());
  EXPECT_EQ(view.attributes(), 0x10);
  EXPECT_EQ(view.last_offset_delta(), 2);
  EXPECT_EQ(view.base_timestamp(), 1'600'000'000'000);
  EXPECT_EQ(view.max_timestamp(), 1'600'000'000'250);
  EXPECT_EQ(view.producer_id(), 987654321012);
  EXPECT_EQ(view.producer_epoch(), 12);
  EXPECT_EQ(view.base_sequence(), 345);
  EXPECT_EQ(view.record_count(), 3);
  // Derived values.
  EXPECT_EQ(view.last_offset(), 0x0102030405060708 + 2);
  EXPECT_EQ(view.next_offset(), 0x0102030405060708 + 3);
  EXPECT_EQ(view.compression(), CompressionCodec::kNone);
  EXPECT_EQ(view.timestamp_type(), TimestampType::kCreateTime);
  EXPECT_TRUE(view.is_transactional());
  EXPECT_FALSE(view.is_control());
  EXPECT_FALSE(view.has_delete_horizon());
  EXPECT_TRUE(view.has_producer_id());
  EXPECT_EQ(view.last_sequence(), 347);
}

TEST(RecordBatchView, DecodesEachAttributeBit) {
  std::string batch =
      BatchBuilder().Producer(1, 0, 0).AddRecord("k", "v").Build();
  OverwriteBigEndian16(&batch, layout::kAttributes, 0x7b);  // all bits, lz4
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view,
                       RecordBatchView::ParseHeader(batch));
  EXPECT_EQ(view.compression(), CompressionCodec::kLz4);
  EXPECT_EQ(view.timestamp_type(), TimestampType::kLogAppendTime);
  EXPECT_TRUE(view.is_transactional());
  EXPECT_TRUE(view.is_control());
  EXPECT_TRUE(view.has_delete_horizon());
}

TEST(RecordBatchView, CompressionCodecNames) {
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kNone), "none");
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kGzip), "gzip");
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kSnappy), "snappy");
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kLz4), "lz4");
  EXPECT_EQ(CompressionCodecName(CompressionCodec::kZstd), "zstd");
  EXPECT_EQ(CompressionCodecName(static_cast<CompressionCodec>(6)), "unknown");
}

// --- Framing, magic and CRC: kCorruptMessage --------------------------------

TEST(RecordBatchViewParse, RejectsFewerBytesThanAHeader) {
  const std::string batch = TwoRecordBatch();
  ExpectParseError(batch.substr(0, 40), StorageErrorCode::kCorruptMessage,
                   "batch too short: 40 bytes, a v2 RecordBatch header has 61");
  ExpectParseError("", StorageErrorCode::kCorruptMessage,
                   "batch too short: 0 bytes, a v2 RecordBatch header has 61");
}

TEST(RecordBatchViewParse, RejectsABatchLengthBelowTheHeader) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kBatchLength, 48);
  ExpectParseError(batch, StorageErrorCode::kCorruptMessage,
                   "invalid batchLength 48: a v2 RecordBatch has at least 49 "
                   "bytes after that field");
  OverwriteBigEndian32(&batch, layout::kBatchLength, -1);
  ExpectParseError(batch, StorageErrorCode::kCorruptMessage,
                   "invalid batchLength -1: a v2 RecordBatch has at least 49 "
                   "bytes after that field");
}

TEST(RecordBatchViewParse, RejectsATruncatedBatch) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kBatchLength, 200);
  batch.resize(100);
  ExpectParseError(batch, StorageErrorCode::kCorruptMessage,
                   "truncated batch: batchLength 200 announces 212 bytes, got "
                   "100");
}

TEST(RecordBatchViewParse, RejectsTrailingBytes) {
  const std::string one = TwoRecordBatch();
  const std::string two = one + one;
  ExpectParseError(
      two, StorageErrorCode::kCorruptMessage,
      absl::StrFormat("trailing bytes: batchLength %d announces %d bytes, got "
                      "%d (more than one batch?)",
                      one.size() - 12, one.size(), two.size()));
}

TEST(RecordBatchViewParse, RejectsOtherMagics) {
  std::string batch = TwoRecordBatch();
  batch[layout::kMagic] = 1;
  ExpectParseError(batch, StorageErrorCode::kCorruptMessage,
                   "unsupported magic 1 (only v2 RecordBatches are accepted)");
  batch[layout::kMagic] = static_cast<char>(0xff);
  ExpectParseError(batch, StorageErrorCode::kCorruptMessage,
                   "unsupported magic -1 (only v2 RecordBatches are accepted)");
}

TEST(RecordBatchViewParse, RejectsACrcMismatch) {
  std::string batch = TwoRecordBatch();
  const uint32_t stored =
      static_cast<uint32_t>(ReadBigEndian32(batch.data() + layout::kCrc));
  FlipBit(&batch, batch.size() - 1, 7);
  const uint32_t computed = crc32c::Value(batch.data() + 21, batch.size() - 21);
  ExpectParseError(
      batch, StorageErrorCode::kCorruptMessage,
      absl::StrFormat("crc mismatch: stored 0x%08x, computed 0x%08x", stored,
                      computed));
}

// --- Field values: kInvalidRecord (CRC fixed so the field check is reached) --

TEST(RecordBatchViewParse, RejectsUnknownCompressionCodecs) {
  for (int16_t codec : {5, 6, 7}) {
    std::string batch = TwoRecordBatch();
    OverwriteBigEndian16(&batch, layout::kAttributes, codec);
    FixCrc(&batch);
    ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                     absl::StrCat("unknown compression codec ", codec));
  }
}

TEST(RecordBatchViewParse, AcceptsEveryKnownCodec) {
  for (CompressionCodec codec :
       {CompressionCodec::kNone, CompressionCodec::kGzip,
        CompressionCodec::kSnappy, CompressionCodec::kLz4,
        CompressionCodec::kZstd}) {
    const std::string batch =
        BatchBuilder().Compression(codec).AddRecord("k", "v").Build();
    ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
    EXPECT_EQ(view.compression(), codec);
  }
}

TEST(RecordBatchViewParse, RejectsANegativeLastOffsetDelta) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, -1);
  FixCrc(&batch);
  ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                   "invalid lastOffsetDelta -1");
}

TEST(RecordBatchViewParse, RejectsANonPositiveRecordCount) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kRecordCount, 0);
  FixCrc(&batch);
  ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                   "invalid recordCount 0");
}

TEST(RecordBatchViewParse, RejectsARecordCountThatDisagreesWithTheOffsets) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, 4);
  OverwriteBigEndian32(&batch, layout::kRecordCount, 3);
  FixCrc(&batch);
  ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                   "recordCount 3 does not match lastOffsetDelta 4");

  // INT32_MAX as lastOffsetDelta must not overflow the comparison.
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta,
                       std::numeric_limits<int32_t>::max());
  OverwriteBigEndian32(&batch, layout::kRecordCount,
                       std::numeric_limits<int32_t>::min() + 1);
  FixCrc(&batch);
  EXPECT_THAT(RecordBatchView::Parse(batch),
              HasStorageError(StorageErrorCode::kInvalidRecord));
}

TEST(RecordBatchViewParse, RejectsATransactionalBatchWithoutProducerId) {
  const std::string batch =
      BatchBuilder().Transactional().AddRecord("k", "v").Build();
  ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                   "transactional batch without a producer id (producerId -1)");
}

TEST(RecordBatchViewParse, RejectsAControlBatchWithSeveralRecords) {
  const std::string batch = BatchBuilder()
                                .Producer(5, 0, -1)
                                .Transactional()
                                .Control()
                                .AddRecord("k1", "v1")
                                .AddRecord("k2", "v2")
                                .Build();
  ExpectParseError(batch, StorageErrorCode::kInvalidRecord,
                   "control batch with 2 records");
}

// --- ParseHeader ------------------------------------------------------------

TEST(RecordBatchViewParseHeader, SkipsCrcAndFieldChecks) {
  std::string batch = TwoRecordBatch();
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, -7);
  FlipBit(&batch, batch.size() - 1);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view,
                       RecordBatchView::ParseHeader(batch));
  EXPECT_FALSE(view.CrcMatches());
  EXPECT_EQ(view.last_offset_delta(), -7);
}

TEST(RecordBatchViewParseHeader, StillChecksFramingAndMagic) {
  std::string batch = TwoRecordBatch();
  EXPECT_THAT(RecordBatchView::ParseHeader(batch.substr(0, 60)),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         StartsWith("batch too short")));
  EXPECT_THAT(RecordBatchView::ParseHeader(batch.substr(0, batch.size() - 1)),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         StartsWith("truncated batch")));
  EXPECT_THAT(RecordBatchView::ParseHeader(batch + "x"),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         StartsWith("trailing bytes")));
  batch[layout::kMagic] = 0;
  EXPECT_THAT(RecordBatchView::ParseHeader(batch),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         StartsWith("unsupported magic 0")));
}

// --- Bit flips --------------------------------------------------------------

// Which check catches a flipped bit depends on the region. baseOffset and
// partitionLeaderEpoch are deliberately outside Kafka's CRC (the broker
// rewrites them), so a flip there goes unnoticed by Parse; batchLength is
// caught by framing and magic by the magic check; everything from byte 17 on
// (the crc field itself, the rest of the header, the records) by the CRC.
TEST(RecordBatchViewParse, DetectsAFlippedBitInEveryCoveredRegion) {
  const std::string original = BatchBuilder()
                                   .Producer(3, 1, 0)
                                   .AddRecord("key", "value")
                                   .AddRecord(absl::nullopt, "value 2")
                                   .Build();
  for (size_t byte = 0; byte < original.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string batch = original;
      FlipBit(&batch, byte, bit);
      SCOPED_TRACE(absl::StrCat("byte ", byte, " bit ", bit));
      const absl::StatusOr<RecordBatchView> view =
          RecordBatchView::Parse(batch);
      if (byte < layout::kBatchLength ||
          (byte >= layout::kPartitionLeaderEpoch && byte < layout::kMagic)) {
        EXPECT_OK(view) << "not CRC-covered";
      } else if (byte < layout::kPartitionLeaderEpoch) {
        EXPECT_THAT(view,
                    HasStorageErrorWithMessage(
                        StorageErrorCode::kCorruptMessage,
                        ::testing::AnyOf(StartsWith("truncated batch"),
                                         StartsWith("trailing bytes"),
                                         StartsWith("invalid batchLength"))));
      } else if (byte == layout::kMagic) {
        EXPECT_THAT(
            view, HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                             StartsWith("unsupported magic")));
      } else {
        EXPECT_THAT(
            view, HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                             StartsWith("crc mismatch")));
      }
    }
  }
}

// --- Offsets and sequences ---------------------------------------------------

TEST(SetBaseOffset, RewritesTheOffsetAndKeepsTheCrcValid) {
  std::string batch = TwoRecordBatch();
  SetBaseOffset(batch.data(), 123456789012);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.base_offset(), 123456789012);
  EXPECT_EQ(view.last_offset(), 123456789013);
  EXPECT_TRUE(view.CrcMatches());
}

TEST(RecordBatchView, OffsetArithmeticWrapsInsteadOfOverflowing) {
  // baseOffset is not CRC-covered: a corrupt one must not be UB (UBSan).
  std::string batch = TwoRecordBatch();
  SetBaseOffset(batch.data(), std::numeric_limits<int64_t>::max());
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.last_offset(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(view.next_offset(), std::numeric_limits<int64_t>::min() + 1);
}

TEST(RecordBatchView, LastSequenceWrapsPastInt32Max) {
  // Sequences INT32_MAX-1, INT32_MAX, 0, 1 (Kafka's incrementSequence).
  const std::string batch =
      BatchBuilder()
          .Producer(1, 0, std::numeric_limits<int32_t>::max() - 1)
          .AddRandomRecords(4, 8)
          .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.last_sequence(), 1);

  const std::string at_max =
      BatchBuilder()
          .Producer(1, 0, std::numeric_limits<int32_t>::max())
          .AddRandomRecords(1, 8)
          .Build();
  ASSERT_OK_AND_ASSIGN(view, RecordBatchView::Parse(at_max));
  EXPECT_EQ(view.last_sequence(), std::numeric_limits<int32_t>::max());
}

TEST(RecordBatchView, LastSequenceIsMinusOneWithoutSequence) {
  const std::string batch = BatchBuilder().AddRandomRecords(3, 8).Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_EQ(view.base_sequence(), -1);
  EXPECT_EQ(view.last_sequence(), -1);
  EXPECT_FALSE(view.has_producer_id());
}

TEST(PeekBatchSize, ReadsTheSizeFromTwelveBytes) {
  const std::string batch = TwoRecordBatch();
  EXPECT_THAT(PeekBatchSize(batch), IsOkAndHolds(batch.size()));
  // Only the first 12 bytes are needed.
  EXPECT_THAT(PeekBatchSize(absl::string_view(batch).substr(0, 12)),
              IsOkAndHolds(batch.size()));
}

TEST(PeekBatchSize, RejectsShortPrefixesAndTinyLengths) {
  const std::string batch = TwoRecordBatch();
  EXPECT_THAT(PeekBatchSize(absl::string_view(batch).substr(0, 11)),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kCorruptMessage,
                  "batch prefix too short: 11 bytes, baseOffset and "
                  "batchLength take 12"));
  std::string prefix = batch.substr(0, 12);
  OverwriteBigEndian32(&prefix, layout::kBatchLength, 0);
  EXPECT_THAT(PeekBatchSize(prefix),
              HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                         StartsWith("invalid batchLength 0")));
  OverwriteBigEndian32(&prefix, layout::kBatchLength, 49);
  EXPECT_THAT(PeekBatchSize(prefix), IsOkAndHolds(61u));
  OverwriteBigEndian32(&prefix, layout::kBatchLength,
                       std::numeric_limits<int32_t>::max());
  EXPECT_THAT(PeekBatchSize(prefix),
              IsOkAndHolds(size_t{12} + std::numeric_limits<int32_t>::max()));
}

// --- control_type
// -------------------------------------------------------------

// A control batch whose only record has `key` (nullopt: null key).
std::string ControlBatchWithKey(absl::optional<absl::string_view> key) {
  return BatchBuilder()
      .Producer(1, 0, -1)
      .Transactional()
      .Control()
      .AddRecord(key, std::string(6, '\0'))
      .Build();
}

TEST(ControlType, DecodesCommitAndAbort) {
  const std::string commit = ControlBatch(ControlType::kCommit, 1, 0, 0, 0);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(commit));
  EXPECT_THAT(view.control_type(), IsOkAndHolds(ControlType::kCommit));
  const std::string abort = ControlBatch(ControlType::kAbort, 1, 0, 0, 0);
  ASSERT_OK_AND_ASSIGN(view, RecordBatchView::Parse(abort));
  EXPECT_THAT(view.control_type(), IsOkAndHolds(ControlType::kAbort));
}

TEST(ControlType, DecodesVarintsInsteadOfAssumingFixedOffsets) {
  // A 6-byte timestampDelta varlong moves the key away from byte 66, and a
  // key of a later version (1) with extra bytes is still read like v0.
  test::TestRecord record;
  record.key = std::string(
      "\x00\x01\x00\x01"
      "extra",
      9);
  record.value = std::string(6, '\0');
  record.timestamp_delta = int64_t{1} << 40;
  const std::string batch = BatchBuilder()
                                .Producer(1, 0, -1)
                                .Transactional()
                                .Control()
                                .AddRecord(record)
                                .Build();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(), IsOkAndHolds(ControlType::kCommit));
}

TEST(ControlType, RejectsNonControlBatches) {
  const std::string batch = TwoRecordBatch();
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "not a control batch (attributes 0x0000)"));
}

TEST(ControlType, RejectsCompressedControlBatches) {
  std::string batch = ControlBatch(ControlType::kCommit, 1, 0, 0, 0);
  OverwriteBigEndian16(&batch, layout::kAttributes, 0x31);
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidRecord,
                  "control batch is gzip-compressed; markers never are"));
}

TEST(ControlType, RejectsMalformedKeys) {
  struct Case {
    absl::optional<std::string> key;
    std::string message;
  };
  const Case cases[] = {
      {absl::nullopt, "control record has a null key"},
      {std::string("\x00\x00\x00", 3),
       "control record key has 3 bytes, needs 4 (version, type)"},
      {std::string("\xff\xff\x00\x01", 4),
       "invalid control record key version -1"},
      {std::string("\x00\x00\x00\x02", 4),
       "unsupported control record type 2 (only ABORT 0 and COMMIT 1 are "
       "known)"},
      {std::string("\x00\x00\xff\xff", 4),
       "unsupported control record type -1 (only ABORT 0 and COMMIT 1 are "
       "known)"},
  };
  for (const Case& c : cases) {
    const std::string batch = ControlBatchWithKey(
        c.key.has_value() ? absl::optional<absl::string_view>(*c.key)
                          : absl::nullopt);
    ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
    EXPECT_THAT(view.control_type(),
                HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                           c.message));
  }
}

TEST(ControlType, RejectsAMalformedRecordWithoutReadingPastTheBatch) {
  std::string batch = ControlBatch(ControlType::kCommit, 1, 0, 0, 0);
  // keyLength (byte 65) claims 40 bytes; the record has far fewer.
  batch[65] = 80;  // zigzag(40)
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidRecord,
                  "control record: keyLength 40 exceeds the 12 bytes left in "
                  "the record"));

  // The record length (byte 61) runs past the end of the batch.
  batch = ControlBatch(ControlType::kCommit, 1, 0, 0, 0);
  batch[61] = 100;  // zigzag(50)
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(view, RecordBatchView::Parse(batch));
  EXPECT_THAT(view.control_type(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidRecord,
                  "control record: record length 50 exceeds the 16 bytes "
                  "left"));
}

}  // namespace
}  // namespace kaas
