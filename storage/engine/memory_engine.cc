// MemoryEngine: one MemoryPartition (storage/engine/memory_partition.h) per
// topic partition, in a map.

#include "storage/engine/memory_engine.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"
#include "storage/engine/memory_partition.h"
#include "storage/engine/request_validation.h"

namespace kaas {

namespace {

using memory_internal::MemoryPartition;

}  // namespace

MemoryEngine::MemoryEngine(Options options)
    : config_(std::move(options.partition_config)), clock_(options.clock) {
  absl::Status valid = config_.Validate();
  CHECK(valid.ok()) << "MemoryEngine: invalid partition config: " << valid;
  CHECK(clock_ != nullptr);
}

MemoryEngine::~MemoryEngine() = default;

// ---- The map ---------------------------------------------------------------

absl::StatusOr<MemoryEngine::PartitionPtr> MemoryEngine::Find(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  absl::ReaderMutexLock lock(&partitions_mu_);
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(tp.ToString(), " is not led here"));
  }
  return it->second;
}

absl::StatusOr<MemoryEngine::PartitionPtr> MemoryEngine::FindOrCreate(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  {
    absl::ReaderMutexLock lock(&partitions_mu_);
    auto it = partitions_.find(tp);
    if (it != partitions_.end()) return it->second;
  }
  // Holding fences_mu_ (shared) until the partition is in the map: a
  // concurrent FenceProducerEpoch either came before (and is applied here)
  // or comes after (and finds the partition in the map).
  absl::ReaderMutexLock fences_lock(&fences_mu_);
  auto created =
      std::make_shared<MemoryPartition>(tp.ToString(), config_, &stats_);
  const int64_t now_ms = clock_->NowMillis();
  for (const auto& [producer_id, epoch] : fences_) {
    created->Fence(producer_id, epoch, now_ms);
  }
  absl::MutexLock lock(&partitions_mu_);
  return partitions_.try_emplace(tp, std::move(created)).first->second;
}

MemoryEngine::PartitionPtr MemoryEngine::Remove(const TopicPartition& tp) {
  absl::MutexLock lock(&partitions_mu_);
  auto it = partitions_.find(tp);
  if (it == partitions_.end()) return nullptr;
  PartitionPtr partition = std::move(it->second);
  partitions_.erase(it);
  return partition;
}

std::vector<std::pair<TopicPartition, MemoryEngine::PartitionPtr>>
MemoryEngine::Snapshot() {
  absl::ReaderMutexLock lock(&partitions_mu_);
  return {partitions_.begin(), partitions_.end()};
}

// ---- Writes and reads ------------------------------------------------------

absl::StatusOr<AppendResult> MemoryEngine::Append(const TopicPartition& tp,
                                                  int64_t leader_epoch,
                                                  Acks acks,
                                                  absl::string_view batch) {
  // Every acks level is complete on return: AppendResult::durable is ready.
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->Append(batch, leader_epoch);
}

absl::StatusOr<int64_t> MemoryEngine::DeleteRecords(const TopicPartition& tp,
                                                    int64_t target_offset) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->DeleteRecords(target_offset);
}

absl::StatusOr<ReadResult> MemoryEngine::Read(const TopicPartition& tp,
                                              int64_t offset, size_t max_bytes,
                                              Isolation isolation) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->Read(offset, max_bytes, isolation);
}

absl::StatusOr<int64_t> MemoryEngine::HighWatermark(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->HighWatermark();
}

absl::StatusOr<int64_t> MemoryEngine::LogStartOffset(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->LogStartOffset();
}

absl::StatusOr<int64_t> MemoryEngine::LastStableOffset(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->LastStableOffset();
}

absl::StatusOr<std::vector<AbortedTransaction>>
MemoryEngine::AbortedTransactionsInRange(const TopicPartition& tp,
                                         int64_t start, int64_t end) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->AbortedTransactions(start, end);
}

absl::StatusOr<OffsetAndTimestamp> MemoryEngine::OffsetForTimestamp(
    const TopicPartition& tp, int64_t timestamp, Isolation isolation) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->OffsetForTimestamp(timestamp, isolation);
}

absl::StatusOr<EpochEndOffset> MemoryEngine::OffsetForLeaderEpoch(
    const TopicPartition& tp, int64_t leader_epoch) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->OffsetForLeaderEpoch(leader_epoch);
}

absl::StatusOr<uint64_t> MemoryEngine::PartitionSize(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->SizeBytes();
}

// ---- Partition lifecycle ---------------------------------------------------

absl::Status MemoryEngine::CreatePartition(const TopicPartition& tp) {
  return FindOrCreate(tp).status();
}

absl::Status MemoryEngine::DeletePartition(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  if (PartitionPtr partition = Remove(tp)) partition->Drop();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> MemoryEngine::TakeOver(const TopicPartition& tp,
                                               int64_t leader_epoch) {
  return TakeRole(tp, leader_epoch, Role::kLeader);
}

absl::StatusOr<int64_t> MemoryEngine::BecomeFollower(const TopicPartition& tp,
                                                     int64_t leader_epoch) {
  return TakeRole(tp, leader_epoch, Role::kFollower);
}

absl::StatusOr<int64_t> MemoryEngine::TakeRole(const TopicPartition& tp,
                                               int64_t leader_epoch,
                                               Role role) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(ValidateLeaderEpoch(leader_epoch));
  while (true) {
    KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, FindOrCreate(tp));
    bool dropped = false;
    absl::StatusOr<int64_t> log_end =
        partition->TakeOver(leader_epoch, role, &dropped);
    // Deleted between the lookup and the take-over: lead the new one.
    if (!dropped) return log_end;
  }
}

absl::Status MemoryEngine::Relinquish(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  absl::StatusOr<PartitionPtr> partition = Find(tp);
  if (partition.ok()) (*partition)->Relinquish();
  return absl::OkStatus();
}

int MemoryEngine::AbandonTopic(absl::string_view topic) {
  std::vector<PartitionPtr> doomed;
  {
    absl::MutexLock lock(&partitions_mu_);
    for (auto it = partitions_.begin(); it != partitions_.end();) {
      if (it->first.topic == topic) {
        doomed.push_back(std::move(it->second));
        partitions_.erase(it++);
      } else {
        ++it;
      }
    }
  }
  int closed = 0;
  for (const PartitionPtr& partition : doomed) closed += partition->Drop();
  return closed;
}

absl::Status MemoryEngine::Drain() {
  for (const auto& [tp, partition] : Snapshot()) partition->Relinquish();
  return absl::OkStatus();
}

std::vector<TopicPartition> MemoryEngine::LedPartitions() {
  std::vector<TopicPartition> led;
  for (const auto& [tp, partition] : Snapshot()) {
    if (partition->IsLeading()) led.push_back(tp);
  }
  std::sort(led.begin(), led.end());
  return led;
}

std::optional<int64_t> MemoryEngine::PartitionEpoch(const TopicPartition& tp) {
  absl::StatusOr<PartitionPtr> partition = Find(tp);
  if (!partition.ok()) return std::nullopt;
  return (*partition)->LedEpoch();
}

absl::StatusOr<ReplicaDescription> MemoryEngine::DescribeReplica(
    const TopicPartition& tp) {
  absl::StatusOr<PartitionPtr> partition = Find(tp);
  if (!partition.ok()) {
    return StorageError(StorageErrorCode::kUnknownTopicOrPartition,
                        absl::StrCat(tp.ToString(), " has no data here"));
  }
  ReplicaDescription out = (*partition)->Describe();
  out.log_dir = std::string(placement::kDefaultLogDirName);
  return out;
}

absl::StatusOr<PartitionStats> MemoryEngine::PartitionStatsOf(
    const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  if (!partition->IsLeading()) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(tp.ToString(), " is not led here"));
  }
  return partition->Stats();
}

absl::StatusOr<std::vector<ProducerDescription>>
MemoryEngine::DescribeProducers(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->DescribeProducers();
}

std::optional<Role> MemoryEngine::PartitionRole(const TopicPartition& tp) {
  absl::StatusOr<PartitionPtr> partition = Find(tp);
  if (!partition.ok()) return std::nullopt;
  return (*partition)->LedRole();
}

// ---- Replication -----------------------------------------------------------

absl::StatusOr<AppendResult> MemoryEngine::AppendAsFollower(
    const TopicPartition& tp, int64_t leader_epoch, Acks acks,
    absl::string_view batches) {
  // As Append: every acks level is complete on return.
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->AppendAsFollower(batches, leader_epoch);
}

absl::StatusOr<int64_t> MemoryEngine::TruncateTo(const TopicPartition& tp,
                                                 int64_t offset) {
  return Truncate(tp, offset, /*full=*/false);
}

absl::Status MemoryEngine::TruncateFullyAndStartAt(const TopicPartition& tp,
                                                   int64_t offset) {
  return Truncate(tp, offset, /*full=*/true).status();
}

absl::StatusOr<int64_t> MemoryEngine::Truncate(const TopicPartition& tp,
                                               int64_t offset, bool full) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  // Held (shared) across the truncation: a concurrent FenceProducerEpoch
  // either is in the list re-applied to the rebuilt producer state or comes
  // after it.
  absl::ReaderMutexLock fences_lock(&fences_mu_);
  std::vector<std::pair<int64_t, int16_t>> fences(fences_.begin(),
                                                  fences_.end());
  return partition->Truncate(offset, full, fences, clock_->NowMillis());
}

absl::Status MemoryEngine::SetHighWatermark(const TopicPartition& tp,
                                            int64_t offset) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  return partition->SetHighWatermark(offset);
}

// ---- Log dirs
// ----------------------------------------------------------------

std::vector<placement::LogDirInfo> MemoryEngine::LogDirs() {
  placement::LogDirInfo dir;
  dir.name = std::string(placement::kDefaultLogDirName);
  dir.path = std::string(kMemoryLogDirPath);
  return {dir};
}

std::vector<LogDirUsage> MemoryEngine::LogDirUsages() {
  return {LogDirUsage{std::string(placement::kDefaultLogDirName),
                      std::string(kMemoryLogDirPath), -1, -1}};
}

absl::StatusOr<std::string> MemoryEngine::PartitionLogDir(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  return std::string(placement::kDefaultLogDirName);
}

absl::StatusOr<std::string> MemoryEngine::MovePartitionToLogDir(
    const TopicPartition& tp, absl::string_view log_dir) {
  // The target first, as the disk engine resolves it.
  if (log_dir != placement::kDefaultLogDirName) {
    return StorageError(
        StorageErrorCode::kLogDirNotFound,
        absl::StrCat("unknown log dir \"", absl::CEscape(log_dir),
                     "\" (this broker has: ", placement::kDefaultLogDirName,
                     ")"));
  }
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  return std::string(placement::kDefaultLogDirName);
}

// ---- Topics and producers
// ----------------------------------------------------

absl::StatusOr<std::optional<TopicConfigOverrides>>
MemoryEngine::GetTopicConfig(absl::string_view topic) {
  KAAS_RETURN_IF_ERROR(ValidateTopicName(topic));
  absl::MutexLock lock(&topic_configs_mu_);
  auto it = topic_configs_.find(topic);
  if (it == topic_configs_.end()) return std::nullopt;
  return it->second;
}

absl::Status MemoryEngine::SetTopicConfig(
    absl::string_view topic, const TopicConfigOverrides& overrides) {
  KAAS_RETURN_IF_ERROR(ValidateTopicName(topic));
  // The disk engine's validation, so both engines refuse the same configs.
  KAAS_RETURN_IF_ERROR(ValidateTopicConfig(topic, overrides));
  absl::MutexLock lock(&topic_configs_mu_);
  topic_configs_[topic] = overrides;
  return absl::OkStatus();
}

absl::Status MemoryEngine::ReloadTopicConfig(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(PartitionPtr partition, Find(tp));
  if (!partition->IsLeading()) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(tp.ToString(), " is not led here"));
  }
  return absl::OkStatus();
}

absl::Status MemoryEngine::FenceProducerEpoch(int64_t producer_id,
                                              int16_t producer_epoch) {
  KAAS_RETURN_IF_ERROR(ValidateProducerFence(producer_id, producer_epoch));
  absl::MutexLock fences_lock(&fences_mu_);
  int16_t& fenced = fences_[producer_id];
  fenced = std::max(fenced, producer_epoch);
  const int64_t now_ms = clock_->NowMillis();
  // Every partition, led or not: one not led now applies it when it is
  // taken over again, as the disk engine's durable fences do.
  for (const auto& [tp, partition] : Snapshot()) {
    partition->Fence(producer_id, producer_epoch, now_ms);
  }
  return absl::OkStatus();
}

}  // namespace kaas
