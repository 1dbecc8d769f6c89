#include "storage/batch/record.h"

#include <limits>
#include <string>

#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/varint.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::EncodeRecord;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::TestRecord;
using ::testing::Optional;

// A record encoded field by field, so tests can break any field.
class RawRecord {
 public:
  RawRecord& Byte(char b) {
    body_.push_back(b);
    return *this;
  }
  RawRecord& Varint(int32_t v) {
    AppendVarint(v, &body_);
    return *this;
  }
  RawRecord& Varlong(int64_t v) {
    AppendVarlong(v, &body_);
    return *this;
  }
  RawRecord& Bytes(absl::string_view s) {
    body_.append(s.data(), s.size());
    return *this;
  }
  // The body with its length prefix; `length` overrides the true length.
  std::string Encode(absl::optional<int32_t> length = absl::nullopt) const {
    std::string out;
    AppendVarint(length.value_or(static_cast<int32_t>(body_.size())), &out);
    return out + body_;
  }

 private:
  std::string body_;
};

// attributes, timestampDelta, offsetDelta: the fields before the key.
RawRecord Prefix() { return RawRecord().Byte(0).Varlong(0).Varint(0); }

void ExpectRecordError(const std::string& encoded, const std::string& message) {
  absl::string_view input = encoded;
  Record record;
  EXPECT_THAT(
      ConsumeRecord(&input, &record),
      HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord, message));
}

TEST(ConsumeRecord, DecodesEveryFieldAndStopsAtTheRecordEnd) {
  TestRecord test_record;
  test_record.key = "key";
  test_record.value = "value";
  test_record.timestamp_delta = -5;
  test_record.headers = {{"h", std::string("hv")}, {"n", absl::nullopt}};
  const std::string encoded = EncodeRecord(test_record, 17) + "next";
  absl::string_view input = encoded;
  Record record;
  ASSERT_OK(ConsumeRecord(&input, &record));
  EXPECT_EQ(input, "next");
  EXPECT_EQ(record.attributes, 0);
  EXPECT_EQ(record.timestamp_delta, -5);
  EXPECT_EQ(record.offset_delta, 17);
  EXPECT_THAT(record.key, Optional(absl::string_view("key")));
  EXPECT_THAT(record.value, Optional(absl::string_view("value")));
  ASSERT_EQ(record.headers.size(), 2u);
  EXPECT_EQ(record.headers[0].key, "h");
  EXPECT_THAT(record.headers[0].value, Optional(absl::string_view("hv")));
  EXPECT_EQ(record.headers[1].key, "n");
  EXPECT_EQ(record.headers[1].value, absl::nullopt);
}

TEST(ConsumeRecord, NullKeyAndValue) {
  const std::string encoded = EncodeRecord(TestRecord{}, 0);
  absl::string_view input = encoded;
  Record record;
  record.key = "stale";
  ASSERT_OK(ConsumeRecord(&input, &record));
  EXPECT_EQ(record.key, absl::nullopt);
  EXPECT_EQ(record.value, absl::nullopt);
  EXPECT_TRUE(record.headers.empty());
}

TEST(ConsumeRecord, RejectsBadRecordLengths) {
  ExpectRecordError("",
                    "record length: truncated varint: input ends after 0 "
                    "bytes");
  ExpectRecordError(Prefix().Encode(-2), "invalid record length -2");
  ExpectRecordError(Prefix().Varint(-1).Varint(-1).Varint(0).Encode(50),
                    "record length 50 exceeds the 6 bytes left");
  ExpectRecordError(RawRecord().Encode(), "empty record: no attributes byte");
  ExpectRecordError(
      Prefix().Varint(-1).Varint(-1).Varint(0).Bytes("xy").Encode(),
      "record length 8 but its fields end after 6 bytes");
}

TEST(ConsumeRecord, RejectsBadFieldVarints) {
  ExpectRecordError(RawRecord().Byte(0).Bytes("\x80").Encode(),
                    "timestampDelta: truncated varlong: input ends after 1 "
                    "bytes");
  ExpectRecordError(RawRecord().Byte(0).Varlong(0).Encode(),
                    "offsetDelta: truncated varint: input ends after 0 bytes");
  ExpectRecordError(Prefix().Bytes("\xff\xff\xff\xff\xff\xff").Encode(),
                    "keyLength: varint longer than 5 bytes");
}

TEST(ConsumeRecord, RejectsBadKeyAndValueLengths) {
  ExpectRecordError(Prefix().Varint(-2).Encode(), "invalid keyLength -2");
  ExpectRecordError(Prefix().Varint(10).Bytes("abc").Encode(),
                    "keyLength 10 exceeds the 3 bytes left in the record");
  ExpectRecordError(Prefix().Varint(-1).Varint(5).Encode(),
                    "valueLength 5 exceeds the 0 bytes left in the record");
}

TEST(ConsumeRecord, RejectsBadHeaders) {
  RawRecord no_headers = Prefix().Varint(-1).Varint(-1);
  ExpectRecordError(RawRecord(no_headers).Varint(-1).Encode(),
                    "invalid headers count -1");
  ExpectRecordError(RawRecord(no_headers).Varint(1).Varint(-1).Encode(),
                    "header 0 of 1: invalid headerKeyLength -1");
  ExpectRecordError(
      RawRecord(no_headers).Varint(2).Varint(1).Bytes("k").Varint(-1).Encode(),
      "header 1 of 2: headerKeyLength: truncated varint: input ends after 0 "
      "bytes");
  ExpectRecordError(
      RawRecord(no_headers).Varint(1).Varint(1).Bytes("k").Varint(4).Encode(),
      "header 0 of 1: headerValueLength 4 exceeds the 0 bytes left in the "
      "record");
  // A huge count must not be trusted for allocation.
  ExpectRecordError(
      RawRecord(no_headers)
          .Varint(std::numeric_limits<int32_t>::max())
          .Encode(),
      "header 0 of 2147483647: headerKeyLength: truncated varint: input ends "
      "after 0 bytes");
}

}  // namespace
}  // namespace kaas
