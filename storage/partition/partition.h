// File: storage/partition/partition.h
//
// One partition of a topic while this engine leads it: a segmented log of
// Kafka v2 RecordBatches with recovery, group-commit durability, lock-free
// reads, leader-epoch fencing, idempotent-producer dedupe, the transaction
// index and the log start offset.
//
// Lifecycle. Open() recovers the partition directory (it holds file
// descriptors from then on); TakeOver() makes it writable at a leader epoch;
// Relinquish() persists its state and closes every descriptor; Abandon()
// closes them persisting nothing (the topic was deleted). A Partition object
// exists only while the engine leads (or is opening) the partition.
//
// Append path (Append):
//   validate the batch (one well-formed v2 batch, CRC32C) -> [partition lock]
//   sticky stall check -> leader-epoch fence -> idempotence classification ->
//   roll by size/age (every fallible step before any mutation) -> write
//   (pwritev: the rewritten 8-byte base offset + the caller's bytes, no copy)
//   -> index -> producer/transaction bookkeeping -> publish -> [unlock] ->
//   durability future.
//
// Durability (group commit). A sync cycle runs on the shared I/O pool (or on
// the thread of an AppendAndWait caller that found none in flight), never
// holding the partition lock: it samples the written end under the lock,
// fdatasyncs without it, then publishes exactly the sampled end as durable
// and completes every waiter it covers. Appends arriving during a cycle are
// not held back; they are covered by the next cycle, which starts as soon as
// the current one ends. So an acks=all append completes only after an
// fdatasync that started after its bytes were written has returned. An
// fdatasync failure, or one slower than the watchdog deadline, makes the
// partition "stalled" (sticky): appends fail fast with kStalled and waiters
// are failed; a background probe re-verifies and rewrites the bytes that were
// not known durable, fdatasyncs them, and only then clears the stall.
//
// Visibility. With flush_interval_messages == 1 the high watermark is the
// durable end: a consumer never sees a record a crash could take back.
// Otherwise the high watermark is the log end offset (documented trade-off).
// The last stable offset (read_committed bound) is min(first unstable
// offset, high watermark).
//
// Thread-safety: thread-safe; which thread runs what:
//   * Append, AppendAndWait, DeleteRecords, TakeOver, Relinquish, Abandon,
//   FenceProducer,
//     SetConfig, MaybeRoll, ExpireProducers: any thread; serialised by the
//     partition lock. Append does the (page-cache) write on the caller's
//     thread and never waits for an fsync (it does wait, for the lock,
//     behind a TakeOver or Relinquish finishing its fdatasync). TakeOver,
//     Relinquish and DeleteRecords block on file I/O (metadata writes,
//     syncs), and AppendAndWait waits for durability (see there).
//   * Read, HighWatermark & co., OffsetForTimestamp, Segments: any thread,
//     without the partition lock (a fetch never waits behind an append or an
//     fsync). Read does positional reads on the caller's thread.
//   * Sync cycles, re-arm probes, watchdog checks: the I/O pool (a cycle's
//     fdatasync may also run on an AppendAndWait caller's thread; the timer
//     thread only hands the checks over: a check takes the partition lock,
//     which TakeOver and Relinquish hold across an fdatasync that may hang,
//     and the timer thread serves every partition).

#ifndef KAAS_STORAGE_PARTITION_PARTITION_H_
#define KAAS_STORAGE_PARTITION_PARTITION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/status_future.h"
#include "base/stopwatch.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/file_system.h"
#include "idempotence/producer_state_map.h"
#include "storage/common/api_types.h"
#include "storage/common/offset_map.h"
#include "storage/common/partition_config.h"
#include "storage/common/storage_stats.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "storage/metadata/state_snapshot.pb.h"
#include "storage/partition/batch_cleaner.h"
#include "storage/partition/epoch_history.h"
#include "storage/partition/partition_recovery.h"
#include "storage/segment/read_handle_cache.h"
#include "storage/segment/segment.h"
#include "txn/txn_index.h"

namespace kaas::partition {

// What all partitions of an engine share. Pointers are not owned and must
// outlive every partition.
struct PartitionRuntime {
  fs::FileSystem* fs = nullptr;
  Clock* clock = nullptr;
  ThreadPool* io_pool = nullptr;
  TimerThread* timers = nullptr;
  segment::ReadHandleCache* read_cache = nullptr;
  StorageStats* stats = nullptr;  // may be null
  // Interval between re-arm probes of a stalled partition.
  absl::Duration rearm_interval = absl::Seconds(5);
  // Active segments write their logs with direct I/O (SegmentOptions::
  // direct_io).
  bool direct_io = false;
};

class Partition : public std::enable_shared_from_this<Partition> {
 public:
  // Recovers the partition in `dir` (storage/partition/partition_recovery.h)
  // and opens it. `fences` are producer epochs fenced engine-wide, applied
  // after the state is rebuilt. Runs on the caller's thread (for the engine:
  // the thread calling TakeOver).
  //
  // kLeader (the default) first creates `dir` if needed and takes its lock
  // (metadata::LockPartitionDir), held until Relinquish or Abandon: a
  // partition another engine leads fails with kNotLeader and nothing is
  // touched. The active segment is then open for writing.
  //
  // kReadOnly changes nothing and takes no lock (tools): `dir` must exist,
  // recovery decides as a leader's open would (`report` says what) and the
  // partition serves reads of the log as recovery sees it; TakeOver and
  // every write fail with kNotLeader.
  static absl::StatusOr<std::shared_ptr<Partition>> Open(
      const PartitionRuntime& runtime, std::string dir, PartitionConfig config,
      const metadata::ProducerFences& fences, OpenReport* report,
      PartitionAccess access = PartitionAccess::kLeader);

  // Abandons (closes descriptors, persists nothing) if still open.
  ~Partition();

  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  // ---- Leadership -------------------------------------------------------

  // Makes this engine the leader at `leader_epoch`. At or below the current
  // epoch: nothing to do (idempotent). Above it: rolls to a segment stamped
  // with the new epoch (unless the active segment already has it: a re-drive
  // after a partial failure completes, never truncates), makes the log
  // durable, persists the manifest with the new epoch, and only then adopts
  // the epoch. From the roll until the epoch is adopted, appends are refused
  // (kNotLeader, "take-over to leader epoch N in progress") and MaybeRoll
  // does nothing, so every byte in the new epoch's file is written at that
  // epoch and no segment of a lower epoch follows it.
  //
  // Failures: one before the roll (invalid epoch, closed, stalled, the new
  // file could not be created) leaves the partition as it was. One after
  // it (the sync or the manifest write failed) leaves the partition
  // refusing appends until a TakeOver at that epoch or higher succeeds (a
  // re-drive); TakeOver at a lower epoch then fails with kNotLeader, and
  // Relinquish and Abandon work as usual. A manifest with a higher epoch on
  // disk (another leader took over; D-15) fails with kNotLeader and leaves
  // the partition refusing appends for good. Returns the log end offset.
  //
  // `role` kFollower takes the partition over the same way (the epoch roll,
  // the durable epoch) as a follower of the leader at `leader_epoch`: its
  // epoch history then grows only from the batches it replicates. A role
  // change at the current epoch is a take-over too (promotion continues
  // from the log end; a demoted leader stops assigning offsets).
  absl::StatusOr<int64_t> TakeOver(int64_t leader_epoch,
                                   Role role = Role::kLeader);
  Role role() const;

  // Gives up leadership: syncs the log, persists indexes, state snapshot,
  // recovery checkpoint and manifest (nothing if a newer leader's manifest
  // is on disk), fails waiters that did not become durable with kNotLeader,
  // and closes every descriptor, even when persisting failed (whose error is
  // returned). Idempotent.
  absl::Status Relinquish();

  // Closes every descriptor and fails waiters, persisting nothing: a
  // checkpoint or index write already in flight finishes before it returns,
  // and none starts after (the directory may be reused at once).
  void Abandon();

  bool is_closed() const;

  // ---- Writes ------------------------------------------------------------

  // Appends one v2 RecordBatch (see the file comment). Errors:
  // kCorruptMessage / kInvalidRecord (bad batch), kRecordListTooLarge,
  // kMessageTooLarge, kNotLeader (no take-over yet, a stale leader_epoch, or
  // closed), kStalled, kOutOfOrderSequence, kInvalidProducerEpoch,
  // kStorageError (write failed; nothing was published).
  absl::StatusOr<AppendResult> Append(absl::string_view batch,
                                      int64_t leader_epoch, Acks acks);

  // Append, then (acks = kAll) block until the batch is durable or cannot
  // become so; the returned `durable` is then ready. The caller waits
  // anyway, so when no sync cycle is in flight it runs the cycle's
  // fdatasync on its own thread instead of handing it to the I/O pool and
  // being woken back: one thread hand-off fewer per ack (the leader of a
  // LevelDB-style write group). Concurrent callers that find a cycle in
  // flight wait for the pool's cycles as Append's callers do; index and
  // checkpoint writes due after the fdatasync still go to the pool. The
  // price: if the device hangs in that fdatasync, this call returns only
  // when it does (the watchdog still stalls the partition on time and
  // fails every other waiter). Same errors as Append, plus the durability
  // error (kStalled, kNotLeader).
  absl::StatusOr<AppendResult> AppendAndWait(absl::string_view batch,
                                             int64_t leader_epoch, Acks acks);

  // A follower's append: `batches` (one or more v2 batches, as a fetch
  // returns them) as the leader assigned them, stored verbatim. Checks, all
  // before anything is written: each batch parses (framing, CRC); the first
  // starts at the log end and each at the end of the one before
  // (kOffsetOutOfRange otherwise, naming both: the replica fetcher then
  // truncates); their leader epochs never decrease, never go below the
  // history's latest and never pass `leader_epoch` (kInvalidRecord, or
  // kNotLeader for a batch of a newer epoch than this follower knows). The
  // epochs extend the history; producer and transaction state are applied
  // as the leader applied them (no duplicate or sequence rejection).
  // `leader_epoch` older than the partition's is fenced (kNotLeader), as is
  // a partition led here as leader. Durability as Append's (acks). Returns
  // the first and last offsets stored.
  absl::StatusOr<AppendResult> AppendAsFollower(absl::string_view batches,
                                                int64_t leader_epoch,
                                                Acks acks);

  // The first half of a follower's truncation (Kafka's truncateTo and
  // truncateFullyAndStartAt): makes the log durable, persists the intent in
  // the manifest (with the epoch history cut, and a recovery checkpoint at
  // the cut) and closes the partition like Abandon, releasing its lock. The
  // next open's recovery carries the truncation out (deleting, cutting and
  // rebuilding the state), as it completes one a crash interrupted: the
  // engine reopens the partition at once. TruncateTo removes every batch at
  // or after `offset` (the whole batch containing it: the log then ends at
  // that batch's base offset); `full` removes everything and restarts the
  // log at `offset`. Errors: kNotLeader (not a follower here),
  // kOffsetOutOfRange (`offset` below the log start, for TruncateTo).
  // Returns where the log will end.
  absl::StatusOr<int64_t> PrepareTruncation(int64_t offset, bool full);

  // A broker-managed high watermark (PartitionConfig::
  // broker_managed_high_watermark): the broker sets it from what its
  // in-sync replicas have. Never moves back and never past the log end
  // (clamped). kInvalidRequest for a partition whose high watermark is the
  // engine's.
  absl::Status SetHighWatermark(int64_t offset);

  // A partition not opened (by this or any engine): the bytes of its
  // segment files, and its log start and durable end as its manifest and
  // recovery checkpoint record them. Lists, stats and reads those two files
  // only: no lock, no recovery, no descriptor kept. Unreadable metadata
  // leaves the offsets 0. Errors: kStorageError (the directory cannot be
  // listed).
  static absl::StatusOr<ReplicaDescription> DescribeUnopened(
      fs::FileSystem& fs, const std::string& dir);

  // This partition's counters since it was opened (thread-safe,
  // lock-free but for the stall flag).
  PartitionStats Stats() const;

  // Kafka DescribeProducers (KIP-664): every producer the partition keeps
  // state for, by producer id. Errors: kNotLeader (not taken over).
  absl::StatusOr<std::vector<ProducerDescription>> DescribeProducers() const;

  // Completes once every offset below `offset` is durable (or the partition
  // stalls or closes). Starts a sync if needed.
  StatusFuture WhenDurable(int64_t offset);

  // Advances the log start offset to `target` (-1: to the high watermark),
  // persisting it before deleting the closed segments entirely below it.
  // kOffsetOutOfRange if `target` is past the high watermark. Never lowers
  // the log start. Returns the resulting log start.
  absl::StatusOr<int64_t> DeleteRecords(int64_t target);

  // DeleteRecords with the details of what was reclaimed (the cleaner uses
  // it). `target` >= 0.
  absl::StatusOr<LogStartAdvance> AdvanceLogStart(int64_t target);

  // Fences producer `producer_id` at `epoch` (InitProducerId).
  absl::Status FenceProducer(int64_t producer_id, int16_t epoch);

  // Applies a new configuration (segment size/age, flush interval, ...).
  absl::Status SetConfig(const PartitionConfig& config);
  PartitionConfig config() const;

  // Rolls the active segment if it is older than segment.ms (a quiet
  // partition otherwise never rolls, and retention never applies). Returns
  // whether it rolled. Never rolls while a take-over is in progress.
  absl::StatusOr<bool> MaybeRoll();

  // Removes producers idle longer than producer.id.expiration.ms.
  void ExpireProducers();

  // ---- Compaction (cleanup.policy=compact; partition_compaction.cc) -----
  //
  // A pass (Kafka's Cleaner.clean), run by the log cleaner's threads (or
  // `kaaslog compact`), concurrently with appends, reads and everything
  // else; passes of one partition are serialised:
  //   1. Plan: the cleanable segments (CompactionView says which) and the
  //      cleaner offset, with the aborted transactions and the batches
  //      producers' windows hold, sampled under the lock.
  //   2. Keys: the dirty part's keys into the offset map, up to where it
  //      fills (map_end); the next pass goes on from there.
  //   3. Clean: every cleanable segment below map_end, from the log start,
  //      in groups whose sizes add up to at most segment.bytes, each
  //      rewritten (storage/partition/batch_cleaner.h decides) into
  //      "<first segment>.log.cleaned". Batches keep their offsets; a run
  //      of removed batches becomes one empty batch, so the log stays
  //      contiguous and recovery's checks are unchanged. Every batch read
  //      is CRC-checked (a damaged one fails the pass: its bytes are never
  //      given a fresh CRC).
  //   4. Swap, per group, under the metadata lock: the cleaned file made
  //      durable; the manifest records the swap (the commit point); the
  //      replaced segments stop serving new reads (a read already holding
  //      one finishes with it; others retry over the new list); the
  //      cleaned file is renamed over the first of them, the others are
  //      deleted, the directory synced; the new segment is published and
  //      the manifest written without the swap. Recovery completes a swap a
  //      crash interrupted after the commit and deletes the cleaned file of
  //      one interrupted before it (PartitionRecovery::CompleteCompaction).
  //      A group whose segments retention or DeleteRecords removed
  //      meanwhile is given up.
  //   5. The cleaner offset (map_end) is persisted in the manifest.
  // An I/O error after a swap's commit leaves the replaced range failing
  // reads until the partition is reopened (whose recovery completes the
  // swap); nothing acknowledged is lost.

  using CompactionRequest = ::kaas::CompactionRequest;

  // What a pass would work on (reads segment time indexes: file I/O).
  absl::StatusOr<CompactionView> DescribeCompaction(int64_t now_ms);

  // One pass. Errors: kNotLeader (closed, or read-only), kInvalidConfig (the
  // map cannot hold the first dirty batch's keys), kCorruptMessage /
  // kInvalidRecord (a batch that fails its CRC or does not decode: the
  // partition should not be cleaned again until it is repaired),
  // kStorageError (I/O). A partition whose policy lacks "compact" gets an
  // empty report.
  absl::StatusOr<CompactionReport> Compact(const CompactionRequest& request);

  // ---- Reads (lock-free) -------------------------------------------------

  // Whole batches from the batch containing `offset` up to `max_bytes` (the
  // first batch always whole, KIP-74), bounded by the high watermark or, for
  // read_committed, the last stable offset. `offset` equal to the bound gives
  // an empty result; below the log start or past the high watermark gives
  // kOffsetOutOfRange.
  absl::StatusOr<ReadResult> Read(int64_t offset, size_t max_bytes,
                                  Isolation isolation);

  // Read's batches as file ranges, located by their headers and not read
  // (storage/common/record_regions.h): for a zero-copy send to a socket.
  // Same bounds, errors and compaction retries as Read.
  absl::StatusOr<RegionReadResult> ReadRegions(int64_t offset, size_t max_bytes,
                                               Isolation isolation);

  int64_t HighWatermark() const;
  int64_t LogStartOffset() const;
  int64_t LastStableOffset() const;
  int64_t LogEndOffset() const;
  int64_t LeaderEpoch() const;
  uint64_t SizeBytes() const;
  std::vector<SegmentSummary> Segments() const;

  // Every aborted transaction overlapping [start, end).
  std::vector<AbortedTransaction> AbortedTransactions(int64_t start,
                                                      int64_t end) const;

  // Kafka ListOffsets: -1 latest (the read bound of `isolation`: high
  // watermark, last stable offset, or log end for kReplica), -2 earliest
  // (log start), -3 max timestamp; otherwise the first record at or above
  // the log start whose timestamp is >= `timestamp`, searched for below that
  // bound, at record level also in compressed batches (a LogAppendTime batch
  // answers as a whole: SearchBatchByTimestamp in batch_state.h).
  // kCorruptMessage / kInvalidRecord when the search reaches a batch whose
  // records do not decompress / decode.
  absl::StatusOr<OffsetAndTimestamp> OffsetForTimestamp(
      int64_t timestamp, Isolation isolation = Isolation::kReadUncommitted);

  // Kafka OffsetForLeaderEpoch: the largest epoch <= `leader_epoch` and the
  // offset where it ended (the log end for the current epoch).
  EpochEndOffset OffsetForLeaderEpoch(int64_t leader_epoch) const;

  // Segments() with each segment's max_timestamp filled (loads the time
  // indexes of closed segments lazily, once).
  //
  // Read, OffsetForTimestamp and SegmentsWithTimestamps open segment files,
  // so once the partition is closed (Relinquish, Abandon) they fail with
  // kNotLeader instead: only a leader holds descriptors. A Read that gets to
  // a segment deleted under it (DeleteRecords, retention) fails with
  // kOffsetOutOfRange (one already reading the segment finishes); the
  // timestamp lookups run again over the segments that remain.
  absl::StatusOr<std::vector<SegmentSummary>> SegmentsWithTimestamps();

  bool IsStalled() const;
  absl::Status StallStatus() const;
  const std::string& dir() const { return dir_; }

 private:
  struct Waiter {
    int64_t end_offset;  // complete once durable_end_ >= end_offset
    StatusPromise promise;
    Stopwatch since;  // for the ack latency
  };
  // A waiter to complete after the partition lock is released.
  struct Completion {
    StatusPromise promise;
    absl::Status status;
  };
  using Completions = std::vector<Completion>;
  static void Complete(Completions& done);
  // A rolled segment whose tail is not yet known durable.
  struct PendingSeal {
    std::shared_ptr<segment::Segment> segment;
    uint64_t durable_position = 0;
    int64_t durable_offset = 0;
    // The producer and transaction state at the next segment's base,
    // sampled at the roll: written once this segment is durable (a snapshot
    // claims the log before its offset durable), so that the log may later
    // begin at that base without forgetting the state of what lies before.
    // Null when the segment was durable at the roll (then it was due at
    // once).
    std::shared_ptr<const metadata::PartitionStateSnapshot> base_snapshot;
  };
  // Immutable list of segments, published for lock-free readers.
  using SegmentList = std::vector<std::shared_ptr<segment::Segment>>;
  struct SyncPlan;

  enum class State { kOpen, kLeading, kClosed };

  Partition(const PartitionRuntime& runtime, std::string dir,
            PartitionConfig config, PartitionAccess access);

  // ---- partition_open.cc
  // Runs PartitionRecovery, adopts what it recovered, and (leader) writes a
  // fresh checkpoint and snapshot, and the manifest if it was missing or
  // corrupt.
  absl::Status Recover(const metadata::ProducerFences& fences,
                       OpenReport* report);
  // Publishes a recovered log as the partition's state.
  void Adopt(RecoveredLog log);

  // ---- partition_append.cc
  // Seals the active segment and starts one stamped with `epoch`, or with
  // the active segment's epoch if that is higher (segment epochs never
  // decrease along the log: recovery quarantines a lower one as a deposed
  // leader's).
  absl::Status RollLocked(uint32_t epoch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ShouldRollLocked(size_t batch_bytes, int32_t last_offset_delta)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether an append in `role` may go in at `leader_epoch`.
  // PrepareTruncation's answer when it cuts nothing (a refusal, or the log
  // already ends at or before `offset`); nullopt when it must cut.
  std::optional<absl::StatusOr<int64_t>> TruncationNeedsNothingLocked(
      int64_t offset, bool full) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckWritableLocked(int64_t leader_epoch, Role role) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- partition_append.cc
  // Append; with `lead_cycle` set (AppendAndWait), an acks=all append that
  // finds no cycle in flight claims one, for the caller to run.
  absl::StatusOr<AppendResult> AppendImpl(absl::string_view batch,
                                          int64_t leader_epoch, Acks acks,
                                          std::optional<uint64_t>* lead_cycle);

  // ---- partition_sync.cc
  // Starts a sync cycle on the I/O pool unless one is in flight (then the
  // running cycle starts another when it ends).
  void RequestSyncLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Claims a new cycle (in flight, watchdog armed) and returns its
  // generation, which the caller must pass to RunSync; nullopt if one is in
  // flight already or none may start (closed, stalled).
  std::optional<uint64_t> ClaimCycleLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Where a cycle runs: on the I/O pool, or on the thread of an
  // AppendAndWait caller (which hands the cycle's index and checkpoint
  // writes to the pool instead of making its caller wait for them).
  enum class CycleThread { kIoPool, kCaller };
  // One group-commit cycle: sample, fdatasync, publish and complete the
  // waiters, then (FinishCycle) persist indexes and the checkpoint.
  void RunSync(uint64_t generation, CycleThread thread = CycleThread::kIoPool);
  // The rest of a cycle whose fdatasync succeeded: PersistAfterSync, then
  // end the cycle and start the next if anything is waiting for one.
  void FinishCycle(const SyncPlan& plan, uint64_t generation);
  // Index and recovery-checkpoint writes of a cycle whose fsync succeeded
  // (nothing once closed).
  void PersistAfterSync(const SyncPlan& plan) ABSL_LOCKS_EXCLUDED(mu_);
  // Persists the indexes of `sealed` and retries those of the segments whose
  // index persist failed before; returns whether none is left without
  // durable indexes (a recovery checkpoint may pass them only then).
  bool PersistSealedIndexes(const SegmentList& sealed) ABSL_LOCKS_EXCLUDED(mu_);
  // A follower's epoch history grows from the batches it appends, and
  // recovery learns epochs only from the manifest and from the log past the
  // recovery checkpoint: so before a checkpoint passes an epoch's start, the
  // manifest must hold it. Writes the manifest if the history changed since
  // it was last written; false if that failed or could not be tried now
  // (the checkpoint then waits for a later cycle, which is always safe).
  // Only tries metadata_mu_: its holders (truncation, DeleteRecords) wait
  // for this cycle's persists to finish.
  bool PersistEpochsBeforeCheckpoint() ABSL_LOCKS_EXCLUDED(metadata_mu_, mu_);
  void CheckSyncDeadline(uint64_t generation);
  void DisarmWatchdogLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks the partition stalled and fails every waiter; returns the promises
  // to complete after unlocking.
  void StallLocked(const absl::Status& cause, Completions* done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ScheduleRearm();
  void RunRearm();
  // Removes the pending seals `synced` made durable from pending_seals_,
  // matched by identity (AdvanceLogStart may have removed some meanwhile and
  // rolls may have added others), and collects them for ReleaseWriteHandle.
  void RemoveSyncedSealsLocked(
      const std::vector<PendingSeal>& synced,
      std::vector<std::shared_ptr<segment::Segment>>* released)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records `offset` as durable and collects the waiters it completes.
  void PublishDurableLocked(int64_t offset, Completions* done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A future completing once durable_end_ >= end_offset. Starts a cycle on
  // the pool if needed, or, with `lead_cycle`, claims it for the caller.
  StatusFuture DurableFutureLocked(
      int64_t end_offset, std::optional<uint64_t>* lead_cycle = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  metadata::PartitionStateSnapshot StateSnapshotLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the due base snapshots and the snapshot, deletes the segments
  // awaiting a snapshot that these cover, then writes the checkpoint. Skipped
  // once the partition is closed unless `final` (Relinquish's own write).
  // Returns whether both were written (a failure is logged: the next recovery
  // scans more).
  bool WriteCheckpointAndSnapshot(const metadata::RecoveryCheckpoint& cp,
                                  const metadata::PartitionStateSnapshot& snap,
                                  bool final = false);
  metadata::RecoveryCheckpoint CheckpointLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Removes snapshots no recovery needs: all but the newest two at or below
  // `newest`, except those at the base offset of a segment file still on
  // disk (a later log start or truncation may need them). Requires
  // checkpoint_mu_.
  void PruneSnapshots(int64_t newest) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues the base snapshots of `seals`, whose tails are durable now, for
  // WriteDueBaseSnapshots.
  void QueueBaseSnapshotsLocked(const std::vector<PendingSeal>& seals)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes the queued base snapshots, then deletes the segments awaiting
  // one that are now covered. Nothing once closed unless `final`. Requires
  // checkpoint_mu_.
  void WriteDueBaseSnapshots(bool final) ABSL_LOCKS_EXCLUDED(mu_);
  // Takes from awaiting_snapshot_ its longest prefix that recovery no
  // longer needs: the one after which the next file on disk begins where a
  // durable snapshot lies (recovery then replays from that snapshot, and
  // forgets nothing the prefix held).
  SegmentList TakeCoveredAwaitingLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- partition_lifecycle.cc
  struct SegmentsDeleted {
    int64_t segments = 0;
    uint64_t bytes = 0;
  };
  // Deletes the files of segments below the log start (already out of the
  // list), syncs the directory, counts them in the stats.
  SegmentsDeleted DeleteSegmentFiles(const SegmentList& doomed)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Syncs every pending segment and the active one (on the caller's thread).
  absl::Status SyncAllLocked(Completions* done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  metadata::PartitionManifest ManifestLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Epoch history <-> manifest.
  static void SetEpochs(const EpochHistory& epochs,
                        metadata::PartitionManifest* manifest);
  static EpochHistory EpochsOf(const metadata::PartitionManifest& manifest);
  // Marks the partition closed, fails the waiters and drops every handle.
  // The caller then calls AwaitPersistsAfterClose (without mu_).
  void CloseLocked(const absl::Status& waiter_error, Completions* done)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Returns once no checkpoint, snapshot or index write that started before
  // the close is in flight; none starts after it (the checkpoint writers
  // re-check the state under checkpoint_mu_, and the segments stop
  // persisting).
  void AwaitPersistsAfterClose() ABSL_LOCKS_EXCLUDED(checkpoint_mu_, mu_);
  // Lets go of the partition dir's lock (the last step of closing: every
  // write of this object is done).
  void ReleaseLock() ABSL_LOCKS_EXCLUDED(mu_);

  // ---- partition_read.cc
  // What a reader works from: the published bounds, then the segment list.
  // Segments are published before the bounds that cover them, so every
  // offset below these bounds lies in `segments` or, if DeleteRecords or
  // retention ran in between, below the first of them.
  struct ReadView {
    int64_t log_start_offset = 0;
    int64_t high_watermark = 0;
    int64_t last_stable_offset = 0;
    int64_t log_end_offset = 0;
    std::shared_ptr<const SegmentList> segments;
  };
  ReadView TakeReadView() const;
  // Read and ReadRegions: ReadOnce, retried while compaction replaces the
  // segments under it. `Result` is ReadResult or RegionReadResult
  // (partition_read.cc instantiates both).
  template <typename Result>
  absl::StatusOr<Result> ReadWithRetries(int64_t offset, size_t max_bytes,
                                         Isolation isolation);
  // One read over one read view; sets `*replaced` (and fails) when a
  // segment of the view was replaced by compaction before the read opened
  // it.
  template <typename Result>
  absl::StatusOr<Result> ReadOnce(int64_t offset, size_t max_bytes,
                                  Isolation isolation, bool* replaced);
  // `records` is the number of records read (offsets spanned for regions,
  // whose record counts are not read).
  void RecordRead(int64_t batches, int64_t records, uint64_t bytes,
                  const Stopwatch& stopwatch);
  // Whether the published list is no longer `seen` (waiting out a
  // compaction swap's rename if one is under way).
  bool WaitForReplacement(const std::shared_ptr<const SegmentList>& seen) const
      ABSL_LOCKS_EXCLUDED(segments_mu_);
  // kOffsetOutOfRange: `offset` was deleted under a read.
  absl::Status DeletedWhileReading(int64_t offset) const;
  // kNotLeader once the partition is closed.
  absl::Status CheckReadable() const;
  // Runs `lookup` over a fresh read view. A segment deleted
  // meanwhile (DeleteRecords, retention) fails it with kNotFound; then it runs
  // again over the newer list (a few times at most). Errors: kNotLeader once
  // the partition is closed; untyped ones as kStorageError naming `what`.
  template <typename T>
  absl::StatusOr<T> LookUpSegments(
      absl::string_view what,
      absl::FunctionRef<absl::StatusOr<T>(const ReadView&)> lookup);
  // ---- partition_compaction.cc
  struct CompactionPlan;
  // Compact's pass (Compact counts its failures).
  absl::StatusOr<CompactionReport> RunCompaction(
      const CompactionRequest& request);
  // What the plan is for: a pass also samples the producers' windows and
  // the aborted transactions.
  enum class PlanFor { kDescribe, kPass };
  absl::StatusOr<CompactionPlan> PlanCompaction(int64_t now_ms, PlanFor purpose)
      ABSL_LOCKS_EXCLUDED(metadata_mu_, mu_);
  // Rewrites `group` into its cleaned file and swaps it in; false if the
  // group was given up (its segments left the log meanwhile).
  absl::StatusOr<bool> CleanGroup(const SegmentList& group,
                                  BatchCleaner& cleaner,
                                  const CompactionRequest& request,
                                  CompactionReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(compaction_mu_);
  absl::StatusOr<bool> SwapInCleaned(const SegmentList& group,
                                     const std::string& cleaned_path,
                                     uint64_t cleaned_size)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(compaction_mu_);
  // Ends a compaction pass in progress and keeps new ones from starting
  // (Relinquish, Abandon, PrepareTruncation call it first).
  void StopCompaction() ABSL_LOCKS_EXCLUDED(compaction_mu_, metadata_mu_, mu_);
  // Writes the manifest as it now is (compaction's write points).
  absl::Status WriteManifestLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(metadata_mu_);

  // OffsetForTimestamp's lookup over `view`.
  absl::StatusOr<OffsetAndTimestamp> FindOffsetForTimestamp(
      const ReadView& view, int64_t timestamp, Isolation isolation);

  // ---- publication for readers
  void PublishSegmentsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishOffsetsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<const SegmentList> segments_snapshot() const;
  static std::vector<SegmentSummary> SummarizeSegments(const SegmentList& list);

  // Constant after construction.
  const PartitionRuntime runtime_;
  // This partition's own counters (only the fields PartitionStats reports
  // are used) beside the engine's (runtime_.stats).
  StorageStats own_stats_;
  LatencyHistogram ack_latency_;
  // Where a count goes: the engine's stats (if any) and the partition's.
  absl::InlinedVector<StorageStats*, 2> StatsSinks() {
    absl::InlinedVector<StorageStats*, 2> sinks;
    if (runtime_.stats != nullptr) sinks.push_back(runtime_.stats);
    sinks.push_back(&own_stats_);
    return sinks;
  }
  const std::string dir_;
  const PartitionAccess access_;
  const segment::SegmentOptions segment_options_;

  // The partition dir's lock (a leader's open holds it until it closes and
  // has finished every write). Guarded by mu_ for its release.
  std::unique_ptr<fs::FileLock> lock_ ABSL_GUARDED_BY(mu_);

  // ---- Published for lock-free readers.
  std::atomic<int64_t> high_watermark_{0};
  std::atomic<int64_t> log_end_{0};
  std::atomic<int64_t> log_start_{0};
  std::atomic<int64_t> last_stable_{0};
  std::atomic<int64_t> epoch_{0};
  std::atomic<bool> stalled_{false};
  std::atomic<bool> closed_{false};
  // config_.validate_records, readable outside the lock (the records are
  // checked before it is taken).
  std::atomic<bool> validate_records_{false};
  // config_.cleanup_compact: appends of null-keyed records are refused.
  std::atomic<bool> require_keys_{false};
  mutable absl::Mutex segments_mu_;
  // Set while a compaction swap has closed the replaced segments for reads
  // and not yet published their replacement (one rename): a read that
  // finds one closed waits for the new list instead of failing.
  std::atomic<bool> swapping_{false};
  std::shared_ptr<const SegmentList> published_segments_
      ABSL_GUARDED_BY(segments_mu_);
  // The transaction index is read by fetches under a reader lock; writers
  // hold mu_ too.
  mutable absl::Mutex txn_mu_;
  txn::TxnIndex txns_ ABSL_GUARDED_BY(txn_mu_);

  // ---- Metadata writes (manifest) are serialised by metadata_mu_, which is
  // taken before mu_ when both are needed.
  mutable absl::Mutex metadata_mu_ ABSL_ACQUIRED_BEFORE(checkpoint_mu_, mu_);
  // The epoch history the manifest on disk holds (a follower's appends
  // extend epochs_; the next checkpoint persists the manifest first).
  EpochHistory manifest_epochs_ ABSL_GUARDED_BY(metadata_mu_);
  // Compaction: the cleaner offset, and the swap in progress (both written
  // with every manifest).
  int64_t cleaner_offset_ ABSL_GUARDED_BY(metadata_mu_) = 0;
  int64_t next_delete_horizon_ms_ ABSL_GUARDED_BY(metadata_mu_) =
      std::numeric_limits<int64_t>::max();
  std::optional<metadata::CompactionSwap> swap_in_progress_
      ABSL_GUARDED_BY(metadata_mu_);
  // A swap's final manifest write failed: the manifest on disk still
  // records it, so the next pass rewrites the manifest before writing any
  // cleaned file.
  bool swap_on_disk_ ABSL_GUARDED_BY(metadata_mu_) = false;
  // Serialises compaction passes; taken before metadata_mu_.
  absl::Mutex compaction_mu_ ABSL_ACQUIRED_BEFORE(metadata_mu_);
  // Set when the partition is closing: a pass in progress stops at its next
  // batch (StopCompaction waits for it).
  std::atomic<bool> stop_compaction_{false};

  // ---- Write path state.
  mutable absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kOpen;
  PartitionConfig config_ ABSL_GUARDED_BY(mu_);
  SegmentList segments_ ABSL_GUARDED_BY(mu_);  // oldest first; last = active
  std::shared_ptr<segment::Segment> active_ ABSL_GUARDED_BY(mu_);
  // Wall-clock ms the active segment's age counts from (segment.ms).
  int64_t active_birth_ms_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t next_offset_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t log_start_offset_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t leader_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  // Set by TakeOver once it rolled to (or found) the new epoch's segment,
  // cleared when it adopts the epoch: appends are refused meanwhile, and
  // after a failure until a re-drive succeeds.
  std::optional<int64_t> take_over_epoch_ ABSL_GUARDED_BY(mu_);
  idempotence::ProducerStateMap producers_ ABSL_GUARDED_BY(mu_);
  int64_t records_since_flush_ ABSL_GUARDED_BY(mu_) = 0;
  // Epoch history (for the manifest and OffsetForLeaderEpoch): begun by a
  // leader's take-over, extended by the epochs of a follower's batches.
  EpochHistory epochs_ ABSL_GUARDED_BY(mu_);
  // What the partition does once taken over.
  Role role_ ABSL_GUARDED_BY(mu_) = Role::kLeader;
  // A broker-managed high watermark (PartitionConfig): the offset the broker
  // last set; reads for consumers stop there.
  int64_t broker_high_watermark_ ABSL_GUARDED_BY(mu_) = 0;

  // ---- Group commit (guarded by mu_).
  int64_t durable_end_ ABSL_GUARDED_BY(mu_) = 0;
  // The durable prefix of the active segment (position and the offset
  // there).
  uint64_t active_durable_position_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t active_durable_offset_ ABSL_GUARDED_BY(mu_) = 0;
  std::deque<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  std::vector<PendingSeal> pending_seals_ ABSL_GUARDED_BY(mu_);
  bool dir_sync_needed_ ABSL_GUARDED_BY(mu_) = false;
  bool sync_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool sync_again_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t sync_generation_ ABSL_GUARDED_BY(mu_) = 0;
  // Group-commit linger (RunSync): the acks=all waiters the last cycle
  // completed plus those still waiting after it (how many producers are
  // taking turns).
  size_t linger_waiters_ ABSL_GUARDED_BY(mu_) = 0;
  // The watchdog armed for the cycle in flight (cancelled when it ends).
  std::optional<TimerThread::TaskId> watchdog_ ABSL_GUARDED_BY(mu_);
  uint64_t last_checkpoint_position_ ABSL_GUARDED_BY(mu_) = 0;
  bool checkpoint_after_roll_ ABSL_GUARDED_BY(mu_) = false;
  // The offsets of the state snapshots on disk (found at open or written
  // since), the base snapshots whose segments' tails are durable but which
  // are not written yet, and the segments below the log start whose files
  // wait for a snapshot at the base of the file after them before they are
  // deleted (AdvanceLogStart, or found so at open), oldest first.
  absl::btree_set<int64_t> snapshot_offsets_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<const metadata::PartitionStateSnapshot>>
      due_base_snapshots_ ABSL_GUARDED_BY(mu_);
  SegmentList awaiting_snapshot_ ABSL_GUARDED_BY(mu_);
  // Sealed segments whose indexes could not be made durable (an fdatasync
  // failed): a recovery checkpoint past them would tell the next open to
  // trust index files a power loss may have emptied, so none is written
  // until a retry (each cycle's, and Relinquish's) succeeds.
  SegmentList indexes_not_durable_ ABSL_GUARDED_BY(mu_);
  absl::Status stall_status_ ABSL_GUARDED_BY(mu_);
  bool rearm_scheduled_ ABSL_GUARDED_BY(mu_) = false;
  // Serialises checkpoint/snapshot writes of sync cycles against
  // Relinquish's final ones. Order: metadata_mu_, checkpoint_mu_, mu_.
  absl::Mutex checkpoint_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_PARTITION_H_
