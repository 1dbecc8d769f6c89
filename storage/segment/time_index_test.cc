#include "storage/segment/time_index.h"

#include <cstdint>
#include <limits>
#include <string>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr int64_t kBase = 100;

// Entries (1000, 100), (2000, 110), (3000, 120).
TimeIndex ThreeEntries() {
  TimeIndex index(kBase);
  EXPECT_TRUE(index.MaybeAppend(1000, 100));
  EXPECT_TRUE(index.MaybeAppend(2000, 110));
  EXPECT_TRUE(index.MaybeAppend(3000, 120));
  return index;
}

std::string EncodeEntry(int64_t timestamp, int32_t relative_offset) {
  std::string bytes(kTimeIndexEntrySize, '\0');
  WriteBigEndian64(bytes.data(), timestamp);
  WriteBigEndian32(bytes.data() + 8, relative_offset);
  return bytes;
}

TEST(TimeIndex, FirstAppendIsAlwaysAdded) {
  TimeIndex index(kBase);
  EXPECT_TRUE(index.MaybeAppend(-1, kBase));
  EXPECT_EQ(index.last(), (TimeIndexEntry{-1, kBase}));
}

TEST(TimeIndex, AppendRequiresBothFieldsToGrow) {
  TimeIndex index = ThreeEntries();
  EXPECT_FALSE(index.MaybeAppend(3000, 130));  // same timestamp
  EXPECT_FALSE(index.MaybeAppend(2500, 130));  // older timestamp
  EXPECT_FALSE(index.MaybeAppend(4000, 120));  // same offset
  EXPECT_FALSE(index.MaybeAppend(4000, 115));  // smaller offset
  EXPECT_EQ(index.size(), 3u);
  EXPECT_TRUE(index.MaybeAppend(3001, 121));
  EXPECT_EQ(index.last(), (TimeIndexEntry{3001, 121}));
}

TEST(TimeIndex, LookupBelowFindsTheLargestTimestampStrictlyBelow) {
  TimeIndex index = ThreeEntries();
  EXPECT_EQ(index.LookupBelow(1000), std::nullopt);
  EXPECT_EQ(index.LookupBelow(std::numeric_limits<int64_t>::min()),
            std::nullopt);
  EXPECT_THAT(index.LookupBelow(1001), Optional(TimeIndexEntry{1000, 100}));
  EXPECT_THAT(index.LookupBelow(2000), Optional(TimeIndexEntry{1000, 100}));
  EXPECT_THAT(index.LookupBelow(2001), Optional(TimeIndexEntry{2000, 110}));
  EXPECT_THAT(index.LookupBelow(std::numeric_limits<int64_t>::max()),
              Optional(TimeIndexEntry{3000, 120}));
  EXPECT_EQ(TimeIndex(kBase).LookupBelow(5000), std::nullopt);
}

TEST(TimeIndex, TruncateToOffsetRemovesEntriesAtOrPastIt) {
  TimeIndex index = ThreeEntries();
  index.TruncateToOffset(121);
  EXPECT_EQ(index.size(), 3u);
  index.TruncateToOffset(120);
  EXPECT_THAT(index.entries(), ElementsAre(TimeIndexEntry{1000, 100},
                                           TimeIndexEntry{2000, 110}));
  index.TruncateToOffset(101);
  EXPECT_THAT(index.entries(), ElementsAre(TimeIndexEntry{1000, 100}));
  index.TruncateToOffset(std::numeric_limits<int64_t>::min());
  EXPECT_THAT(index.entries(), IsEmpty());
  // The next append is accepted again, even with an older timestamp.
  EXPECT_TRUE(index.MaybeAppend(500, 100));
}

TEST(TimeIndex, TruncateFarPastTheSegmentKeepsEverything) {
  TimeIndex index = ThreeEntries();
  index.TruncateToOffset(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(index.size(), 3u);
}

TEST(TimeIndex, CopiesAreIndependent) {
  TimeIndex original = ThreeEntries();
  TimeIndex copy(original);
  original.TruncateToOffset(0);
  EXPECT_EQ(copy.size(), 3u);
  original = copy;
  EXPECT_EQ(original.entries(), copy.entries());
}

TEST(TimeIndex, EncodeIsBigEndianTimestampAndRelativeOffset) {
  TimeIndex index(kBase);
  index.MaybeAppend(0x0102030405060708, kBase + 0x0a0b0c0d);
  EXPECT_EQ(
      index.Encode(),
      std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x0a\x0b\x0c\x0d", 12));
  EXPECT_EQ(ThreeEntries().Encode(2), EncodeEntry(3000, 20));
  EXPECT_EQ(ThreeEntries().Encode(3), "");
}

TEST(TimeIndex, EncodeDecodeRoundTrip) {
  TimeIndex index = ThreeEntries();
  TimeIndex::Decoded decoded =
      TimeIndex::Decode(kBase, index.Encode(), /*next_offset=*/121);
  EXPECT_EQ(decoded.problem, "");
  EXPECT_EQ(decoded.index.base_offset(), kBase);
  EXPECT_EQ(decoded.index.entries(), index.entries());
}

TEST(TimeIndex, DecodeOfATruncatedFileKeepsTheWholeEntries) {
  const std::string bytes = ThreeEntries().Encode();
  TimeIndex::Decoded decoded =
      TimeIndex::Decode(kBase, bytes.substr(0, 30), 121);
  EXPECT_EQ(decoded.problem, "time index size 30 is not a multiple of 12");
  EXPECT_THAT(decoded.index.entries(), ElementsAre(TimeIndexEntry{1000, 100},
                                                   TimeIndexEntry{2000, 110}));
}

TEST(TimeIndex, DecodeOfNonIncreasingTimestampsKeepsThePrefix) {
  const std::string bytes = ThreeEntries().Encode() + EncodeEntry(2500, 30);
  TimeIndex::Decoded decoded = TimeIndex::Decode(kBase, bytes, 200);
  EXPECT_EQ(decoded.problem,
            "entry 3: timestamp 2500 is not above the previous entry's 3000");
  EXPECT_EQ(decoded.index.entries(), ThreeEntries().entries());
}

TEST(TimeIndex, DecodeOfNonIncreasingOffsetsKeepsThePrefix) {
  const std::string bytes = ThreeEntries().Encode() + EncodeEntry(4000, 20);
  TimeIndex::Decoded decoded = TimeIndex::Decode(kBase, bytes, 200);
  EXPECT_EQ(decoded.problem,
            "entry 3: offset 120 is not above the previous entry's 120");
  EXPECT_EQ(decoded.index.size(), 3u);
}

TEST(TimeIndex, DecodeOfAnOffsetPastTheSegmentKeepsThePrefix) {
  TimeIndex::Decoded decoded =
      TimeIndex::Decode(kBase, ThreeEntries().Encode(), /*next_offset=*/120);
  EXPECT_EQ(decoded.problem,
            "entry 2: offset 120 is at or past the segment's next offset 120");
  EXPECT_EQ(decoded.index.size(), 2u);
}

TEST(TimeIndex, DecodeOfAnOffsetBelowTheBase) {
  TimeIndex::Decoded decoded =
      TimeIndex::Decode(kBase, EncodeEntry(1000, -1), 200);
  EXPECT_EQ(decoded.problem,
            "entry 0: offset 99 is below the segment base 100");
  EXPECT_EQ(decoded.index.size(), 0u);
}

TEST(TimeIndex, DecodeDetectsAZeroFilledTail) {
  // KAFKA-10207: a preallocated, zero-padded index file.
  const std::string bytes = ThreeEntries().Encode() + std::string(24, '\0');
  TimeIndex::Decoded decoded = TimeIndex::Decode(kBase, bytes, 200);
  EXPECT_EQ(decoded.problem,
            "entry 3: timestamp 0 is not above the previous entry's 3000");
  EXPECT_EQ(decoded.index.size(), 3u);
}

TEST(TimeIndex, LookupsRunConcurrentlyWithAppends) {
  TimeIndex index(0);
  std::thread writer([&index] {
    for (int64_t i = 0; i < 2000; ++i) index.MaybeAppend(i * 10, i);
  });
  for (int round = 0; round < 2000; ++round) {
    std::optional<TimeIndexEntry> entry = index.LookupBelow(5000);
    if (entry.has_value()) {
      EXPECT_EQ(entry->timestamp, entry->offset * 10);
    }
  }
  writer.join();
  EXPECT_THAT(index.LookupBelow(5000), Optional(TimeIndexEntry{4990, 499}));
}

TEST(TimeIndexDeathTest, AppendBelowTheBaseCheckFails) {
  EXPECT_DEATH(TimeIndex(kBase).MaybeAppend(1, kBase - 1), "below the segment");
}

TEST(TimeIndexDeathTest, AppendOfAnOverflowingOffsetCheckFails) {
  EXPECT_DEATH(TimeIndex(kBase).MaybeAppend(
                   1, kBase + std::numeric_limits<int32_t>::max() + int64_t{1}),
               "overflows int32");
}

}  // namespace
}  // namespace kaas::segment
