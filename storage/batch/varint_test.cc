#include "storage/batch/varint.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::StatusIs;

std::string EncodeVarint(int32_t v) {
  std::string out;
  AppendVarint(v, &out);
  return out;
}

std::string EncodeVarlong(int64_t v) {
  std::string out;
  AppendVarlong(v, &out);
  return out;
}

TEST(Varint, KnownZigZagEncodings) {
  // Kafka's ByteUtilsTest vectors.
  EXPECT_EQ(EncodeVarint(0), std::string("\x00", 1));
  EXPECT_EQ(EncodeVarint(-1), "\x01");
  EXPECT_EQ(EncodeVarint(1), "\x02");
  EXPECT_EQ(EncodeVarint(-64), "\x7f");
  EXPECT_EQ(EncodeVarint(64), "\x80\x01");
  EXPECT_EQ(EncodeVarint(150), "\xac\x02");
  EXPECT_EQ(EncodeVarint(std::numeric_limits<int32_t>::max()),
            "\xfe\xff\xff\xff\x0f");
  EXPECT_EQ(EncodeVarint(std::numeric_limits<int32_t>::min()),
            "\xff\xff\xff\xff\x0f");
  EXPECT_EQ(EncodeVarlong(std::numeric_limits<int64_t>::min()),
            "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
}

TEST(Varint, RoundTripsAndSizesMatch) {
  for (int32_t v : {0, 1, -1, 63, -64, 64, -65, 8191, -8192, 8192, 1 << 20,
                    -(1 << 27), std::numeric_limits<int32_t>::max(),
                    std::numeric_limits<int32_t>::min()}) {
    const std::string encoded = EncodeVarint(v);
    EXPECT_EQ(VarintSize(v), encoded.size()) << v;
    absl::string_view input = encoded;
    int32_t decoded = 0;
    ASSERT_OK(ConsumeVarint(&input, &decoded));
    EXPECT_EQ(decoded, v);
    EXPECT_TRUE(input.empty());
  }
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1} << 40,
                    -(int64_t{1} << 62), std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    const std::string encoded = EncodeVarlong(v);
    EXPECT_EQ(VarlongSize(v), encoded.size()) << v;
    absl::string_view input = encoded;
    int64_t decoded = 0;
    ASSERT_OK(ConsumeVarlong(&input, &decoded));
    EXPECT_EQ(decoded, v);
    EXPECT_TRUE(input.empty());
  }
  EXPECT_EQ(VarintSize(std::numeric_limits<int32_t>::min()), kMaxVarintBytes);
  EXPECT_EQ(VarlongSize(std::numeric_limits<int64_t>::min()), kMaxVarlongBytes);
}

TEST(Varint, ConsumesOnlyItsOwnBytes) {
  std::string input_bytes = EncodeVarint(300) + "rest";
  absl::string_view input = input_bytes;
  int32_t value;
  ASSERT_OK(ConsumeVarint(&input, &value));
  EXPECT_EQ(value, 300);
  EXPECT_EQ(input, "rest");
}

TEST(Varint, RejectsTruncatedInputAndLeavesItUnchanged) {
  const std::string encoded = EncodeVarint(std::numeric_limits<int32_t>::max());
  for (size_t n = 0; n < encoded.size(); ++n) {
    absl::string_view input(encoded.data(), n);
    int32_t value = 7;
    EXPECT_THAT(ConsumeVarint(&input, &value),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "truncated varint: input ends after " +
                             std::to_string(n) + " bytes"));
    EXPECT_EQ(input.size(), n);
    EXPECT_EQ(value, 7);
  }
  absl::string_view input("\x80\x80", 2);
  int64_t value;
  EXPECT_THAT(ConsumeVarlong(&input, &value),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "truncated varlong: input ends after 2 bytes"));
}

TEST(Varint, RejectsOverLongEncodings) {
  absl::string_view six_bytes("\x80\x80\x80\x80\x80\x00", 6);
  int32_t value32;
  EXPECT_THAT(ConsumeVarint(&six_bytes, &value32),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "varint longer than 5 bytes"));
  EXPECT_EQ(six_bytes.size(), 6u);

  absl::string_view eleven_bytes("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00",
                                 11);
  int64_t value64;
  EXPECT_THAT(ConsumeVarlong(&eleven_bytes, &value64),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "varlong longer than 10 bytes"));
}

TEST(Varint, RejectsBitsBeyondTheWidth) {
  // 0x10 in the fifth byte would be bit 32.
  absl::string_view input("\xff\xff\xff\xff\x1f", 5);
  int32_t value32;
  EXPECT_THAT(
      ConsumeVarint(&input, &value32),
      StatusIs(absl::StatusCode::kInvalidArgument, "varint overflows 32 bits"));
  // 0x02 in the tenth byte would be bit 64.
  absl::string_view long_input("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10);
  int64_t value64;
  EXPECT_THAT(ConsumeVarlong(&long_input, &value64),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "varlong overflows 64 bits"));
}

TEST(Varint, AcceptsNonMinimalEncodingsLikeKafka) {
  absl::string_view input("\x80\x00", 2);
  int32_t value = 7;
  ASSERT_OK(ConsumeVarint(&input, &value));
  EXPECT_EQ(value, 0);
  EXPECT_TRUE(input.empty());
}

}  // namespace
}  // namespace kaas
