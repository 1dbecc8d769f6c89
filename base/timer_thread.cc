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
    wake_.Signal();
  }
  thread_.join();
}

TimerThread::TaskId TimerThread::ScheduleAfter(
    absl::Duration delay, absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  const TaskId id = next_id_++;
  const Key key{absl::Now() + delay, id};
  const bool earliest = tasks_.empty() || key < tasks_.begin()->first;
  tasks_.emplace(key, std::move(task));
  deadlines_.emplace(id, key.first);
  // The thread sleeps until the earliest deadline: only a new earliest task
  // changes when it must wake.
  if (earliest) wake_.Signal();
  return id;
}

bool TimerThread::Cancel(TaskId id) {
  absl::AnyInvocable<void() &&> cancelled;  // destroyed after unlocking
  absl::MutexLock lock(&mu_);
  auto it = deadlines_.find(id);
  if (it == deadlines_.end()) return false;
  auto task = tasks_.find(Key{it->second, id});
  cancelled = std::move(task->second);
  tasks_.erase(task);
  deadlines_.erase(it);
  return true;
}

size_t TimerThread::PendingTasks() const {
  absl::MutexLock lock(&mu_);
  return tasks_.size();
}

void TimerThread::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (tasks_.empty()) {
      wake_.Wait(&mu_);
      continue;
    }
    const absl::Time deadline = tasks_.begin()->first.first;
    if (absl::Now() < deadline) {
      wake_.WaitWithDeadline(&mu_, deadline);
      continue;
    }
    auto first = tasks_.begin();
    absl::AnyInvocable<void()&&> task = std::move(first->second);
    deadlines_.erase(first->first.second);
    tasks_.erase(first);
    mu_.Unlock();
    std::move(task)();
    mu_.Lock();
  }
}

}  // namespace kaas
