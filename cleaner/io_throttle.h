// File: cleaner/io_throttle.h
//
// Kafka's log.cleaner.io.max.bytes.per.second: a token bucket shared by the
// cleaner threads. Acquire(bytes) says how long the caller must wait before
// doing that much I/O so that the rate over time stays at most the limit
// (bursts up to one second's worth). Pure arithmetic on the given clock; the
// caller does the waiting (interruptibly), so tests need no sleeps.
//
// Thread-safety: thread-safe.

#ifndef KAAS_CLEANER_IO_THROTTLE_H_
#define KAAS_CLEANER_IO_THROTTLE_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"

namespace kaas::cleaner {

class IoThrottle {
 public:
  // `bytes_per_second` <= 0: unlimited. `clock` is not owned.
  IoThrottle(double bytes_per_second, Clock* clock);

  // Takes `bytes` from the bucket; returns how long to wait before using
  // them (zero while within the rate).
  absl::Duration Acquire(uint64_t bytes) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const double rate_;
  Clock* const clock_;
  absl::Mutex mu_;
  // When the bytes taken so far are paid for (at the rate).
  absl::Time paid_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace kaas::cleaner

#endif  // KAAS_CLEANER_IO_THROTTLE_H_
