#include "base/clock.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(ManualClock, MovesOnlyWhenTold) {
  ManualClock clock(absl::FromUnixMillis(1000));
  EXPECT_EQ(clock.NowMillis(), 1000);
  clock.Advance(absl::Milliseconds(250));
  EXPECT_EQ(clock.NowMillis(), 1250);
  clock.Set(absl::FromUnixMillis(5));
  EXPECT_EQ(clock.NowMillis(), 5);
}

TEST(RealClock, IsCloseToAbslNow) {
  absl::Duration skew = Clock::Real()->Now() - absl::Now();
  EXPECT_LT(absl::AbsDuration(skew), absl::Minutes(1));
}

}  // namespace
}  // namespace kaas
