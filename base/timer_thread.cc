#include "base/timer_thread.h"

#include <pthread.h>

#include <string>
#include <utility>

namespace kaas {

TimerThread::TimerThread(absl::string_view name) {
  thread_ = std::thread([this] { Loop(); });
  std::string thread_name(name.substr(0, 15));
  pthread_setname_np(thread_.native_handle(), thread_name.c_str());
}

TimerThread::~TimerThread() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void TimerThread::ScheduleAfter(absl::Duration delay,
                                absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  tasks_.emplace(std::make_pair(absl::Now() + delay, next_sequence_++),
                 std::move(task));
}

size_t TimerThread::PendingTasks() const {
  absl::MutexLock lock(&mu_);
  return tasks_.size();
}

void TimerThread::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      mu_.Await(absl::Condition(
          +[](TimerThread* t) { return t->stopping_ || !t->tasks_.empty(); },
          this));
      continue;
    }
    absl::Time deadline = tasks_.begin()->first.first;
    if (absl::Now() < deadline) {
      // Wakes early when a sooner task arrives or on shutdown.
      size_t pending = tasks_.size();
      absl::Time first = deadline;
      auto changed = [&]() {
        mu_.AssertHeld();
        return stopping_ || tasks_.size() != pending ||
               tasks_.begin()->first.first != first;
      };
      mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
      continue;
    }
    absl::AnyInvocable<void() &&> task = std::move(tasks_.begin()->second);
    tasks_.erase(tasks_.begin());
    mu_.Unlock();
    std::move(task)();
    mu_.Lock();
  }
}

}  // namespace kaas
