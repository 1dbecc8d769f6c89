// File: cleaner/log_cleaner.h
//
// The log cleaner: compacts the partitions whose cleanup.policy contains
// "compact" (Kafka's LogCleaner and LogCleanerManager), through the
// engine's CompactionHost (storage/engine/compaction_host.h) only.
//
//   LogCleaner::Options options;
//   options.threads = 1;                            // log.cleaner.threads
//   options.dedupe_buffer_bytes = 128 << 20;        // shared by the threads
//   options.io_max_bytes_per_second = 50e6;         // 0: unlimited
//   LogCleaner cleaner(engine.get(), options);
//   cleaner.Start();
//   ...
//   cleaner.Stop();  // before engine->Drain() (which also ends a pass)
//
// Each round (per thread) reloads every led partition's topic config,
// describes what compaction would do there and cleans the filthiest
// partition no other thread is cleaning (ChooseFilthiest): first any whose
// oldest dirty record is older than max.compaction.lag.ms or whose delete
// horizon has passed, else the one with the highest dirty ratio at or above
// min.cleanable.dirty.ratio. With nothing to do a thread waits `backoff`
// (log.cleaner.backoff.ms) or until Stop.
//
// A pass that fails (a batch that fails its CRC or does not decode, an I/O
// error, a map too small) marks the partition uncleanable: the error is
// kept in States() and the partition is skipped until its config changes or
// the process restarts (Kafka's cleaner thread used to die here); the other
// partitions keep being cleaned. kNotLeader / kMigrating are skipped
// quietly. Each thread owns one offset map of dedupe_buffer_bytes / threads.
//
// Thread-safety: thread-safe.

#ifndef KAAS_CLEANER_LOG_CLEANER_H_
#define KAAS_CLEANER_LOG_CLEANER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "cleaner/io_throttle.h"
#include "storage/common/api_types.h"
#include "storage/common/offset_map.h"
#include "storage/engine/compaction_host.h"

namespace kaas::cleaner {

// A partition the cleaner could clean, as ChooseFilthiest sees it.
struct CleaningCandidate {
  TopicPartition tp;
  CompactionView view;
};

// The index of the partition to clean next, if any is due (see the file
// comment): a partition past max.compaction.lag.ms or its delete horizon
// first (the oldest dirty record first), then the highest dirty ratio at or
// above its min.cleanable.dirty.ratio. Only partitions with cleanable bytes
// are due.
std::optional<size_t> ChooseFilthiest(
    const std::vector<CleaningCandidate>& candidates, int64_t now_ms);

// Progress and outcome of compaction for one partition.
struct PartitionCleaning {
  int64_t passes = 0;
  CompactionReport last;           // of the last successful pass
  absl::Status uncleanable;        // the error that marked it so (OK: not)
  std::string uncleanable_config;  // the config fingerprint then
};

class LogCleaner {
 public:
  struct Options {
    int threads = 1;
    size_t dedupe_buffer_bytes = size_t{128} << 20;
    double io_max_bytes_per_second = 0;
    absl::Duration backoff = absl::Seconds(15);
    Clock* clock = nullptr;  // default: the real clock. Not owned.
    std::string name = "log-cleaner";
  };

  // `host` is not owned and must outlive this object (or its Stop()).
  LogCleaner(CompactionHost* host, Options options);
  ~LogCleaner();  // Stop()s

  LogCleaner(const LogCleaner&) = delete;
  LogCleaner& operator=(const LogCleaner&) = delete;

  // Starts the cleaner threads. REQUIRES: called at most once.
  void Start();
  // Stops the threads (a pass in progress ends at its next group) and
  // joins them. Idempotent.
  void Stop();

  // One round on the caller's thread, with its own map (tests, tools):
  // the partition cleaned, if any was due.
  std::optional<TopicPartition> RunOnce();

  // Every partition a round has looked at.
  std::map<TopicPartition, PartitionCleaning> States() const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::optional<TopicPartition> Round(OffsetMap& map) ABSL_LOCKS_EXCLUDED(mu_);
  void Loop();
  // Waits out the throttle for `bytes` (returns early on Stop).
  void Throttle(uint64_t bytes);

  CompactionHost* const host_;
  const Options options_;
  Clock* const clock_;
  IoThrottle throttle_;
  absl::Notification stop_;

  mutable absl::Mutex mu_;
  std::set<TopicPartition> in_progress_ ABSL_GUARDED_BY(mu_);
  std::map<TopicPartition, PartitionCleaning> states_ ABSL_GUARDED_BY(mu_);

  absl::Mutex lifecycle_mu_;
  bool started_ ABSL_GUARDED_BY(lifecycle_mu_) = false;
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(lifecycle_mu_);
};

}  // namespace kaas::cleaner

#endif  // KAAS_CLEANER_LOG_CLEANER_H_
