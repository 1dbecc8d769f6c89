#include "storage/segment/segment_name.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace kaas::segment {
namespace {

TEST(SegmentName, StemIsEightHexDigitsDashTwentyDecimalDigits) {
  EXPECT_EQ(SegmentStem({/*base_offset=*/123, /*epoch=*/5}),
            "00000005-00000000000000000123");
  EXPECT_EQ(SegmentStem({0, 0}), "00000000-00000000000000000000");
  EXPECT_EQ(SegmentStem({std::numeric_limits<int64_t>::max(), 0xffffffffu}),
            "ffffffff-09223372036854775807");
}

TEST(SegmentName, EpochIsLowercaseHex) {
  EXPECT_EQ(SegmentStem({7, 0xabcdef12u}), "abcdef12-00000000000000000007");
}

TEST(SegmentName, FileNamesShareTheStem) {
  const SegmentId id{123, 5};
  EXPECT_EQ(SegmentFileName(id, SegmentFileKind::kLog),
            "00000005-00000000000000000123.log");
  EXPECT_EQ(SegmentFileName(id, SegmentFileKind::kOffsetIndex),
            "00000005-00000000000000000123.index");
  EXPECT_EQ(SegmentFileName(id, SegmentFileKind::kTimeIndex),
            "00000005-00000000000000000123.timeindex");
}

TEST(SegmentName, ParseRoundTripsEveryKind) {
  const SegmentId ids[] = {{0, 0},
                           {123, 5},
                           {std::numeric_limits<int64_t>::max(), 0x7fffffffu},
                           {1, 0x7bcdef12u}};
  for (const SegmentId& id : ids) {
    for (SegmentFileKind kind :
         {SegmentFileKind::kLog, SegmentFileKind::kOffsetIndex,
          SegmentFileKind::kTimeIndex}) {
      const std::string name = SegmentFileName(id, kind);
      std::optional<ParsedSegmentFile> parsed = ParseSegmentFileName(name);
      ASSERT_TRUE(parsed.has_value()) << name;
      EXPECT_EQ(parsed->id, id) << name;
      EXPECT_EQ(parsed->kind, kind) << name;
    }
  }
}

// Kafka leader epochs are int32: a name above that is not the engine's.
TEST(SegmentName, ParseRejectsEpochsBeyondInt32) {
  EXPECT_TRUE(ParseSegmentFileName("7fffffff-00000000000000000007.log"));
  EXPECT_FALSE(ParseSegmentFileName("80000000-00000000000000000007.log"));
  EXPECT_FALSE(ParseSegmentFileName("ffffffff-00000000000000000007.log"));
}

TEST(SegmentName, ParseRejectsUppercaseHex) {
  EXPECT_FALSE(ParseSegmentFileName("ABCDEF12-00000000000000000007.log"));
  EXPECT_FALSE(ParseSegmentFileName("0000000A-00000000000000000007.log"));
}

TEST(SegmentName, ParseRejectsShortAndLongFields) {
  EXPECT_FALSE(ParseSegmentFileName("0000005-00000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("000000005-00000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-0000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-000000000000000000123.log"));
  // The legacy un-prefixed form of the original engine is not ours.
  EXPECT_FALSE(ParseSegmentFileName("00000000000000000123.log"));
}

TEST(SegmentName, ParseRejectsNegativeAndOverflowingBaseOffsets) {
  EXPECT_FALSE(ParseSegmentFileName("00000005--0000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-+0000000000000000123.log"));
  // INT64_MAX + 1 and the largest 20-digit value.
  EXPECT_FALSE(ParseSegmentFileName("00000005-09223372036854775808.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-99999999999999999999.log"));
}

TEST(SegmentName, ParseRejectsNonDigits) {
  EXPECT_FALSE(ParseSegmentFileName("0000000g-00000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-0000000000000000012a.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-0000000000000000 123.log"));
  EXPECT_FALSE(ParseSegmentFileName("00000005_00000000000000000123.log"));
  EXPECT_FALSE(ParseSegmentFileName("not-a-segment.log"));
  EXPECT_FALSE(ParseSegmentFileName(""));
}

TEST(SegmentName, ParseRejectsQuarantinedFiles) {
  const std::string log = SegmentFileName({123, 5}, SegmentFileKind::kLog) +
                          std::string(kQuarantineSuffix);
  EXPECT_EQ(log, "00000005-00000000000000000123.log.quarantined");
  EXPECT_FALSE(ParseSegmentFileName(log));
  EXPECT_FALSE(
      ParseSegmentFileName("00000005-00000000000000000123.index.quarantined"));
}

TEST(SegmentName, ParseRejectsTempAndUnknownSuffixes) {
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123.log.tmp"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123.index.tmp"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123.tmp"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123.LOG"));
  EXPECT_FALSE(
      ParseSegmentFileName("00000005-00000000000000000123.log.sealed"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123"));
  EXPECT_FALSE(ParseSegmentFileName("00000005-00000000000000000123."));
}

TEST(SegmentNameDeathTest, StemOfNegativeBaseOffsetCheckFails) {
  EXPECT_DEATH(SegmentStem({-1, 0}), "non-negative");
}

}  // namespace
}  // namespace kaas::segment
