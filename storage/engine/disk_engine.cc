// DiskEngine: construction, partition lookup and resolution, and the
// per-partition operations that delegate to a led Partition. Leadership and
// log-dir moves are in disk_engine_lifecycle.cc.

#include "storage/engine/disk_engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"
#include "storage/engine/log_dir_identity.h"
#include "storage/engine/request_validation.h"
#include "storage/engine/small_files/small_files.h"
#include "storage/engine/topic_config.h"
#include "storage/metadata/partition_files.h"

namespace kaas {

using ::kaas::partition::Partition;
using ::kaas::partition::PartitionRuntime;

DiskEngine::DiskEngine(Options options)
    : options_(std::move(options)),
      fs_(options_.fs != nullptr ? options_.fs
                                 : fs::PosixFileSystem::Default()),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      read_cache_(options_.max_cached_read_handles),
      io_pool_(std::min(2, std::max(1, options_.io_threads)),
               std::max(1, options_.io_threads), "kaas-io") {}

absl::StatusOr<std::unique_ptr<DiskEngine>> DiskEngine::Create(
    Options options) {
  if (options.data_dir.empty()) {
    return StorageError(StorageErrorCode::kInvalidConfig,
                        "the engine needs a data dir");
  }
  KAAS_RETURN_IF_ERROR(options.default_config.Validate());
  std::unique_ptr<DiskEngine> engine(new DiskEngine(std::move(options)));
  KAAS_ASSIGN_OR_RETURN(
      placement::LogDirSet dirs,
      placement::LogDirSet::Create(engine->options_.data_dir,
                                   engine->options_.extra_log_dirs));
  engine->log_dirs_.emplace(std::move(dirs));
  const std::string& data_dir = engine->options_.data_dir;
  if (engine->options_.read_only) {
    absl::StatusOr<fs::FileInfo> info = engine->fs_->Stat(data_dir);
    if (!info.ok() || !info->is_directory) {
      return StorageError(
          StorageErrorCode::kInvalidConfig,
          absl::StrCat("no data dir ", data_dir,
                       info.ok()
                           ? ": not a directory"
                           : absl::StrCat(": ", info.status().message())));
    }
    KAAS_ASSIGN_OR_RETURN(engine->fences_,
                          EnsureStorageError(metadata::ProducerFenceStore::Load(
                              engine->fs_, data_dir, /*read_only=*/true,
                              &engine->start_up_problems_)));
    // A marker that says something invalid is a problem worth reporting;
    // none at all is not (a writable engine would adopt a dir with data).
    for (const placement::LogDirInfo& dir : engine->log_dirs_->All()) {
      absl::StatusOr<std::optional<LogDirIdentity>> identity =
          ReadLogDirIdentity(*engine->fs_, dir.path);
      if (!identity.ok()) {
        engine->start_up_problems_.push_back(
            absl::StrCat("log dir ", dir.name, " (", dir.path,
                         "): ", identity.status().message()));
      }
    }
  } else {
    for (const placement::LogDirInfo& dir : engine->log_dirs_->All()) {
      absl::StatusOr<LogDirIdentity> identity = EnsureLogDirIdentity(
          *engine->fs_, dir.name, dir.path, engine->options_.cluster_id,
          engine->options_.format_log_dirs ? FormatPolicy::kAlways
                                           : FormatPolicy::kNewOrLegacyOnly);
      if (!identity.ok()) {
        // A log dir that is a file, or under one, is the operator's to fix.
        return StorageError(
            absl::IsFailedPrecondition(identity.status())
                ? StorageErrorCode::kInvalidConfig
                : GetStorageErrorCode(identity.status()),
            absl::StrCat("cannot use log dir ", dir.name, " (", dir.path,
                         "): ", identity.status().message()));
      }
    }
  }
  if (!engine->options_.read_only) {
    KAAS_ASSIGN_OR_RETURN(engine->fences_,
                          EnsureStorageError(metadata::ProducerFenceStore::Load(
                              engine->fs_, data_dir)));
  }

  // Inventory: list and stat only.
  for (const placement::LogDirInfo& dir : engine->log_dirs_->All()) {
    absl::StatusOr<std::vector<std::string>> topics =
        engine->fs_->ListDir(dir.path);
    if (!topics.ok()) {
      LOG(WARNING) << "log dir " << dir.name << " (" << dir.path
                   << ") is not readable: " << topics.status();
      continue;
    }
    for (const std::string& topic : *topics) {
      if (!ValidateTopicName(topic).ok()) continue;
      absl::StatusOr<std::vector<std::string>> partitions =
          engine->fs_->ListDir(fs::JoinPath(dir.path, topic));
      if (!partitions.ok()) continue;
      for (const std::string& name : *partitions) {
        int32_t partition = 0;
        if (absl::SimpleAtoi(name, &partition) && partition >= 0 &&
            absl::StrCat(partition) == name) {
          engine->on_disk_.push_back({topic, partition});
        }
      }
    }
  }
  std::sort(engine->on_disk_.begin(), engine->on_disk_.end());
  engine->on_disk_.erase(
      std::unique(engine->on_disk_.begin(), engine->on_disk_.end()),
      engine->on_disk_.end());
  engine->ScheduleProducerExpiry();
  return engine;
}

DiskEngine::~DiskEngine() {
  absl::Status status = Drain();
  LOG_IF(ERROR, !status.ok()) << "drain at shutdown: " << status;
  // Then the members go in the order disk_engine.h explains; the expiry
  // cycle must not arm another tick on the timer thread about to go.
  absl::MutexLock lock(&expiry_mu_);
  expiry_stopped_ = true;
  if (expiry_task_.has_value()) timers_.Cancel(*expiry_task_);
}

void DiskEngine::SetPlacementResolver(
    std::shared_ptr<const placement::PlacementResolver> resolver) {
  absl::MutexLock lock(&resolvers_mu_);
  placement_ = std::move(resolver);
}

void DiskEngine::SetIdentityResolver(
    std::shared_ptr<const TopicIdentityResolver> resolver) {
  absl::MutexLock lock(&resolvers_mu_);
  identity_ = std::move(resolver);
}

PartitionRuntime DiskEngine::runtime() {
  PartitionRuntime runtime;
  runtime.fs = fs_;
  runtime.clock = clock_;
  runtime.io_pool = &io_pool_;
  runtime.timers = &timers_;
  runtime.read_cache = &read_cache_;
  runtime.stats = &stats_;
  runtime.rearm_interval = options_.rearm_interval;
  runtime.direct_io = options_.direct_io;
  return runtime;
}

void DiskEngine::ScheduleProducerExpiry() {
  if (options_.producer_expiry_interval <= absl::ZeroDuration()) return;
  absl::MutexLock lock(&expiry_mu_);
  if (expiry_stopped_) return;
  expiry_task_ =
      timers_.ScheduleAfter(options_.producer_expiry_interval, [this] {
        // Checked under expiry_mu_, which the destructor holds to stop the
        // cycle: a tick that runs after that schedules nothing.
        absl::MutexLock lock(&expiry_mu_);
        if (expiry_stopped_) return;
        io_pool_.Schedule([this] {
          std::vector<std::shared_ptr<Partition>> partitions;
          {
            absl::ReaderMutexLock lock(&map_mu_);
            for (const auto& [tp, partition] : led_)
              partitions.push_back(partition);
          }
          for (const auto& partition : partitions) partition->ExpireProducers();
          ScheduleProducerExpiry();
        });
      });
}

absl::Status DiskEngine::CheckWritable(absl::string_view operation) const {
  if (!options_.read_only) return absl::OkStatus();
  return StorageError(StorageErrorCode::kInvalidRequest,
                      absl::StrCat(operation,
                                   ": the engine was created "
                                   "read-only (for inspection)"));
}

absl::StatusOr<std::shared_ptr<Partition>> DiskEngine::Led(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  absl::ReaderMutexLock lock(&map_mu_);
  KAAS_RETURN_IF_ERROR(CheckNotMigratingLocked(tp));
  auto it = led_.find(tp);
  if (it == led_.end()) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(tp.ToString(), " is not led here"));
  }
  return it->second;
}

absl::Status DiskEngine::CheckNotMigrating(const TopicPartition& tp) {
  absl::ReaderMutexLock lock(&map_mu_);
  return CheckNotMigratingLocked(tp);
}

absl::Status DiskEngine::CheckNotMigratingLocked(const TopicPartition& tp) {
  if (!migrating_.contains(tp)) return absl::OkStatus();
  return StorageError(
      StorageErrorCode::kMigrating,
      absl::StrCat(tp.ToString(), " is moving to another log dir"));
}

uint64_t DiskEngine::AbandonsOf(absl::string_view topic) {
  absl::ReaderMutexLock lock(&map_mu_);
  auto it = abandons_.find(topic);
  return it == abandons_.end() ? 0 : it->second;
}

std::shared_ptr<absl::Mutex> DiskEngine::LifecycleLock(
    const TopicPartition& tp) {
  absl::MutexLock lock(&lifecycle_mu_);
  std::shared_ptr<absl::Mutex>& mu = lifecycle_[tp];
  if (mu == nullptr) mu = std::make_shared<absl::Mutex>();
  return mu;
}

absl::StatusOr<std::optional<std::string>> DiskEngine::CompletedMoveCopy(
    const std::string& partition_dir) {
  absl::StatusOr<std::optional<std::string>> target =
      small_files::ReadSmallFile(
          *fs_, fs::JoinPath(partition_dir, kMovingToFileName));
  if (!target.ok() || !target->has_value()) return std::nullopt;
  const placement::LogDirInfo* dir = log_dirs_->Find(**target);
  if (dir == nullptr) return std::nullopt;
  std::string copy =
      fs::JoinPath(dir->path, fs::Basename(fs::Dirname(partition_dir)),
                   fs::Basename(partition_dir));
  // A marker naming the source's own log dir describes no copy (a move to
  // the same dir does nothing); never let it make the source reclaimable.
  if (copy == partition_dir) return std::nullopt;
  // Only a copy with a manifest is the partition's data (as for any
  // partition dir): a bare directory there must not make the source look
  // reclaimable.
  KAAS_ASSIGN_OR_RETURN(bool copied, fs_->Exists(fs::JoinPath(
                                         copy, metadata::kManifestFileName)));
  if (!copied) return std::nullopt;
  return copy;
}

absl::StatusOr<bool> DiskEngine::HasPartitionData(
    const std::string& partition_dir) {
  KAAS_ASSIGN_OR_RETURN(
      bool has_manifest,
      fs_->Exists(fs::JoinPath(partition_dir, metadata::kManifestFileName)));
  if (!has_manifest) return false;
  // A source whose move completed (its copy exists at the target) is not the
  // partition's data any more; CompleteInterruptedMove reclaims it.
  KAAS_ASSIGN_OR_RETURN(std::optional<std::string> copy,
                        CompletedMoveCopy(partition_dir));
  return !copy.has_value();
}

absl::StatusOr<DiskEngine::Resolved> DiskEngine::ResolveForLifecycle(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  std::string partition_name = absl::StrCat(tp.partition);
  // Reclaim the source of a move that completed before a crash (or whose
  // reclaim failed).
  for (const placement::LogDirInfo& dir : log_dirs_->All()) {
    std::string candidate = fs::JoinPath(dir.path, tp.topic, partition_name);
    absl::StatusOr<std::optional<std::string>> copy =
        CompletedMoveCopy(candidate);
    if (copy.ok() && copy->has_value()) {
      // Under the source's lock: an engine sharing the volume that holds it
      // is in the middle of this very move (it reclaims the source itself).
      absl::StatusOr<std::unique_ptr<fs::FileLock>> source_lock =
          metadata::LockPartitionDir(*fs_, candidate);
      if (HasStorageErrorCode(source_lock.status(),
                              StorageErrorCode::kNotLeader)) {
        LOG(INFO) << tp.ToString() << ": the source " << candidate
                  << " of a finished move is locked by another engine; "
                  << "leaving its reclaim to it";
        continue;
      }
      KAAS_RETURN_IF_ERROR(source_lock.status());
      LOG(WARNING) << tp.ToString() << ": finishing an interrupted move to "
                   << **copy << ", reclaiming the source " << candidate;
      KAAS_RETURN_IF_ERROR(CompleteInterruptedMove(tp, candidate, **copy,
                                                   *std::move(source_lock)));
    }
  }
  return Resolve(tp);
}

absl::StatusOr<DiskEngine::Resolved> DiskEngine::Resolve(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  std::shared_ptr<const placement::PlacementResolver> placement;
  {
    absl::MutexLock lock(&resolvers_mu_);
    placement = placement_;
  }
  std::optional<std::string> assigned_name;
  if (placement != nullptr) {
    assigned_name = placement->LogDirOf(tp.topic, tp.partition);
  }
  const placement::LogDirInfo& assigned =
      log_dirs_->AssignedRoot(assigned_name);
  std::string partition_name = absl::StrCat(tp.partition);
  KAAS_ASSIGN_OR_RETURN(placement::LogDirSet::PartitionRoot root,
                        log_dirs_->ResolvePartitionRoot(
                            assigned, [&](const std::string& root_path) {
                              return HasPartitionData(fs::JoinPath(
                                  root_path, tp.topic, partition_name));
                            }));
  if (root.deviates_from_placement()) {
    LOG(WARNING) << tp.ToString() << " is placed on log dir " << assigned.name
                 << " but its data is on " << root.dir->name
                 << ": serving it from there (only a move relocates data)";
  }
  return Resolved{fs::JoinPath(root.dir->path, tp.topic, partition_name),
                  root.dir};
}

absl::Status DiskEngine::CheckIdentity(const TopicPartition& tp,
                                       const Resolved& where) {
  std::shared_ptr<const TopicIdentityResolver> identity;
  {
    absl::MutexLock lock(&resolvers_mu_);
    identity = identity_;
  }
  if (identity == nullptr) return absl::OkStatus();  // dev mode and tests
  absl::StatusOr<std::optional<std::string>> stamp =
      ReadTopicIdStamp(*fs_, fs::Dirname(where.dir));
  if (!stamp.ok()) {
    // An unreadable stamp must not wedge the partition; it must be seen.
    LOG(WARNING) << tp.ToString() << ": topic identity stamp unreadable, "
                 << "opening anyway: " << stamp.status();
  }
  return CheckTopicIdentity(tp.topic, identity->IncarnationOf(tp.topic), stamp);
}

absl::StatusOr<std::string> DiskEngine::PartitionDir(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  return where.dir;
}

absl::StatusOr<PartitionConfig> DiskEngine::EffectiveConfig(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(Resolved where, Resolve(tp));
  return ConfigAt(where);
}

absl::StatusOr<PartitionConfig> DiskEngine::ConfigAt(const Resolved& where) {
  KAAS_ASSIGN_OR_RETURN(std::optional<TopicConfigOverrides> overrides,
                        ReadTopicConfig(*fs_, fs::Dirname(where.dir)));
  if (!overrides.has_value()) return options_.default_config;
  return ApplyTopicConfig(options_.default_config, *overrides);
}

// ---- Delegation to the led partition ---------------------------------------

absl::StatusOr<AppendResult> DiskEngine::Append(const TopicPartition& tp,
                                                int64_t leader_epoch, Acks acks,
                                                absl::string_view batch) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->Append(batch, leader_epoch, acks));
}

absl::StatusOr<AppendResult> DiskEngine::AppendAndWait(
    const TopicPartition& tp, int64_t leader_epoch, Acks acks,
    absl::string_view batch) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(
      partition->AppendAndWait(batch, leader_epoch, acks));
}

absl::StatusOr<int64_t> DiskEngine::DeleteRecords(const TopicPartition& tp,
                                                  int64_t target_offset) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->DeleteRecords(target_offset));
}

absl::StatusOr<ReadResult> DiskEngine::Read(const TopicPartition& tp,
                                            int64_t offset, size_t max_bytes,
                                            Isolation isolation) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->Read(offset, max_bytes, isolation));
}

absl::StatusOr<RegionReadResult> DiskEngine::ReadRegions(
    const TopicPartition& tp, int64_t offset, size_t max_bytes,
    Isolation isolation) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(
      partition->ReadRegions(offset, max_bytes, isolation));
}

absl::StatusOr<int64_t> DiskEngine::HighWatermark(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->HighWatermark();
}

absl::StatusOr<int64_t> DiskEngine::LogStartOffset(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->LogStartOffset();
}

absl::StatusOr<int64_t> DiskEngine::LastStableOffset(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->LastStableOffset();
}

absl::StatusOr<std::vector<AbortedTransaction>>
DiskEngine::AbortedTransactionsInRange(const TopicPartition& tp, int64_t start,
                                       int64_t end) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->AbortedTransactions(start, end);
}

absl::StatusOr<OffsetAndTimestamp> DiskEngine::OffsetForTimestamp(
    const TopicPartition& tp, int64_t timestamp, Isolation isolation) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->OffsetForTimestamp(timestamp, isolation);
}

absl::StatusOr<EpochEndOffset> DiskEngine::OffsetForLeaderEpoch(
    const TopicPartition& tp, int64_t leader_epoch) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->OffsetForLeaderEpoch(leader_epoch);
}

absl::StatusOr<uint64_t> DiskEngine::PartitionSize(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->SizeBytes();
}

std::vector<TopicPartition> DiskEngine::LedPartitions() {
  std::vector<TopicPartition> out;
  {
    absl::ReaderMutexLock lock(&map_mu_);
    for (const auto& [tp, partition] : led_) out.push_back(tp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<int64_t> DiskEngine::PartitionEpoch(const TopicPartition& tp) {
  absl::StatusOr<std::shared_ptr<Partition>> partition = Led(tp);
  if (!partition.ok()) return std::nullopt;
  return (*partition)->LeaderEpoch();
}

absl::StatusOr<PartitionStats> DiskEngine::PartitionStatsOf(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->Stats();
}

absl::StatusOr<std::vector<ProducerDescription>> DiskEngine::DescribeProducers(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->DescribeProducers();
}

std::optional<Role> DiskEngine::PartitionRole(const TopicPartition& tp) {
  absl::StatusOr<std::shared_ptr<Partition>> partition = Led(tp);
  if (!partition.ok()) return std::nullopt;
  return (*partition)->role();
}

absl::StatusOr<AppendResult> DiskEngine::AppendAsFollower(
    const TopicPartition& tp, int64_t leader_epoch, Acks acks,
    absl::string_view batches) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(
      partition->AppendAsFollower(batches, leader_epoch, acks));
}

absl::Status DiskEngine::SetHighWatermark(const TopicPartition& tp,
                                          int64_t offset) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return partition->SetHighWatermark(offset);
}

std::vector<placement::LogDirInfo> DiskEngine::LogDirs() {
  return log_dirs_->All();
}

std::vector<LogDirUsage> DiskEngine::LogDirUsages() {
  std::vector<LogDirUsage> out;
  for (const placement::LogDirInfo& dir : log_dirs_->All()) {
    LogDirUsage usage{dir.name, dir.path, -1, -1};
    absl::StatusOr<fs::VolumeSpace> space = fs_->GetVolumeSpace(dir.path);
    if (space.ok()) {
      usage.total_bytes = static_cast<int64_t>(space->total_bytes);
      usage.usable_bytes = static_cast<int64_t>(space->free_bytes);
    }
    out.push_back(std::move(usage));
  }
  return out;
}

absl::StatusOr<std::string> DiskEngine::PartitionLogDir(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(Resolved where, EnsureStorageError(Resolve(tp)));
  return where.log_dir->name;
}

absl::Status DiskEngine::FenceProducerEpoch(int64_t producer_id,
                                            int16_t producer_epoch) {
  KAAS_RETURN_IF_ERROR(CheckWritable("FenceProducerEpoch"));
  KAAS_RETURN_IF_ERROR(ValidateProducerFence(producer_id, producer_epoch));
  // Exclusive: a take-over applies the recorded fences and joins led_
  // entirely before or after this (see fences_mu_).
  absl::MutexLock fences_lock(&fences_mu_);
  // Durable first: a partition opened from now on applies it.
  KAAS_RETURN_IF_ERROR(EnsureStorageError(
      fences_->Fence(producer_id, producer_epoch, clock_->NowMillis(),
                     options_.default_config.producer_id_expiration_ms)));
  std::vector<std::pair<TopicPartition, std::shared_ptr<Partition>>> led;
  {
    absl::ReaderMutexLock lock(&map_mu_);
    led.assign(led_.begin(), led_.end());
  }
  // Every partition, even after a failure: one partition's error must not
  // leave the others accepting the fenced epoch.
  std::vector<std::string> failures;
  for (const auto& [tp, partition] : led) {
    absl::Status status = partition->FenceProducer(producer_id, producer_epoch);
    if (!status.ok()) {
      failures.push_back(absl::StrCat(tp.ToString(), ": ", status.message()));
    }
  }
  if (failures.empty()) return absl::OkStatus();
  return StorageError(
      StorageErrorCode::kStorageError,
      absl::StrCat("fencing producer ", producer_id, " at epoch ",
                   producer_epoch, " failed on ", failures.size(), " of ",
                   led.size(),
                   " led partitions: ", absl::StrJoin(failures, "; ")));
}

int DiskEngine::StalledPartitions() {
  absl::ReaderMutexLock lock(&map_mu_);
  int stalled = 0;
  for (const auto& [tp, partition] : led_) stalled += partition->IsStalled();
  return stalled;
}

// ---- RetentionHost
// -----------------------------------------------------------

absl::StatusOr<RetentionView> DiskEngine::DescribeForRetention(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  RetentionView view;
  view.config = partition->config();
  KAAS_ASSIGN_OR_RETURN(view.segments, partition->SegmentsWithTimestamps());
  view.log_start_offset = partition->LogStartOffset();
  view.high_watermark = partition->HighWatermark();
  return view;
}

absl::StatusOr<bool> DiskEngine::RollIfAged(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->MaybeRoll());
}

absl::StatusOr<LogStartAdvance> DiskEngine::AdvanceLogStartForRetention(
    const TopicPartition& tp, int64_t target, RetentionReason reason) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  KAAS_ASSIGN_OR_RETURN(LogStartAdvance advance,
                        EnsureStorageError(partition->AdvanceLogStart(target)));
  if (reason == RetentionReason::kTime) {
    stats_.retention_segments_by_time.fetch_add(advance.segments_deleted);
    stats_.retention_bytes_by_time.fetch_add(advance.bytes_deleted);
  } else {
    stats_.retention_segments_by_size.fetch_add(advance.segments_deleted);
    stats_.retention_bytes_by_size.fetch_add(advance.bytes_deleted);
  }
  return advance;
}

// ---- CompactionHost
// ----------------------------------------------------------

absl::StatusOr<CompactionView> DiskEngine::DescribeCompaction(
    const TopicPartition& tp, int64_t now_ms) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->DescribeCompaction(now_ms));
}

absl::StatusOr<CompactionReport> DiskEngine::Compact(
    const TopicPartition& tp, const CompactionRequest& request) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  return EnsureStorageError(partition->Compact(request));
}

}  // namespace kaas
