// Kafka wire primitives: what a malformed or hostile frame gets (a typed
// error naming the field, never a read past the frame or an allocation
// sized by a length field), and that the writer's encodings read back.
#include "examples/broker/wire.h"

#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

TEST(WireTest, WrittenPrimitivesReadBack) {
  std::string bytes;
  WireWriter writer(&bytes);
  writer.Int8(-3);
  writer.Int16(-2);
  writer.Int32(123456789);
  writer.Int64(-9876543210);
  writer.UnsignedVarint(300);
  writer.String("topic");
  writer.NullableString(std::nullopt);
  writer.CompactString("abc");
  writer.Bytes("xyz");
  writer.NullBytes();
  writer.EmptyTaggedFields();
  WireReader reader(bytes);
  EXPECT_EQ(*reader.Int8("a"), -3);
  EXPECT_EQ(*reader.Int16("b"), -2);
  EXPECT_EQ(*reader.Int32("c"), 123456789);
  EXPECT_EQ(*reader.Int64("d"), -9876543210);
  EXPECT_EQ(*reader.UnsignedVarint("e"), 300u);
  EXPECT_EQ(*reader.String("f"), "topic");
  EXPECT_EQ(*reader.NullableString("g"), std::nullopt);
  EXPECT_EQ(*reader.CompactString("h"), "abc");
  EXPECT_EQ(**reader.NullableBytes("i"), "xyz");
  EXPECT_EQ(*reader.NullableBytes("j"), std::nullopt);
  EXPECT_OK(reader.SkipTaggedFields("k"));
  EXPECT_EQ(reader.remaining(), 0u);
}

TEST(WireTest, TruncatedFieldsAreNamed) {
  WireReader reader(absl::string_view("\x00\x01", 2));
  EXPECT_THAT(reader.Int32("timeout_ms"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("truncated request: timeout_ms")));
}

TEST(WireTest, AStringLongerThanTheFrameIsRefused) {
  WireReader reader(
      absl::string_view("\x00\x10"
                        "abc",
                        5));
  EXPECT_THAT(reader.String("topic"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("truncated request: topic")));
}

TEST(WireTest, NegativeLengthsOtherThanNullAreRefused) {
  WireReader strings(absl::string_view("\xff\xfe", 2));
  EXPECT_THAT(strings.NullableString("client_id"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("negative length")));
  WireReader bytes(absl::string_view("\xff\xff\xff\xfe", 4));
  EXPECT_THAT(bytes.NullableBytes("records"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("negative length")));
  WireReader null_string(absl::string_view("\xff\xff", 2));
  EXPECT_THAT(
      null_string.String("topic"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("topic is null")));
}

TEST(WireTest, AnArrayLengthThatCannotFitIsRefusedBeforeAnyAllocation) {
  // 2^31 - 1 topics in a 4-byte frame.
  WireReader reader(absl::string_view("\x7f\xff\xff\xff", 4));
  EXPECT_THAT(
      reader.ArrayLength("topics", 6),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot fit")));
  WireReader compact(absl::string_view("\xff\xff\xff\xff\x07", 5));
  EXPECT_THAT(
      compact.CompactArrayLength("api_keys", 1),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot fit")));
}

TEST(WireTest, NullArraysOnlyWhereNullable) {
  WireReader nullable(absl::string_view("\xff\xff\xff\xff", 4));
  EXPECT_EQ(*nullable.ArrayLength("topics", 2, /*nullable=*/true), -1);
  WireReader not_nullable(absl::string_view("\xff\xff\xff\xff", 4));
  EXPECT_THAT(not_nullable.ArrayLength("topics", 2),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("array length -1")));
}

TEST(WireTest, VarintsLongerThan32BitsAreRefused) {
  WireReader reader(absl::string_view("\xff\xff\xff\xff\x7f", 5));
  EXPECT_THAT(reader.UnsignedVarint("length"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("longer than 32 bits")));
  WireReader unterminated(absl::string_view("\xff\xff", 2));
  EXPECT_THAT(
      unterminated.UnsignedVarint("length"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("truncated")));
}

TEST(WireTest, TaggedFieldsAreSkippedWithinBounds) {
  // Two tags: tag 0 with 2 bytes, tag 5 with 0 bytes, then one more byte.
  WireReader reader(absl::string_view("\x02\x00\x02xy\x05\x00!", 8));
  EXPECT_OK(reader.SkipTaggedFields("tags"));
  EXPECT_EQ(reader.remaining(), 1u);
  WireReader past_end(absl::string_view("\x01\x00\x09xy", 5));
  EXPECT_THAT(past_end.SkipTaggedFields("tags"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("truncated request: tags")));
  WireReader too_many(absl::string_view("\x7f\x00", 2));
  EXPECT_THAT(too_many.SkipTaggedFields("tags"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("truncated request: tags")));
}

}  // namespace
}  // namespace kaas::broker
