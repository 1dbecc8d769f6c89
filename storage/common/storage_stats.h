// File: storage/common/storage_stats.h
//
// The engine's metrics surface: monotonic counters and latency histograms
// that a broker exports to whatever metrics system it uses (no dependency on
// one here). Counters count real things: records (not batches or calls),
// segments (not partitions), bytes (D-26).
//
// Thread-safety: every method is thread-safe and lock-free on the recording
// side (relaxed atomics).

#ifndef KAAS_STORAGE_COMMON_STORAGE_STATS_H_
#define KAAS_STORAGE_COMMON_STORAGE_STATS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace kaas {

inline constexpr uint32_t kAppendLatencySampling = 16;

// A histogram of durations with exponential buckets (upper bounds 1 us,
// 2 us, 4 us ... ~36 min). Quantiles are estimated at bucket upper bounds.
class LatencyHistogram {
 public:
  static constexpr int kBuckets = 32;

  void Record(absl::Duration duration);

  struct Snapshot {
    uint64_t count = 0;
    absl::Duration sum;
    std::array<uint64_t, kBuckets> buckets{};
    // Upper bound of bucket `i`.
    static absl::Duration BucketBound(int i);
    // The smallest bucket bound with at least `q` of the samples at or
    // below it (q in [0, 1]); zero when empty.
    absl::Duration Quantile(double q) const;
  };
  Snapshot Take() const;

 private:
  std::atomic<uint64_t> count_{0};
  std::atomic<int64_t> sum_ns_{0};
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
};

// Counters of one engine. Partitions add to them as they work.
struct StorageStats {
  // Appends.
  std::atomic<uint64_t> appended_batches{0};
  std::atomic<uint64_t> appended_records{0};
  std::atomic<uint64_t> appended_bytes{0};
  std::atomic<uint64_t> duplicate_batches{0};
  std::atomic<uint64_t> rejected_batches{0};
  // Until the append call returns; sampled: one append in
  // kAppendLatencySampling per thread is timed.
  LatencyHistogram append_latency;

  // Reads.
  std::atomic<uint64_t> read_calls{0};
  std::atomic<uint64_t> read_batches{0};
  std::atomic<uint64_t> read_records{0};
  std::atomic<uint64_t> read_bytes{0};
  LatencyHistogram read_latency;

  // Durability.
  std::atomic<uint64_t> fsyncs{0};
  std::atomic<uint64_t> fsync_failures{0};
  std::atomic<uint64_t> stalls{0};
  std::atomic<uint64_t> rearms{0};
  LatencyHistogram fsync_latency;  // every log fdatasync, rolls included

  // Segments.
  std::atomic<uint64_t> segments_rolled{0};
  std::atomic<uint64_t> segments_deleted{0};
  std::atomic<uint64_t> bytes_deleted{0};
  // Of which by the retention cleaner, per reason.
  std::atomic<uint64_t> retention_segments_by_time{0};
  std::atomic<uint64_t> retention_bytes_by_time{0};
  std::atomic<uint64_t> retention_segments_by_size{0};
  std::atomic<uint64_t> retention_bytes_by_size{0};

  // Compaction (cleanup.policy=compact): passes run and failed, bytes read
  // by them, bytes their swaps reclaimed, records they removed.
  std::atomic<uint64_t> compaction_passes{0};
  std::atomic<uint64_t> compaction_failures{0};
  std::atomic<uint64_t> compaction_bytes_read{0};
  std::atomic<uint64_t> compaction_bytes_reclaimed{0};
  std::atomic<uint64_t> compaction_records_removed{0};

  // Recovery.
  std::atomic<uint64_t> partitions_opened{0};
  std::atomic<uint64_t> recovery_scanned_bytes{0};
  std::atomic<uint64_t> recovery_truncated_bytes{0};
  std::atomic<uint64_t> quarantined_files{0};
  LatencyHistogram recovery_time;

  // A readable multi-line dump (for tools and logs).
  std::string DebugString() const;
};

// One partition's counters since it was taken over here (they start at 0
// at each open), for a broker that exports per-partition metrics. The same
// meanings as StorageStats', plus the ack latency: from an acks=all append
// to its durable future completing (the memory engine completes at once).
struct PartitionStats {
  uint64_t appended_batches = 0;
  uint64_t appended_records = 0;
  uint64_t appended_bytes = 0;
  uint64_t duplicate_batches = 0;
  uint64_t rejected_batches = 0;
  uint64_t read_calls = 0;
  uint64_t read_bytes = 0;
  uint64_t fsyncs = 0;
  uint64_t fsync_failures = 0;
  uint64_t stalls = 0;
  uint64_t segments_rolled = 0;
  uint64_t compaction_passes = 0;
  uint64_t compaction_failures = 0;
  uint64_t compaction_bytes_reclaimed = 0;
  uint64_t compaction_records_removed = 0;
  LatencyHistogram::Snapshot append_latency;  // sampled, as StorageStats'
  LatencyHistogram::Snapshot ack_latency;
  LatencyHistogram::Snapshot fsync_latency;
  // Appends fail with kStalled until the partition is re-armed.
  bool stalled = false;
};

// A partition's counters kept as a StorageStats of its own (only the fields
// PartitionStats reports are read) and its ack latency.
PartitionStats PartitionStatsOf(const StorageStats& counters,
                                const LatencyHistogram& ack_latency,
                                bool stalled);

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_STORAGE_STATS_H_
