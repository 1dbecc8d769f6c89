#include "bench/workload_batch.h"

#include "glog/logging.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/varint.h"

namespace kaas::bench {
namespace {

namespace layout = batch_layout;

constexpr int32_t kNullKeyLength = -1;

// The record body (everything after its length varint) of record `i`.
size_t RecordBodySize(const BatchShape& shape, int32_t i) {
  return 1 /* attributes */ + VarlongSize(i) /* timestampDelta */ +
         VarintSize(i) /* offsetDelta */ + VarintSize(kNullKeyLength) +
         VarintSize(shape.value_bytes) + shape.value_bytes +
         VarintSize(0) /* headerCount */;
}

// xorshift64* (Vigna): fast, and its output does not compress.
class Xorshift64Star {
 public:
  explicit Xorshift64Star(uint64_t seed)
      : state_(seed != 0 ? seed : 0x9E3779B97F4A7C15u) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Du;
  }

 private:
  uint64_t state_;
};

}  // namespace

std::string IncompressibleBytes(size_t size, uint64_t seed) {
  Xorshift64Star random(seed);
  std::string bytes(size, '\0');
  size_t i = 0;
  while (i < size) {
    uint64_t word = random.Next();
    for (int byte = 0; byte < 8 && i < size; ++byte, ++i) {
      bytes[i] = static_cast<char>(word >> (8 * byte));
    }
  }
  return bytes;
}

size_t WorkloadBatchSize(const BatchShape& shape) {
  size_t size = layout::kHeaderSize;
  for (int32_t i = 0; i < shape.records; ++i) {
    size_t body = RecordBodySize(shape, i);
    size += VarintSize(static_cast<int32_t>(body)) + body;
  }
  return size;
}

std::string BuildWorkloadBatch(const BatchShape& shape, uint64_t seed,
                               int64_t base_timestamp_ms) {
  CHECK_GE(shape.records, 1) << "a batch holds at least one record";
  CHECK_GE(shape.value_bytes, 0);
  const size_t total = WorkloadBatchSize(shape);
  std::string batch(layout::kHeaderSize, '\0');
  batch.reserve(total);
  char* header = batch.data();
  WriteBigEndian64(header + layout::kBaseOffset, 0);
  WriteBigEndian32(header + layout::kBatchLength,
                   static_cast<int32_t>(total - layout::kLogOverhead));
  WriteBigEndian32(header + layout::kPartitionLeaderEpoch, -1);
  header[layout::kMagic] = layout::kMagicV2;
  WriteBigEndian16(header + layout::kAttributes, 0);
  WriteBigEndian32(header + layout::kLastOffsetDelta, shape.records - 1);
  WriteBigEndian64(header + layout::kBaseTimestamp, base_timestamp_ms);
  WriteBigEndian64(header + layout::kMaxTimestamp,
                   base_timestamp_ms + shape.records - 1);
  WriteBigEndian64(header + layout::kProducerId, -1);
  WriteBigEndian16(header + layout::kProducerEpoch, -1);
  WriteBigEndian32(header + layout::kBaseSequence, -1);
  WriteBigEndian32(header + layout::kRecordCount, shape.records);

  const std::string values = IncompressibleBytes(
      static_cast<size_t>(shape.records) * shape.value_bytes, seed);
  absl::string_view next_value = values;
  for (int32_t i = 0; i < shape.records; ++i) {
    AppendVarint(static_cast<int32_t>(RecordBodySize(shape, i)), &batch);
    batch.push_back(0);        // attributes
    AppendVarlong(i, &batch);  // timestampDelta
    AppendVarint(i, &batch);   // offsetDelta
    AppendVarint(kNullKeyLength, &batch);
    AppendVarint(shape.value_bytes, &batch);
    batch.append(next_value.data(), shape.value_bytes);
    next_value.remove_prefix(shape.value_bytes);
    AppendVarint(0, &batch);  // headerCount
  }
  CHECK_EQ(batch.size(), total);
  const uint32_t crc = crc32c::Value(batch.data() + layout::kCrcStart,
                                     batch.size() - layout::kCrcStart);
  WriteBigEndian32(batch.data() + layout::kCrc, static_cast<int32_t>(crc));
  return batch;
}

}  // namespace kaas::bench
