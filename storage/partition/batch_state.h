// File: storage/partition/batch_state.h
//
// The per-batch rules every engine applies the same way, in one place:
//   * what a batch header means for the idempotent-producer state and the
//     transaction index (RecordBatchState): one function serves the append
//     path (after the write succeeded) and recovery's replay of the log after
//     a state snapshot, so that replaying rebuilds exactly what appending
//     built;
//   * the append-time checks beyond RecordBatchView::Parse (control-record
//     type, size limits) and the typed error of an idempotence verdict;
//   * the fetch range rule (FetchBound) and the record-level search of
//     Kafka's ListOffsets by timestamp.
//
// Thread-safety: functions of their arguments; callers hold the partition
// lock (append) or own the state (replay).

#ifndef KAAS_STORAGE_PARTITION_BATCH_STATE_H_
#define KAAS_STORAGE_PARTITION_BATCH_STATE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "idempotence/classify.h"
#include "idempotence/producer_entry.h"
#include "idempotence/producer_state_map.h"
#include "storage/batch/record_batch.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "txn/txn_index.h"

namespace kaas::partition {

// The producer fields of `batch`'s header.
idempotence::BatchInfo BatchInfoOf(const RecordBatchView& batch);

// Records `batch`, stored at `base_offset`, in `producers` and `txns`
// (which the caller guards). A control batch's marker type must decode
// (the append path validates it first; replay skips what does not).
absl::Status RecordBatchState(const RecordBatchView& batch, int64_t base_offset,
                              idempotence::ProducerStateMap* producers,
                              txn::TxnIndex* txns);

// The admission rule every engine applies to an append, in two halves so
// that neither engine can drift from it:
//
//   ParseForAppend (outside the partition lock): one well-formed v2 batch
//   (RecordBatchView::Parse), and, if `validate_records`, records Kafka's
//   broker would accept (ValidateRecords); if `require_keys` (a compacted
//   topic), no data record with a null key (kInvalidRecord, Kafka's
//   INVALID_RECORD: compaction could never remove it).
//
//   AdmitBatch (under the partition lock), in this order: the engine's own
//   writability verdict `writable` (leadership, fencing by leader epoch,
//   stalls); the batch fits the config (a control batch's type decodes,
//   segment.bytes, max.message.bytes); the idempotent producer's sequence
//   and epoch. A retry the producer state recognises is a duplicate: it is
//   answered with the original's offsets (`duplicate` set; the caller adds
//   `durable`) and nothing is written.
absl::StatusOr<RecordBatchView> ParseForAppend(absl::string_view bytes,
                                               bool validate_records,
                                               bool require_keys);

struct Admission {
  // Set for a recognised retry: the answer (without `durable`).
  std::optional<AppendResult> duplicate;
};
absl::StatusOr<Admission> AdmitBatch(
    const RecordBatchView& batch, const PartitionConfig& config,
    const idempotence::ProducerStateMap& producers,
    const absl::Status& writable, int64_t log_start_offset);

// A follower's append (Partition::AppendAsFollower), in the same two halves.
//
//   ParseForFollowerAppend (outside the lock): one or more whole v2 batches,
//   each framed and CRC-checked as a log stores them (RecordBatchView::
//   ParseStored: a compacted leader's batches have fewer records than
//   offsets) (kCorruptMessage / kInvalidRecord).
//
//   AdmitFollowerBatches (under the lock): the engine's verdict `writable`;
//   the first batch starts at `log_end` and each at the end of the one before
//   (kOffsetOutOfRange: the replica fetcher truncates then); the stamped
//   leader epochs never decrease, never go below `latest_epoch` (the
//   history's newest, -1 if empty) (kInvalidRecord), and never pass
//   `follower_epoch` (kNotLeader: take the partition over at the newer epoch
//   first). A batch stamped -1 (an engine that did not stamp) passes the
//   epoch checks and adds nothing to the history.
absl::StatusOr<std::vector<RecordBatchView>> ParseForFollowerAppend(
    absl::string_view bytes);
absl::Status AdmitFollowerBatches(const std::vector<RecordBatchView>& batches,
                                  int64_t log_end, int64_t latest_epoch,
                                  int64_t follower_epoch,
                                  const absl::Status& writable);

// The parts of AdmitBatch. Append-time checks of a parsed batch: a control
// batch's record type must decode (kInvalidRecord), and the batch must fit
// segment.bytes (kRecordListTooLarge) and max.message.bytes
// (kMessageTooLarge).
absl::Status CheckAppendable(const RecordBatchView& batch,
                             const PartitionConfig& config);

// The typed error of a rejecting verdict (kOutOfOrderSequence,
// kInvalidProducerEpoch, kInvalidRecord); OK for accepting ones.
absl::Status VerdictToStatus(const idempotence::Verdict& verdict);

// kNotLeader naming `partition` unless it is taken over in `wanted` role.
absl::Status CheckRole(absl::string_view partition, Role actual, Role wanted);

// SetHighWatermark's rule: the broker's high watermark after it asks for
// `offset` (never backwards, clamped to `log_end`). kInvalidRequest when the
// engine manages it or `offset` is negative.
absl::StatusOr<int64_t> AdvanceBrokerHighWatermark(absl::string_view partition,
                                                   bool broker_managed,
                                                   int64_t current,
                                                   int64_t offset,
                                                   int64_t log_end);

// DescribeProducers' answer from a partition's state, by producer id.
std::vector<ProducerDescription> DescribeProducerState(
    const idempotence::ProducerStateMap& producers, const txn::TxnIndex& txns);

// The fetch rule shared by every engine: `offset` must lie in
// [result.log_start_offset, result.high_watermark] (for a replica's fetch,
// result.log_end_offset; else kOffsetOutOfRange, naming `partition`);
// returns the exclusive bound of what the read may return: the last stable
// offset for read_committed, the log end for a replica, else the high
// watermark.
absl::StatusOr<int64_t> FetchBound(absl::string_view partition, int64_t offset,
                                   int64_t log_start_offset,
                                   int64_t high_watermark,
                                   int64_t last_stable_offset,
                                   int64_t log_end_offset, Isolation isolation);
template <typename Records>
absl::StatusOr<int64_t> FetchBound(absl::string_view partition, int64_t offset,
                                   const BasicReadResult<Records>& result,
                                   Isolation isolation) {
  return FetchBound(partition, offset, result.log_start_offset,
                    result.high_watermark, result.last_stable_offset,
                    result.log_end_offset, isolation);
}

// Kafka ListOffsets special timestamps.
inline constexpr int64_t kListOffsetsLatest = -1;
inline constexpr int64_t kListOffsetsEarliest = -2;
inline constexpr int64_t kListOffsetsMaxTimestamp = -3;

// Kafka ListOffsets' special timestamps: -1 (latest) answers the high
// watermark and -2 (earliest) the log start, both with timestamp -1. nullopt
// for -3 (max timestamp) and plain timestamps, which the caller searches;
// kInvalidRequest for any other negative timestamp.
absl::StatusOr<std::optional<OffsetAndTimestamp>> AnswerSpecialTimestamp(
    int64_t timestamp, int64_t log_start, int64_t high_watermark);

// Kafka's search by timestamp inside one batch (FileRecords.
// searchForTimestamp), the one rule both engines apply to each batch their
// index points them to: the first record at or above `min_offset` whose
// timestamp is >= `timestamp`; nullopt when none is (at once when
// maxTimestamp is below `timestamp`), and the search goes on at the next
// batch.
//
// A CreateTime batch answers at record level, compressed or not: its records
// are decoded, decompressed first (storage/batch/records.h, bounded by
// kMaxDecompressedBytes), so that a consumer seeking by time lands on the
// record Kafka names, not on the first of a compressed batch. Decoding stops
// at the answer, as Kafka's record iterator does. A LogAppendTime batch is
// not decoded: Kafka gives each of its records the batch's maxTimestamp, so
// its first offset at or above `min_offset`, with maxTimestamp, is the
// record Kafka finds.
//
// Errors, naming `partition` and the batch: the codec layer's kCorruptMessage
// when the records do not decompress, kInvalidRecord when they do not decode
// (possible only for batches appended without validate_records). Kafka's
// broker fails the lookup too; an answer from the batch header would name a
// record nobody can read.
absl::StatusOr<std::optional<OffsetAndTimestamp>> SearchBatchByTimestamp(
    absl::string_view partition, const RecordBatchView& batch,
    int64_t timestamp, int64_t min_offset);

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_BATCH_STATE_H_
