// File: base/clock.h
//
// An injectable wall clock. Whatever the engine decides by what time it is
// (segment.ms rolls, retention, producer id expiry, fence timestamps) reads
// a Clock, so tests of that behaviour run on a ManualClock instead of
// sleeping. Two other uses of time do not go through it, by design:
// statistics measure elapsed time with a Stopwatch (base/stopwatch.h), and
// the TimerThread's delays (fsync watchdog, re-arm probes, maintenance
// ticks) run on real time, because they bound how long real I/O takes.
//
// Thread-safety: every Clock is safe for concurrent use.

#ifndef KAAS_BASE_CLOCK_H_
#define KAAS_BASE_CLOCK_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kaas {

class Clock {
 public:
  virtual ~Clock() = default;

  // Current wall-clock time.
  virtual absl::Time Now() const = 0;

  // Now() in milliseconds since the Unix epoch (Kafka's timestamp unit).
  int64_t NowMillis() const { return absl::ToUnixMillis(Now()); }

  // The process-wide real clock: the coarse realtime clock (resolution of
  // the kernel tick, a few milliseconds at most; cheap enough to read on
  // every append). Never destroyed.
  static Clock* Real();
};

// A clock that only moves when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(absl::Time start = absl::FromUnixMillis(1700000000000))
      : now_(start) {}

  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas

#endif  // KAAS_BASE_CLOCK_H_
