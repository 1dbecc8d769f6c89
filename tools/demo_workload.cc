// File: tools/demo_workload.cc

#include "tools/demo_workload.h"

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/varint.h"

namespace kaas::tools {
namespace {

namespace layout = batch_layout;

// One v2 record (length prefix included) with a key, a value and no headers.
void AppendRecord(int32_t offset_delta, int64_t timestamp_delta,
                  absl::string_view key, absl::string_view value,
                  std::string* out) {
  std::string body;
  body.push_back('\0');  // attributes: unused
  AppendVarlong(timestamp_delta, &body);
  AppendVarint(offset_delta, &body);
  AppendVarint(static_cast<int32_t>(key.size()), &body);
  body.append(key.data(), key.size());
  AppendVarint(static_cast<int32_t>(value.size()), &body);
  body.append(value.data(), value.size());
  AppendVarint(0, &body);  // headers
  AppendVarint(static_cast<int32_t>(body.size()), out);
  out->append(body);
}

// Printable text of exactly `size` bytes that names the record.
std::string DemoValue(int producer, int64_t n, int record, int size) {
  std::string seed = absl::StrCat("producer ", producer, " batch ", n,
                                  " record ", record, ". ");
  std::string value;
  value.reserve(static_cast<size_t>(size));
  while (value.size() < static_cast<size_t>(size)) value.append(seed);
  value.resize(static_cast<size_t>(size));
  return value;
}

}  // namespace

std::string DemoBatch(const DemoShape& shape, int producer, int64_t n,
                      int64_t base_timestamp_ms) {
  CHECK_GE(shape.records_per_batch, 1);
  CHECK_GE(shape.value_bytes, 0);
  const int records = shape.records_per_batch;
  std::string batch(layout::kHeaderSize, '\0');
  for (int i = 0; i < records; ++i) {
    AppendRecord(i, i, absl::StrCat("p", producer, "-", n, "-", i),
                 DemoValue(producer, n, i, shape.value_bytes), &batch);
  }
  char* p = batch.data();
  WriteBigEndian64(p + layout::kBaseOffset, 0);
  WriteBigEndian32(p + layout::kBatchLength,
                   static_cast<int32_t>(batch.size() - layout::kLogOverhead));
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch, -1);
  p[layout::kMagic] = layout::kMagicV2;
  WriteBigEndian16(p + layout::kAttributes, 0);
  WriteBigEndian32(p + layout::kLastOffsetDelta, records - 1);
  WriteBigEndian64(p + layout::kBaseTimestamp, base_timestamp_ms + n);
  WriteBigEndian64(p + layout::kMaxTimestamp,
                   base_timestamp_ms + n + records - 1);
  WriteBigEndian64(p + layout::kProducerId, kDemoFirstProducerId + producer);
  WriteBigEndian16(p + layout::kProducerEpoch, 0);
  WriteBigEndian32(p + layout::kBaseSequence,
                   static_cast<int32_t>(n * records));
  WriteBigEndian32(p + layout::kRecordCount, records);
  WriteBigEndian32(p + layout::kCrc, static_cast<int32_t>(crc32c::Value(
                                         p + layout::kCrcStart,
                                         batch.size() - layout::kCrcStart)));
  return batch;
}

std::optional<DemoBatchId> IdentifyDemoBatch(const DemoShape& shape,
                                             const RecordBatchView& batch) {
  int64_t producer = batch.producer_id() - kDemoFirstProducerId;
  if (producer < 0 || producer > INT32_MAX || batch.base_sequence() < 0 ||
      batch.base_sequence() % shape.records_per_batch != 0) {
    return std::nullopt;
  }
  return DemoBatchId{static_cast<int>(producer),
                     batch.base_sequence() / shape.records_per_batch};
}

}  // namespace kaas::tools
