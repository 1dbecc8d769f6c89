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
// Threads: `io_threads` pool threads (fsyncs, probes, maintenance) and one
// timer thread, whatever the number of partitions. Blocking methods run on
// the caller's thread.
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
#include "storage/engine/retention_host.h"
#include "storage/engine/storage_engine.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/producer_fences.h"
#include "storage/partition/partition.h"
#include "storage/partition/partition_config.h"
#include "storage/segment/read_handle_cache.h"

namespace kaas {

// Written into a partition directory while it is being moved to another log
// dir; holds the target log dir's name (see MovePartitionToLogDir).
inline constexpr absl::string_view kMovingToFileName = ".moving-to";

class DiskEngine final : public StorageEngine, public RetentionHost {
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
    // Threads running fsyncs, probes and maintenance for all partitions.
    int io_threads = 4;
    // Open read handles (with loaded indexes) of closed segments, engine-wide.
    size_t max_cached_read_handles = 1024;
    // Interval between probes of a stalled partition.
    absl::Duration rearm_interval = absl::Seconds(5);
    // How often idle producers are expired (Kafka:
    // producer.id.expiration.check.interval.ms, 10 minutes); zero disables.
    absl::Duration producer_expiry_interval = absl::Minutes(10);
  };

  // Validates the options, creates the data dir if needed, lists the log
  // dirs (no descriptor is opened) and loads the producer fences.
  static absl::StatusOr<std::unique_ptr<DiskEngine>> Create(Options options);

  // Relinquishes every led partition (Drain), logging failures.
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
      const TopicPartition& tp, int64_t timestamp) override;
  absl::StatusOr<EpochEndOffset> OffsetForLeaderEpoch(
      const TopicPartition& tp, int64_t leader_epoch) override;
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
  std::vector<placement::LogDirInfo> LogDirs() override;
  std::vector<LogDirUsage> LogDirUsages() override;
  absl::StatusOr<std::string> PartitionLogDir(
      const TopicPartition& tp) override;
  absl::StatusOr<std::string> MovePartitionToLogDir(
      const TopicPartition& tp, absl::string_view log_dir) override;
  absl::StatusOr<std::optional<TopicConfigOverrides>> GetTopicConfig(
      absl::string_view topic) override;
  absl::Status FenceProducerEpoch(int64_t producer_id,
                                  int16_t producer_epoch) override;
  int StalledPartitions() override;
  const StorageStats& Stats() const override { return stats_; }

  // ---- RetentionHost -------------------------------------------------------
  absl::Status ReloadTopicConfig(const TopicPartition& tp) override;
  absl::StatusOr<RetentionView> DescribeForRetention(
      const TopicPartition& tp) override;
  absl::StatusOr<bool> RollIfAged(const TopicPartition& tp) override;
  absl::StatusOr<LogStartAdvance> AdvanceLogStartForRetention(
      const TopicPartition& tp, int64_t target,
      RetentionReason reason) override;

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
  absl::StatusOr<OpenReport> RecoverPartition(const TopicPartition& tp);

  fs::FileSystem& fs() { return *fs_; }

 private:
  struct Resolved {
    std::string dir;  // <root>/<topic>/<partition>
    const placement::LogDirInfo* log_dir;
  };

  explicit DiskEngine(Options options);

  // The led partition, kNotLeader / kMigrating otherwise.
  absl::StatusOr<std::shared_ptr<Partition>> Led(const TopicPartition& tp);
  // The per-partition lifecycle lock.
  std::shared_ptr<absl::Mutex> LifecycleLock(const TopicPartition& tp);
  absl::StatusOr<Resolved> Resolve(const TopicPartition& tp);
  absl::Status CheckIdentity(const TopicPartition& tp, const Resolved& where);
  // Opens (recovers) the partition at `where`, retrying briefly when the
  // directory vanishes under it (an operator renaming a dead incarnation
  // aside).
  absl::StatusOr<std::shared_ptr<Partition>> OpenPartition(
      const TopicPartition& tp, const Resolved& where);
  // Steps 2-5 of a move (see disk_engine_lifecycle.cc) of a partition that
  // is fenced and not led.
  absl::Status MoveQuiescedPartition(const TopicPartition& tp,
                                     const std::string& source_dir,
                                     const placement::LogDirInfo& target);
  // Finishes an interrupted move whose copy is complete.
  absl::Status CompleteInterruptedMove(const TopicPartition& tp,
                                       const std::string& source_dir);
  absl::StatusOr<bool> HasPartitionData(const std::string& partition_dir);
  PartitionRuntime runtime();
  void ScheduleProducerExpiry();

  // Constant after construction.
  const Options options_;
  fs::FileSystem* const fs_;
  Clock* const clock_;
  std::optional<placement::LogDirSet> log_dirs_;
  std::unique_ptr<metadata::ProducerFenceStore> fences_;
  std::vector<TopicPartition> on_disk_;

  mutable absl::Mutex resolvers_mu_;
  std::shared_ptr<const placement::PlacementResolver> placement_
      ABSL_GUARDED_BY(resolvers_mu_);
  std::shared_ptr<const TopicIdentityResolver> identity_
      ABSL_GUARDED_BY(resolvers_mu_);

  mutable absl::Mutex map_mu_;
  absl::flat_hash_map<TopicPartition, std::shared_ptr<Partition>> led_
      ABSL_GUARDED_BY(map_mu_);
  absl::flat_hash_set<TopicPartition> migrating_ ABSL_GUARDED_BY(map_mu_);

  absl::Mutex lifecycle_mu_;
  absl::flat_hash_map<TopicPartition, std::shared_ptr<absl::Mutex>> lifecycle_
      ABSL_GUARDED_BY(lifecycle_mu_);

  StorageStats stats_;
  segment::ReadHandleCache read_cache_;
  // Declared last: destroyed first, so no timer or pool task outlives what
  // it uses.
  TimerThread timers_{"kaas-timers"};
  ThreadPool io_pool_;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_DISK_ENGINE_H_
