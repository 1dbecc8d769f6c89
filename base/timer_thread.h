// File: base/timer_thread.h
//
// One thread that runs short tasks at (or after) a deadline: the engine's
// fsync watchdog checks, stalled-partition re-arm probes and periodic
// maintenance ticks. Tasks must not block; they hand blocking work to the
// I/O ThreadPool.
//
// Deadlines use the real clock (absl::Now). Tasks pending at destruction are
// discarded without running. Scheduling and cancelling are cheap (a map
// insert or erase); the thread is only woken when a task becomes the
// earliest, so a watchdog armed and cancelled per fsync costs little.
//
// Thread-safety: thread-safe.

#ifndef KAAS_BASE_TIMER_THREAD_H_
#define KAAS_BASE_TIMER_THREAD_H_

#include <cstdint>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kaas {

class TimerThread {
 public:
  explicit TimerThread(absl::string_view name);
  ~TimerThread();

  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  using TaskId = uint64_t;

  // Runs `task` on the timer thread once `delay` has passed.
  TaskId ScheduleAfter(absl::Duration delay,
                       absl::AnyInvocable<void() &&> task);

  // Forgets a task that has not started. Returns whether it was pending
  // (false: it ran, is running, or was cancelled already).
  bool Cancel(TaskId id);

  size_t PendingTasks() const;

 private:
  using Key = std::pair<absl::Time, TaskId>;  // deadline, then insertion

  void Loop();

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  std::map<Key, absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<TaskId, absl::Time> deadlines_ ABSL_GUARDED_BY(mu_);
  TaskId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kaas

#endif  // KAAS_BASE_TIMER_THREAD_H_
