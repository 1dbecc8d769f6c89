#include "storage/partition/batch_state.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "storage/batch/records.h"

namespace kaas::partition {

idempotence::BatchInfo BatchInfoOf(const RecordBatchView& batch) {
  idempotence::BatchInfo info;
  info.producer_id = batch.producer_id();
  info.producer_epoch = batch.producer_epoch();
  info.base_sequence = batch.base_sequence();
  info.last_offset_delta = batch.last_offset_delta();
  info.is_transactional = batch.is_transactional();
  info.is_control = batch.is_control();
  info.max_timestamp = batch.max_timestamp();
  return info;
}

absl::Status RecordBatchState(const RecordBatchView& batch, int64_t base_offset,
                              idempotence::ProducerStateMap* producers,
                              txn::TxnIndex* txns) {
  if (!batch.has_producer_id()) return absl::OkStatus();
  KAAS_RETURN_IF_ERROR(producers->Record(BatchInfoOf(batch), base_offset));
  if (!batch.is_transactional()) return absl::OkStatus();
  if (!batch.is_control()) {
    return txns->OnTransactionalData(batch.producer_id(), base_offset);
  }
  KAAS_ASSIGN_OR_RETURN(ControlType type, batch.control_type());
  return txns->OnMarker(batch.producer_id(),
                        type == ControlType::kAbort ? txn::ControlKind::kAbort
                                                    : txn::ControlKind::kCommit,
                        base_offset);
}

absl::Status CheckAppendable(const RecordBatchView& batch,
                             const PartitionConfig& config) {
  if (batch.is_control()) {
    if (absl::StatusOr<ControlType> type = batch.control_type(); !type.ok()) {
      return StorageError(
          StorageErrorCode::kInvalidRecord,
          absl::StrCat("control batch: ", type.status().message()));
    }
  }
  if (batch.size() > config.segment_bytes) {
    return StorageError(
        StorageErrorCode::kRecordListTooLarge,
        absl::StrFormat("batch of %d bytes is larger than segment.bytes %d",
                        batch.size(), config.segment_bytes));
  }
  if (config.max_message_bytes > 0 && batch.size() > config.max_message_bytes) {
    return StorageError(
        StorageErrorCode::kMessageTooLarge,
        absl::StrFormat("batch of %d bytes is larger than max.message.bytes %d",
                        batch.size(), config.max_message_bytes));
  }
  return absl::OkStatus();
}

absl::Status VerdictToStatus(const idempotence::Verdict& verdict) {
  switch (verdict.kind) {
    case idempotence::VerdictKind::kOutOfOrderSequence:
      return StorageError(StorageErrorCode::kOutOfOrderSequence,
                          verdict.reason);
    case idempotence::VerdictKind::kInvalidProducerEpoch:
      return StorageError(StorageErrorCode::kInvalidProducerEpoch,
                          verdict.reason);
    case idempotence::VerdictKind::kInvalidRecord:
      return StorageError(StorageErrorCode::kInvalidRecord, verdict.reason);
    case idempotence::VerdictKind::kNotIdempotent:
    case idempotence::VerdictKind::kAccept:
    case idempotence::VerdictKind::kDuplicate:
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status CheckRole(absl::string_view partition, Role actual, Role wanted) {
  if (actual == wanted) return absl::OkStatus();
  return StorageError(
      StorageErrorCode::kNotLeader,
      actual == Role::kFollower
          ? absl::StrCat(partition,
                         ": a follower here (its appends come from the "
                         "leader: AppendAsFollower)")
          : absl::StrCat(partition,
                         ": led here as leader (a follower's append is "
                         "refused)"));
}

absl::StatusOr<int64_t> AdvanceBrokerHighWatermark(absl::string_view partition,
                                                   bool broker_managed,
                                                   int64_t current,
                                                   int64_t offset,
                                                   int64_t log_end) {
  if (!broker_managed) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat(partition,
                     ": its high watermark is the engine's (the engine "
                     "config's broker_managed_high_watermark is off)"));
  }
  if (offset < 0) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat(partition, ": high watermark ", offset, " is negative"));
  }
  return std::max(current, std::min(offset, log_end));
}

std::vector<ProducerDescription> DescribeProducerState(
    const idempotence::ProducerStateMap& producers, const txn::TxnIndex& txns) {
  absl::flat_hash_map<int64_t, int64_t> open_since;
  for (const txn::OpenTxn& open : txns.open_transactions()) {
    open_since[open.producer_id] = open.first_offset;
  }
  std::vector<ProducerDescription> out;
  out.reserve(producers.size());
  producers.ForEachSorted(
      [&](int64_t producer_id, const idempotence::ProducerEntry& entry) {
        ProducerDescription description;
        description.producer_id = producer_id;
        description.producer_epoch = entry.epoch;
        if (const idempotence::CachedBatch* newest = entry.newest()) {
          description.last_sequence = newest->last_seq;
        }
        description.last_timestamp = entry.last_timestamp;
        if (auto it = open_since.find(producer_id); it != open_since.end()) {
          description.current_txn_start_offset = it->second;
        }
        out.push_back(description);
      });
  return out;
}

absl::StatusOr<int64_t> FetchBound(absl::string_view partition, int64_t offset,
                                   int64_t log_start_offset,
                                   int64_t high_watermark,
                                   int64_t last_stable_offset,
                                   int64_t log_end_offset,
                                   Isolation isolation) {
  const int64_t upper =
      isolation == Isolation::kReplica ? log_end_offset : high_watermark;
  if (offset < log_start_offset || offset > upper) {
    return StorageError(
        StorageErrorCode::kOffsetOutOfRange,
        absl::StrFormat("%s: offset %d is outside the log [%d, %d]", partition,
                        offset, log_start_offset, upper));
  }
  return isolation == Isolation::kReadCommitted ? last_stable_offset : upper;
}

absl::StatusOr<RecordBatchView> ParseForAppend(absl::string_view bytes,
                                               bool validate_records,
                                               bool require_keys) {
  KAAS_ASSIGN_OR_RETURN(RecordBatchView batch, RecordBatchView::Parse(bytes));
  if (validate_records) KAAS_RETURN_IF_ERROR(ValidateRecords(batch));
  if (require_keys && !batch.is_control()) {
    KAAS_ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(batch));
    Record record;
    for (int index = 0; reader.Next(&record); ++index) {
      if (!record.key.has_value()) {
        return StorageError(
            StorageErrorCode::kInvalidRecord,
            absl::StrFormat("record %d of the batch has a null key: a "
                            "compacted topic accepts only keyed records",
                            index));
      }
    }
    KAAS_RETURN_IF_ERROR(reader.status());
  }
  return batch;
}

absl::StatusOr<Admission> AdmitBatch(
    const RecordBatchView& batch, const PartitionConfig& config,
    const idempotence::ProducerStateMap& producers,
    const absl::Status& writable, int64_t log_start_offset) {
  KAAS_RETURN_IF_ERROR(writable);
  KAAS_RETURN_IF_ERROR(CheckAppendable(batch, config));
  Admission admission;
  if (!batch.has_producer_id()) return admission;
  idempotence::Verdict verdict = producers.Check(BatchInfoOf(batch));
  if (verdict.kind == idempotence::VerdictKind::kDuplicate) {
    AppendResult& result = admission.duplicate.emplace();
    result.base_offset = verdict.duplicate_of.base_offset;
    result.last_offset = verdict.duplicate_of.last_offset;
    result.duplicate = true;
    result.log_start_offset = log_start_offset;
    return admission;
  }
  KAAS_RETURN_IF_ERROR(VerdictToStatus(verdict));
  return admission;
}

absl::StatusOr<std::vector<RecordBatchView>> ParseForFollowerAppend(
    absl::string_view bytes) {
  if (bytes.empty()) {
    return StorageError(StorageErrorCode::kCorruptMessage,
                        "a follower's append of no batch");
  }
  std::vector<RecordBatchView> batches;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> peeked = PeekBatchSize(bytes);
    if (!peeked.ok()) {
      return StorageError(StorageErrorCode::kCorruptMessage,
                          absl::StrFormat("batch %d: %s", batches.size(),
                                          peeked.status().message()));
    }
    const size_t size = *peeked;
    if (size > bytes.size()) {
      return StorageError(
          StorageErrorCode::kCorruptMessage,
          absl::StrFormat("batch %d is truncated: it announces %d bytes, %d "
                          "remain",
                          batches.size(), size, bytes.size()));
    }
    KAAS_ASSIGN_OR_RETURN(RecordBatchView batch,
                          RecordBatchView::ParseStored(bytes.substr(0, size)));
    batches.push_back(batch);
    bytes.remove_prefix(size);
  }
  return batches;
}

absl::Status AdmitFollowerBatches(const std::vector<RecordBatchView>& batches,
                                  int64_t log_end, int64_t latest_epoch,
                                  int64_t follower_epoch,
                                  const absl::Status& writable) {
  KAAS_RETURN_IF_ERROR(writable);
  int64_t expected = log_end;
  int64_t epoch = latest_epoch;
  for (size_t i = 0; i < batches.size(); ++i) {
    const RecordBatchView& batch = batches[i];
    if (batch.base_offset() != expected) {
      return StorageError(
          StorageErrorCode::kOffsetOutOfRange,
          i == 0 ? absl::StrFormat("the batches start at offset %d, the log "
                                   "ends at %d",
                                   batch.base_offset(), expected)
                 : absl::StrFormat("batch %d starts at offset %d, the one "
                                   "before ends at %d",
                                   i, batch.base_offset(), expected));
    }
    const int64_t stamped = batch.partition_leader_epoch();
    if (stamped > follower_epoch) {
      return StorageError(
          StorageErrorCode::kNotLeader,
          absl::StrFormat("batch at offset %d is of leader epoch %d, newer "
                          "than this follower's %d (take it over at the newer "
                          "epoch first)",
                          batch.base_offset(), stamped, follower_epoch));
    }
    if (stamped >= 0 && stamped < epoch) {
      return StorageError(
          StorageErrorCode::kInvalidRecord,
          absl::StrFormat("batch at offset %d is of leader epoch %d, older "
                          "than epoch %d already in the log",
                          batch.base_offset(), stamped, epoch));
    }
    if (stamped >= 0) epoch = stamped;
    expected = batch.last_offset() + 1;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<OffsetAndTimestamp>> AnswerSpecialTimestamp(
    int64_t timestamp, int64_t log_start, int64_t high_watermark) {
  if (timestamp == kListOffsetsLatest) {
    return OffsetAndTimestamp{high_watermark, -1};
  }
  if (timestamp == kListOffsetsEarliest) {
    return OffsetAndTimestamp{log_start, -1};
  }
  if (timestamp < 0 && timestamp != kListOffsetsMaxTimestamp) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat("unsupported ListOffsets timestamp ", timestamp));
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<OffsetAndTimestamp>> SearchBatchByTimestamp(
    absl::string_view partition, const RecordBatchView& batch,
    int64_t timestamp, int64_t min_offset) {
  if (batch.max_timestamp() < timestamp || batch.last_offset() < min_offset) {
    return std::nullopt;
  }
  if (batch.timestamp_type() != TimestampType::kCreateTime) {
    return OffsetAndTimestamp{std::max(batch.base_offset(), min_offset),
                              batch.max_timestamp()};
  }
  auto unreadable = [&](const absl::Status& status) {
    return StorageError(
        GetStorageErrorCode(status),
        absl::StrFormat("%s: timestamp lookup: batch at offset %d: %s",
                        partition, batch.base_offset(), status.message()));
  };
  absl::StatusOr<RecordReader> reader = RecordReader::Create(batch);
  if (!reader.ok()) return unreadable(reader.status());
  Record record;
  while (reader->Next(&record)) {
    const int64_t offset = batch.base_offset() + record.offset_delta;
    const int64_t record_time = batch.base_timestamp() + record.timestamp_delta;
    if (offset >= min_offset && record_time >= timestamp) {
      return OffsetAndTimestamp{offset, record_time};
    }
  }
  if (!reader->status().ok()) return unreadable(reader->status());
  return std::nullopt;
}

}  // namespace kaas::partition
