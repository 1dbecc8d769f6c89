// File: tools/progress.h
//
// Progress of long work on stderr: while a Progress is alive, a background
// thread prints "  <label>: <done>/<total> <unit> (<percent>%)" every
// interval, redrawn in place when stderr is a terminal and as separate lines
// otherwise (so logs and tests see it too). Nothing is printed for work that
// ends within the first interval.
//
// Thread-safety: Add() may be called from any thread.

#ifndef KAAS_TOOLS_PROGRESS_H_
#define KAAS_TOOLS_PROGRESS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kaas::tools {

class Progress {
 public:
  // `total` <= 0 prints the count without a total.
  Progress(std::string label, int64_t total, std::string unit,
           absl::Duration interval = absl::Seconds(1));
  // Stops the reporting thread (finishing an in-place line).
  ~Progress();

  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void Add(int64_t n = 1) { done_.fetch_add(n, std::memory_order_relaxed); }
  int64_t done() const { return done_.load(std::memory_order_relaxed); }

 private:
  void Report();

  // Constant after construction.
  const std::string label_;
  const int64_t total_;
  const std::string unit_;
  const absl::Duration interval_;
  const bool in_place_;

  std::atomic<int64_t> done_{0};
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool printed_in_place_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_PROGRESS_H_
