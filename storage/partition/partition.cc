// Construction, publication to lock-free readers, and simple accessors of
// Partition. The other responsibilities live in partition_*.cc.

#include "storage/partition/partition.h"

#include <algorithm>
#include <utility>

#include "glog/logging.h"

namespace kaas::partition {

Partition::Partition(const PartitionRuntime& runtime, std::string dir,
                     PartitionConfig config, PartitionAccess access)
    : runtime_(runtime),
      dir_(std::move(dir)),
      access_(access),
      segment_options_{runtime.fs, runtime.read_cache,
                       config.index_interval_bytes,
                       access == PartitionAccess::kReadOnly, runtime.direct_io},
      published_segments_(std::make_shared<SegmentList>()),
      config_(std::move(config)) {
  CHECK(runtime_.fs != nullptr);
  CHECK(runtime_.clock != nullptr);
  CHECK(runtime_.io_pool != nullptr);
  CHECK(runtime_.timers != nullptr);
  CHECK(runtime_.read_cache != nullptr);
  validate_records_.store(config_.validate_records);
  require_keys_.store(config_.cleanup_compact);
}

Partition::~Partition() { Abandon(); }

void Partition::PublishSegmentsLocked() {
  auto list = std::make_shared<const SegmentList>(segments_);
  absl::MutexLock lock(&segments_mu_);
  published_segments_ = std::move(list);
}

std::shared_ptr<const Partition::SegmentList> Partition::segments_snapshot()
    const {
  absl::MutexLock lock(&segments_mu_);
  return published_segments_;
}

void Partition::PublishOffsetsLocked() {
  // Order matters for readers (TakeReadView loads the bounds, then the
  // segment list): bounds that only grow are published after the data they
  // cover (segments first, then the log end, then the high watermark); a
  // raised log start is published before the segments below it leave the
  // list.
  log_end_.store(next_offset_, std::memory_order_release);
  int64_t visible = config_.broker_managed_high_watermark
                        ? broker_high_watermark_
                    : config_.flush_interval_messages == 1 ? durable_end_
                                                           : next_offset_;
  // Never moves back (e.g. when the flush interval changes to 1, what was
  // already visible stays visible).
  visible = std::max(visible, high_watermark_.load(std::memory_order_relaxed));
  visible = std::min(visible, next_offset_);
  if (visible < log_start_offset_) visible = log_start_offset_;
  high_watermark_.store(visible, std::memory_order_release);
  int64_t stable = visible;
  {
    absl::ReaderMutexLock lock(&txn_mu_);
    if (absl::optional<int64_t> first = txns_.FirstUnstableOffset()) {
      stable = std::min(stable, *first);
    }
  }
  if (stable < log_start_offset_) stable = log_start_offset_;
  last_stable_.store(stable, std::memory_order_release);
  log_start_.store(log_start_offset_, std::memory_order_release);
  epoch_.store(leader_epoch_, std::memory_order_release);
}

int64_t Partition::HighWatermark() const {
  return high_watermark_.load(std::memory_order_acquire);
}

int64_t Partition::LogStartOffset() const {
  return log_start_.load(std::memory_order_acquire);
}

int64_t Partition::LastStableOffset() const {
  return last_stable_.load(std::memory_order_acquire);
}

int64_t Partition::LogEndOffset() const {
  return log_end_.load(std::memory_order_acquire);
}

int64_t Partition::LeaderEpoch() const {
  return epoch_.load(std::memory_order_acquire);
}

uint64_t Partition::SizeBytes() const {
  uint64_t total = 0;
  for (const auto& segment : *segments_snapshot()) total += segment->size();
  return total;
}

std::vector<SegmentSummary> Partition::SummarizeSegments(
    const SegmentList& list) {
  std::vector<SegmentSummary> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& segment = list[i];
    SegmentSummary summary;
    summary.base_offset = segment->base_offset();
    summary.epoch = segment->epoch();
    summary.next_offset = i + 1 < list.size() ? list[i + 1]->base_offset()
                                              : segment->next_offset();
    summary.size_bytes = segment->size();
    summary.active = i + 1 == list.size();
    out.push_back(summary);
  }
  return out;
}

std::vector<SegmentSummary> Partition::Segments() const {
  return SummarizeSegments(*segments_snapshot());
}

std::vector<AbortedTransaction> Partition::AbortedTransactions(
    int64_t start, int64_t end) const {
  std::vector<txn::AbortedTxn> aborted;
  {
    absl::ReaderMutexLock lock(&txn_mu_);
    aborted = txns_.AbortedInRange(start, end);
  }
  std::vector<AbortedTransaction> out;
  out.reserve(aborted.size());
  for (const txn::AbortedTxn& txn : aborted) {
    out.push_back({txn.producer_id, txn.first_offset, txn.last_offset});
  }
  return out;
}

bool Partition::IsStalled() const {
  return stalled_.load(std::memory_order_acquire);
}

absl::Status Partition::StallStatus() const {
  absl::MutexLock lock(&mu_);
  return stall_status_;
}

bool Partition::is_closed() const {
  absl::MutexLock lock(&mu_);
  return state_ == State::kClosed;
}

PartitionConfig Partition::config() const {
  absl::MutexLock lock(&mu_);
  return config_;
}

absl::Status Partition::SetConfig(const PartitionConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  absl::MutexLock lock(&mu_);
  // The index density is fixed per segment at open; everything else applies
  // from the next append.
  PartitionConfig next = config;
  next.index_interval_bytes = config_.index_interval_bytes;
  config_ = next;
  validate_records_.store(config_.validate_records, std::memory_order_relaxed);
  require_keys_.store(config_.cleanup_compact, std::memory_order_relaxed);
  PublishOffsetsLocked();
  return absl::OkStatus();
}

}  // namespace kaas::partition
