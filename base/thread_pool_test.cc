#include "base/thread_pool.h"

#include <dirent.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

// Threads of this process whose name starts with `prefix` (pool threads are
// named `<name>-<i>`). Counted by name, not by the process's thread count:
// a thread an earlier test joined may still be counted there for a moment
// (the kernel reaps it after join returns).
int ThreadsNamed(absl::string_view prefix) {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(
        absl::StrCat("/proc/self/task/", entry->d_name, "/comm"));
    std::string name;
    if (std::getline(comm, name) && absl::StartsWith(name, prefix)) ++count;
  }
  closedir(dir);
  return count;
}

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
  ThreadPool pool(/*min_threads=*/1, /*max_threads=*/3, "grow");
  EXPECT_EQ(pool.size(), 1);
  EXPECT_EQ(ThreadsNamed("grow-"), 1);
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
  EXPECT_EQ(ThreadsNamed("grow-"), 3);
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
  ThreadPool pool(4, "fixed");
  absl::BlockingCounter done(1000);
  for (int i = 0; i < 1000; ++i) pool.Schedule([&] { done.DecrementCount(); });
  done.Wait();
  EXPECT_EQ(ThreadsNamed("fixed-"), 4);
  EXPECT_EQ(pool.size(), 4);
}

}  // namespace
}  // namespace kaas
