#include "base/status_future.h"

#include <optional>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(StatusFuture, ReadyFutureRunsCallbackInline) {
  StatusFuture future = StatusFuture::Ready(absl::InternalError("boom"));
  EXPECT_TRUE(future.IsReady());
  absl::Status seen;
  future.Then([&](const absl::Status& s) { seen = s; });
  EXPECT_EQ(seen.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(future.Wait().code(), absl::StatusCode::kInternal);
}

TEST(StatusFuture, CallbackRunsOnSetAndOnlyOnce) {
  StatusPromise promise;
  StatusFuture future = promise.GetFuture();
  int calls = 0;
  future.Then([&](const absl::Status& s) {
    EXPECT_TRUE(s.ok());
    ++calls;
  });
  EXPECT_FALSE(future.IsReady());
  EXPECT_EQ(calls, 0);
  promise.Set(absl::OkStatus());
  promise.Set(absl::InternalError("ignored: the first Set wins"));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(future.Wait().ok());
}

TEST(StatusFuture, WaitBlocksUntilAnotherThreadSets) {
  StatusPromise promise;
  StatusFuture future = promise.GetFuture();
  absl::Notification waiting;
  std::thread setter([&] {
    waiting.WaitForNotification();
    promise.Set(absl::UnavailableError("stalled"));
  });
  waiting.Notify();
  EXPECT_EQ(future.Wait().code(), absl::StatusCode::kUnavailable);
  setter.join();
}

TEST(StatusFuture, WaitForTimesOutWhileUnset) {
  StatusPromise promise;
  EXPECT_EQ(promise.GetFuture().WaitFor(absl::ZeroDuration()), std::nullopt);
  promise.Set(absl::OkStatus());
  std::optional<absl::Status> result =
      promise.GetFuture().WaitFor(absl::ZeroDuration());
  ASSERT_TRUE(result.has_value());
  EXPECT_TRUE(result->ok());
}

TEST(StatusFuture, AbandonedPromiseCancelsItsFuture) {
  std::optional<StatusFuture> future;
  {
    StatusPromise promise;
    future = promise.GetFuture();
  }
  EXPECT_EQ(future->Wait().code(), absl::StatusCode::kCancelled);
}

TEST(StatusFuture, MovedPromiseKeepsTheFutureAlive) {
  StatusPromise first;
  StatusFuture future = first.GetFuture();
  StatusPromise second = std::move(first);
  EXPECT_FALSE(future.IsReady());
  second.Set(absl::OkStatus());
  EXPECT_TRUE(future.Wait().ok());
}

}  // namespace
}  // namespace kaas
