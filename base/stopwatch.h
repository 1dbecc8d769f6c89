// File: base/stopwatch.h
//
// Elapsed time on the monotonic clock, for statistics only: latency
// histograms and how long a recovery took. A Stopwatch never decides what
// the engine does; anything that depends on what time it is (segment.ms
// rolls, retention, producer expiry, timestamps) reads an injected Clock
// (base/clock.h), so tests of it run on a ManualClock.
//
// Thread-safety: a Stopwatch is a value; Elapsed() may be called from any
// thread.

#ifndef KAAS_BASE_STOPWATCH_H_
#define KAAS_BASE_STOPWATCH_H_

#include <chrono>  // NOLINT(build/c++11): the monotonic clock

#include "absl/time/time.h"

namespace kaas {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}

  // Time since construction. Never negative, unaffected by wall-clock steps.
  absl::Duration Elapsed() const {
    return absl::FromChrono(std::chrono::steady_clock::now() - start_);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kaas

#endif  // KAAS_BASE_STOPWATCH_H_
