// File: storage/engine/storage_engine.h
//
// The storage engine a Kafka-compatible broker holds: one object serving
// every partition of the broker. Two implementations exist:
//   * DiskEngine (storage/engine/disk_engine.h): the production engine;
//   * MemoryEngine (storage/engine/memory_engine.h): a dev-mode engine with
//     the same observable semantics and no persistence (its header lists
//     every difference).
// One conformance suite (storage/engine/engine_conformance_testlib.h) runs
// against both.
//
// Leadership. A partition is served only while this engine leads it:
// TakeOver(epoch) opens it (recovering it from disk) and makes it writable
// at `epoch`; Relinquish() persists and closes it; AbandonTopic() closes a
// deleted topic's partitions persisting nothing. A write always requires a
// prior TakeOver (the engine never writes a partition before its epoch
// roll), and reads too: only the leader holds the partition's files open.
// Operations on a partition not led here fail with kNotLeader.
//
// Errors. Every error is an absl::Status carrying a StorageErrorCode (see
// base/storage_error.h for the code -> Kafka error mapping). The
// codes each method returns are listed on it; any method may also return
// kInvalidRequest for an invalid topic name or partition number and
// kStorageError for I/O failures.
//
// Thread-safety: every method is safe to call concurrently from any thread.
// Methods documented "blocking" do file I/O (including fsyncs) on the
// calling thread; the others never issue an fsync. Append writes to the
// page cache on the calling thread and reports durability through its
// StatusFuture, so an event-loop broker never blocks a network thread on
// an fsync of its own (an Append to a partition whose TakeOver or
// Relinquish is finishing its final fdatasync waits for it, then is fenced
// or refused). `durable` callbacks run on the thread that settles them: an
// I/O thread (a group-commit cycle, or the fsync watchdog's stall, which
// the timer hands to an I/O thread), the caller of AppendAndWait (which
// may run the cycle's fdatasync itself), or the caller of a blocking
// method that syncs or fails waiters (TakeOver, BecomeFollower,
// Relinquish, Drain, AbandonTopic, DeletePartition, TruncateTo,
// TruncateFullyAndStartAt, MovePartitionToLogDir); keep them short and
// non-blocking.
//
// Moves. While MovePartitionToLogDir moves a partition, every method on
// that partition fails with kMigrating (retriable) unless its comment says
// it waits for the move.

#ifndef KAAS_STORAGE_ENGINE_STORAGE_ENGINE_H_
#define KAAS_STORAGE_ENGINE_STORAGE_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/log_dir_info.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/common/storage_stats.h"
#include "storage/engine/topic_config.h"

namespace kaas {

// Free and total bytes of one log dir (Kafka DescribeLogDirs, KIP-827);
// -1 when unknown.
struct LogDirUsage {
  std::string name;
  std::string path;
  int64_t total_bytes = -1;
  int64_t usable_bytes = -1;
};

class StorageEngine {
 public:
  virtual ~StorageEngine() = default;

  // ---- Writes ------------------------------------------------------------

  // Appends one Kafka v2 RecordBatch to a led partition and returns the
  // offsets assigned. With acks = kAll, `durable` completes once the batch
  // is on disk. `leader_epoch` is the epoch the caller believes it leads at:
  // older than the partition's is fenced (kNotLeader); newer is accepted and
  // does not change the partition's epoch (only TakeOver does).
  // Concurrent Appends to one partition are assigned offsets in the order
  // they take the partition's lock, which need not be the order of the
  // calls; each batch's offsets are contiguous.
  // Errors: kNotLeader, kMigrating, kCorruptMessage, kInvalidRecord,
  // kRecordListTooLarge, kMessageTooLarge, kOutOfOrderSequence,
  // kInvalidProducerEpoch, kStalled, kStorageError.
  virtual absl::StatusOr<AppendResult> Append(const TopicPartition& tp,
                                              int64_t leader_epoch, Acks acks,
                                              absl::string_view batch) = 0;

  // Blocking convenience: Append, then wait for `durable` (acks = kAll).
  // An engine may run the fdatasync on the calling thread, which waits
  // anyway (DiskEngine does when no sync is in flight: see
  // Partition::AppendAndWait).
  virtual absl::StatusOr<AppendResult> AppendAndWait(const TopicPartition& tp,
                                                     int64_t leader_epoch,
                                                     Acks acks,
                                                     absl::string_view batch);

  // Kafka DeleteRecords: advances the log start offset to `target_offset`
  // (-1: the high watermark), durably, then frees the closed segments
  // entirely below it. Never lowers the log start. Returns it.
  // Blocking. Errors: kNotLeader, kMigrating, kOffsetOutOfRange (past the
  // high watermark), kStorageError.
  virtual absl::StatusOr<int64_t> DeleteRecords(const TopicPartition& tp,
                                                int64_t target_offset) = 0;

  // ---- Reads -------------------------------------------------------------

  // Whole batches from the batch containing `offset`, up to `max_bytes` (the
  // first batch whole even when larger: KIP-74), up to the high watermark
  // (read_uncommitted) or the last stable offset (read_committed, with the
  // aborted transactions of the range). Takes no leader epoch: fencing a
  // fetch by the consumer's leader epoch (KIP-320) is the broker's job, e.g.
  // against PartitionEpoch. Errors: kNotLeader, kMigrating,
  // kOffsetOutOfRange (below the log start or past the high watermark).
  virtual absl::StatusOr<ReadResult> Read(const TopicPartition& tp,
                                          int64_t offset, size_t max_bytes,
                                          Isolation isolation) = 0;

  // Read's batches as references for a zero-copy send to a socket
  // (storage/common/record_regions.h: RecordRegions::SendTo uses sendfile,
  // and holding the result keeps its segment files open, so send it and
  // drop it). Same bounds, errors and thread rules as Read; an error of a
  // file found while sending (kDataLoss, I/O) is the transfer's. The default
  // holds Read's bytes (the in-memory engine); DiskEngine locates the
  // batches by their headers and reads none of their bytes.
  virtual absl::StatusOr<RegionReadResult> ReadRegions(const TopicPartition& tp,
                                                       int64_t offset,
                                                       size_t max_bytes,
                                                       Isolation isolation);

  // Offsets of a led partition (lock-free). Errors: kNotLeader, kMigrating.
  virtual absl::StatusOr<int64_t> HighWatermark(const TopicPartition& tp) = 0;
  virtual absl::StatusOr<int64_t> LogStartOffset(const TopicPartition& tp) = 0;
  virtual absl::StatusOr<int64_t> LastStableOffset(
      const TopicPartition& tp) = 0;

  // Every aborted transaction overlapping [start, end). Errors: kNotLeader,
  // kMigrating.
  virtual absl::StatusOr<std::vector<AbortedTransaction>>
  AbortedTransactionsInRange(const TopicPartition& tp, int64_t start,
                             int64_t end) = 0;

  // Kafka ListOffsets: -1 latest, -2 earliest, -3 max timestamp, else the
  // first record with a timestamp >= `timestamp`. {-1, -1} when none. As in
  // Kafka, the isolation level bounds the answer: latest is the high
  // watermark (kReadUncommitted), the last stable offset (kReadCommitted)
  // or the log end (kReplica), and a timestamp is searched for below that
  // bound only. Inside a CreateTime batch the answer is the record, also
  // when the batch is compressed; a LogAppendTime batch answers with its
  // first offset and maxTimestamp (every record carries it). Errors:
  // kNotLeader, kMigrating, kInvalidRequest (other negative timestamps),
  // kCorruptMessage / kInvalidRecord (the search reached a batch whose
  // records do not decompress / decode), kStorageError.
  virtual absl::StatusOr<OffsetAndTimestamp> OffsetForTimestamp(
      const TopicPartition& tp, int64_t timestamp, Isolation isolation) = 0;

  // Kafka OffsetForLeaderEpoch. Errors: kNotLeader, kMigrating.
  virtual absl::StatusOr<EpochEndOffset> OffsetForLeaderEpoch(
      const TopicPartition& tp, int64_t leader_epoch) = 0;

  // Kafka DescribeProducers (KIP-664): every producer the partition keeps
  // idempotence state for (expired ones are gone), by producer id, with the
  // first offset of its open transaction. Errors: kNotLeader, kMigrating.
  virtual absl::StatusOr<std::vector<ProducerDescription>> DescribeProducers(
      const TopicPartition& tp) = 0;

  // Bytes of the partition's log. Errors: kNotLeader, kMigrating.
  virtual absl::StatusOr<uint64_t> PartitionSize(const TopicPartition& tp) = 0;

  // ---- Partition lifecycle -------------------------------------------------

  // Makes the partition exist (its directory, durably) without leading it.
  // Idempotent. Blocking. Errors: kMigrating, kStaleTopicDir, kInvalidConfig
  // (the topic's config file does not parse or apply; nothing is created).
  virtual absl::Status CreatePartition(const TopicPartition& tp) = 0;

  // Gives up the partition (persisting nothing) and deletes its files.
  // Blocking. Errors: kMigrating (without waiting for the move).
  virtual absl::Status DeletePartition(const TopicPartition& tp) = 0;

  // Leads the partition at `leader_epoch`: opens (recovers) it if needed,
  // then rolls to a segment of the new epoch and persists the epoch before
  // adopting it. While led, idempotent at or below the current epoch; when
  // not led, an epoch below the durable one is refused (a newer leader
  // exists). A re-drive after a partial failure completes it. Returns the
  // log end offset. Blocking.
  // `leader_epoch` must be in [0, 2^31) (Kafka's int32; kInvalidRequest
  // otherwise, checked before anything is opened or created).
  // Errors: kInvalidRequest, kNotLeader (a higher epoch is durable: another
  // leader took over; or AbandonTopic of the topic was called while this
  // take-over was opening the partition), kMigrating (without waiting for
  // the move), kStaleTopicDir, kStalled, kStorageError.
  virtual absl::StatusOr<int64_t> TakeOver(const TopicPartition& tp,
                                           int64_t leader_epoch) = 0;

  // Gives up leadership: persists the partition's state (unless a newer
  // leader's manifest is on disk) and closes its files. Appends waiting for
  // durability that did not become durable fail with kNotLeader. No-op if
  // not led. During a move of the partition it waits for the move (which
  // leads the partition again) and then relinquishes it. Blocking.
  virtual absl::Status Relinquish(const TopicPartition& tp) = 0;

  // The topic was deleted: closes every led partition of it persisting
  // NOTHING (its directory may already be a new incarnation's). A TakeOver
  // of the topic that began before this call does not end up leading
  // (kNotLeader). Returns how many were closed. Idempotent.
  virtual int AbandonTopic(absl::string_view topic) = 0;

  // Relinquishes every led partition (shutdown). Blocking.
  virtual absl::Status Drain() = 0;

  // The partitions taken over here (as leader or follower), sorted.
  virtual std::vector<TopicPartition> LedPartitions() = 0;

  // The durable leader epoch of a partition taken over here, nullopt if not.
  virtual std::optional<int64_t> PartitionEpoch(const TopicPartition& tp) = 0;

  // Whether a partition taken over here leads or follows; nullopt if not
  // taken over.
  virtual std::optional<Role> PartitionRole(const TopicPartition& tp) = 0;

  // ---- Replication ---------------------------------------------------------
  // For brokers that replicate partitions themselves (Kafka's ISR model on
  // local disks, a Raft log): this engine keeps a follower's copy exactly
  // as Kafka's log layer does (UnifiedLog's appendAsFollower, truncateTo,
  // truncateFullyAndStartAt).

  // Takes the partition over as a follower of the leader at `leader_epoch`:
  // as TakeOver (open, epoch roll, durable epoch), but Append is then
  // refused (kNotLeader) and AppendAsFollower accepted. A leader taken over
  // as follower (demotion) stops assigning offsets; a follower taken over by
  // TakeOver (promotion) continues from its log end. At or below the
  // current epoch in the same role: idempotent. Blocking. Errors: as
  // TakeOver's.
  virtual absl::StatusOr<int64_t> BecomeFollower(const TopicPartition& tp,
                                                 int64_t leader_epoch) = 0;

  // Appends `batches` (one or more v2 batches, as the leader's fetch
  // response carries them) verbatim: base offsets and leader epochs as the
  // leader assigned them. The first must start at the log end and each at
  // the end of the one before (kOffsetOutOfRange otherwise: truncate, then
  // fetch again); their leader epochs never decrease and never pass
  // `leader_epoch` (kInvalidRecord; kNotLeader for one newer than the
  // follower's epoch). Idempotent-producer and transaction state are applied
  // as the leader applied them (no duplicate or sequence rejection), and the
  // epoch history grows from the batches' epochs. Durability as Append's.
  // Returns the first and last offsets stored. Errors: kNotLeader (not a
  // follower here, or `leader_epoch` older than the partition's),
  // kMigrating, kCorruptMessage, kInvalidRecord, kOffsetOutOfRange,
  // kStalled, kStorageError.
  virtual absl::StatusOr<AppendResult> AppendAsFollower(
      const TopicPartition& tp, int64_t leader_epoch, Acks acks,
      absl::string_view batches) = 0;

  // Removes every batch at or after `offset` (the whole batch holding it:
  // the log then ends at that batch's base offset, which is returned): whole
  // segments and the tail of the one holding it, the indexes, producer
  // state, aborted-transaction ranges and epochs past it. Durable and
  // crash-safe: the intent is persisted first and a crash at any later step
  // is completed by the next open, so the log is the truncated one or the
  // whole one, never a mix. The partition is reopened (reads in flight and
  // undurable appends fail with kNotLeader, retriable). `offset` at or past
  // the log end changes nothing. Blocking. Errors: kNotLeader (not a
  // follower here), kOffsetOutOfRange (below the log start), kMigrating,
  // kStorageError.
  virtual absl::StatusOr<int64_t> TruncateTo(const TopicPartition& tp,
                                             int64_t offset) = 0;

  // Empties the partition and restarts its log at `offset` (a follower that
  // fell below the leader's log start): log start = log end = `offset`, no
  // producer state, no epoch history. Crash-safe as TruncateTo. Blocking.
  // Errors: kNotLeader (not a follower here), kInvalidRequest (negative),
  // kMigrating, kStorageError.
  virtual absl::Status TruncateFullyAndStartAt(const TopicPartition& tp,
                                               int64_t offset) = 0;

  // Sets the high watermark of a partition whose config says the broker
  // manages it (PartitionConfig::broker_managed_high_watermark): never
  // backwards, never past the log end (clamped). Reads for consumers stop
  // there; replicas read to the log end (Isolation::kReplica). Errors:
  // kNotLeader, kInvalidRequest (the engine manages this one's).
  virtual absl::Status SetHighWatermark(const TopicPartition& tp,
                                        int64_t offset) = 0;

  // ---- Log dirs
  // --------------------------------------------------------------

  // The data dir ("default") first, then the extra dirs in declaration order.
  virtual std::vector<placement::LogDirInfo> LogDirs() = 0;

  // Capacity of each log dir (statvfs through the filesystem seam; -1 for a
  // dir that cannot be asked). Blocking.
  virtual std::vector<LogDirUsage> LogDirUsages() = 0;

  // The name of the log dir holding the partition's data (the one whose
  // partition dir has a manifest; else where it would be created). Blocking
  // (looks in each log dir). Errors: kStaleTopicDir, kStorageError.
  virtual absl::StatusOr<std::string> PartitionLogDir(
      const TopicPartition& tp) = 0;

  // Where the partition's replica lives and how big it is, whether taken
  // over here or not: a broker's DescribeLogDirs. A partition not taken
  // over is described from its directory listing and metadata files only
  // (nothing is recovered, no segment is opened, no descriptor kept).
  // Blocking for one not taken over. Errors: kUnknownTopicOrPartition (no
  // data of it here), kMigrating, kStaleTopicDir, kStorageError.
  virtual absl::StatusOr<ReplicaDescription> DescribeReplica(
      const TopicPartition& tp) = 0;

  // Moves the partition's files to `log_dir` (Kafka AlterReplicaLogDirs).
  // The partition is fenced (kMigrating) until the copy is durable, the
  // switch is made and the source is reclaimed; a crash at any step leaves
  // exactly one complete copy in use. A led partition is led again at the
  // same epoch afterwards. The topic's config and identity files go along
  // to the target's topic dir. Returns the source log dir's name. Blocking.
  // Errors: kLogDirNotFound, kInvalidRequest (a cordoned dir), kMigrating
  // (already moving), kInvalidConfig (the target's topic dir holds a config
  // or identity file that differs from the source's).
  virtual absl::StatusOr<std::string> MovePartitionToLogDir(
      const TopicPartition& tp, absl::string_view log_dir) = 0;

  // ---- Topics and producers -----------------------------------------------

  // The topic's `.config.json` overrides (nullopt when it has none).
  // Blocking (reads the file). Errors: kInvalidConfig naming the file and
  // the field, kStorageError.
  virtual absl::StatusOr<std::optional<TopicConfigOverrides>> GetTopicConfig(
      absl::string_view topic) = 0;

  // Sets the topic's overrides (Kafka CreateTopics configs): writes them as
  // the topic's `.config.json` into its topic dir in every log dir (created
  // if missing), each durably and all or nothing, so a partition placed or
  // moved to any of them finds the same config; then applies them to every
  // partition of the topic led here. Empty `overrides` (`{}`) means the
  // engine defaults, so a deleted and recreated topic does not inherit its
  // predecessor's settings. The overrides are validated first, as a file
  // would be. Blocking. Errors: kInvalidConfig naming the field (nothing
  // written), kInvalidRequest (read-only engine), kStorageError naming the
  // log dir that failed (others may hold the new file: a retry is safe)
  // or naming each led partition that could not apply it (the files are
  // written; it applies at the partition's next reload or take-over).
  virtual absl::Status SetTopicConfig(
      absl::string_view topic, const TopicConfigOverrides& overrides) = 0;

  // Re-reads the topic's `.config.json` and applies the engine default
  // overlaid with its overrides to the partition taken over here (a
  // removed override reverts to the default; retention runs this each
  // pass). Blocking. Errors: kNotLeader, kMigrating, kInvalidConfig (the
  // partition keeps its config), kStorageError.
  virtual absl::Status ReloadTopicConfig(const TopicPartition& tp) = 0;

  // Fences `producer_id` at `producer_epoch` (InitProducerId): on every led
  // partition now, including one whose TakeOver is finishing, and durably
  // for partitions opened later. A partition that fails to apply it does not
  // stop the others; the error names each failure. Blocking.
  virtual absl::Status FenceProducerEpoch(int64_t producer_id,
                                          int16_t producer_epoch) = 0;

  // ---- Health and metrics --------------------------------------------------

  // Led partitions whose fsync failed or hung (appends fail with kStalled).
  virtual int StalledPartitions() = 0;

  // Counters and latency histograms of this engine.
  virtual const StorageStats& Stats() const = 0;

  // One partition's counters since it was opened here (disk) or created
  // (memory), and whether it is stalled. Lock-free. Errors: kNotLeader,
  // kMigrating.
  virtual absl::StatusOr<PartitionStats> PartitionStatsOf(
      const TopicPartition& tp) = 0;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_STORAGE_ENGINE_H_
