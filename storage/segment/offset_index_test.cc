#include "storage/segment/offset_index.h"

#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr int64_t kBase = 100;

// Entries (110, 4096), (120, 8192), (130, 12288).
OffsetIndex ThreeEntries() {
  OffsetIndex index(kBase);
  index.Append(110, 4096);
  index.Append(120, 8192);
  index.Append(130, 12288);
  return index;
}

std::string EncodeEntry(int32_t relative_offset, uint32_t position) {
  std::string bytes(kOffsetIndexEntrySize, '\0');
  WriteBigEndian32(bytes.data(), relative_offset);
  WriteBigEndian32(bytes.data() + 4, static_cast<int32_t>(position));
  return bytes;
}

TEST(OffsetIndex, LookupOnEmptyIndexIsTheSegmentStart) {
  OffsetIndex index(kBase);
  EXPECT_EQ(index.Lookup(kBase), (OffsetIndexEntry{kBase, 0}));
  EXPECT_EQ(index.Lookup(kBase + 1000), (OffsetIndexEntry{kBase, 0}));
}

TEST(OffsetIndex, LookupBelowTheFirstEntryIsTheSegmentStart) {
  OffsetIndex index = ThreeEntries();
  EXPECT_EQ(index.Lookup(kBase), (OffsetIndexEntry{kBase, 0}));
  EXPECT_EQ(index.Lookup(109), (OffsetIndexEntry{kBase, 0}));
  // Below the segment base (a caller bug, but never a crash).
  EXPECT_EQ(index.Lookup(5), (OffsetIndexEntry{kBase, 0}));
  EXPECT_EQ(index.Lookup(std::numeric_limits<int64_t>::min()),
            (OffsetIndexEntry{kBase, 0}));
}

TEST(OffsetIndex, LookupOfAnIndexedOffsetIsThatEntry) {
  OffsetIndex index = ThreeEntries();
  EXPECT_EQ(index.Lookup(110), (OffsetIndexEntry{110, 4096}));
  EXPECT_EQ(index.Lookup(120), (OffsetIndexEntry{120, 8192}));
  EXPECT_EQ(index.Lookup(130), (OffsetIndexEntry{130, 12288}));
}

TEST(OffsetIndex, LookupBetweenEntriesIsTheEntryBelow) {
  OffsetIndex index = ThreeEntries();
  EXPECT_EQ(index.Lookup(111), (OffsetIndexEntry{110, 4096}));
  EXPECT_EQ(index.Lookup(119), (OffsetIndexEntry{110, 4096}));
  EXPECT_EQ(index.Lookup(125), (OffsetIndexEntry{120, 8192}));
}

TEST(OffsetIndex, LookupAboveTheLastEntryIsTheLastEntry) {
  OffsetIndex index = ThreeEntries();
  EXPECT_EQ(index.Lookup(131), (OffsetIndexEntry{130, 12288}));
  // Far past the segment: offset - base does not fit in int32.
  EXPECT_EQ(index.Lookup(std::numeric_limits<int64_t>::max()),
            (OffsetIndexEntry{130, 12288}));
}

TEST(OffsetIndex, LookupBinarySearchesManyEntries) {
  OffsetIndex index(0);
  for (int64_t i = 1; i <= 1000; ++i) index.Append(i * 10, i * 4096);
  for (int64_t target = 0; target < 10020; target += 7) {
    const int64_t expected_entry = std::min<int64_t>(target / 10, 1000);
    EXPECT_EQ(index.Lookup(target),
              (OffsetIndexEntry{expected_entry * 10,
                                static_cast<uint64_t>(expected_entry) * 4096}))
        << target;
  }
}

TEST(OffsetIndex, SizeLastAndEntries) {
  OffsetIndex index(kBase);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_FALSE(index.last().has_value());
  EXPECT_THAT(index.entries(), IsEmpty());
  index = ThreeEntries();
  EXPECT_EQ(index.size(), 3u);
  EXPECT_EQ(index.last(), (OffsetIndexEntry{130, 12288}));
  EXPECT_THAT(index.entries(), ElementsAre(OffsetIndexEntry{110, 4096},
                                           OffsetIndexEntry{120, 8192},
                                           OffsetIndexEntry{130, 12288}));
}

TEST(OffsetIndex, TruncateToPositionRemovesEntriesAtOrPastIt) {
  OffsetIndex index = ThreeEntries();
  index.TruncateToPosition(12289);
  EXPECT_EQ(index.size(), 3u);
  index.TruncateToPosition(12288);
  EXPECT_THAT(index.entries(), ElementsAre(OffsetIndexEntry{110, 4096},
                                           OffsetIndexEntry{120, 8192}));
  index.TruncateToPosition(5000);
  EXPECT_THAT(index.entries(), ElementsAre(OffsetIndexEntry{110, 4096}));
  index.TruncateToPosition(0);
  EXPECT_THAT(index.entries(), IsEmpty());
  // Appends continue after the truncation point.
  index.Append(105, 2048);
  EXPECT_EQ(index.Lookup(200), (OffsetIndexEntry{105, 2048}));
}

TEST(OffsetIndex, CopiesAreIndependent) {
  OffsetIndex original = ThreeEntries();
  OffsetIndex copy(original);
  original.TruncateToPosition(0);
  EXPECT_EQ(copy.size(), 3u);
  EXPECT_EQ(original.size(), 0u);
  original = copy;
  EXPECT_EQ(original.size(), 3u);
  OffsetIndex& same = original;
  original = same;  // self-assignment does not deadlock
  EXPECT_EQ(original.size(), 3u);
}

TEST(OffsetIndex, EncodeIsBigEndianRelativeOffsetAndPosition) {
  OffsetIndex index(kBase);
  index.Append(kBase + 0x01020304, 0xa0b0c0d0u);
  EXPECT_EQ(index.Encode(), std::string("\x01\x02\x03\x04\xa0\xb0\xc0\xd0", 8));
}

TEST(OffsetIndex, EncodeFromEntryEncodesTheTail) {
  OffsetIndex index = ThreeEntries();
  EXPECT_EQ(index.Encode(0).size(), 3 * kOffsetIndexEntrySize);
  EXPECT_EQ(index.Encode(2), EncodeEntry(30, 12288));
  EXPECT_EQ(index.Encode(3), "");
}

TEST(OffsetIndex, EncodeDecodeRoundTrip) {
  OffsetIndex index = ThreeEntries();
  OffsetIndex::Decoded decoded =
      OffsetIndex::Decode(kBase, index.Encode(), /*log_size=*/20000);
  EXPECT_EQ(decoded.problem, "");
  EXPECT_EQ(decoded.index.base_offset(), kBase);
  EXPECT_EQ(decoded.index.entries(), index.entries());
}

TEST(OffsetIndex, DecodeOfAnEmptyFileIsAnEmptyIndex) {
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, "", 0);
  EXPECT_EQ(decoded.problem, "");
  EXPECT_EQ(decoded.index.size(), 0u);
}

TEST(OffsetIndex, DecodeOfATruncatedFileKeepsTheWholeEntries) {
  const std::string bytes = ThreeEntries().Encode();
  OffsetIndex::Decoded decoded =
      OffsetIndex::Decode(kBase, bytes.substr(0, 13), 20000);
  EXPECT_EQ(decoded.problem, "index size 13 is not a multiple of 8");
  EXPECT_THAT(decoded.index.entries(),
              ElementsAre(OffsetIndexEntry{110, 4096}));
}

TEST(OffsetIndex, DecodeOfUnsortedOffsetsKeepsThePrefix) {
  const std::string bytes =
      ThreeEntries().Encode() + EncodeEntry(20, 16384) + EncodeEntry(50, 20000);
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, bytes, 30000);
  EXPECT_EQ(decoded.problem,
            "entry 3: offset 120 is not above the previous entry's 130");
  EXPECT_EQ(decoded.index.entries(), ThreeEntries().entries());
}

TEST(OffsetIndex, DecodeOfADuplicateOffsetKeepsThePrefix) {
  const std::string bytes = ThreeEntries().Encode() + EncodeEntry(30, 16384);
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, bytes, 30000);
  EXPECT_EQ(decoded.problem,
            "entry 3: offset 130 is not above the previous entry's 130");
  EXPECT_EQ(decoded.index.size(), 3u);
}

TEST(OffsetIndex, DecodeOfUnsortedPositionsKeepsThePrefix) {
  const std::string bytes = ThreeEntries().Encode() + EncodeEntry(40, 12000);
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, bytes, 30000);
  EXPECT_EQ(decoded.problem,
            "entry 3: position 12000 is not above the previous entry's 12288");
  EXPECT_EQ(decoded.index.size(), 3u);
}

TEST(OffsetIndex, DecodeOfAPositionPastTheLogKeepsThePrefix) {
  const std::string bytes = ThreeEntries().Encode();
  OffsetIndex::Decoded decoded =
      OffsetIndex::Decode(kBase, bytes, /*log_size=*/9000);
  EXPECT_EQ(decoded.problem,
            "entry 2: position 12288 is at or past the end of the log (9000 "
            "bytes)");
  EXPECT_THAT(
      decoded.index.entries(),
      ElementsAre(OffsetIndexEntry{110, 4096}, OffsetIndexEntry{120, 8192}));
  // A position exactly at the end cannot start a batch either.
  EXPECT_EQ(OffsetIndex::Decode(kBase, bytes, 12288).index.size(), 2u);
}

TEST(OffsetIndex, DecodeRejectsAFirstEntryAtTheSegmentBase) {
  // The first batch (position 0, base offset == segment base) is never
  // indexed, so a zero-filled file is invalid from its first entry.
  OffsetIndex::Decoded decoded =
      OffsetIndex::Decode(kBase, std::string(64, '\0'), 30000);
  EXPECT_EQ(decoded.problem,
            "entry 0: offset 100 is not above the segment base 100");
  EXPECT_EQ(decoded.index.size(), 0u);
}

TEST(OffsetIndex, DecodeRejectsAZeroFilledTail) {
  const std::string bytes = ThreeEntries().Encode() + std::string(16, '\0');
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, bytes, 30000);
  EXPECT_EQ(decoded.problem,
            "entry 3: offset 100 is not above the previous entry's 130");
  EXPECT_EQ(decoded.index.size(), 3u);
}

TEST(OffsetIndex, DecodeRejectsAFirstEntryAtPositionZero) {
  OffsetIndex::Decoded decoded =
      OffsetIndex::Decode(kBase, EncodeEntry(5, 0), 30000);
  EXPECT_EQ(decoded.problem,
            "entry 0: position 0 is not above the segment start");
}

TEST(OffsetIndex, DecodeOfGarbageNeverFails) {
  std::string garbage;
  for (int i = 0; i < 1001; ++i) garbage.push_back(static_cast<char>(i * 37));
  OffsetIndex::Decoded decoded = OffsetIndex::Decode(kBase, garbage, 1 << 20);
  EXPECT_NE(decoded.problem, "");
  // Whatever was kept is a valid index.
  OffsetIndex::Decoded again =
      OffsetIndex::Decode(kBase, decoded.index.Encode(), 1 << 20);
  EXPECT_EQ(again.problem, "");
  EXPECT_EQ(again.index.entries(), decoded.index.entries());
}

TEST(OffsetIndex, LookupsRunConcurrentlyWithAppends) {
  OffsetIndex index(0);
  std::thread writer([&index] {
    for (int64_t i = 1; i <= 2000; ++i) index.Append(i, i * 100);
  });
  for (int round = 0; round < 2000; ++round) {
    const OffsetIndexEntry entry = index.Lookup(1000);
    EXPECT_LE(entry.offset, 1000);
    EXPECT_EQ(entry.position, static_cast<uint64_t>(entry.offset) * 100);
  }
  writer.join();
  EXPECT_EQ(index.Lookup(1000), (OffsetIndexEntry{1000, 100000}));
}

TEST(OffsetIndexDeathTest, AppendOfANonIncreasingOffsetCheckFails) {
  OffsetIndex index = ThreeEntries();
  EXPECT_DEATH(index.Append(130, 20000), "must increase");
  EXPECT_DEATH(OffsetIndex(kBase).Append(kBase, 4096), "must increase");
}

TEST(OffsetIndexDeathTest, AppendOfANonIncreasingPositionCheckFails) {
  OffsetIndex index = ThreeEntries();
  EXPECT_DEATH(index.Append(140, 12288), "positions must increase");
  EXPECT_DEATH(OffsetIndex(kBase).Append(kBase + 1, 0),
               "positions must increase");
}

TEST(OffsetIndexDeathTest, AppendOfAnOverflowingEntryCheckFails) {
  EXPECT_DEATH(
      OffsetIndex(kBase).Append(
          kBase + std::numeric_limits<int32_t>::max() + int64_t{1}, 4096),
      "overflows int32");
  EXPECT_DEATH(OffsetIndex(kBase).Append(kBase + 1, uint64_t{1} << 32),
               "overflows uint32");
}

TEST(OffsetIndexDeathTest, AssignmentAcrossSegmentsCheckFails) {
  OffsetIndex index(kBase);
  EXPECT_DEATH(index = OffsetIndex(kBase + 1), "one segment");
}

}  // namespace
}  // namespace kaas::segment
