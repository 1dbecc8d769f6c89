// File: base/timer_thread.h
//
// One thread that runs short tasks at (or after) a deadline: the engine's
// fsync watchdog checks, stalled-partition re-arm probes and periodic
// maintenance ticks. Tasks must not block; they hand blocking work to the
// I/O ThreadPool.
//
// Deadlines use the real clock (absl::Now). Tasks pending at destruction are
// discarded without running.
//
// Thread-safety: thread-safe.

#ifndef KAAS_BASE_TIMER_THREAD_H_
#define KAAS_BASE_TIMER_THREAD_H_

#include <cstdint>
#include <map>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
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

  // Runs `task` on the timer thread once `delay` has passed.
  void ScheduleAfter(absl::Duration delay, absl::AnyInvocable<void() &&> task);

  size_t PendingTasks() const;

 private:
  void Loop();

  mutable absl::Mutex mu_;
  // Ordered by deadline, then by insertion (the sequence number).
  std::map<std::pair<absl::Time, uint64_t>, absl::AnyInvocable<void() &&>>
      tasks_ ABSL_GUARDED_BY(mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kaas

#endif  // KAAS_BASE_TIMER_THREAD_H_
