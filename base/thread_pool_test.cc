#include "base/thread_pool.h"

#include <atomic>
#include <memory>
#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "base/process_stats.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(ThreadPool, RunsEveryTask) {
  std::atomic<int> ran{0};
  absl::BlockingCounter done(100);
  ThreadPool pool(3, "test");
  for (int i = 0; i < 100; ++i) {
    pool.Schedule([&] {
      ran.fetch_add(1);
      done.DecrementCount();
    });
  }
  done.Wait();
  EXPECT_EQ(ran.load(), 100);
}

TEST(ThreadPool, DestructorDrainsQueuedTasksIncludingFollowUps) {
  std::atomic<int> ran{0};
  absl::Notification release;
  {
    ThreadPool pool(1, "drain");
    pool.Schedule([&] { release.WaitForNotification(); });
    for (int i = 0; i < 10; ++i) {
      pool.Schedule([&] {
        ran.fetch_add(1);
        pool.Schedule([&] { ran.fetch_add(1); });
      });
    }
    release.Notify();
  }
  EXPECT_EQ(ran.load(), 20);
}

TEST(ThreadPool, TasksRunConcurrentlyUpToThePoolSize) {
  // Declared before the pool: the tasks may still be returning from
  // WaitForNotification when the test body ends.
  absl::BlockingCounter both_started(2);
  absl::Notification release;
  ThreadPool pool(2, "conc");
  for (int i = 0; i < 2; ++i) {
    pool.Schedule([&] {
      both_started.DecrementCount();
      release.WaitForNotification();
    });
  }
  both_started.Wait();  // would hang if the tasks were serialised
  release.Notify();
}

TEST(ThreadPool, ThreadCountIsFixed) {
  int before = CurrentThreadCount();
  ASSERT_GT(before, 0);
  ThreadPool pool(4, "fixed");
  absl::BlockingCounter done(1000);
  for (int i = 0; i < 1000; ++i) pool.Schedule([&] { done.DecrementCount(); });
  done.Wait();
  EXPECT_EQ(CurrentThreadCount(), before + 4);
}

}  // namespace
}  // namespace kaas
