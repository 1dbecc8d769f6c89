// File: base/thread_pool.h
//
// A pool of threads running queued tasks in FIFO order. The engine runs the
// background file work that no caller waits on directly (group-commit
// fsyncs, re-arm probes, producer expiry) on one shared pool, so the number
// of threads does not grow with the number of partitions.
//
// The pool starts `min_threads` threads and starts another (never more than
// `max_threads` in all) when a task is queued and every thread is busy: a
// device serves many fdatasyncs at once, and an engine with many partitions
// waiting for theirs gets that parallelism, while one with few never pays
// for threads it does not use. Threads, once started, stay until the pool
// is destroyed.
//
// Thread-safety: Schedule() may be called from any thread, including from a
// task running on the pool.

#ifndef KAAS_BASE_THREAD_POOL_H_
#define KAAS_BASE_THREAD_POOL_H_

#include <cstddef>
#include <deque>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace kaas {

class ThreadPool {
 public:
  // A fixed pool: `num_threads` (>= 1) threads named `<name>-<i>`
  // (truncated to the 15 characters Linux allows), all started now.
  ThreadPool(int num_threads, absl::string_view name);
  // A pool that grows on demand from `min_threads` to `max_threads` (both
  // clamped to >= 1, max to >= min).
  ThreadPool(int min_threads, int max_threads, absl::string_view name);

  // Runs every task scheduled before the call, then joins the threads.
  // REQUIRES: not called from a pool thread.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task` to run on some pool thread. After destruction has begun,
  // tasks are still accepted (tasks may schedule follow-ups) and run before
  // the threads exit.
  void Schedule(absl::AnyInvocable<void() &&> task);

  // Threads started so far.
  int size() const;
  int max_size() const { return max_threads_; }

  // Tasks queued and not yet started (for stats and tests).
  size_t QueuedTasks() const;

  // Blocks until no task is queued or running (tests use it to know that
  // no background work is in flight). A task scheduled meanwhile is waited
  // for too. REQUIRES: not called from a pool thread.
  void WaitUntilIdle();

 private:
  void WorkLoop();
  // Starts a thread counted in starting_. REQUIRES: mu_ not held.
  void StartThread() ABSL_LOCKS_EXCLUDED(mu_);
  bool HasWorkOrStopping() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool IsIdle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;  // tasks started, not yet returned

  // Grows (under mu_) until destruction begins.
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  // Threads decided on but not yet in threads_.
  int starting_ ABSL_GUARDED_BY(mu_) = 0;

  // Constant after construction.
  const std::string name_;
  const int max_threads_;
};

}  // namespace kaas

#endif  // KAAS_BASE_THREAD_POOL_H_
