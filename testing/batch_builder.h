// File: testing/batch_builder.h
//
// Builds Kafka v2 RecordBatches for tests, and corrupts them on purpose.
//
//   std::string batch = BatchBuilder()
//                           .BaseOffset(100)
//                           .Producer(/*producer_id=*/7, /*epoch=*/0,
//                                     /*base_sequence=*/0)
//                           .AddRecord("key", "value")
//                           .AddRecord(absl::nullopt, "no key")
//                           .Build();
//   std::string marker = ControlBatch(ControlType::kCommit, 7, 0, 0, 1000);
//   FlipBit(&batch, batch_layout::kRecords + 3);  // now a CRC mismatch
//
// Build() yields a batch that RecordBatchView::Parse accepts, unless a setter
// documented as producing an invalid batch was used (CodecBitsOnly with a
// codec other than kNone yields a parseable batch whose records do not
// decompress; Control() with several records and Build() with no records
// yield batches Parse rejects).
//
// Thread-safety: a BatchBuilder is thread-compatible; the free functions are
// thread-safe.

#ifndef KAAS_TESTING_BATCH_BUILDER_H_
#define KAAS_TESTING_BATCH_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "storage/batch/record_batch.h"

namespace kaas::test {

struct TestHeader {
  std::string key;
  absl::optional<std::string> value;  // nullopt: a null header value
};

// One record to encode. nullopt key/value encode as length -1 (null).
struct TestRecord {
  absl::optional<std::string> key;
  absl::optional<std::string> value;
  // Relative to the batch's base timestamp.
  int64_t timestamp_delta = 0;
  std::vector<TestHeader> headers;
};

// The v2 encoding of `record` (length varint included) with the given
// offsetDelta, exactly as a Kafka producer writes it.
std::string EncodeRecord(const TestRecord& record, int32_t offset_delta);

class BatchBuilder {
 public:
  // Defaults: baseOffset 0, partitionLeaderEpoch -1 (what producers send),
  // baseTimestamp 0, producer id/epoch/baseSequence -1/-1/-1, CreateTime,
  // uncompressed, not transactional, not control, no records.
  BatchBuilder() = default;

  BatchBuilder& BaseOffset(int64_t base_offset);
  BatchBuilder& PartitionLeaderEpoch(int32_t epoch);
  BatchBuilder& BaseTimestamp(int64_t timestamp);
  BatchBuilder& Producer(int64_t producer_id, int16_t producer_epoch,
                         int32_t base_sequence);
  BatchBuilder& Transactional(bool transactional = true);
  // Sets the control bit. A valid control batch holds one control record;
  // prefer ControlBatch().
  BatchBuilder& Control(bool control = true);
  BatchBuilder& LogAppendTime(bool log_append_time = true);
  // Compresses the records with `codec` (storage/batch/compression.h) and
  // sets the codec bits, as a Kafka producer does.
  BatchBuilder& Compression(CompressionCodec codec);
  // Sets only the codec bits of the attributes: the records are NOT
  // compressed, so such a batch parses (the CRC is right) but its records do
  // not decompress. For tests of what a broker must refuse.
  BatchBuilder& CodecBitsOnly(CompressionCodec codec);

  // Appends a record; its offsetDelta is its index in the batch and its
  // timestamp baseTimestamp + timestamp_delta.
  BatchBuilder& AddRecord(absl::optional<absl::string_view> key,
                          absl::optional<absl::string_view> value,
                          int64_t timestamp_delta = 0);
  BatchBuilder& AddRecord(TestRecord record);
  // Appends `count` records with null keys and `value_size`-byte values of
  // pseudo-random (incompressible) bytes, deterministic in `seed`; every
  // record gets different bytes.
  BatchBuilder& AddRandomRecords(int count, size_t value_size,
                                 uint64_t seed = 1);

  // The encoded batch: lastOffsetDelta = records - 1, recordCount = records,
  // maxTimestamp = baseTimestamp + the largest timestamp delta (baseTimestamp
  // if there are no records), CRC computed.
  std::string Build() const;

 private:
  int64_t base_offset_ = 0;
  int32_t partition_leader_epoch_ = -1;
  int64_t base_timestamp_ = 0;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  int32_t base_sequence_ = -1;
  int16_t attributes_ = 0;
  bool compress_ = false;  // Compression(): the records are compressed
  std::vector<TestRecord> records_;
};

// A transaction marker as Kafka's MemoryRecords.withEndTransactionMarker and
// kaas-broker's control_batch.rs write it: baseOffset 0, partitionLeaderEpoch
// 0, attributes 0x30 (transactional | control), lastOffsetDelta 0, base and
// max timestamp `timestamp`, baseSequence -1, one record whose key is
// {version 0, type} and value {version 0, coordinatorEpoch}, all int16 but
// coordinatorEpoch (int32), big-endian.
std::string ControlBatch(ControlType type, int64_t producer_id,
                         int16_t producer_epoch, int32_t coordinator_epoch,
                         int64_t timestamp);

// Corruption helpers. REQUIRES: the touched bytes lie inside `*batch`
// (CHECK-fails otherwise). None of them fixes the CRC; call FixCrc for that.

// Flips bit `bit` (0 = least significant) of byte `offset`.
void FlipBit(std::string* batch, size_t offset, int bit = 0);
// Overwrites the big-endian field at `offset` with `value`.
void OverwriteBigEndian16(std::string* batch, size_t offset, int16_t value);
void OverwriteBigEndian32(std::string* batch, size_t offset, int32_t value);
void OverwriteBigEndian64(std::string* batch, size_t offset, int64_t value);
// Recomputes the CRC32C of bytes [21, end) into the crc field, so that a
// deliberately wrong field is reported as such rather than as a CRC mismatch.
void FixCrc(std::string* batch);

}  // namespace kaas::test

#endif  // KAAS_TESTING_BATCH_BUILDER_H_
