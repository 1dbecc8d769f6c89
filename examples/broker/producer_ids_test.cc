// Producer ids are never handed out twice, also across restarts (a new
// allocator over the same data dir), and a damaged or foreign state file is
// refused rather than trusted (reusing an id would let a new producer's
// batches be taken for an old one's duplicates).
#include "examples/broker/producer_ids.h"

#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "examples/broker/broker_epoch.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

using ::kaas::test::StatusIs;

TEST(ProducerIdsTest, IdsAreNeverReusedAcrossRestarts) {
  fs::ScopedTempDir dir;
  std::set<int64_t> seen;
  for (int restart = 0; restart < 3; ++restart) {
    ProducerIdAllocator ids(dir.path());
    for (int i = 0; i < 1500; ++i) {  // crosses a block boundary
      ASSERT_OK_AND_ASSIGN(int64_t id, ids.Next());
      EXPECT_TRUE(seen.insert(id).second) << "id " << id << " reused";
    }
  }
}

TEST(ProducerIdsTest, ACrashSkipsAtMostTheRestOfABlock) {
  fs::ScopedTempDir dir;
  int64_t last = 0;
  {
    ProducerIdAllocator ids(dir.path());
    ASSERT_OK_AND_ASSIGN(last, ids.Next());
  }
  ProducerIdAllocator after(dir.path());
  ASSERT_OK_AND_ASSIGN(int64_t next, after.Next());
  EXPECT_GT(next, last);
  EXPECT_LE(next, last + kProducerIdBlock);
}

TEST(ProducerIdsTest, ADamagedFileIsRefused) {
  fs::ScopedTempDir dir;
  std::ofstream(dir.path() + "/" + kProducerIdsFileName) << "12x\n";
  ProducerIdAllocator ids(dir.path());
  EXPECT_THAT(ids.Next(), StatusIs(absl::StatusCode::kDataLoss,
                                   ::testing::HasSubstr("does not hold")));
}

TEST(ProducerIdsTest, ASymbolicLinkIsNeverFollowed) {
  fs::ScopedTempDir dir;
  std::ofstream(dir.path() + "/elsewhere") << "5000\n";
  ASSERT_EQ(::symlink((dir.path() + "/elsewhere").c_str(),
                      (dir.path() + "/" + kProducerIdsFileName).c_str()),
            0);
  ProducerIdAllocator ids(dir.path());
  EXPECT_THAT(ids.Next(), StatusIs(absl::StatusCode::kDataLoss,
                                   ::testing::HasSubstr("symbolic link")));
}

TEST(BrokerEpochTest, EachStartLeadsAtAHigherEpoch) {
  fs::ScopedTempDir dir;
  EXPECT_EQ(*NextBrokerEpoch(dir.path()), 1);
  EXPECT_EQ(*NextBrokerEpoch(dir.path()), 2);
  std::ofstream(dir.path() + "/" + kBrokerEpochFileName) << "-3\n";
  EXPECT_THAT(NextBrokerEpoch(dir.path()),
              StatusIs(absl::StatusCode::kDataLoss, ::testing::_));
}

}  // namespace
}  // namespace kaas::broker
