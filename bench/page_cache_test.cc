#include "bench/page_cache.h"

#include <string>

#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

class PageCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::JoinPath(::testing::TempDir(), "page_cache_test");
    ASSERT_OK(fs::RemoveTree(fs_, root_));
    ASSERT_OK(fs_.CreateDirs(fs::JoinPath(root_, "a", "b")));
    ASSERT_OK(fs::AtomicReplaceFile(fs_, fs::JoinPath(root_, "top"), "1"));
    ASSERT_OK(fs::AtomicReplaceFile(fs_, fs::JoinPath(root_, "a", "b", "deep"),
                                    std::string(100000, 'x')));
  }
  void TearDown() override { ASSERT_OK(fs::RemoveTree(fs_, root_)); }

  fs::PosixFileSystem fs_;
  std::string root_;
};

TEST_F(PageCacheTest, WarmAndColdKeepTheFilesIntact) {
  for (CacheState cache : {CacheState::kWarm, CacheState::kCold}) {
    ASSERT_OK(SyncFilesUnder(fs_, root_, cache)) << CacheStateName(cache);
    ASSERT_OK_AND_ASSIGN(
        std::string deep,
        fs::ReadFileToString(fs_, fs::JoinPath(root_, "a", "b", "deep")));
    EXPECT_EQ(deep, std::string(100000, 'x'));
  }
}

TEST_F(PageCacheTest, MissingRootIsAnError) {
  EXPECT_FALSE(
      SyncFilesUnder(fs_, fs::JoinPath(root_, "none"), CacheState::kCold).ok());
  absl::Status evicted = EvictFromPageCache(fs::JoinPath(root_, "none"));
  EXPECT_THAT(evicted, ::kaas::test::StatusIs(absl::StatusCode::kNotFound,
                                              ::testing::HasSubstr("none")));
}

TEST(CacheStateName, NamesBothStates) {
  EXPECT_EQ(CacheStateName(CacheState::kWarm), "warm");
  EXPECT_EQ(CacheStateName(CacheState::kCold), "cold");
}

}  // namespace
}  // namespace kaas::bench
