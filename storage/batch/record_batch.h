// File: storage/batch/record_batch.h
//
// A zero-copy view over one Kafka v2 RecordBatch. The engine stores batches
// verbatim ("byte opacity"): it reads the fixed 61-byte header, verifies the
// CRC32C, and rewrites only the base offset in place. Records are decoded only
// by tools and tests (storage/batch/records.h).
//
// v2 RecordBatch header (big-endian):
//
//   offset size field
//   0      8    baseOffset            rewritten by the engine on append
//   8      4    batchLength           bytes after this field; batch = 12 + it
//   12     4    partitionLeaderEpoch
//   16     1    magic                 must be 2
//   17     4    crc                   CRC32C of bytes [21, end)
//   21     2    attributes            bits 0-2 codec, 3 timestamp type,
//                                     4 transactional, 5 control,
//                                     6 delete horizon
//   23     4    lastOffsetDelta
//   27     8    baseTimestamp
//   35     8    maxTimestamp
//   43     8    producerId
//   51     2    producerEpoch
//   53     4    baseSequence
//   57     4    recordCount
//   61     ...  records
//
// Parsing is written for hostile input: every accessor reads inside the
// validated header, and each malformed input yields a distinct, precise error
// carrying StorageErrorCode::kCorruptMessage (framing, magic, CRC) or
// kInvalidRecord (field values).
//
// Thread-safety: a view is an immutable value; it does not own the bytes,
// which must outlive it.

#ifndef KAAS_STORAGE_BATCH_RECORD_BATCH_H_
#define KAAS_STORAGE_BATCH_RECORD_BATCH_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kaas {

// Byte offsets of the v2 header fields.
namespace batch_layout {
inline constexpr size_t kBaseOffset = 0;
inline constexpr size_t kBatchLength = 8;
inline constexpr size_t kPartitionLeaderEpoch = 12;
inline constexpr size_t kMagic = 16;
inline constexpr size_t kCrc = 17;
inline constexpr size_t kAttributes = 21;
inline constexpr size_t kLastOffsetDelta = 23;
inline constexpr size_t kBaseTimestamp = 27;
inline constexpr size_t kMaxTimestamp = 35;
inline constexpr size_t kProducerId = 43;
inline constexpr size_t kProducerEpoch = 51;
inline constexpr size_t kBaseSequence = 53;
inline constexpr size_t kRecordCount = 57;
inline constexpr size_t kRecords = 61;

// baseOffset + batchLength: the bytes not counted by batchLength.
inline constexpr size_t kLogOverhead = 12;
// The whole fixed header.
inline constexpr size_t kHeaderSize = 61;
// The CRC covers [kCrcStart, end).
inline constexpr size_t kCrcStart = 21;
inline constexpr int8_t kMagicV2 = 2;
}  // namespace batch_layout

enum class CompressionCodec : int {
  kNone = 0,
  kGzip = 1,
  kSnappy = 2,
  kLz4 = 3,
  kZstd = 4,
};

enum class TimestampType : int {
  kCreateTime = 0,
  kLogAppendTime = 1,
};

// The type of a control record (the key's `type` field). Kafka defines ABORT
// as 0 and COMMIT as 1.
enum class ControlType : int {
  kAbort = 0,
  kCommit = 1,
};

// Big-endian helpers. `p` must point at enough readable bytes.
int16_t ReadBigEndian16(const char* p);
int32_t ReadBigEndian32(const char* p);
int64_t ReadBigEndian64(const char* p);
void WriteBigEndian32(char* p, int32_t v);
void WriteBigEndian64(char* p, int64_t v);

// Total size (12 + batchLength) announced by the first 12 bytes of `prefix`,
// or an error if `prefix` is shorter than 12 bytes or batchLength is below
// the v2 minimum (49). Does not look past the 12 bytes.
absl::StatusOr<size_t> PeekBatchSize(absl::string_view prefix);

// Rewrites bytes [0, 8) of the batch at `batch` with `base_offset`. The CRC
// does not cover these bytes, so it stays valid.
void SetBaseOffset(char* batch, int64_t base_offset);

class RecordBatchView {
 public:
  // Validates `bytes` as exactly one complete v2 RecordBatch: at least 61
  // bytes; 12 + batchLength equals bytes.size() (fewer: truncated batch; more:
  // trailing bytes, e.g. a second batch); magic 2; CRC32C over [21, end)
  // matches; a known compression codec; lastOffsetDelta >= 0; recordCount > 0
  // and equal to lastOffsetDelta + 1; a transactional batch has a producer
  // id; a control batch holds exactly one record. What a producer sends to
  // Append must pass this.
  static absl::StatusOr<RecordBatchView> Parse(absl::string_view bytes);

  // Header-only view for batches already accepted (reads, recovery scans):
  // checks that `bytes` holds at least the 61-byte header and exactly
  // 12 + batchLength bytes, and that magic is 2. Does not verify the CRC
  // (see CrcMatches) or field values.
  static absl::StatusOr<RecordBatchView> ParseHeader(absl::string_view bytes);

  // Field accessors.
  int64_t base_offset() const;
  int32_t batch_length() const;
  int32_t partition_leader_epoch() const;
  int8_t magic() const;
  uint32_t crc() const;
  int16_t attributes() const;
  int32_t last_offset_delta() const;
  int64_t base_timestamp() const;
  int64_t max_timestamp() const;
  int64_t producer_id() const;
  int16_t producer_epoch() const;
  int32_t base_sequence() const;
  int32_t record_count() const;

  // Derived values.
  int64_t last_offset() const { return base_offset() + last_offset_delta(); }
  int64_t next_offset() const { return last_offset() + 1; }
  CompressionCodec compression() const;
  TimestampType timestamp_type() const;
  bool is_transactional() const;
  bool is_control() const;
  bool has_delete_horizon() const;
  // Producer ids >= 0 mark idempotent/transactional producers.
  bool has_producer_id() const { return producer_id() >= 0; }
  // Sequence of the last record with Kafka's wrap-around: after INT32_MAX
  // comes 0. -1 if the batch carries no sequence.
  int32_t last_sequence() const;

  // For a control batch: the control record's type, decoded from the first
  // record's key (version int16, type int16) with full varint bounds
  // checking. Errors for non-control batches, compressed batches and
  // malformed or unknown keys.
  absl::StatusOr<ControlType> control_type() const;

  // CRC32C of bytes [21, end) as computed now, and whether it matches the
  // stored crc field.
  uint32_t ComputeCrc() const;
  bool CrcMatches() const { return ComputeCrc() == crc(); }

  absl::string_view bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  explicit RecordBatchView(absl::string_view bytes) : bytes_(bytes) {}

  absl::string_view bytes_;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_RECORD_BATCH_H_
