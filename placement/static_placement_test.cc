#include "placement/static_placement.h"

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "placement/placement_resolver.h"

namespace kaas::placement {
namespace {

TEST(StaticPlacement, UnassignedPartitionHasNoAnswer) {
  StaticPlacement placement;
  EXPECT_EQ(placement.LogDirOf("orders", 0), std::nullopt);
}

TEST(StaticPlacement, AnswersWhatWasAssigned) {
  StaticPlacement placement;
  placement.Assign("orders", 0, "fast");
  EXPECT_EQ(placement.LogDirOf("orders", 0), "fast");
}

TEST(StaticPlacement, AssignmentsAreKeyedByTopicAndPartition) {
  StaticPlacement placement;
  placement.Assign("orders", 0, "fast");
  placement.Assign("orders", 1, "bulk");
  placement.Assign("payments", 0, "bulk");
  EXPECT_EQ(placement.LogDirOf("orders", 0), "fast");
  EXPECT_EQ(placement.LogDirOf("orders", 1), "bulk");
  EXPECT_EQ(placement.LogDirOf("payments", 0), "bulk");
  EXPECT_EQ(placement.LogDirOf("payments", 1), std::nullopt);
  EXPECT_EQ(placement.LogDirOf("order", 0), std::nullopt);
}

TEST(StaticPlacement, ReassignReplaces) {
  StaticPlacement placement;
  placement.Assign("orders", 0, "fast");
  placement.Assign("orders", 0, "bulk");
  EXPECT_EQ(placement.LogDirOf("orders", 0), "bulk");
}

TEST(StaticPlacement, UnassignForgetsOnlyThatPartition) {
  StaticPlacement placement;
  placement.Assign("orders", 0, "fast");
  placement.Assign("orders", 1, "fast");
  placement.Unassign("orders", 0);
  EXPECT_EQ(placement.LogDirOf("orders", 0), std::nullopt);
  EXPECT_EQ(placement.LogDirOf("orders", 1), "fast");
  placement.Unassign("orders", 1);
  EXPECT_EQ(placement.LogDirOf("orders", 1), std::nullopt);
  placement.Assign("orders", 1, "bulk");  // the topic can come back
  EXPECT_EQ(placement.LogDirOf("orders", 1), "bulk");
}

TEST(StaticPlacement, UnassignOfUnknownPartitionIsANoOp) {
  StaticPlacement placement;
  placement.Unassign("orders", 0);
  placement.Assign("orders", 0, "fast");
  placement.Unassign("orders", 7);
  placement.Unassign("other", 0);
  EXPECT_EQ(placement.LogDirOf("orders", 0), "fast");
}

TEST(StaticPlacement, WorksThroughTheInterface) {
  StaticPlacement placement;
  placement.Assign("orders", 3, "fast");
  const PlacementResolver& resolver = placement;
  EXPECT_EQ(resolver.LogDirOf("orders", 3), "fast");
}

// Writers assign and reassign while readers look up; run under TSan. Every
// answer a reader sees must be one a writer stored, and the final state is
// the writers' last word.
TEST(StaticPlacement, ConcurrentAssignAndLookup) {
  constexpr int kPartitions = 64;
  constexpr int kRounds = 50;
  StaticPlacement placement;
  std::vector<std::thread> threads;
  for (int writer = 0; writer < 2; ++writer) {
    threads.emplace_back([&placement, writer] {
      for (int round = 0; round < kRounds; ++round) {
        for (int p = writer; p < kPartitions; p += 2) {
          placement.Assign("orders", p, round % 2 == 0 ? "fast" : "bulk");
          if (round == kRounds / 2) placement.Unassign("orders", p);
        }
      }
    });
  }
  for (int reader = 0; reader < 2; ++reader) {
    threads.emplace_back([&placement] {
      for (int round = 0; round < kRounds; ++round) {
        for (int p = 0; p < kPartitions; ++p) {
          std::optional<std::string> dir = placement.LogDirOf("orders", p);
          if (dir.has_value()) {
            EXPECT_TRUE(*dir == "fast" || *dir == "bulk") << *dir;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(placement.LogDirOf("orders", p),
              (kRounds - 1) % 2 == 0 ? "fast" : "bulk");
  }
}

}  // namespace
}  // namespace kaas::placement
