#include "base/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kaas {

ThreadPool::ThreadPool(int num_threads, absl::string_view name)
    : ThreadPool(num_threads, num_threads, name) {}

ThreadPool::ThreadPool(int min_threads, int max_threads, absl::string_view name)
    : name_(name), max_threads_(std::max({1, min_threads, max_threads})) {
  const int initial = std::max(1, min_threads);
  {
    absl::MutexLock lock(&mu_);
    threads_.reserve(max_threads_);
    starting_ = initial;
  }
  for (int i = 0; i < initial; ++i) StartThread();
}

// Threads are created with mu_ released: a new thread takes mu_ at once, and
// creating it while holding mu_ trips TSan's known false positive in
// absl::Mutex under gcc (see testing/tsan_suppressions.cc).
void ThreadPool::StartThread() {
  std::thread thread([this] { WorkLoop(); });
  absl::MutexLock lock(&mu_);
  std::string thread_name =
      absl::StrCat(name_, "-", threads_.size()).substr(0, 15);
  pthread_setname_np(thread.native_handle(), thread_name.c_str());
  threads_.push_back(std::move(thread));
  --starting_;
}

ThreadPool::~ThreadPool() {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    // No thread starts once stopping_ is set; wait for those being started.
    mu_.Await(absl::Condition(
        +[](int* starting) { return *starting == 0; }, &starting_));
    threads.swap(threads_);
  }
  for (std::thread& thread : threads) thread.join();
}

int ThreadPool::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(threads_.size());
}

void ThreadPool::Schedule(absl::AnyInvocable<void() &&> task) {
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(task));
    // Every thread not running a task takes one queued task; a task beyond
    // those would wait behind a busy thread.
    const int threads = static_cast<int>(threads_.size()) + starting_;
    const size_t free_threads = static_cast<size_t>(threads - running_);
    if (stopping_ || queue_.size() <= free_threads || threads >= max_threads_) {
      return;
    }
    ++starting_;
  }
  StartThread();
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
