// File: cleaner/retention_cleaner.h
//
// The retention cleaner: deletes the oldest segments of the partitions this
// broker leads once they are past retention.ms or beyond retention.bytes
// (Kafka's log retention, log.retention.check.interval.ms). It works only
// through the engine's RetentionHost interface (storage/engine/
// retention_host.h): it never opens a file nor touches a partition itself,
// and the engine advances the log start durably before unlinking anything.
//
//   RetentionCleaner::Options options;
//   options.check_interval = absl::Minutes(5);
//   RetentionCleaner cleaner(engine.get(), options);
//   cleaner.Start();  // first sweep after one interval
//   ...
//   cleaner.Stop();   // or destroy it
//
// One sweep, for each partition the host leads (LedPartitions; only the
// leader deletes):
//   1. ReloadTopicConfig: `.config.json` changes, a removed override
//      included, apply within one sweep (D-17).
//   2. DescribeForRetention. Skip it if its cleanup.policy lacks "delete"
//      (compact-only topics, D-18) or both retention knobs are unset.
//   3. RollIfAged: a quiet partition rolls by segment.ms so its data can
//      age out; if it rolled, describe it again.
//   4. DecideRetention (cleaner/retention_policy.h): whichever of the time
//      and size targets removes more.
//   5. AdvanceLogStartForRetention(target, reason).
// A partition that is no longer led (kNotLeader) or is moving between log
// dirs (kMigrating) is skipped quietly: it is someone else's, or ours again
// at the next sweep. Retention never passes the high watermark: segments
// above it (just rolled, not durable yet) are deferred to a later sweep
// while those below it go now. Any other error is logged and counted, that
// partition is skipped (a config that fails to load never falls back to a stale
// one), and the sweep goes on: retention is never fatal.
//
// Logs one line per partition whose log start advanced and one summary line
// per sweep.
//
// Thread-safety: thread-safe. Sweeps are serialised: RunOnce called while
// the periodic sweep runs (or another RunOnce) waits for it.

#ifndef KAAS_CLEANER_RETENTION_CLEANER_H_
#define KAAS_CLEANER_RETENTION_CLEANER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "storage/common/api_types.h"
#include "storage/engine/retention_host.h"

namespace kaas::cleaner {

// What one sweep did.
struct SweepReport {
  struct Reclaimed {
    int64_t segments = 0;
    uint64_t bytes = 0;
  };

  // Led partitions whose retention was evaluated (still led when described).
  int partitions_examined = 0;
  // Of which the log start advanced.
  int partitions_advanced = 0;
  // What the engine deleted, per reason (a segment whose files could not be
  // unlinked is not counted: it is invisible, and the next open removes it).
  Reclaimed by_time;
  Reclaimed by_size;
  // Active segments rolled by segment.ms.
  int rolls = 0;
  // Targets above the high watermark, retried next sweep.
  int deferred = 0;
  // Partitions skipped because of an error (logged).
  int errors = 0;

  // One line, for logs.
  std::string ToString() const;
};

class RetentionCleaner {
 public:
  struct Options {
    // Kafka log.retention.check.interval.ms: the time from the end of one
    // periodic sweep to the start of the next (real time, whatever `clock`
    // says). Zero disables the periodic sweep (RunOnce still works).
    absl::Duration check_interval = absl::Minutes(5);
    // What "now" is for retention.ms. Default: the real clock. Not owned.
    Clock* clock = nullptr;
    // Prefixes the log lines (e.g. the broker or engine name).
    std::string name = "retention";
    // Called after every sweep with its report (metrics), on the thread
    // that ran it, one sweep at a time. Must not call RunOnce, Start or
    // Stop.
    std::function<void(const SweepReport&)> on_sweep;
  };

  // `host` is not owned and must outlive this object (or its Stop()).
  RetentionCleaner(RetentionHost* host, Options options);
  // Stop()s.
  ~RetentionCleaner();

  RetentionCleaner(const RetentionCleaner&) = delete;
  RetentionCleaner& operator=(const RetentionCleaner&) = delete;

  // Starts the cleaner's thread, which sweeps every check_interval. The
  // first sweep comes one interval after Start(), never immediately: a
  // broker restarting is still taking over its partitions. Does nothing if
  // the interval is zero or after Stop(). REQUIRES: called at most once.
  void Start();

  // Stops the periodic sweep and joins the thread: promptly while it waits,
  // after the current partition while it sweeps. Idempotent.
  void Stop();

  // Sweeps now, on the caller's thread, and returns what it did.
  SweepReport RunOnce();

 private:
  // Sweeps every led partition; a periodic sweep stops early once Stop() is
  // called.
  SweepReport Sweep(bool periodic) ABSL_LOCKS_EXCLUDED(sweep_mu_);
  // Retention for one partition, adding to `report`.
  void SweepPartition(const TopicPartition& tp, SweepReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sweep_mu_);
  // Counts and logs a failed step; false if `status` is an error.
  bool Check(const absl::Status& status, const TopicPartition& tp,
             absl::string_view step, SweepReport& report);
  // The periodic sweep's thread.
  void Loop();

  // Constant after construction.
  RetentionHost* const host_;
  const Options options_;
  Clock* const clock_;

  // Held across a sweep: sweeps never overlap.
  absl::Mutex sweep_mu_;

  // Notified by Stop(). Ends the wait for the next periodic sweep, and a
  // periodic sweep in progress (between two partitions).
  absl::Notification stop_;

  // Serialises Start and Stop.
  absl::Mutex lifecycle_mu_;
  bool started_ ABSL_GUARDED_BY(lifecycle_mu_) = false;
  std::thread thread_ ABSL_GUARDED_BY(lifecycle_mu_);
};

}  // namespace kaas::cleaner

#endif  // KAAS_CLEANER_RETENTION_CLEANER_H_
