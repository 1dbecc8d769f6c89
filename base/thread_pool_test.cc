#include "base/thread_pool.h"

#include <atomic>
#include <memory>
#include <thread>
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

// Blocked tasks make the pool grow, one thread per task that would wait,
// up to its maximum; a task beyond that waits for a free thread.
TEST(ThreadPool, GrowsWhileEveryThreadIsBusyUpToItsMaximum) {
  const int threads_before = CurrentThreadCount();
  ThreadPool pool(/*min_threads=*/1, /*max_threads=*/3, "grow");
  EXPECT_EQ(pool.size(), 1);
  EXPECT_EQ(CurrentThreadCount(), threads_before + 1);
  absl::Notification release;
  absl::BlockingCounter started(3);
  for (int i = 0; i < 3; ++i) {
    pool.Schedule([&] {
      started.DecrementCount();
      release.WaitForNotification();
    });
  }
  // All three run at once: each got a thread of its own.
  started.Wait();
  EXPECT_EQ(pool.size(), 3);
  std::atomic<bool> fourth_ran{false};
  pool.Schedule([&] { fourth_ran = true; });
  EXPECT_EQ(pool.size(), 3);
  EXPECT_EQ(pool.QueuedTasks(), 1u);
  EXPECT_FALSE(fourth_ran.load());
  release.Notify();
  pool.WaitUntilIdle();
  EXPECT_TRUE(fourth_ran.load());
  EXPECT_EQ(CurrentThreadCount(), threads_before + 3);
}

TEST(ThreadPool, AnIdlePoolDoesNotGrow) {
  ThreadPool pool(/*min_threads=*/2, /*max_threads=*/8, "idle");
  for (int i = 0; i < 50; ++i) {
    pool.Schedule([] {});
    pool.WaitUntilIdle();
  }
  EXPECT_EQ(pool.size(), 2);
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

// Idle means nothing queued and nothing running, follow-ups included.
TEST(ThreadPool, WaitUntilIdleWaitsForRunningTasksAndTheirFollowUps) {
  std::atomic<int> ran{0};
  absl::Notification started;
  absl::Notification release;
  ThreadPool pool(2, "idle");
  pool.WaitUntilIdle();  // a fresh pool is idle
  pool.Schedule([&] {
    started.Notify();
    release.WaitForNotification();
    pool.Schedule([&] { ran.fetch_add(1); });
    ran.fetch_add(1);
  });
  started.WaitForNotification();
  EXPECT_EQ(pool.QueuedTasks(), 0u);  // running, not queued
  std::thread waiter([&] {
    pool.WaitUntilIdle();
    EXPECT_EQ(ran.load(), 2);
  });
  release.Notify();
  waiter.join();
  EXPECT_EQ(ran.load(), 2);
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
