#include "cleaner/io_throttle.h"

#include <algorithm>

namespace kaas::cleaner {

IoThrottle::IoThrottle(double bytes_per_second, Clock* clock)
    : rate_(bytes_per_second), clock_(clock) {}

absl::Duration IoThrottle::Acquire(uint64_t bytes) {
  if (rate_ <= 0) return absl::ZeroDuration();
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  // Unused capacity accumulates for at most one second (the burst).
  paid_until_ = std::max(paid_until_, now - absl::Seconds(1));
  paid_until_ += absl::Seconds(static_cast<double>(bytes) / rate_);
  return std::max(paid_until_ - now, absl::ZeroDuration());
}

}  // namespace kaas::cleaner
