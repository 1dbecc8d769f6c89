// File: storage/engine/memory_partition.h
//
// One partition of the in-memory engine: its batches, offsets, leader epoch
// and producer/transaction state. The rules are the disk partition's
// (storage/partition/partition_*.cc), through the same shared pieces:
// RecordBatchView::Parse, CheckAppendable, the idempotence verdicts,
// RecordBatchState, EpochHistory and SearchBatchByTimestamp; only durability
// and files are missing.
//
// Thread-safety: thread-safe. Writers hold mu_; readers share it.

#ifndef KAAS_STORAGE_ENGINE_MEMORY_PARTITION_H_
#define KAAS_STORAGE_ENGINE_MEMORY_PARTITION_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "idempotence/producer_state_map.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/common/storage_stats.h"
#include "storage/partition/epoch_history.h"
#include "txn/txn_index.h"

namespace kaas::memory_internal {

class MemoryPartition {
 public:
  MemoryPartition(std::string name, const PartitionConfig& config,
                  StorageStats* stats)
      : name_(std::move(name)), config_(config), stats_(stats) {}

  MemoryPartition(const MemoryPartition&) = delete;
  MemoryPartition& operator=(const MemoryPartition&) = delete;

  // ---- Leadership --------------------------------------------------------

  // Partition::TakeOver's rules. `*dropped` is set (and kNotLeader
  // returned) if the partition was deleted meanwhile: the caller retries on
  // the partition now in the map.
  absl::StatusOr<int64_t> TakeOver(int64_t leader_epoch, Role role,
                                   bool* dropped);
  // Stops leading (data and epoch kept). Returns whether it was led.
  bool Relinquish();
  // Makes the partition unusable (it left the map). Returns whether it was
  // led.
  bool Drop();
  std::optional<int64_t> LedEpoch() const;
  std::optional<Role> LedRole() const;
  bool IsLeading() const;
  void Fence(int64_t producer_id, int16_t epoch, int64_t now_ms);

  // ---- Writes ------------------------------------------------------------
  absl::StatusOr<AppendResult> Append(absl::string_view bytes,
                                      int64_t leader_epoch);
  absl::StatusOr<int64_t> DeleteRecords(int64_t target);
  // Partition::AppendAsFollower's rules.
  absl::StatusOr<AppendResult> AppendAsFollower(absl::string_view bytes,
                                                int64_t leader_epoch);
  // A follower's truncation (Partition::PrepareTruncation's rules, done at
  // once): producer and transaction state are rebuilt from the batches
  // kept, then `fences` (producer id -> fenced epoch) applied again.
  absl::StatusOr<int64_t> Truncate(
      int64_t offset, bool full,
      const std::vector<std::pair<int64_t, int16_t>>& fences, int64_t now_ms);
  absl::Status SetHighWatermark(int64_t offset);
  absl::StatusOr<std::vector<ProducerDescription>> DescribeProducers() const;
  PartitionStats Stats() const;

  // ---- Reads -------------------------------------------------------------
  absl::StatusOr<ReadResult> Read(int64_t offset, size_t max_bytes,
                                  Isolation isolation);
  absl::StatusOr<int64_t> HighWatermark() const;
  absl::StatusOr<int64_t> LogStartOffset() const;
  absl::StatusOr<int64_t> LastStableOffset() const;
  absl::StatusOr<uint64_t> SizeBytes() const;
  // Led or not (data survives Relinquish here).
  ReplicaDescription Describe() const;
  absl::StatusOr<std::vector<AbortedTransaction>> AbortedTransactions(
      int64_t start, int64_t end) const;
  absl::StatusOr<OffsetAndTimestamp> OffsetForTimestamp(
      int64_t timestamp, Isolation isolation) const;
  absl::StatusOr<EpochEndOffset> OffsetForLeaderEpoch(
      int64_t leader_epoch) const;

 private:
  enum class State { kNotLedYet, kLeading, kRelinquished, kDropped };

  struct StoredBatch {
    int64_t base_offset;
    int64_t last_offset;
    int64_t max_timestamp;
    int32_t record_count;
    // Shared with the Cords handed to readers, so a read copies nothing and
    // outlives a DeleteRecords that frees the batch.
    std::shared_ptr<const std::string> bytes;
  };

  absl::Status NotLedLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::Status CheckWritableLocked(int64_t leader_epoch, Role role) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The engine's (the log end) or, broker-managed, the broker's.
  int64_t HighWatermarkLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // min(first unstable offset, high watermark), never below the log start.
  int64_t LastStableLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<AbortedTransaction> AbortedLocked(int64_t start,
                                                int64_t end) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::deque<StoredBatch>::const_iterator FirstBatchEndingAtOrAfter(
      int64_t offset) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  const std::string name_;
  const PartitionConfig config_;
  StorageStats* const stats_;
  // This partition's own counters (PartitionStats' fields), beside the
  // engine's.
  StorageStats own_stats_;
  LatencyHistogram ack_latency_;

  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kNotLedYet;
  int64_t leader_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  Role role_ ABSL_GUARDED_BY(mu_) = Role::kLeader;
  int64_t broker_high_watermark_ ABSL_GUARDED_BY(mu_) = 0;
  partition::EpochHistory epochs_ ABSL_GUARDED_BY(mu_);
  // Offset order; none ends below log_start_.
  std::deque<StoredBatch> batches_ ABSL_GUARDED_BY(mu_);
  uint64_t size_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // The log end, which is also the high watermark (nothing to wait for)
  // unless the broker manages it.
  int64_t next_offset_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t log_start_ ABSL_GUARDED_BY(mu_) = 0;
  idempotence::ProducerStateMap producers_ ABSL_GUARDED_BY(mu_);
  txn::TxnIndex txns_ ABSL_GUARDED_BY(mu_);
  // The producer and transaction state of the batches DeleteRecords freed,
  // as the disk partition's state snapshots keep it: a truncation replays
  // the batches kept on top of it (a producer is not forgotten because its
  // batches went below the log start).
  idempotence::ProducerStateMap freed_producers_ ABSL_GUARDED_BY(mu_);
  txn::TxnIndex freed_txns_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::memory_internal

#endif  // KAAS_STORAGE_ENGINE_MEMORY_PARTITION_H_
