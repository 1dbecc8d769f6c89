#include "storage/common/storage_stats.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kaas {
namespace {

int BucketOf(absl::Duration duration) {
  int64_t us = absl::ToInt64Microseconds(duration);
  if (us <= 1) return 0;
  int bucket = 64 - __builtin_clzll(static_cast<uint64_t>(us - 1));
  return std::min(bucket, LatencyHistogram::kBuckets - 1);
}

}  // namespace

void LatencyHistogram::Record(absl::Duration duration) {
  if (duration < absl::ZeroDuration()) duration = absl::ZeroDuration();
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(absl::ToInt64Nanoseconds(duration),
                    std::memory_order_relaxed);
  buckets_[BucketOf(duration)].fetch_add(1, std::memory_order_relaxed);
}

LatencyHistogram::Snapshot LatencyHistogram::Take() const {
  Snapshot snapshot;
  snapshot.count = count_.load(std::memory_order_relaxed);
  snapshot.sum = absl::Nanoseconds(sum_ns_.load(std::memory_order_relaxed));
  for (int i = 0; i < kBuckets; ++i) {
    snapshot.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  return snapshot;
}

absl::Duration LatencyHistogram::Snapshot::BucketBound(int i) {
  return absl::Microseconds(int64_t{1} << i);
}

absl::Duration LatencyHistogram::Snapshot::Quantile(double q) const {
  uint64_t total = 0;
  for (uint64_t n : buckets) total += n;
  if (total == 0) return absl::ZeroDuration();
  uint64_t wanted = static_cast<uint64_t>(std::ceil(q * total));
  if (wanted == 0) wanted = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += buckets[i];
    if (seen >= wanted) return BucketBound(i);
  }
  return BucketBound(kBuckets - 1);
}

PartitionStats PartitionStatsOf(const StorageStats& counters,
                                const LatencyHistogram& ack_latency,
                                bool stalled) {
  PartitionStats out;
  auto load = [](const std::atomic<uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  out.appended_batches = load(counters.appended_batches);
  out.appended_records = load(counters.appended_records);
  out.appended_bytes = load(counters.appended_bytes);
  out.duplicate_batches = load(counters.duplicate_batches);
  out.rejected_batches = load(counters.rejected_batches);
  out.read_calls = load(counters.read_calls);
  out.read_bytes = load(counters.read_bytes);
  out.fsyncs = load(counters.fsyncs);
  out.fsync_failures = load(counters.fsync_failures);
  out.stalls = load(counters.stalls);
  out.segments_rolled = load(counters.segments_rolled);
  out.compaction_passes = load(counters.compaction_passes);
  out.compaction_failures = load(counters.compaction_failures);
  out.compaction_bytes_reclaimed = load(counters.compaction_bytes_reclaimed);
  out.compaction_records_removed = load(counters.compaction_records_removed);
  out.append_latency = counters.append_latency.Take();
  out.ack_latency = ack_latency.Take();
  out.fsync_latency = counters.fsync_latency.Take();
  out.stalled = stalled;
  return out;
}

std::string StorageStats::DebugString() const {
  auto load = [](const std::atomic<uint64_t>& v) {
    return v.load(std::memory_order_relaxed);
  };
  auto histogram = [](absl::string_view name, const LatencyHistogram& h) {
    LatencyHistogram::Snapshot s = h.Take();
    return absl::StrFormat("%s: count=%d p50<=%s p99<=%s\n", name, s.count,
                           absl::FormatDuration(s.Quantile(0.5)),
                           absl::FormatDuration(s.Quantile(0.99)));
  };
  return absl::StrCat(
      absl::StrFormat("appended: batches=%d records=%d bytes=%d "
                      "duplicates=%d rejected=%d\n",
                      load(appended_batches), load(appended_records),
                      load(appended_bytes), load(duplicate_batches),
                      load(rejected_batches)),
      histogram("append latency", append_latency),
      absl::StrFormat("read: calls=%d batches=%d records=%d bytes=%d\n",
                      load(read_calls), load(read_batches), load(read_records),
                      load(read_bytes)),
      histogram("read latency", read_latency),
      absl::StrFormat("fsync: count=%d failures=%d stalls=%d rearms=%d\n",
                      load(fsyncs), load(fsync_failures), load(stalls),
                      load(rearms)),
      histogram("fsync latency", fsync_latency),
      absl::StrFormat(
          "segments: rolled=%d deleted=%d bytes_deleted=%d "
          "retention_time=%d/%dB retention_size=%d/%dB\n",
          load(segments_rolled), load(segments_deleted), load(bytes_deleted),
          load(retention_segments_by_time), load(retention_bytes_by_time),
          load(retention_segments_by_size), load(retention_bytes_by_size)),
      absl::StrFormat("compaction: passes=%d failures=%d read=%dB "
                      "reclaimed=%dB records_removed=%d\n",
                      load(compaction_passes), load(compaction_failures),
                      load(compaction_bytes_read),
                      load(compaction_bytes_reclaimed),
                      load(compaction_records_removed)),
      absl::StrFormat("recovery: opened=%d scanned=%dB truncated=%dB "
                      "quarantined=%d\n",
                      load(partitions_opened), load(recovery_scanned_bytes),
                      load(recovery_truncated_bytes), load(quarantined_files)),
      histogram("recovery time", recovery_time));
}

}  // namespace kaas
