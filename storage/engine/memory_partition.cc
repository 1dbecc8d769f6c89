#include "storage/engine/memory_partition.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "base/stopwatch.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/batch_state.h"

namespace kaas::memory_internal {

using ::kaas::partition::Admission;
using ::kaas::partition::AdmitBatch;
using ::kaas::partition::AdmitFollowerBatches;
using ::kaas::partition::AnswerSpecialTimestamp;
using ::kaas::partition::FetchBound;
using ::kaas::partition::kListOffsetsMaxTimestamp;
using ::kaas::partition::ParseForAppend;
using ::kaas::partition::ParseForFollowerAppend;
using ::kaas::partition::RecordBatchState;
using ::kaas::partition::SearchBatchByTimestamp;

// ---- Leadership -------------------------------------------------------------

absl::StatusOr<int64_t> MemoryPartition::TakeOver(int64_t leader_epoch,
                                                  Role role, bool* dropped) {
  absl::MutexLock lock(&mu_);
  *dropped = state_ == State::kDropped;
  if (*dropped) return NotLedLocked();
  const bool leading = state_ == State::kLeading;
  if (leader_epoch < leader_epoch_ ||
      (leader_epoch == leader_epoch_ && leading && role_ == role)) {
    if (leading) return next_offset_;  // idempotent
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: leader epoch %d is older than the durable "
                        "epoch %d",
                        name_, leader_epoch, leader_epoch_));
  }
  // A follower's epochs are its leader's, and come with the batches.
  if (role == Role::kLeader) epochs_.Begin(leader_epoch, next_offset_);
  leader_epoch_ = leader_epoch;
  role_ = role;
  if (state_ != State::kLeading) broker_high_watermark_ = log_start_;
  state_ = State::kLeading;
  return next_offset_;
}

std::optional<Role> MemoryPartition::LedRole() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return std::nullopt;
  return role_;
}

bool MemoryPartition::Relinquish() {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading) return false;
  state_ = State::kRelinquished;
  return true;
}

bool MemoryPartition::Drop() {
  absl::MutexLock lock(&mu_);
  bool was_leading = state_ == State::kLeading;
  state_ = State::kDropped;
  return was_leading;
}

std::optional<int64_t> MemoryPartition::LedEpoch() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return std::nullopt;
  return leader_epoch_;
}

bool MemoryPartition::IsLeading() const {
  absl::ReaderMutexLock lock(&mu_);
  return state_ == State::kLeading;
}

void MemoryPartition::Fence(int64_t producer_id, int16_t epoch,
                            int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  absl::Status status = producers_.Fence(producer_id, epoch, now_ms);
  LOG_IF(ERROR, !status.ok()) << name_ << ": fence refused: " << status;
}

// ---- Writes
// ------------------------------------------------------------------

absl::StatusOr<AppendResult> MemoryPartition::Append(absl::string_view bytes,
                                                     int64_t leader_epoch) {
  {
    // Like the disk engine, an append to a partition not led is refused
    // before the batch is looked at (and is not a rejected batch).
    absl::ReaderMutexLock lock(&mu_);
    if (state_ != State::kLeading) return NotLedLocked();
  }
  const Stopwatch stopwatch;
  auto reject = [&](absl::Status status) {
    for (StorageStats* sink : {stats_, &own_stats_}) {
      sink->rejected_batches.fetch_add(1, std::memory_order_relaxed);
    }
    return status;
  };
  bool validate_records;
  bool require_keys;
  {
    absl::ReaderMutexLock lock(&mu_);
    validate_records = config_.validate_records;
    require_keys = config_.cleanup_compact;
  }
  absl::StatusOr<RecordBatchView> parsed =
      ParseForAppend(bytes, validate_records, require_keys);
  if (!parsed.ok()) return reject(parsed.status());
  const RecordBatchView& batch = *parsed;
  const int32_t delta = batch.last_offset_delta();
  // Copied before locking; only the base offset is written under the lock.
  auto stored = std::make_shared<std::string>(bytes);

  AppendResult result;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<Admission> admission = AdmitBatch(
        batch, config_, producers_,
        CheckWritableLocked(leader_epoch, Role::kLeader), log_start_);
    if (!admission.ok()) return reject(admission.status());
    if (admission->duplicate.has_value()) {
      for (StorageStats* sink : {stats_, &own_stats_}) {
        sink->duplicate_batches.fetch_add(1, std::memory_order_relaxed);
      }
      return *std::move(admission->duplicate);
    }
    const int64_t base_offset = next_offset_;
    SetBaseOffset(stored->data(), base_offset);
    SetPartitionLeaderEpoch(stored->data(),
                            static_cast<int32_t>(leader_epoch_));
    batches_.push_back(StoredBatch{base_offset, base_offset + delta,
                                   batch.max_timestamp(), batch.record_count(),
                                   std::move(stored)});
    size_bytes_ += bytes.size();
    next_offset_ = base_offset + delta + 1;
    absl::Status status =
        RecordBatchState(batch, base_offset, &producers_, &txns_);
    LOG_IF(ERROR, !status.ok())
        << name_ << ": producer state refused an accepted batch at offset "
        << base_offset << ": " << status;
    result.base_offset = base_offset;
    result.last_offset = base_offset + delta;
    result.log_start_offset = log_start_;
  }
  for (StorageStats* sink : {stats_, &own_stats_}) {
    sink->appended_batches.fetch_add(1, std::memory_order_relaxed);
    sink->appended_records.fetch_add(batch.record_count(),
                                     std::memory_order_relaxed);
    sink->appended_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
    sink->append_latency.Record(stopwatch.Elapsed());
  }
  // Durable (as far as this engine goes) on return.
  ack_latency_.Record(absl::ZeroDuration());
  return result;
}

absl::StatusOr<int64_t> MemoryPartition::DeleteRecords(int64_t target) {
  uint64_t freed = 0;
  int64_t log_start;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != State::kLeading) return NotLedLocked();
    const int64_t high_watermark = HighWatermarkLocked();
    if (target < 0) target = high_watermark;
    if (target > high_watermark) {
      return StorageError(
          StorageErrorCode::kOffsetOutOfRange,
          absl::StrFormat("%s: cannot delete records up to %d, the high "
                          "watermark is %d",
                          name_, target, high_watermark));
    }
    if (target <= log_start_) return log_start_;
    epochs_.TrimBelow(target);
    log_start_ = target;
    txns_.EvictBelow(log_start_);
    while (!batches_.empty() && batches_.front().last_offset < log_start_) {
      const StoredBatch& front = batches_.front();
      if (absl::StatusOr<RecordBatchView> batch =
              RecordBatchView::ParseHeader(*front.bytes);
          batch.ok()) {
        (void)RecordBatchState(*batch, front.base_offset, &freed_producers_,
                               &freed_txns_);
      }
      freed += front.bytes->size();
      batches_.pop_front();
    }
    freed_txns_.EvictBelow(log_start_);
    size_bytes_ -= freed;
    log_start = log_start_;
  }
  for (StorageStats* sink : {stats_, &own_stats_}) {
    sink->bytes_deleted.fetch_add(freed, std::memory_order_relaxed);
  }
  return log_start;
}

absl::StatusOr<AppendResult> MemoryPartition::AppendAsFollower(
    absl::string_view bytes, int64_t leader_epoch) {
  {
    absl::ReaderMutexLock lock(&mu_);
    if (state_ != State::kLeading) return NotLedLocked();
  }
  auto reject = [&](absl::Status status) {
    for (StorageStats* sink : {stats_, &own_stats_}) {
      sink->rejected_batches.fetch_add(1, std::memory_order_relaxed);
    }
    return status;
  };
  absl::StatusOr<std::vector<RecordBatchView>> parsed =
      ParseForFollowerAppend(bytes);
  if (!parsed.ok()) return reject(parsed.status());
  AppendResult result;
  int64_t records = 0;
  {
    absl::MutexLock lock(&mu_);
    const int64_t latest_epoch =
        epochs_.empty() ? -1 : epochs_.entries().back().epoch;
    if (absl::Status admitted = AdmitFollowerBatches(
            *parsed, next_offset_, latest_epoch, leader_epoch_,
            CheckWritableLocked(leader_epoch, Role::kFollower));
        !admitted.ok()) {
      return reject(admitted);
    }
    result.base_offset = parsed->front().base_offset();
    for (const RecordBatchView& batch : *parsed) {
      batches_.push_back(StoredBatch{
          batch.base_offset(), batch.last_offset(), batch.max_timestamp(),
          batch.record_count(), std::make_shared<std::string>(batch.bytes())});
      size_bytes_ += batch.size();
      next_offset_ = batch.last_offset() + 1;
      absl::Status status =
          RecordBatchState(batch, batch.base_offset(), &producers_, &txns_);
      LOG_IF(WARNING, !status.ok())
          << name_ << ": producer state of a replicated batch at offset "
          << batch.base_offset() << ": " << status;
      if (batch.partition_leader_epoch() >= 0) {
        epochs_.Begin(batch.partition_leader_epoch(), batch.base_offset());
      }
      records += batch.record_count();
    }
    result.last_offset = next_offset_ - 1;
    result.log_start_offset = log_start_;
  }
  for (StorageStats* sink : {stats_, &own_stats_}) {
    sink->appended_batches.fetch_add(parsed->size(), std::memory_order_relaxed);
    sink->appended_records.fetch_add(records, std::memory_order_relaxed);
    sink->appended_bytes.fetch_add(bytes.size(), std::memory_order_relaxed);
  }
  return result;
}

absl::StatusOr<int64_t> MemoryPartition::Truncate(
    int64_t offset, bool full,
    const std::vector<std::pair<int64_t, int16_t>>& fences, int64_t now_ms) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckWritableLocked(leader_epoch_, Role::kFollower));
  if (full && offset < 0) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrFormat("%s: cannot restart the log at %d", name_, offset));
  }
  if (!full && offset < log_start_) {
    return StorageError(
        StorageErrorCode::kOffsetOutOfRange,
        absl::StrFormat("%s: cannot truncate to %d, below the log start %d",
                        name_, offset, log_start_));
  }
  if (!full && offset >= next_offset_) return next_offset_;
  int64_t new_end = offset;
  if (!full) {
    // The whole batch holding `offset` goes.
    auto holder = FirstBatchEndingAtOrAfter(offset);
    if (holder != batches_.end()) new_end = holder->base_offset;
    if (new_end < log_start_) full = true, new_end = offset;
  }
  if (full) {
    batches_.clear();
    size_bytes_ = 0;
    log_start_ = new_end;
    epochs_ = partition::EpochHistory();
  } else {
    while (!batches_.empty() && batches_.back().base_offset >= new_end) {
      size_bytes_ -= batches_.back().bytes->size();
      batches_.pop_back();
    }
    epochs_.TruncateFromEnd(new_end);
  }
  next_offset_ = new_end;
  broker_high_watermark_ = std::min(broker_high_watermark_, new_end);
  // The state of what is left: replayed as recovery replays a log, from
  // the state of the batches DeleteRecords freed (a full truncation keeps
  // none).
  if (full) {
    freed_producers_ = idempotence::ProducerStateMap();
    freed_txns_ = txn::TxnIndex();
  }
  producers_ = freed_producers_;
  txns_ = freed_txns_;
  for (const StoredBatch& stored : batches_) {
    absl::StatusOr<RecordBatchView> batch =
        RecordBatchView::ParseHeader(*stored.bytes);
    if (!batch.ok()) continue;
    (void)RecordBatchState(*batch, stored.base_offset, &producers_, &txns_);
  }
  txns_.EvictBelow(log_start_);
  for (const auto& [producer_id, epoch] : fences) {
    (void)producers_.Fence(producer_id, epoch, now_ms);
  }
  return new_end;
}

absl::Status MemoryPartition::SetHighWatermark(int64_t offset) {
  absl::MutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  KAAS_ASSIGN_OR_RETURN(broker_high_watermark_,
                        partition::AdvanceBrokerHighWatermark(
                            name_, config_.broker_managed_high_watermark,
                            broker_high_watermark_, offset, next_offset_));
  return absl::OkStatus();
}

// ---- Reads
// -------------------------------------------------------------------

absl::StatusOr<ReadResult> MemoryPartition::Read(int64_t offset,
                                                 size_t max_bytes,
                                                 Isolation isolation) {
  const Stopwatch stopwatch;
  ReadResult result;
  int64_t records = 0;
  {
    absl::ReaderMutexLock lock(&mu_);
    if (state_ != State::kLeading) return NotLedLocked();
    result.log_start_offset = log_start_;
    result.high_watermark = HighWatermarkLocked();
    result.last_stable_offset = LastStableLocked();
    result.log_end_offset = next_offset_;
    result.next_offset = offset;
    KAAS_ASSIGN_OR_RETURN(const int64_t bound,
                          FetchBound(name_, offset, result, isolation));
    size_t total = 0;
    // Nothing at or past the bound, not even a batch that straddles it (the
    // log start moved inside an open transaction's batch is such a bound).
    for (auto it = FirstBatchEndingAtOrAfter(offset);
         it != batches_.end() && result.next_offset < bound &&
         it->base_offset < bound;
         ++it) {
      const std::shared_ptr<const std::string>& bytes = it->bytes;
      // The first batch always whole (KIP-74); later ones only if they fit.
      if (result.batches > 0 && total + bytes->size() > max_bytes) break;
      result.records.Append(absl::MakeCordFromExternal(
          *bytes, [holder = bytes](absl::string_view) {}));
      total += bytes->size();
      ++result.batches;
      records += it->record_count;
      result.next_offset = it->last_offset + 1;
    }
    if (isolation == Isolation::kReadCommitted) {
      result.aborted_transactions =
          AbortedLocked(offset, std::max(offset + 1, result.next_offset));
    }
  }
  for (StorageStats* sink : {stats_, &own_stats_}) {
    sink->read_calls.fetch_add(1, std::memory_order_relaxed);
    sink->read_batches.fetch_add(result.batches, std::memory_order_relaxed);
    sink->read_records.fetch_add(records, std::memory_order_relaxed);
    sink->read_bytes.fetch_add(result.records.size(),
                               std::memory_order_relaxed);
    sink->read_latency.Record(stopwatch.Elapsed());
  }
  return result;
}

absl::StatusOr<int64_t> MemoryPartition::HighWatermark() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return HighWatermarkLocked();
}

absl::StatusOr<int64_t> MemoryPartition::LogStartOffset() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return log_start_;
}

absl::StatusOr<int64_t> MemoryPartition::LastStableOffset() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return LastStableLocked();
}

absl::StatusOr<uint64_t> MemoryPartition::SizeBytes() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return size_bytes_;
}

absl::StatusOr<std::vector<AbortedTransaction>>
MemoryPartition::AbortedTransactions(int64_t start, int64_t end) const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return AbortedLocked(start, end);
}

absl::StatusOr<OffsetAndTimestamp> MemoryPartition::OffsetForTimestamp(
    int64_t timestamp, Isolation isolation) const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  const int64_t bound =
      isolation == Isolation::kReadCommitted ? LastStableLocked()
      : isolation == Isolation::kReplica     ? next_offset_
                                             : HighWatermarkLocked();
  KAAS_ASSIGN_OR_RETURN(std::optional<OffsetAndTimestamp> special,
                        AnswerSpecialTimestamp(timestamp, log_start_, bound));
  if (special.has_value()) return *special;
  if (timestamp == kListOffsetsMaxTimestamp) {
    int64_t best = -1;
    for (const StoredBatch& batch : batches_) {
      best = std::max(best, batch.max_timestamp);
    }
    if (best < 0) return OffsetAndTimestamp{};
    timestamp = best;
  }
  // Kafka's rule, as Partition::OffsetForTimestamp: the first record at or
  // above the log start whose timestamp is >= the target.
  for (const StoredBatch& stored : batches_) {
    if (stored.base_offset >= bound) break;
    if (stored.max_timestamp < timestamp) continue;
    KAAS_ASSIGN_OR_RETURN(RecordBatchView batch,
                          RecordBatchView::ParseHeader(*stored.bytes));
    KAAS_ASSIGN_OR_RETURN(
        std::optional<OffsetAndTimestamp> found,
        SearchBatchByTimestamp(name_, batch, timestamp, log_start_));
    // A batch that straddles the bound may answer past it: no answer then
    // (later records lie further past it).
    if (found.has_value()) {
      return found->offset < bound ? *found : OffsetAndTimestamp{};
    }
  }
  return OffsetAndTimestamp{};
}

ReplicaDescription MemoryPartition::Describe() const {
  absl::ReaderMutexLock lock(&mu_);
  ReplicaDescription out;
  out.size_bytes = size_bytes_;
  out.log_start_offset = log_start_;
  out.log_end_offset = next_offset_;
  out.taken_over = state_ == State::kLeading;
  return out;
}

PartitionStats MemoryPartition::Stats() const {
  return PartitionStatsOf(own_stats_, ack_latency_, false);
}

absl::StatusOr<std::vector<ProducerDescription>>
MemoryPartition::DescribeProducers() const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return partition::DescribeProducerState(producers_, txns_);
}

absl::StatusOr<EpochEndOffset> MemoryPartition::OffsetForLeaderEpoch(
    int64_t leader_epoch) const {
  absl::ReaderMutexLock lock(&mu_);
  if (state_ != State::kLeading) return NotLedLocked();
  return epochs_.EndOffsetFor(leader_epoch, next_offset_);
}

// ---- Private
// -----------------------------------------------------------------

absl::Status MemoryPartition::NotLedLocked() const {
  switch (state_) {
    case State::kRelinquished:
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(name_, ": leadership was given up"));
    case State::kDropped:
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(name_, ": the partition was deleted"));
    default:
      return StorageError(
          StorageErrorCode::kNotLeader,
          absl::StrCat(name_, ": not led here yet (take it over first)"));
  }
}

absl::Status MemoryPartition::CheckWritableLocked(int64_t leader_epoch,
                                                  Role role) const {
  if (state_ != State::kLeading) return NotLedLocked();
  KAAS_RETURN_IF_ERROR(partition::CheckRole(name_, role_, role));
  if (leader_epoch < leader_epoch_) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: leader epoch %d is older than the partition's %d",
                        name_, leader_epoch, leader_epoch_));
  }
  return absl::OkStatus();
}

int64_t MemoryPartition::HighWatermarkLocked() const {
  if (!config_.broker_managed_high_watermark) return next_offset_;
  return std::max(log_start_, std::min(broker_high_watermark_, next_offset_));
}

int64_t MemoryPartition::LastStableLocked() const {
  int64_t stable = HighWatermarkLocked();
  if (absl::optional<int64_t> first = txns_.FirstUnstableOffset()) {
    stable = std::min(stable, *first);
  }
  return std::max(stable, log_start_);
}

std::vector<AbortedTransaction> MemoryPartition::AbortedLocked(
    int64_t start, int64_t end) const {
  std::vector<AbortedTransaction> out;
  for (const txn::AbortedTxn& txn : txns_.AbortedInRange(start, end)) {
    out.push_back({txn.producer_id, txn.first_offset, txn.last_offset});
  }
  return out;
}

std::deque<MemoryPartition::StoredBatch>::const_iterator
MemoryPartition::FirstBatchEndingAtOrAfter(int64_t offset) const {
  return std::partition_point(batches_.begin(), batches_.end(),
                              [offset](const StoredBatch& batch) {
                                return batch.last_offset < offset;
                              });
}

}  // namespace kaas::memory_internal
