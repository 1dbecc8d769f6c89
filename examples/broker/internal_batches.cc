// File: examples/broker/internal_batches.cc
//
// The broker's own RecordBatches (internal_batches.h).

#include "examples/broker/internal_batches.h"

#include "storage/batch/crc32c.h"
#include "storage/batch/record.h"

namespace kaas::broker {
namespace {

namespace layout = batch_layout;

// Fills the fixed header of `batch` (whose records follow it) and its CRC.
void FinishBatch(int32_t partition_leader_epoch, int16_t attributes,
                 int32_t count, int64_t timestamp, int64_t producer_id,
                 int16_t producer_epoch, std::string& batch) {
  char* p = batch.data();
  WriteBigEndian64(p + layout::kBaseOffset, 0);
  WriteBigEndian32(p + layout::kBatchLength,
                   static_cast<int32_t>(batch.size() - layout::kLogOverhead));
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch, partition_leader_epoch);
  p[layout::kMagic] = layout::kMagicV2;
  WriteBigEndian16(p + layout::kAttributes, attributes);
  WriteBigEndian32(p + layout::kLastOffsetDelta, count - 1);
  WriteBigEndian64(p + layout::kBaseTimestamp, timestamp);
  WriteBigEndian64(p + layout::kMaxTimestamp, timestamp);
  WriteBigEndian64(p + layout::kProducerId, producer_id);
  WriteBigEndian16(p + layout::kProducerEpoch, producer_epoch);
  WriteBigEndian32(p + layout::kBaseSequence, -1);
  WriteBigEndian32(p + layout::kRecordCount, count);
  const uint32_t crc = crc32c::Value(batch.data() + layout::kCrcStart,
                                     batch.size() - layout::kCrcStart);
  WriteBigEndian32(p + layout::kCrc, static_cast<int32_t>(crc));
}

}  // namespace

std::string BuildRecordBatch(
    const std::vector<std::pair<std::string, std::optional<std::string>>>&
        records,
    int64_t timestamp) {
  std::string batch(layout::kHeaderSize, '\0');
  for (size_t i = 0; i < records.size(); ++i) {
    Record record;
    record.offset_delta = static_cast<int32_t>(i);
    record.key = absl::string_view(records[i].first);
    if (records[i].second.has_value()) {
      record.value = absl::string_view(*records[i].second);
    }
    AppendRecord(record, /*timestamp_delta=*/0, &batch);
  }
  FinishBatch(/*partition_leader_epoch=*/-1, /*attributes=*/0,
              static_cast<int32_t>(records.size()), timestamp,
              /*producer_id=*/-1, /*producer_epoch=*/-1, batch);
  return batch;
}

std::string BuildControlBatch(ControlType type, int64_t producer_id,
                              int16_t producer_epoch, int32_t coordinator_epoch,
                              int64_t timestamp) {
  std::string key(4, '\0');
  WriteBigEndian16(key.data(), 0);  // version
  WriteBigEndian16(key.data() + 2, static_cast<int16_t>(type));
  std::string value(6, '\0');
  WriteBigEndian16(value.data(), 0);  // version
  WriteBigEndian32(value.data() + 2, coordinator_epoch);
  std::string batch(layout::kHeaderSize, '\0');
  Record record;
  record.key = absl::string_view(key);
  record.value = absl::string_view(value);
  AppendRecord(record, /*timestamp_delta=*/0, &batch);
  FinishBatch(/*partition_leader_epoch=*/0,
              layout::kTransactionalBit | layout::kControlBit, /*count=*/1,
              timestamp, producer_id, producer_epoch, batch);
  return batch;
}

}  // namespace kaas::broker
