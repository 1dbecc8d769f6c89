// The append path and segment rolls.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/stopwatch.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/batch_state.h"
#include "storage/partition/partition.h"

namespace kaas::partition {

absl::Status Partition::CheckWritableLocked(int64_t leader_epoch,
                                            Role role) const {
  if (state_ == State::kClosed) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, ": leadership was given up"));
  }
  if (access_ == PartitionAccess::kReadOnly) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, " is opened read-only"));
  }
  if (take_over_epoch_.has_value()) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: take-over to leader epoch %d in progress", dir_,
                        *take_over_epoch_));
  }
  if (state_ != State::kLeading) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrCat(dir_, ": not led here yet (take it over first)"));
  }
  KAAS_RETURN_IF_ERROR(CheckRole(dir_, role_, role));
  if (stalled_.load(std::memory_order_relaxed)) return stall_status_;
  if (leader_epoch < leader_epoch_) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: leader epoch %d is older than the partition's %d",
                        dir_, leader_epoch, leader_epoch_));
  }
  return absl::OkStatus();
}

absl::StatusOr<AppendResult> Partition::Append(absl::string_view bytes,
                                               int64_t leader_epoch,
                                               Acks acks) {
  return AppendImpl(bytes, leader_epoch, acks, /*lead_cycle=*/nullptr);
}

absl::StatusOr<AppendResult> Partition::AppendAndWait(absl::string_view bytes,
                                                      int64_t leader_epoch,
                                                      Acks acks) {
  std::optional<uint64_t> cycle;
  absl::StatusOr<AppendResult> result = AppendImpl(
      bytes, leader_epoch, acks, acks == Acks::kAll ? &cycle : nullptr);
  // A claimed cycle is run whatever happened: it is in flight and nobody
  // else will run it.
  if (cycle.has_value()) RunSync(*cycle, CycleThread::kCaller);
  if (!result.ok() || acks != Acks::kAll) return result;
  if (absl::Status durable = result->durable.Wait(); !durable.ok()) {
    return durable;
  }
  return result;
}

absl::StatusOr<AppendResult> Partition::AppendImpl(
    absl::string_view bytes, int64_t leader_epoch, Acks acks,
    std::optional<uint64_t>* lead_cycle) {
  // Timing every append would cost two clock reads (a fifth of its CPU);
  // the latency histogram samples one append in 16 per thread.
  thread_local uint32_t appends_on_this_thread = 0;
  const bool timed = (appends_on_this_thread++ % kAppendLatencySampling) == 0;
  std::optional<Stopwatch> stopwatch;
  if (timed) stopwatch.emplace();
  auto reject = [&](absl::Status status) {
    for (StorageStats* stats : StatsSinks()) {
      stats->rejected_batches.fetch_add(1, std::memory_order_relaxed);
    }
    return status;
  };
  // Outside the lock: framing, CRC and (if configured) the records.
  absl::StatusOr<RecordBatchView> parsed =
      ParseForAppend(bytes, validate_records_.load(std::memory_order_relaxed),
                     require_keys_.load(std::memory_order_relaxed));
  if (!parsed.ok()) return reject(parsed.status());
  const RecordBatchView& batch = *parsed;
  const int32_t delta = batch.last_offset_delta();

  AppendResult result;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Admission> admission = AdmitBatch(
        batch, config_, producers_,
        CheckWritableLocked(leader_epoch, Role::kLeader), log_start_offset_);
    if (!admission.ok()) return reject(admission.status());
    if (admission->duplicate.has_value()) {
      result = *std::move(admission->duplicate);
      // An acks=all retry is acknowledged when the original is durable.
      if (acks == Acks::kAll) {
        result.durable =
            DurableFutureLocked(result.last_offset + 1, lead_cycle);
      }
      for (StorageStats* stats : StatsSinks()) {
        stats->duplicate_batches.fetch_add(1, std::memory_order_relaxed);
      }
      return result;
    }
    if (ShouldRollLocked(bytes.size(), delta)) {
      if (absl::Status status =
              RollLocked(static_cast<uint32_t>(leader_epoch_));
          !status.ok()) {
        return reject(status);
      }
    }

    const int64_t base_offset = next_offset_;
    // The producer's bytes, but for the two fields the leader assigns (both
    // outside the CRC): the base offset and the leader epoch (KIP-101).
    char base_bytes[8];
    WriteBigEndian64(base_bytes, base_offset);
    char epoch_bytes[4];
    WriteBigEndian32(epoch_bytes, static_cast<int32_t>(leader_epoch_));
    const absl::string_view parts[4] = {
        absl::string_view(base_bytes, sizeof(base_bytes)),
        bytes.substr(batch_layout::kBatchLength, 4),
        absl::string_view(epoch_bytes, sizeof(epoch_bytes)),
        bytes.substr(batch_layout::kPartitionLeaderEpoch + 4)};
    if (absl::Status status = active_->Append(
            parts, bytes.size(),
            {base_offset, base_offset + delta, batch.max_timestamp()});
        !status.ok()) {
      return reject(StorageError(
          StorageErrorCode::kStorageError,
          absl::StrCat("append to ", dir_, ": ", status.message())));
    }
    if (active_birth_ms_ < 0) active_birth_ms_ = runtime_.clock->NowMillis();
    next_offset_ = base_offset + delta + 1;
    {
      absl::MutexLock txn_lock(&txn_mu_);
      absl::Status status =
          RecordBatchState(batch, base_offset, &producers_, &txns_);
      LOG_IF(ERROR, !status.ok())
          << dir_ << ": producer state refused an accepted batch at offset "
          << base_offset << ": " << status;
    }

    records_since_flush_ += delta + 1;
    bool flush_due = config_.flush_interval_messages > 0 &&
                     records_since_flush_ >= config_.flush_interval_messages;
    if (acks == Acks::kAll) {
      result.durable = DurableFutureLocked(next_offset_, lead_cycle);
    } else if (flush_due) {
      RequestSyncLocked();
    }
    if (flush_due || acks == Acks::kAll) records_since_flush_ = 0;
    PublishOffsetsLocked();
    result.base_offset = base_offset;
    result.last_offset = base_offset + delta;
    result.log_start_offset = log_start_offset_;
  }
  const std::optional<absl::Duration> latency =
      stopwatch ? std::optional<absl::Duration>(stopwatch->Elapsed())
                : std::nullopt;
  for (StorageStats* stats : StatsSinks()) {
    stats->appended_batches.fetch_add(1, std::memory_order_relaxed);
    stats->appended_records.fetch_add(batch.record_count(),
                                      std::memory_order_relaxed);
    stats->appended_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
    if (latency) stats->append_latency.Record(*latency);
  }
  return result;
}

absl::StatusOr<AppendResult> Partition::AppendAsFollower(
    absl::string_view bytes, int64_t leader_epoch, Acks acks) {
  auto reject = [&](absl::Status status) {
    for (StorageStats* stats : StatsSinks()) {
      stats->rejected_batches.fetch_add(1, std::memory_order_relaxed);
    }
    return status;
  };
  // Outside the lock: framing and CRC of every batch.
  absl::StatusOr<std::vector<RecordBatchView>> parsed =
      ParseForFollowerAppend(bytes);
  if (!parsed.ok()) return reject(parsed.status());
  const std::vector<RecordBatchView>& batches = *parsed;

  AppendResult result;
  int64_t records = 0;
  {
    absl::MutexLock lock(&mu_);
    const int64_t latest_epoch =
        epochs_.empty() ? -1 : epochs_.entries().back().epoch;
    if (absl::Status admitted = AdmitFollowerBatches(
            batches, next_offset_, latest_epoch, leader_epoch_,
            CheckWritableLocked(leader_epoch, Role::kFollower));
        !admitted.ok()) {
      return reject(admitted);
    }
    result.base_offset = batches.front().base_offset();
    for (const RecordBatchView& batch : batches) {
      if (ShouldRollLocked(batch.size(), batch.last_offset_delta())) {
        if (absl::Status status =
                RollLocked(static_cast<uint32_t>(leader_epoch_));
            !status.ok()) {
          // The batches before this one are stored (the log end says how
          // far); the fetcher continues from there.
          PublishOffsetsLocked();
          return reject(status);
        }
      }
      // Verbatim: the leader assigned the base offset and stamped its epoch.
      const absl::string_view parts[1] = {batch.bytes()};
      if (absl::Status status =
              active_->Append(parts, batch.size(),
                              {batch.base_offset(), batch.last_offset(),
                               batch.max_timestamp()});
          !status.ok()) {
        PublishOffsetsLocked();
        return reject(StorageError(
            StorageErrorCode::kStorageError,
            absl::StrCat("append to ", dir_, ": ", status.message())));
      }
      if (active_birth_ms_ < 0) active_birth_ms_ = runtime_.clock->NowMillis();
      next_offset_ = batch.last_offset() + 1;
      {
        // As the leader applied it: the leader already decided about
        // duplicates and sequences.
        absl::MutexLock txn_lock(&txn_mu_);
        absl::Status status =
            RecordBatchState(batch, batch.base_offset(), &producers_, &txns_);
        LOG_IF(WARNING, !status.ok())
            << dir_ << ": producer state of a replicated batch at offset "
            << batch.base_offset() << ": " << status;
      }
      if (batch.partition_leader_epoch() >= 0) {
        epochs_.Begin(batch.partition_leader_epoch(), batch.base_offset());
      }
      records_since_flush_ += batch.last_offset_delta() + 1;
      records += batch.record_count();
    }
    const bool flush_due =
        config_.flush_interval_messages > 0 &&
        records_since_flush_ >= config_.flush_interval_messages;
    if (acks == Acks::kAll) {
      result.durable = DurableFutureLocked(next_offset_);
    } else if (flush_due) {
      RequestSyncLocked();
    }
    if (flush_due || acks == Acks::kAll) records_since_flush_ = 0;
    PublishOffsetsLocked();
    result.last_offset = next_offset_ - 1;
    result.log_start_offset = log_start_offset_;
  }
  for (StorageStats* stats : StatsSinks()) {
    stats->appended_batches.fetch_add(batches.size(),
                                      std::memory_order_relaxed);
    stats->appended_records.fetch_add(records, std::memory_order_relaxed);
    stats->appended_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
  }
  return result;
}

bool Partition::ShouldRollLocked(size_t batch_bytes,
                                 int32_t last_offset_delta) {
  // An empty segment is never rolled: a batch always fits one.
  if (active_->size() == 0) return false;
  if (active_->size() + batch_bytes > config_.segment_bytes) return true;
  // Index entries hold offsets relative to the segment base in 32 bits.
  if (next_offset_ + last_offset_delta - active_->base_offset() >
      std::numeric_limits<int32_t>::max()) {
    return true;
  }
  if (config_.segment_ms.has_value() && active_birth_ms_ >= 0) {
    int64_t age_ms = runtime_.clock->NowMillis() - active_birth_ms_;
    if (age_ms >= absl::ToInt64Milliseconds(*config_.segment_ms)) return true;
  }
  return false;
}

absl::Status Partition::RollLocked(uint32_t epoch) {
  epoch = std::max(epoch, active_->epoch());
  // The only fallible step comes first: a failure leaves the partition
  // exactly as it was.
  KAAS_ASSIGN_OR_RETURN(
      std::shared_ptr<segment::Segment> next,
      segment::Segment::Create(segment_options_, dir_,
                               segment::SegmentId{next_offset_, epoch}));
  std::shared_ptr<segment::Segment> old = active_;
  if (old->size() == 0) {
    // A take-over over an empty segment: the new epoch's segment replaces
    // it (same base offset).
    segments_.pop_back();
    absl::Status status = old->DeleteFiles();
    LOG_IF(WARNING, !status.ok())
        << dir_ << ": could not delete the superseded empty segment: " << status
        << " (the listing prefers the higher epoch)";
  } else {
    old->Seal();
    auto base_snapshot =
        std::make_shared<const metadata::PartitionStateSnapshot>(
            StateSnapshotLocked());
    // Everything before the new base already durable (acks=all traffic):
    // the snapshot there is due at once, so a DeleteRecords right after the
    // roll deletes the sealed segment without waiting for a cycle.
    const bool sealed_durable = active_durable_offset_ == next_offset_;
    if (sealed_durable) due_base_snapshots_.push_back(base_snapshot);
    pending_seals_.push_back(
        PendingSeal{old, active_durable_position_, active_durable_offset_,
                    sealed_durable ? nullptr : std::move(base_snapshot)});
    for (StorageStats* stats : StatsSinks()) {
      stats->segments_rolled.fetch_add(1, std::memory_order_relaxed);
    }
  }
  segments_.push_back(next);
  active_ = std::move(next);
  active_durable_position_ = 0;
  active_durable_offset_ = next_offset_;
  last_checkpoint_position_ = 0;
  active_birth_ms_ = -1;
  dir_sync_needed_ = true;
  checkpoint_after_roll_ = true;
  PublishSegmentsLocked();
  // The sealed segment (and the new file's directory entry) become durable
  // in the background; with flush.messages <= 0 this is its only sync.
  RequestSyncLocked();
  return absl::OkStatus();
}

absl::StatusOr<bool> Partition::MaybeRoll() {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading || take_over_epoch_.has_value() ||
      stalled_.load() || active_->size() == 0 ||
      !config_.segment_ms.has_value() || active_birth_ms_ < 0) {
    return false;
  }
  int64_t age_ms = runtime_.clock->NowMillis() - active_birth_ms_;
  if (age_ms < absl::ToInt64Milliseconds(*config_.segment_ms)) return false;
  KAAS_RETURN_IF_ERROR(RollLocked(static_cast<uint32_t>(leader_epoch_)));
  return true;
}

}  // namespace kaas::partition
