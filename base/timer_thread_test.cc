#include "base/timer_thread.h"

#include <vector>

#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(TimerThread, RunsTasksInDeadlineOrder) {
  absl::Mutex mu;
  std::vector<int> order;
  absl::BlockingCounter done(3);
  absl::Notification gate;
  TimerThread timers("test");
  // Hold the timer thread until every task is queued, so the order observed
  // depends only on the deadlines, not on how fast the tasks were scheduled.
  timers.ScheduleAfter(absl::ZeroDuration(),
                       [&] { gate.WaitForNotification(); });
  auto record = [&](int id) {
    return [&, id] {
      absl::MutexLock lock(&mu);
      order.push_back(id);
      done.DecrementCount();
    };
  };
  timers.ScheduleAfter(absl::Milliseconds(30), record(3));
  timers.ScheduleAfter(absl::Milliseconds(10), record(2));
  timers.ScheduleAfter(absl::ZeroDuration(), record(1));
  gate.Notify();
  done.Wait();
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(TimerThread, PendingTasksAreDiscardedAtDestruction) {
  bool ran = false;
  {
    TimerThread timers("discard");
    timers.ScheduleAfter(absl::Hours(1), [&] { ran = true; });
    EXPECT_EQ(timers.PendingTasks(), 1u);
  }
  EXPECT_FALSE(ran);
}

TEST(TimerThread, ASoonerTaskIsNotDelayedByALaterOne) {
  TimerThread timers("sooner");
  absl::Notification late_ran;
  timers.ScheduleAfter(absl::Hours(1), [&] { late_ran.Notify(); });
  absl::Notification soon;
  timers.ScheduleAfter(absl::ZeroDuration(), [&] { soon.Notify(); });
  soon.WaitForNotification();  // would hang if the loop slept for an hour
  EXPECT_FALSE(late_ran.HasBeenNotified());
}

TEST(TimerThread, CancelledTasksNeverRun) {
  TimerThread timers("cancel");
  bool ran = false;
  TimerThread::TaskId id =
      timers.ScheduleAfter(absl::Hours(1), [&] { ran = true; });
  EXPECT_TRUE(timers.Cancel(id));
  EXPECT_FALSE(timers.Cancel(id));  // already gone
  EXPECT_EQ(timers.PendingTasks(), 0u);
  absl::Notification done;
  TimerThread::TaskId ran_id =
      timers.ScheduleAfter(absl::ZeroDuration(), [&] { done.Notify(); });
  done.WaitForNotification();
  EXPECT_FALSE(timers.Cancel(ran_id));  // it ran
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace kaas
