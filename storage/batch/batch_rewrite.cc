#include "storage/batch/batch_rewrite.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "storage/batch/compression.h"
#include "storage/batch/crc32c.h"

namespace kaas {
namespace {

namespace layout = batch_layout;

// Fills the header fields every batch has, then the CRC over [21, end).
void FinishBatch(std::string* batch) {
  char* p = batch->data();
  WriteBigEndian32(p + layout::kBatchLength,
                   static_cast<int32_t>(batch->size() - layout::kLogOverhead));
  p[layout::kMagic] = layout::kMagicV2;
  const uint32_t crc =
      crc32c::Value(p + layout::kCrcStart, batch->size() - layout::kCrcStart);
  WriteBigEndian32(p + layout::kCrc, static_cast<int32_t>(crc));
}

bool AddOverflows(int64_t a, int64_t b) {
  return (b > 0 && a > std::numeric_limits<int64_t>::max() - b) ||
         (b < 0 && a < std::numeric_limits<int64_t>::min() - b);
}

}  // namespace

absl::StatusOr<std::string> RewriteBatch(
    const RecordBatchView& batch, absl::Span<const Record> kept,
    std::optional<int64_t> delete_horizon_ms) {
  int16_t attributes = batch.attributes();
  int64_t base_timestamp = batch.base_timestamp();
  // Each record's timestamp is base + delta; a new base keeps it.
  int64_t rebase = 0;
  if (delete_horizon_ms.has_value() && !batch.has_delete_horizon()) {
    attributes = static_cast<int16_t>(attributes | layout::kDeleteHorizonBit);
    rebase = base_timestamp - *delete_horizon_ms;
    base_timestamp = *delete_horizon_ms;
  }
  std::string records;
  for (const Record& record : kept) {
    if (AddOverflows(record.timestamp_delta, rebase)) {
      return StorageError(
          StorageErrorCode::kInvalidRecord,
          absl::StrCat("batch at offset ", batch.base_offset(),
                       ": a record timestamp cannot be re-based on the delete "
                       "horizon"));
    }
    AppendRecord(record, record.timestamp_delta + rebase, &records);
  }
  const CompressionCodec codec = batch.compression();
  if (kept.empty()) {
    attributes = static_cast<int16_t>(attributes & ~layout::kCodecMask);
  } else if (codec != CompressionCodec::kNone) {
    absl::StatusOr<std::string> compressed = Compress(codec, records);
    if (!compressed.ok()) return compressed.status();
    records = *std::move(compressed);
  }
  std::string out(layout::kHeaderSize, '\0');
  out.append(records);
  char* p = out.data();
  // baseOffset .. partitionLeaderEpoch, lastOffsetDelta, maxTimestamp,
  // producer fields: as they were.
  const char* in = batch.bytes().data();
  WriteBigEndian64(p + layout::kBaseOffset, batch.base_offset());
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch,
                   batch.partition_leader_epoch());
  WriteBigEndian16(p + layout::kAttributes, attributes);
  WriteBigEndian32(p + layout::kLastOffsetDelta, batch.last_offset_delta());
  WriteBigEndian64(p + layout::kBaseTimestamp, base_timestamp);
  std::copy(in + layout::kMaxTimestamp, in + layout::kRecordCount,
            p + layout::kMaxTimestamp);
  WriteBigEndian32(p + layout::kRecordCount, static_cast<int32_t>(kept.size()));
  FinishBatch(&out);
  return out;
}

std::string EmptyBatch(int64_t base_offset, int64_t span,
                       int32_t leader_epoch) {
  CHECK(span >= 1 && span <= kMaxEmptyBatchSpan) << span;
  std::string out(layout::kHeaderSize, '\0');
  char* p = out.data();
  WriteBigEndian64(p + layout::kBaseOffset, base_offset);
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch, leader_epoch);
  WriteBigEndian16(p + layout::kAttributes, 0);
  WriteBigEndian32(p + layout::kLastOffsetDelta,
                   static_cast<int32_t>(span - 1));
  WriteBigEndian64(p + layout::kBaseTimestamp, -1);
  WriteBigEndian64(p + layout::kMaxTimestamp, -1);
  WriteBigEndian64(p + layout::kProducerId, -1);
  WriteBigEndian16(p + layout::kProducerEpoch, -1);
  WriteBigEndian32(p + layout::kBaseSequence, -1);
  WriteBigEndian32(p + layout::kRecordCount, 0);
  FinishBatch(&out);
  return out;
}

}  // namespace kaas
