// File: storage/engine/disk_engine.h
//
// The production StorageEngine: partitions in directories of one or more log
// dirs, each `<root>/<topic>/<partition>/` holding segment files and
// metadata (docs/ARCHITECTURE.md describes every file).
//
//   DiskEngine::Options options;
//   options.data_dir = "/var/lib/kaas";
//   KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
//                         DiskEngine::Create(std::move(options)));
//   KAAS_RETURN_IF_ERROR(engine->TakeOver({"orders", 0}, 7).status());
//   KAAS_ASSIGN_OR_RETURN(AppendResult appended,
//                         engine->Append({"orders", 0}, 7, Acks::kAll, batch));
//   appended.durable.Then([](const absl::Status& s) { /* respond */ });
//
// Start-up only lists and stats the log dirs: no partition is opened and no
// file descriptor is held until a partition is taken over. Only the leader of
// a partition holds its descriptors (the active segment's write handle, and
// read handles of closed segments, opened lazily and kept in an engine-wide
// cache of `max_cached_read_handles`).
//
// Where a partition lives: the placement resolver's answer names a log dir
// (unknown or none: the data dir); a partition that has data in another log
// dir is served from there ("where the data is outranks the placement
// record"; logged). The topic identity gate (storage/engine/
// topic_identity.h) runs before a partition is opened or created.
//
// Threads: at most `io_threads` pool threads (fsyncs, probes, maintenance;
// started as concurrent sync cycles need them) and one timer thread,
// whatever the number of partitions. Blocking methods run on the caller's
// thread.
//
// Thread-safety: thread-safe. The map of led partitions is only locked to
// look up or insert a shared pointer; lifecycle operations of one partition
// (take-over, relinquish, abandon, move, delete) are serialised by a
// per-partition lock held across their I/O, never the map lock.

#ifndef KAAS_STORAGE_ENGINE_DISK_ENGINE_H_
#define KAAS_STORAGE_ENGINE_DISK_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/file_system.h"
#include "placement/log_dir_info.h"
#include "placement/log_dir_set.h"
#include "placement/placement_resolver.h"
#include "storage/common/partition_config.h"
#include "storage/engine/compaction_host.h"
#include "storage/engine/retention_host.h"
#include "storage/engine/storage_engine.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/producer_fences.h"
#include "storage/partition/partition.h"
#include "storage/segment/read_handle_cache.h"

namespace kaas {

// Written into a partition directory while it is being moved to another log
// dir; holds the target log dir's name (see MovePartitionToLogDir).
inline constexpr absl::string_view kMovingToFileName = ".moving-to";

class DiskEngine final : public StorageEngine,
                         public RetentionHost,
                         public CompactionHost {
 public:
  struct Options {
    // The data dir: the log dir named "default". Created if missing.
    std::string data_dir;
    // More log dirs (Kafka JBOD, a volume pool); see placement/
    // log_dirs_json.h for their JSON form.
    std::vector<placement::LogDirInfo> extra_log_dirs;
    // Every partition's config, before its topic's overrides.
    PartitionConfig default_config;
    // The filesystem seam (default: the real one). Not owned.
    fs::FileSystem* fs = nullptr;
    // Default: the real clock. Not owned.
    Clock* clock = nullptr;
    // The most threads running fsyncs, probes and maintenance for all
    // partitions: also the most group-commit sync cycles in flight at once.
    // The pool starts with two (or this, if fewer) and grows while every
    // thread is busy and work waits, so an engine with few partitions keeps
    // few threads. A device serves many fdatasyncs at once (64 files synced
    // concurrently ran ~7x the rate of one on the benchmark machine), so
    // with many partitions waiting, more cycles in flight means more acks/s.
    int io_threads = 64;
    // Open read handles (with loaded indexes) of closed segments, engine-wide.
    size_t max_cached_read_handles = 1024;
    // Interval between probes of a stalled partition.
    absl::Duration rearm_interval = absl::Seconds(5);
    // Write active segments' logs with direct I/O (O_DIRECT) where the
    // filesystem grants it: local ext4, xfs, btrfs or f2fs, never a shared
    // or FUSE volume (storage/segment/direct_log_file.h). Appended bytes are
    // copied into pooled memory chunks and each sync cycle writes them in
    // one aligned write that skips the page cache: acks=all appends of large
    // batches run about twice as fast on the benchmark VM (README,
    // "Performance"). Same files and the same durability for every synced
    // byte, but an acks=0/1 append not yet synced lives in this process's
    // memory until the next sync cycle writes it, so a process crash loses
    // it as a power loss would (with the page cache it survives a process
    // crash). Readers are served recently written bytes from memory; older
    // ones through the page cache as before. Off by default for that reason.
    bool direct_io = false;
    // How often idle producers are expired (Kafka:
    // producer.id.expiration.check.interval.ms, 10 minutes); zero disables.
    absl::Duration producer_expiry_interval = absl::Minutes(10);
    // Each log dir carries an identity marker (storage/engine/
    // log_dir_identity.h): one that did not exist is created and formatted,
    // one holding data but no marker (written before markers) is formatted,
    // and an existing EMPTY one without a marker is refused (an unmounted
    // volume looks like that) unless this is set.
    bool format_log_dirs = false;
    // Recorded in the markers this engine writes; a marker of another
    // cluster is refused. Empty: accept any, record none.
    std::string cluster_id;
    // An engine for looking, never for changing (tools): the data dir must
    // exist, nothing is created, written or locked, partitions open only
    // through OpenReadOnly, and every call that would lead or change a
    // partition fails with kInvalidRequest. Damaged producer fences do not
    // fail Create: they are in StartUpProblems().
    bool read_only = false;
  };

  // Validates the options, checks (or writes) every log dir's identity
  // marker, creating a missing dir, lists the log dirs (no descriptor is
  // opened) and loads the producer fences. Errors: kInvalidConfig (bad
  // options, a data dir that is a file, a log dir refused by its marker:
  // the message says why), kStorageError (I/O).
  static absl::StatusOr<std::unique_ptr<DiskEngine>> Create(Options options);

  // Relinquishes every led partition (Drain), logging failures, then stops
  // the timer thread before the I/O pool (see the members).
  ~DiskEngine() override;

  DiskEngine(const DiskEngine&) = delete;
  DiskEngine& operator=(const DiskEngine&) = delete;

  // Resolvers may be swapped at any time; they apply from the next open.
  void SetPlacementResolver(
      std::shared_ptr<const placement::PlacementResolver> resolver);
  void SetIdentityResolver(
      std::shared_ptr<const TopicIdentityResolver> resolver);

  // ---- StorageEngine -------------------------------------------------------
  absl::StatusOr<AppendResult> Append(const TopicPartition& tp,
                                      int64_t leader_epoch, Acks acks,
                                      absl::string_view batch) override;
  absl::StatusOr<AppendResult> AppendAndWait(const TopicPartition& tp,
                                             int64_t leader_epoch, Acks acks,
                                             absl::string_view batch) override;
  absl::StatusOr<int64_t> DeleteRecords(const TopicPartition& tp,
                                        int64_t target_offset) override;
  absl::StatusOr<ReadResult> Read(const TopicPartition& tp, int64_t offset,
                                  size_t max_bytes,
                                  Isolation isolation) override;
  absl::StatusOr<RegionReadResult> ReadRegions(const TopicPartition& tp,
                                               int64_t offset, size_t max_bytes,
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
  absl::Status FenceProducerEpoch(int64_t producer_id,
                                  int16_t producer_epoch) override;
  int StalledPartitions() override;
  const StorageStats& Stats() const override { return stats_; }
  absl::StatusOr<PartitionStats> PartitionStatsOf(
      const TopicPartition& tp) override;

  // ---- RetentionHost -------------------------------------------------------
  // StorageEngine's and RetentionHost's (the same contract).
  absl::Status ReloadTopicConfig(const TopicPartition& tp) override;
  absl::StatusOr<RetentionView> DescribeForRetention(
      const TopicPartition& tp) override;
  absl::StatusOr<bool> RollIfAged(const TopicPartition& tp) override;
  absl::StatusOr<LogStartAdvance> AdvanceLogStartForRetention(
      const TopicPartition& tp, int64_t target,
      RetentionReason reason) override;

  // ---- CompactionHost ------------------------------------------------------
  absl::StatusOr<CompactionView> DescribeCompaction(const TopicPartition& tp,
                                                    int64_t now_ms) override;
  absl::StatusOr<CompactionReport> Compact(
      const TopicPartition& tp, const CompactionRequest& request) override;

  // ---- Tools ---------------------------------------------------------------

  // The directory holding the partition's data (or where it would be
  // created). Blocking (stats the log dirs).
  absl::StatusOr<std::string> PartitionDir(const TopicPartition& tp);

  // The engine default overlaid with the topic's overrides.
  absl::StatusOr<PartitionConfig> EffectiveConfig(const TopicPartition& tp);

  // Partitions found on disk by Create (topic dirs and partition dirs of
  // every log dir), sorted. No partition was opened to find them.
  const std::vector<TopicPartition>& PartitionsOnDisk() const {
    return on_disk_;
  }

  // Recovers a partition that is not led (what TakeOver's open does) and
  // closes it again without taking it over; for `kaaslog verify --repair`.
  // kNotLeader while any engine leads it.
  absl::StatusOr<partition::OpenReport> RecoverPartition(
      const TopicPartition& tp);

  // Opens the partition read-only (PartitionAccess::kReadOnly): no file is
  // changed, created or locked, `report` says what recovery would do, and
  // the partition serves reads of the log as recovery sees it (even while
  // another engine leads it, or on a read-only or full volume) until the
  // caller abandons it. For tools (`kaaslog read`). Blocking.
  // `config`, if given, replaces the partition's effective config (a tool
  // inspecting a partition whose topic config is invalid).
  absl::StatusOr<std::shared_ptr<partition::Partition>> OpenReadOnly(
      const TopicPartition& tp, partition::OpenReport* report,
      const PartitionConfig* config = nullptr);

  // Every partition's config before its topic's overrides.
  const PartitionConfig& default_config() const {
    return options_.default_config;
  }

  fs::FileSystem& fs() { return *fs_; }

  // What Create found wrong with the data dir's own files (the producer
  // fences) and what a writable start-up does about it.
  const std::vector<std::string>& StartUpProblems() const {
    return start_up_problems_;
  }

 private:
  struct Resolved {
    std::string dir;  // <root>/<topic>/<partition>
    const placement::LogDirInfo* log_dir;
  };

  explicit DiskEngine(Options options);

  // kInvalidRequest naming `operation` when the engine is read-only.
  absl::Status CheckWritable(absl::string_view operation) const;
  // The led partition, kNotLeader / kMigrating otherwise.
  absl::StatusOr<std::shared_ptr<partition::Partition>> Led(
      const TopicPartition& tp);
  // kMigrating while `tp` is being moved. Lifecycle calls check it before
  // waiting for the lifecycle lock, which a move holds for its whole copy.
  absl::Status CheckNotMigrating(const TopicPartition& tp);
  absl::Status CheckNotMigratingLocked(const TopicPartition& tp)
      ABSL_SHARED_LOCKS_REQUIRED(map_mu_);
  // How many times `topic` was abandoned; a take-over notes it before it
  // opens anything (see abandons_).
  uint64_t AbandonsOf(absl::string_view topic);
  // The per-partition lifecycle lock. REQUIRES: `tp` is valid (the map of
  // locks only ever holds valid names).
  std::shared_ptr<absl::Mutex> LifecycleLock(const TopicPartition& tp);

  // Where the partition's data is. Read-only: the source of an interrupted
  // move whose copy is in place is skipped, not reclaimed. Safe without the
  // lifecycle lock (PartitionLogDir, GetTopicConfig, the cleaner).
  absl::StatusOr<Resolved> Resolve(const TopicPartition& tp);
  // Resolve, after finishing every interrupted move of `tp` (reclaiming a
  // source whose copy is durably in place). REQUIRES: the partition's
  // lifecycle lock, so that no move of it is running.
  absl::StatusOr<Resolved> ResolveForLifecycle(const TopicPartition& tp);
  // If `partition_dir` is the source of a move whose copy is in place (its
  // `.moving-to` names a log dir holding the partition with a manifest),
  // the copy's path.
  absl::StatusOr<std::optional<std::string>> CompletedMoveCopy(
      const std::string& partition_dir);
  absl::StatusOr<bool> HasPartitionData(const std::string& partition_dir);
  absl::Status CheckIdentity(const TopicPartition& tp, const Resolved& where);
  // The engine default overlaid with the overrides of `where`'s topic dir.
  absl::StatusOr<PartitionConfig> ConfigAt(const Resolved& where);

  // TakeOver once the lifecycle lock is held. `abandons` is AbandonsOf(topic)
  // when the caller started: if the topic was abandoned since, the partition
  // is not led (kNotLeader).
  absl::StatusOr<int64_t> TakeOverLocked(const TopicPartition& tp,
                                         int64_t leader_epoch,
                                         uint64_t abandons, Role role);
  // After an engine-internal reopen (a truncation, a move): the
  // broker-managed high watermark `before` had, which a fresh open would
  // reset to the log start, again (clamped to the log end). Nothing for a
  // partition whose high watermark is the engine's, or not led.
  void CarryBrokerHighWatermark(const TopicPartition& tp, int64_t before);
  // TakeOver and BecomeFollower.
  absl::StatusOr<int64_t> TakeRole(const TopicPartition& tp,
                                   int64_t leader_epoch, Role role);
  // TruncateTo (`full` false) and TruncateFullyAndStartAt.
  absl::StatusOr<int64_t> Truncate(const TopicPartition& tp, int64_t offset,
                                   bool full);
  // Opens (recovers) the partition at `where`, retrying briefly when the
  // directory vanishes under it (an operator renaming a dead incarnation
  // aside).
  absl::StatusOr<std::shared_ptr<partition::Partition>> OpenPartition(
      const TopicPartition& tp, const Resolved& where);
  // Steps 2-5 of a move (see disk_engine_lifecycle.cc) of a partition that
  // is fenced and not led.
  // `source_lock` is the source dir's lock (null when it has no dir),
  // held until the source is reclaimed.
  absl::Status MoveQuiescedPartition(const TopicPartition& tp,
                                     const std::string& source_dir,
                                     const placement::LogDirInfo& target,
                                     std::unique_ptr<fs::FileLock> source_lock);
  // Finishes a move whose copy `copy_dir` is in place: makes the switch
  // durable, checks the copy, then reclaims `source_dir` (releasing
  // `source_lock`, if any, once it is renamed aside). REQUIRES: the
  // partition's lifecycle lock.
  absl::Status CompleteInterruptedMove(
      const TopicPartition& tp, const std::string& source_dir,
      const std::string& copy_dir,
      std::unique_ptr<fs::FileLock> source_lock = nullptr);
  partition::PartitionRuntime runtime();
  void ScheduleProducerExpiry();

  // Constant after construction.
  const Options options_;
  fs::FileSystem* const fs_;
  Clock* const clock_;
  std::optional<placement::LogDirSet> log_dirs_;
  std::unique_ptr<metadata::ProducerFenceStore> fences_;
  std::vector<TopicPartition> on_disk_;
  std::vector<std::string> start_up_problems_;

  mutable absl::Mutex resolvers_mu_;
  std::shared_ptr<const placement::PlacementResolver> placement_
      ABSL_GUARDED_BY(resolvers_mu_);
  std::shared_ptr<const TopicIdentityResolver> identity_
      ABSL_GUARDED_BY(resolvers_mu_);

  // FenceProducerEpoch holds it exclusively while it records a fence and
  // fences every led partition; a take-over holds it shared while it applies
  // the recorded fences and inserts the partition into led_. So every fence
  // reaches every partition that leads: one inserted before the fence's
  // walk is fenced by the walk, one inserted after applies the record.
  // Order: a lifecycle lock -> fences_mu_ -> map_mu_.
  absl::Mutex fences_mu_;

  mutable absl::Mutex map_mu_;
  absl::flat_hash_map<TopicPartition, std::shared_ptr<partition::Partition>>
      led_ ABSL_GUARDED_BY(map_mu_);
  absl::flat_hash_set<TopicPartition> migrating_ ABSL_GUARDED_BY(map_mu_);
  // Per topic, how many times AbandonTopic was called. A take-over that
  // began before an abandon of its topic opened the deleted incarnation's
  // directory, so it must not lead (it would serve dead data). One small
  // entry per topic ever abandoned; topics are deleted rarely.
  absl::flat_hash_map<std::string, uint64_t> abandons_ ABSL_GUARDED_BY(map_mu_);

  absl::Mutex lifecycle_mu_;
  absl::flat_hash_map<TopicPartition, std::shared_ptr<absl::Mutex>> lifecycle_
      ABSL_GUARDED_BY(lifecycle_mu_);

  // The producer-expiry cycle (a timer tick hands the work to the pool,
  // which arms the next tick). The destructor stops it under expiry_mu_.
  absl::Mutex expiry_mu_;
  std::optional<TimerThread::TaskId> expiry_task_ ABSL_GUARDED_BY(expiry_mu_);
  bool expiry_stopped_ ABSL_GUARDED_BY(expiry_mu_) = false;

  StorageStats stats_;
  segment::ReadHandleCache read_cache_;
  // Timer tasks schedule pool tasks (expiry ticks, partitions' re-arm
  // probes), and pool tasks of led partitions arm timers. So: the destructor
  // first closes every partition (Drain) and stops the expiry cycle; then
  // timers_, declared last, is destroyed first (pending tasks dropped, a
  // running one finished), so no timer task can reach a destroyed pool; then
  // io_pool_ runs what is queued (nothing left arms a timer) and joins.
  ThreadPool io_pool_;
  TimerThread timers_{"kaas-timers"};
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_DISK_ENGINE_H_
