// File: storage/engine/memory_engine.h
//
// MemoryEngine: a StorageEngine that keeps every partition in memory, for
// dev mode (a broker started without a data dir) and for tests of code
// above the engine. It has the SAME observable semantics as the disk engine
// (storage/engine/disk_engine.h) wherever the two can agree, and passes the
// same conformance suite (storage/engine/engine_conformance_testlib.h):
//
//   * offsets: contiguous, assigned by the engine (the producer's base
//     offset is rewritten); batches are stored and read back byte-exact;
//   * validation: the same RecordBatchView::Parse, so the same codes and
//     messages (kCorruptMessage, kInvalidRecord, and kRecordListTooLarge /
//     kMessageTooLarge from the configured limits);
//   * leadership: TakeOver before Append, Read and every offset query
//     (kNotLeader otherwise); older caller epochs fenced, newer accepted
//     without raising the partition's; TakeOver idempotent at or below the
//     epoch while leading, refused below it once relinquished; the epoch
//     history answers OffsetForLeaderEpoch (Kafka's rules, epochs that wrote
//     nothing dropped, trimmed by DeleteRecords);
//   * idempotence and transactions: the partition layer's own building
//     blocks (idempotence::ProducerStateMap, txn::TxnIndex, RecordBatchState),
//     so duplicates, out-of-order sequences, producer fences (also for
//     partitions taken over later), the last stable offset and aborted
//     ranges (overlap semantics) behave identically;
//   * reads: KIP-74 (the first batch whole even when larger than max_bytes),
//     bounded by the high watermark or, read_committed, the last stable
//     offset; kOffsetOutOfRange below the log start or past the high
//     watermark;
//   * DeleteRecords (-1 = high watermark, never lowers, past the high
//     watermark out of range) and OffsetForTimestamp (-1, -2, -3 and the
//     first record at or after a timestamp, searched from the log start on;
//     each batch through the disk partition's SearchBatchByTimestamp, so
//     record level in compressed batches and an error for records that do
//     not decode).
//   Data survives Relinquish and a later TakeOver (as if persisted);
//   AbandonTopic and DeletePartition drop it.
//
// Differences from the disk engine (everything else is the same):
//   * Nothing persists across MemoryEngine instances.
//   * Durability is immediate: every acks level completes at once
//     (AppendResult::durable is ready), the high watermark is the log end,
//     and a partition never stalls (StalledPartitions() is 0, kStalled is
//     never returned).
//   * One log dir: "default" with path "memory://" (kMemoryLogDirPath), usage
//     -1/-1. PartitionLogDir is "default". MovePartitionToLogDir to
//     "default" returns "default" and does nothing; any other name is
//     kLogDirNotFound. kMigrating and kStaleTopicDir are never returned.
//   * No segments: PartitionSize is the bytes of the batches stored.
//     DeleteRecords frees every batch that ends below the new log start at
//     once (the disk engine frees whole closed segments only).
//   * No topic config files: GetTopicConfig returns what SetTopicConfig
//     last set (nullopt before), which no partition applies; every
//     partition uses Options::partition_config, of which only segment_bytes
//     (kRecordListTooLarge), max_message_bytes (kMessageTooLarge) and
//     validate_records apply.
//   * Idle producers never expire (producer.id.expiration.ms is ignored).
//   * AbandonTopic drops every partition of the topic, led or not: their
//     data belongs to the deleted incarnation (the disk engine closes the
//     led ones and leaves every directory to the operator's reclaim). It
//     returns the number of LED partitions it closed, as the disk engine
//     does.
//   * A TakeOver racing AbandonTopic of its topic may lead a fresh, empty
//     partition (the abandon dropped the data, so nothing of the deleted
//     incarnation is served); the disk engine fails a TakeOver still opening
//     the deleted incarnation's directory with kNotLeader.
//   * Stats(): appends and reads are counted as the disk engine counts them;
//     DeleteRecords adds the freed batch bytes to bytes_deleted. There are no
//     fsyncs, segments, stalls or recoveries to count.
//
// Thread-safety: thread-safe. A map of partitions under a reader/writer lock
// (a reader lock for lookups); each partition's state under its own lock
// (readers share it). The map lock is never held while a partition works.

#ifndef KAAS_STORAGE_ENGINE_MEMORY_ENGINE_H_
#define KAAS_STORAGE_ENGINE_MEMORY_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/clock.h"
#include "placement/log_dir_info.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/common/storage_stats.h"
#include "storage/engine/storage_engine.h"
#include "storage/engine/topic_config.h"

namespace kaas {

// The path reported for the memory engine's single log dir.
inline constexpr absl::string_view kMemoryLogDirPath = "memory://";

namespace memory_internal {
class MemoryPartition;
}  // namespace memory_internal

class MemoryEngine final : public StorageEngine {
 public:
  struct Options {
    // The limits every partition applies (see the file comment for which
    // fields matter). Must be valid (PartitionConfig::Validate).
    PartitionConfig partition_config;
    // Timestamps producer fences. Not owned; must outlive the engine.
    Clock* clock = Clock::Real();
  };

  MemoryEngine() : MemoryEngine(Options()) {}
  explicit MemoryEngine(Options options);
  ~MemoryEngine() override;

  MemoryEngine(const MemoryEngine&) = delete;
  MemoryEngine& operator=(const MemoryEngine&) = delete;

  // StorageEngine. Contracts as documented there, with the differences
  // listed in the file comment.
  absl::StatusOr<AppendResult> Append(const TopicPartition& tp,
                                      int64_t leader_epoch, Acks acks,
                                      absl::string_view batch) override;
  absl::StatusOr<int64_t> DeleteRecords(const TopicPartition& tp,
                                        int64_t target_offset) override;
  absl::StatusOr<ReadResult> Read(const TopicPartition& tp, int64_t offset,
                                  size_t max_bytes,
                                  Isolation isolation) override;
  absl::StatusOr<int64_t> HighWatermark(const TopicPartition& tp) override;
  absl::StatusOr<int64_t> LogStartOffset(const TopicPartition& tp) override;
  absl::StatusOr<int64_t> LastStableOffset(const TopicPartition& tp) override;
  absl::StatusOr<std::vector<AbortedTransaction>> AbortedTransactionsInRange(
      const TopicPartition& tp, int64_t start, int64_t end) override;
  absl::StatusOr<OffsetAndTimestamp> OffsetForTimestamp(
      const TopicPartition& tp, int64_t timestamp,
      Isolation isolation) override;
  absl::StatusOr<EpochEndOffset> OffsetForLeaderEpoch(
      const TopicPartition& tp, int64_t leader_epoch) override;
  absl::StatusOr<std::vector<ProducerDescription>> DescribeProducers(
      const TopicPartition& tp) override;
  absl::StatusOr<uint64_t> PartitionSize(const TopicPartition& tp) override;
  absl::Status CreatePartition(const TopicPartition& tp) override;
  absl::Status DeletePartition(const TopicPartition& tp) override;
  absl::StatusOr<int64_t> TakeOver(const TopicPartition& tp,
                                   int64_t leader_epoch) override;
  absl::Status Relinquish(const TopicPartition& tp) override;
  int AbandonTopic(absl::string_view topic) override;
  absl::Status Drain() override;
  std::vector<TopicPartition> LedPartitions() override;
  std::optional<int64_t> PartitionEpoch(const TopicPartition& tp) override;
  std::optional<Role> PartitionRole(const TopicPartition& tp) override;
  absl::StatusOr<int64_t> BecomeFollower(const TopicPartition& tp,
                                         int64_t leader_epoch) override;
  absl::StatusOr<AppendResult> AppendAsFollower(
      const TopicPartition& tp, int64_t leader_epoch, Acks acks,
      absl::string_view batches) override;
  absl::StatusOr<int64_t> TruncateTo(const TopicPartition& tp,
                                     int64_t offset) override;
  absl::Status TruncateFullyAndStartAt(const TopicPartition& tp,
                                       int64_t offset) override;
  absl::Status SetHighWatermark(const TopicPartition& tp,
                                int64_t offset) override;
  std::vector<placement::LogDirInfo> LogDirs() override;
  std::vector<LogDirUsage> LogDirUsages() override;
  absl::StatusOr<std::string> PartitionLogDir(
      const TopicPartition& tp) override;
  absl::StatusOr<ReplicaDescription> DescribeReplica(
      const TopicPartition& tp) override;
  absl::StatusOr<std::string> MovePartitionToLogDir(
      const TopicPartition& tp, absl::string_view log_dir) override;
  absl::StatusOr<std::optional<TopicConfigOverrides>> GetTopicConfig(
      absl::string_view topic) override;
  absl::Status SetTopicConfig(absl::string_view topic,
                              const TopicConfigOverrides& overrides) override;
  // No config files: the partition keeps the engine's config.
  absl::Status ReloadTopicConfig(const TopicPartition& tp) override;
  absl::Status FenceProducerEpoch(int64_t producer_id,
                                  int16_t producer_epoch) override;
  int StalledPartitions() override { return 0; }
  const StorageStats& Stats() const override { return stats_; }
  absl::StatusOr<PartitionStats> PartitionStatsOf(
      const TopicPartition& tp) override;

 private:
  using PartitionPtr = std::shared_ptr<memory_internal::MemoryPartition>;

  // The partition `tp` (led or not), or kNotLeader if it does not exist
  // here; kInvalidRequest for an invalid name.
  absl::StatusOr<PartitionPtr> Find(const TopicPartition& tp)
      ABSL_LOCKS_EXCLUDED(partitions_mu_);
  // The partition `tp`, created (with every producer fence applied) if it
  // does not exist yet.
  absl::StatusOr<PartitionPtr> FindOrCreate(const TopicPartition& tp)
      ABSL_LOCKS_EXCLUDED(fences_mu_, partitions_mu_);
  // Removes `tp` from the map; null if absent.
  PartitionPtr Remove(const TopicPartition& tp)
      ABSL_LOCKS_EXCLUDED(partitions_mu_);
  // TakeOver and BecomeFollower.
  absl::StatusOr<int64_t> TakeRole(const TopicPartition& tp,
                                   int64_t leader_epoch, Role role)
      ABSL_LOCKS_EXCLUDED(fences_mu_, partitions_mu_);
  // TruncateTo (`full` false) and TruncateFullyAndStartAt.
  absl::StatusOr<int64_t> Truncate(const TopicPartition& tp, int64_t offset,
                                   bool full) ABSL_LOCKS_EXCLUDED(fences_mu_);
  // Every partition, in no particular order.
  std::vector<std::pair<TopicPartition, PartitionPtr>> Snapshot()
      ABSL_LOCKS_EXCLUDED(partitions_mu_);

  // Constant after construction.
  const PartitionConfig config_;
  Clock* const clock_;

  StorageStats stats_;

  // Lock order: fences_mu_, then partitions_mu_, then a partition's own
  // lock (never partitions_mu_ and a partition's lock at once).
  //
  // Engine-wide producer fences (the highest epoch per producer id), applied
  // to every partition now and to every partition created later.
  absl::Mutex fences_mu_ ABSL_ACQUIRED_BEFORE(partitions_mu_);
  absl::flat_hash_map<int64_t, int16_t> fences_ ABSL_GUARDED_BY(fences_mu_);

  absl::Mutex partitions_mu_;
  absl::flat_hash_map<TopicPartition, PartitionPtr> partitions_
      ABSL_GUARDED_BY(partitions_mu_);

  // What SetTopicConfig was given, per topic (kept and returned, not
  // applied: see the class comment).
  absl::Mutex topic_configs_mu_;
  absl::flat_hash_map<std::string, TopicConfigOverrides> topic_configs_
      ABSL_GUARDED_BY(topic_configs_mu_);
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_MEMORY_ENGINE_H_
