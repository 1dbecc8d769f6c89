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
// What protects each header field: the CRC covers bytes [21, end), i.e. the
// attributes, everything after them and the records; a damaged crc field
// shows up as a mismatch as well. Of the fields before it, batchLength
// is checked by framing (the batch must be exactly 12 + batchLength bytes)
// and magic by the magic check. baseOffset and partitionLeaderEpoch are NOT
// protected at all: Kafka leaves them out of the CRC so that the broker can
// stamp them without recomputing it, so a corrupted value there goes unseen
// by Parse; readers must range-check offsets themselves.
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

// Bits of the attributes field.
inline constexpr int16_t kCodecMask = 0x07;
inline constexpr int16_t kTimestampTypeBit = 0x08;
inline constexpr int16_t kTransactionalBit = 0x10;
inline constexpr int16_t kControlBit = 0x20;
inline constexpr int16_t kDeleteHorizonBit = 0x40;
}  // namespace batch_layout

enum class CompressionCodec : int {
  kNone = 0,
  kGzip = 1,
  kSnappy = 2,
  kLz4 = 3,
  kZstd = 4,
};

// "none", "gzip", "snappy", "lz4", "zstd"; "unknown" for other values (a
// view from ParseHeader may carry codec bits 5-7).
absl::string_view CompressionCodecName(CompressionCodec codec);

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

// Big-endian helpers. `p` must point at enough readable bytes. The reads are
// inline: the recovery scan and reads peek several header fields per batch
// (compilers turn the byte loop into one load and a byte swap).
namespace batch_internal {
inline uint64_t ReadUnsignedBigEndian(const char* p, int bytes) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | u[i];
  return v;
}
}  // namespace batch_internal
inline int16_t ReadBigEndian16(const char* p) {
  return static_cast<int16_t>(batch_internal::ReadUnsignedBigEndian(p, 2));
}
inline int32_t ReadBigEndian32(const char* p) {
  return static_cast<int32_t>(batch_internal::ReadUnsignedBigEndian(p, 4));
}
inline int64_t ReadBigEndian64(const char* p) {
  return static_cast<int64_t>(batch_internal::ReadUnsignedBigEndian(p, 8));
}
void WriteBigEndian16(char* p, int16_t v);
void WriteBigEndian32(char* p, int32_t v);
void WriteBigEndian64(char* p, int64_t v);

// Total size (12 + batchLength) announced by the first 12 bytes of `prefix`,
// or a kCorruptMessage error if `prefix` is shorter than 12 bytes ("batch
// prefix too short: ...") or batchLength is below the v2 minimum of 49
// ("invalid batchLength 10: ..."). Does not look past the 12 bytes; the
// recovery scan uses it to frame the next batch before reading it.
absl::StatusOr<size_t> PeekBatchSize(absl::string_view prefix);

// Rewrites bytes [0, 8) of the batch at `batch` with `base_offset`. The CRC
// does not cover these bytes, so it stays valid.
void SetBaseOffset(char* batch, int64_t base_offset);

// Rewrites bytes [12, 16) (partitionLeaderEpoch) with `leader_epoch`: the
// epoch of the leader that assigned the batch its offsets (KIP-101), which
// followers and KIP-320 consumers compare to detect a diverged log. Outside
// the CRC too.
void SetPartitionLeaderEpoch(char* batch, int32_t leader_epoch);

// Whether two encodings are the same batch as its producer sent it: equal
// but for the two fields a leader assigns (base offset, leader epoch).
bool SameBatchButForLeaderFields(absl::string_view a, absl::string_view b);

class RecordBatchView {
 public:
  // Validates `bytes` as exactly one complete v2 RecordBatch. What a
  // producer sends to Append must pass this. Checks, in order, each with its
  // own message:
  //   kCorruptMessage
  //     at least 61 bytes          "batch too short: 40 bytes, a v2
  //                                 RecordBatch header has 61"
  //     batchLength >= 49          "invalid batchLength 10: ..."
  //     12 + batchLength == size   "truncated batch: batchLength 200
  //                                 announces 212 bytes, got 100" /
  //                                "trailing bytes: ... (more than one
  //                                 batch?)"
  //     magic 2                    "unsupported magic 1 (only v2
  //                                 RecordBatches are accepted)"
  //     CRC32C of [21, end)        "crc mismatch: stored 0x..., computed
  //                                 0x..."
  //   kInvalidRecord
  //     codec 0-4                  "unknown compression codec 6"
  //     lastOffsetDelta >= 0       "invalid lastOffsetDelta -1"
  //     recordCount > 0            "invalid recordCount 0"
  //     recordCount ==             "recordCount 3 does not match
  //       lastOffsetDelta + 1       lastOffsetDelta 4"
  //     transactional => pid >= 0  "transactional batch without a producer
  //                                 id (producerId -1)"
  //     control => 1 record        "control batch with 2 records"
  // Records are not decoded (see records.h); producer epoch/sequence rules
  // belong to the idempotence layer.
  static absl::StatusOr<RecordBatchView> Parse(absl::string_view bytes);

  // A batch as a log may store it, for a follower replicating a leader's
  // log: Parse's checks, except that a compacted batch's recordCount may be
  // anything from 0 to lastOffsetDelta + 1 (compaction removes records but
  // keeps the offsets the batch covers; storage/batch/batch_rewrite.h), and
  // a control batch holds at most one record.
  static absl::StatusOr<RecordBatchView> ParseStored(absl::string_view bytes);

  // Header-only view for batches already accepted (reads, recovery scans):
  // the framing and magic checks of Parse, with the same errors. Does not
  // verify the CRC (see CrcMatches) or field values, so accessors may return
  // any value.
  static absl::StatusOr<RecordBatchView> ParseHeader(absl::string_view bytes);

  // Field accessors.
  int64_t base_offset() const {
    return ReadBigEndian64(bytes_.data() + batch_layout::kBaseOffset);
  }
  int32_t batch_length() const {
    return ReadBigEndian32(bytes_.data() + batch_layout::kBatchLength);
  }
  int32_t partition_leader_epoch() const {
    return ReadBigEndian32(bytes_.data() + batch_layout::kPartitionLeaderEpoch);
  }
  int8_t magic() const;
  uint32_t crc() const {
    return static_cast<uint32_t>(
        ReadBigEndian32(bytes_.data() + batch_layout::kCrc));
  }
  int16_t attributes() const {
    return ReadBigEndian16(bytes_.data() + batch_layout::kAttributes);
  }
  int32_t last_offset_delta() const {
    return ReadBigEndian32(bytes_.data() + batch_layout::kLastOffsetDelta);
  }
  int64_t base_timestamp() const {
    return ReadBigEndian64(bytes_.data() + batch_layout::kBaseTimestamp);
  }
  int64_t max_timestamp() const {
    return ReadBigEndian64(bytes_.data() + batch_layout::kMaxTimestamp);
  }
  int64_t producer_id() const {
    return ReadBigEndian64(bytes_.data() + batch_layout::kProducerId);
  }
  int16_t producer_epoch() const {
    return ReadBigEndian16(bytes_.data() + batch_layout::kProducerEpoch);
  }
  int32_t base_sequence() const {
    return ReadBigEndian32(bytes_.data() + batch_layout::kBaseSequence);
  }
  int32_t record_count() const {
    return ReadBigEndian32(bytes_.data() + batch_layout::kRecordCount);
  }

  // Derived values. The offset sums wrap modulo 2^64 instead of overflowing:
  // baseOffset is not CRC-covered and a ParseHeader view may carry any
  // lastOffsetDelta, so hostile bytes yield garbage offsets (which callers
  // range-check against what they expect), never undefined behaviour.
  int64_t last_offset() const {
    return WrappingAdd(base_offset(), last_offset_delta());
  }
  int64_t next_offset() const { return WrappingAdd(last_offset(), 1); }
  CompressionCodec compression() const;
  TimestampType timestamp_type() const;
  bool is_transactional() const;
  bool is_control() const;
  bool has_delete_horizon() const;
  // Producer ids >= 0 mark idempotent/transactional producers.
  bool has_producer_id() const { return producer_id() >= 0; }
  // Sequence of the last record, baseSequence + lastOffsetDelta with Kafka's
  // wrap-around (DefaultRecordBatch.incrementSequence): after INT32_MAX comes
  // 0, so base INT32_MAX - 1 with 4 records ends at 1. -1 if the batch
  // carries no sequence (baseSequence < 0).
  int32_t last_sequence() const;

  // For a control batch: the control record's type, decoded from the first
  // record's key (version int16, type int16) with full varint bounds
  // checking rather than the fixed offsets of the canonical marker layout.
  // Errors: FailedPrecondition for a non-control batch; kInvalidRecord for a
  // compressed control batch, a malformed first record (the messages of
  // record.h, prefixed "control record: "), a null or short key, a negative
  // key version, or a type other than ABORT/COMMIT (Kafka's KRaft-only types
  // 2+ included). Key versions above 0 are read like 0, as Kafka's
  // ControlRecordType.parse does.
  absl::StatusOr<ControlType> control_type() const;

  // CRC32C of bytes [21, end) as computed now, and whether it matches the
  // stored crc field. Cost: one pass over the batch (crc32c.h).
  uint32_t ComputeCrc() const;
  bool CrcMatches() const { return ComputeCrc() == crc(); }

  absl::string_view bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  explicit RecordBatchView(absl::string_view bytes) : bytes_(bytes) {}
  // Parse (stored: ParseStored).
  static absl::StatusOr<RecordBatchView> ParseChecked(absl::string_view bytes,
                                                      bool stored);

  static int64_t WrappingAdd(int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) +
                                static_cast<uint64_t>(b));
  }

  absl::string_view bytes_;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_RECORD_BATCH_H_
