// File: storage/batch/batch_rewrite.h
//
// Rewriting stored RecordBatches, for compaction: a batch with only some of
// its records, and the empty batch that stands for a run of batches removed
// entirely.
//
// A rewritten batch keeps what identifies it in the log: its baseOffset and
// lastOffsetDelta (so it still covers the same offsets and the log stays
// contiguous: every offset lies in exactly one batch), partitionLeaderEpoch,
// producer id, epoch and baseSequence (so the producer's sequence numbers
// survive), its transactional/control bits, timestamp type and maxTimestamp.
// Kept records keep their offsetDelta, so their offsets do not change
// (recordCount then no longer equals lastOffsetDelta + 1: gaps inside the
// batch, as Kafka's compacted batches have). A compressed batch is
// recompressed with its codec; an emptied one is written uncompressed.
//
// The delete horizon (Kafka's KIP-534): the first clean that keeps a
// tombstone or a transaction marker stamps the batch with attributes bit
// 0x40 and the horizon (in ms) in the baseTimestamp field; record
// timestamps are re-based on it, so every record's timestamp stays what the
// producer set. A later clean drops them once the horizon has passed.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_BATCH_BATCH_REWRITE_H_
#define KAAS_STORAGE_BATCH_BATCH_REWRITE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"

namespace kaas {

// `batch` with only `kept` of its records (a subsequence of the records
// DecodeRecords returned for it, in order), stamped with
// `delete_horizon_ms` if set and the batch has no horizon yet. Errors:
// kInvalidRecord for a batch whose record timestamps cannot be re-based
// (overflow), errors of Compress.
absl::StatusOr<std::string> RewriteBatch(
    const RecordBatchView& batch, absl::Span<const Record> kept,
    std::optional<int64_t> delete_horizon_ms);

// The longest run of offsets one empty batch may cover (lastOffsetDelta is
// an int32).
inline constexpr int64_t kMaxEmptyBatchSpan = int64_t{1} << 31;

// An empty batch covering offsets [base_offset, base_offset + span): no
// records, no producer (-1), no timestamp (-1), uncompressed, at
// `leader_epoch`. Readers skip it (as they skip a batch compaction emptied);
// it keeps the log contiguous where whole batches were removed.
// REQUIRES: 1 <= span <= kMaxEmptyBatchSpan.
std::string EmptyBatch(int64_t base_offset, int64_t span, int32_t leader_epoch);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_BATCH_REWRITE_H_
