#include "idempotence/sequence.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace kaas {
namespace idempotence {
namespace {

constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
constexpr int32_t kMin = std::numeric_limits<int32_t>::min();

TEST(NextSequence, AddsWithoutWrapBelowInt32Max) {
  EXPECT_EQ(NextSequence(0, 0), 0);
  EXPECT_EQ(NextSequence(0, 4), 4);
  EXPECT_EQ(NextSequence(100, 1), 101);
  EXPECT_EQ(NextSequence(kMax - 5, 5), kMax);
}

TEST(NextSequence, SuccessorOfInt32MaxIsZero) {
  EXPECT_EQ(NextSequence(kMax, 1), 0);
  EXPECT_EQ(NextSequence(kMax - 1, 3), 1);
  // The largest increment from the largest sequence, without overflow.
  EXPECT_EQ(NextSequence(kMax, kMax), kMax - 1);
}

TEST(NextSequence, NegativeInputsStayInRange) {
  EXPECT_EQ(NextSequence(-1, 1), 0);
  EXPECT_EQ(NextSequence(kMin, 0), 0);
  EXPECT_GE(NextSequence(kMin, kMin), 0);
}

TEST(IsNextSequence, FollowsKafkaInSequence) {
  EXPECT_TRUE(IsNextSequence(4, 5));
  EXPECT_FALSE(IsNextSequence(4, 6));
  EXPECT_FALSE(IsNextSequence(4, 4));
  EXPECT_TRUE(IsNextSequence(kMax, 0));
  // INT32_MAX + 1 in two's complement is not the successor.
  EXPECT_FALSE(IsNextSequence(kMax, kMin));
  // No sequence yet: only 0 follows.
  EXPECT_TRUE(IsNextSequence(-1, 0));
  EXPECT_FALSE(IsNextSequence(-1, 1));
}

}  // namespace
}  // namespace idempotence
}  // namespace kaas
