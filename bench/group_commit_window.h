// File: bench/group_commit_window.h
//
// The measuring window of the raw group-commit programs
// (overlapping_sync_benchmark, direct_group_commit_benchmark): producer
// threads append and wait on `synced`, sync threads wait on `appended`, and
// the program counts acknowledgements and syncs under one plain mutex.
//
// Thread-safety: called from the program's main thread while its producer
// and sync threads run; `Shared` must have `mu`, `acks`, `syncs`, `stop`,
// `appended` and `synced`, with the counters and `stop` guarded by `mu`.

#ifndef KAAS_BENCH_GROUP_COMMIT_WINDOW_H_
#define KAAS_BENCH_GROUP_COMMIT_WINDOW_H_

#include <mutex>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kaas::bench {

struct GroupCommitRates {
  double acks_per_s = 0;
  double syncs_per_s = 0;
};

// Lets the threads warm up for a quarter of `window`, measures the rates of
// acknowledgements and syncs over `window`, then sets `stop` and wakes
// every thread (the caller joins them).
template <typename Shared>
GroupCommitRates MeasureThenStop(Shared& shared, absl::Duration window) {
  auto counts = [&shared] {
    std::lock_guard<std::mutex> lock(shared.mu);
    return std::make_pair(shared.acks, shared.syncs);
  };
  absl::SleepFor(window / 4);  // warm-up
  const auto before = counts();
  const absl::Time start = absl::Now();
  absl::SleepFor(window);
  const auto after = counts();
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    shared.stop = true;
    shared.appended.notify_all();
    shared.synced.notify_all();
  }
  GroupCommitRates rates;
  rates.acks_per_s = static_cast<double>(after.first - before.first) / seconds;
  rates.syncs_per_s =
      static_cast<double>(after.second - before.second) / seconds;
  return rates;
}

}  // namespace kaas::bench

#endif  // KAAS_BENCH_GROUP_COMMIT_WINDOW_H_
