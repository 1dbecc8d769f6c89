// The compaction offset map: latest offset per key, growth in place up to
// the configured size, and the full map.
#include "storage/common/offset_map.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(OffsetMapTest, TheLatestOffsetOfEachKey) {
  OffsetMap map(1 << 20);
  EXPECT_EQ(map.Get("a"), std::nullopt);
  map.Put("a", 1);
  map.Put("b", 2);
  map.Put("a", 3);
  EXPECT_EQ(map.Get("a"), 3);
  EXPECT_EQ(map.Get("b"), 2);
  EXPECT_EQ(map.Get(""), std::nullopt);
  EXPECT_EQ(map.size(), 2u);
}

// Keys are put over several doublings, the last one to a size that is not
// a power of two; every key keeps its latest offset across each.
TEST(OffsetMapTest, GrowsInPlaceUpToItsSizeKeepingEveryEntry) {
  const size_t slots = 50000;
  OffsetMap map(slots * OffsetMap::kEntryBytes);
  EXPECT_EQ(map.capacity(), 45000u);
  EXPECT_LT(map.memory_bytes(), size_t{5000} * OffsetMap::kEntryBytes);
  for (int64_t i = 0; i < 44000; ++i) map.Put(absl::StrCat("key-", i), i);
  for (int64_t i = 0; i < 44000; i += 2)
    map.Put(absl::StrCat("key-", i), i + 100000);
  EXPECT_EQ(map.memory_bytes(), slots * OffsetMap::kEntryBytes);
  EXPECT_EQ(map.size(), 44000u);
  for (int64_t i = 0; i < 44000; ++i) {
    ASSERT_EQ(map.Get(absl::StrCat("key-", i)), i % 2 == 0 ? i + 100000 : i)
        << i;
  }
  EXPECT_EQ(map.Get("key-44000"), std::nullopt);

  map.Clear();
  EXPECT_EQ(map.size(), 0u);
  EXPECT_LT(map.memory_bytes(), size_t{5000} * OffsetMap::kEntryBytes);
  EXPECT_EQ(map.Get("key-1"), std::nullopt);
  map.Put("key-1", 7);
  EXPECT_EQ(map.Get("key-1"), 7);
}

TEST(OffsetMapTest, AFullMapStillUpdatesItsKeys) {
  OffsetMap map(10 * OffsetMap::kEntryBytes);
  ASSERT_EQ(map.capacity(), 9u);
  for (int i = 0; i < 9; ++i) map.Put(absl::StrCat(i), i);
  EXPECT_EQ(map.free_entries(), 0u);
  map.Put("3", 30);
  EXPECT_EQ(map.Get("3"), 30);
  EXPECT_DEATH(map.Put("new", 1), "full map");
}

}  // namespace
}  // namespace kaas
