#include "base/thread_pool.h"

#include <pthread.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace kaas {

ThreadPool::ThreadPool(int num_threads, absl::string_view name) {
  if (num_threads < 1) num_threads = 1;
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) {
    threads_.emplace_back([this] { WorkLoop(); });
    std::string thread_name = absl::StrCat(name, "-", i).substr(0, 15);
    pthread_setname_np(threads_.back().native_handle(), thread_name.c_str());
  }
}

ThreadPool::~ThreadPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& thread : threads_) thread.join();
}

void ThreadPool::Schedule(absl::AnyInvocable<void() &&> task) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(task));
}

size_t ThreadPool::QueuedTasks() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void ThreadPool::WaitUntilIdle() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &ThreadPool::IsIdle));
}

bool ThreadPool::HasWorkOrStopping() const {
  return !queue_.empty() || stopping_;
}

bool ThreadPool::IsIdle() const { return queue_.empty() && running_ == 0; }

void ThreadPool::WorkLoop() {
  bool ran_task = false;
  while (true) {
    absl::AnyInvocable<void() &&> task;
    {
      absl::MutexLock lock(&mu_);
      // The previous task's end is counted here, under the lock this loop
      // takes anyway.
      if (ran_task) --running_;
      mu_.Await(absl::Condition(this, &ThreadPool::HasWorkOrStopping));
      if (queue_.empty()) return;  // stopping_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    std::move(task)();
    ran_task = true;
  }
}

}  // namespace kaas
