#include "testing/batch_builder.h"

#include <utility>

#include "glog/logging.h"
#include "storage/batch/compression.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/varint.h"

namespace kaas::test {
namespace {

namespace layout = batch_layout;

void AppendBytes(const absl::optional<std::string>& bytes, std::string* out) {
  if (!bytes.has_value()) {
    AppendVarint(-1, out);
    return;
  }
  AppendVarint(static_cast<int32_t>(bytes->size()), out);
  out->append(*bytes);
}

absl::optional<std::string> ToOptionalString(
    absl::optional<absl::string_view> s) {
  if (!s.has_value()) return absl::nullopt;
  return std::string(*s);
}

// SplitMix64: a tiny deterministic generator whose output does not compress.
uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

int16_t WithBit(int16_t attributes, int16_t bit, bool set) {
  return static_cast<int16_t>(set ? attributes | bit : attributes & ~bit);
}

void CheckInside(const std::string& batch, size_t offset, size_t size) {
  CHECK_LE(offset + size, batch.size())
      << "field [" << offset << ", " << offset + size << ") lies outside the "
      << batch.size() << "-byte batch";
}

}  // namespace

std::string EncodeRecord(const TestRecord& record, int32_t offset_delta) {
  std::string body;
  body.push_back('\0');  // attributes: unused
  AppendVarlong(record.timestamp_delta, &body);
  AppendVarint(offset_delta, &body);
  AppendBytes(record.key, &body);
  AppendBytes(record.value, &body);
  AppendVarint(static_cast<int32_t>(record.headers.size()), &body);
  for (const TestHeader& header : record.headers) {
    AppendVarint(static_cast<int32_t>(header.key.size()), &body);
    body.append(header.key);
    AppendBytes(header.value, &body);
  }
  std::string encoded;
  AppendVarint(static_cast<int32_t>(body.size()), &encoded);
  encoded.append(body);
  return encoded;
}

BatchBuilder& BatchBuilder::BaseOffset(int64_t base_offset) {
  base_offset_ = base_offset;
  return *this;
}

BatchBuilder& BatchBuilder::PartitionLeaderEpoch(int32_t epoch) {
  partition_leader_epoch_ = epoch;
  return *this;
}

BatchBuilder& BatchBuilder::BaseTimestamp(int64_t timestamp) {
  base_timestamp_ = timestamp;
  return *this;
}

BatchBuilder& BatchBuilder::Producer(int64_t producer_id,
                                     int16_t producer_epoch,
                                     int32_t base_sequence) {
  producer_id_ = producer_id;
  producer_epoch_ = producer_epoch;
  base_sequence_ = base_sequence;
  return *this;
}

BatchBuilder& BatchBuilder::Transactional(bool transactional) {
  attributes_ = WithBit(attributes_, layout::kTransactionalBit, transactional);
  return *this;
}

BatchBuilder& BatchBuilder::Control(bool control) {
  attributes_ = WithBit(attributes_, layout::kControlBit, control);
  return *this;
}

BatchBuilder& BatchBuilder::LogAppendTime(bool log_append_time) {
  attributes_ =
      WithBit(attributes_, layout::kTimestampTypeBit, log_append_time);
  return *this;
}

BatchBuilder& BatchBuilder::Compression(CompressionCodec codec) {
  CodecBitsOnly(codec);
  compress_ = codec != CompressionCodec::kNone;
  return *this;
}

BatchBuilder& BatchBuilder::CodecBitsOnly(CompressionCodec codec) {
  attributes_ = static_cast<int16_t>((attributes_ & ~layout::kCodecMask) |
                                     static_cast<int16_t>(codec));
  compress_ = false;
  return *this;
}

BatchBuilder& BatchBuilder::AddRecord(absl::optional<absl::string_view> key,
                                      absl::optional<absl::string_view> value,
                                      int64_t timestamp_delta) {
  TestRecord record;
  record.key = ToOptionalString(key);
  record.value = ToOptionalString(value);
  record.timestamp_delta = timestamp_delta;
  return AddRecord(std::move(record));
}

BatchBuilder& BatchBuilder::AddRecord(TestRecord record) {
  records_.push_back(std::move(record));
  return *this;
}

BatchBuilder& BatchBuilder::AddRandomRecords(int count, size_t value_size,
                                             uint64_t seed) {
  uint64_t state = seed;
  for (int i = 0; i < count; ++i) {
    std::string value(value_size, '\0');
    for (size_t j = 0; j < value_size; j += 8) {
      const uint64_t word = SplitMix64(&state);
      for (size_t k = 0; k < 8 && j + k < value_size; ++k) {
        value[j + k] = static_cast<char>(word >> (8 * k));
      }
    }
    // Built in place: moving a TestRecord with a null key trips GCC 12's
    // -Wmaybe-uninitialized false positive at -O2.
    records_.emplace_back().value = std::move(value);
  }
  return *this;
}

std::string BatchBuilder::Build() const {
  std::string batch(layout::kHeaderSize, '\0');
  int64_t max_timestamp_delta = 0;
  std::string records;
  for (size_t i = 0; i < records_.size(); ++i) {
    records.append(EncodeRecord(records_[i], static_cast<int32_t>(i)));
    if (i == 0 || records_[i].timestamp_delta > max_timestamp_delta) {
      max_timestamp_delta = records_[i].timestamp_delta;
    }
  }
  if (compress_) {
    const auto codec =
        static_cast<CompressionCodec>(attributes_ & layout::kCodecMask);
    absl::StatusOr<std::string> compressed = kaas::Compress(codec, records);
    CHECK(compressed.ok()) << compressed.status();
    records = *std::move(compressed);
  }
  batch.append(records);
  const auto count = static_cast<int32_t>(records_.size());
  char* p = batch.data();
  WriteBigEndian64(p + layout::kBaseOffset, base_offset_);
  WriteBigEndian32(p + layout::kBatchLength,
                   static_cast<int32_t>(batch.size() - layout::kLogOverhead));
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch, partition_leader_epoch_);
  p[layout::kMagic] = layout::kMagicV2;
  WriteBigEndian16(p + layout::kAttributes, attributes_);
  WriteBigEndian32(p + layout::kLastOffsetDelta, count - 1);
  WriteBigEndian64(p + layout::kBaseTimestamp, base_timestamp_);
  WriteBigEndian64(p + layout::kMaxTimestamp,
                   base_timestamp_ + max_timestamp_delta);
  WriteBigEndian64(p + layout::kProducerId, producer_id_);
  WriteBigEndian16(p + layout::kProducerEpoch, producer_epoch_);
  WriteBigEndian32(p + layout::kBaseSequence, base_sequence_);
  WriteBigEndian32(p + layout::kRecordCount, count);
  FixCrc(&batch);
  return batch;
}

std::string ControlBatch(ControlType type, int64_t producer_id,
                         int16_t producer_epoch, int32_t coordinator_epoch,
                         int64_t timestamp) {
  std::string key(4, '\0');
  WriteBigEndian16(key.data(), 0);  // version
  WriteBigEndian16(key.data() + 2, static_cast<int16_t>(type));
  std::string value(6, '\0');
  WriteBigEndian16(value.data(), 0);  // version
  WriteBigEndian32(value.data() + 2, coordinator_epoch);
  return BatchBuilder()
      .PartitionLeaderEpoch(0)
      .BaseTimestamp(timestamp)
      .Producer(producer_id, producer_epoch, /*base_sequence=*/-1)
      .Transactional()
      .Control()
      .AddRecord(key, value)
      .Build();
}

void FlipBit(std::string* batch, size_t offset, int bit) {
  CheckInside(*batch, offset, 1);
  CHECK(bit >= 0 && bit < 8) << "bit " << bit;
  (*batch)[offset] = static_cast<char>((*batch)[offset] ^ (1 << bit));
}

void OverwriteBigEndian16(std::string* batch, size_t offset, int16_t value) {
  CheckInside(*batch, offset, 2);
  WriteBigEndian16(batch->data() + offset, value);
}

void OverwriteBigEndian32(std::string* batch, size_t offset, int32_t value) {
  CheckInside(*batch, offset, 4);
  WriteBigEndian32(batch->data() + offset, value);
}

void OverwriteBigEndian64(std::string* batch, size_t offset, int64_t value) {
  CheckInside(*batch, offset, 8);
  WriteBigEndian64(batch->data() + offset, value);
}

void FixCrc(std::string* batch) {
  CheckInside(*batch, layout::kCrc, 4);
  const uint32_t crc = crc32c::Value(batch->data() + layout::kCrcStart,
                                     batch->size() - layout::kCrcStart);
  WriteBigEndian32(batch->data() + layout::kCrc, static_cast<int32_t>(crc));
}

}  // namespace kaas::test
