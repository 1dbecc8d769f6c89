#include "storage/batch/record_batch.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/record.h"

namespace kaas {
namespace {

namespace layout = batch_layout;

// The smallest batchLength of a v2 batch: the header after the batchLength
// field.
constexpr int32_t kMinBatchLength =
    static_cast<int32_t>(layout::kHeaderSize - layout::kLogOverhead);

constexpr int kMaxKnownCodec = static_cast<int>(CompressionCodec::kZstd);

absl::Status CorruptMessage(absl::string_view message) {
  return StorageError(StorageErrorCode::kCorruptMessage, message);
}

absl::Status InvalidRecord(absl::string_view message) {
  return StorageError(StorageErrorCode::kInvalidRecord, message);
}

void WriteUnsignedBigEndian(char* p, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    p[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

}  // namespace

void WriteBigEndian16(char* p, int16_t v) {
  WriteUnsignedBigEndian(p, static_cast<uint16_t>(v), 2);
}

void WriteBigEndian32(char* p, int32_t v) {
  WriteUnsignedBigEndian(p, static_cast<uint32_t>(v), 4);
}

void WriteBigEndian64(char* p, int64_t v) {
  WriteUnsignedBigEndian(p, static_cast<uint64_t>(v), 8);
}

absl::string_view CompressionCodecName(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kNone:
      return "none";
    case CompressionCodec::kGzip:
      return "gzip";
    case CompressionCodec::kSnappy:
      return "snappy";
    case CompressionCodec::kLz4:
      return "lz4";
    case CompressionCodec::kZstd:
      return "zstd";
  }
  return "unknown";
}

absl::StatusOr<size_t> PeekBatchSize(absl::string_view prefix) {
  if (prefix.size() < layout::kLogOverhead) {
    return CorruptMessage(absl::StrCat(
        "batch prefix too short: ", prefix.size(),
        " bytes, baseOffset and batchLength take ", layout::kLogOverhead));
  }
  const int32_t batch_length =
      ReadBigEndian32(prefix.data() + layout::kBatchLength);
  if (batch_length < kMinBatchLength) {
    return CorruptMessage(absl::StrCat("invalid batchLength ", batch_length,
                                       ": a v2 RecordBatch has at least ",
                                       kMinBatchLength,
                                       " bytes after that field"));
  }
  return layout::kLogOverhead + static_cast<size_t>(batch_length);
}

void SetBaseOffset(char* batch, int64_t base_offset) {
  WriteBigEndian64(batch + layout::kBaseOffset, base_offset);
}

void SetPartitionLeaderEpoch(char* batch, int32_t leader_epoch) {
  WriteBigEndian32(batch + layout::kPartitionLeaderEpoch, leader_epoch);
}

bool SameBatchButForLeaderFields(absl::string_view a, absl::string_view b) {
  constexpr size_t kEpochEnd = layout::kPartitionLeaderEpoch + 4;
  return a.size() == b.size() && a.size() >= kEpochEnd &&
         a.substr(layout::kBatchLength, 4) ==
             b.substr(layout::kBatchLength, 4) &&
         a.substr(kEpochEnd) == b.substr(kEpochEnd);
}

absl::StatusOr<RecordBatchView> RecordBatchView::ParseHeader(
    absl::string_view bytes) {
  if (bytes.size() < layout::kHeaderSize) {
    return CorruptMessage(absl::StrCat("batch too short: ", bytes.size(),
                                       " bytes, a v2 RecordBatch header has ",
                                       layout::kHeaderSize));
  }
  KAAS_ASSIGN_OR_RETURN(const size_t announced, PeekBatchSize(bytes));
  const int32_t batch_length =
      ReadBigEndian32(bytes.data() + layout::kBatchLength);
  if (announced > bytes.size()) {
    return CorruptMessage(absl::StrCat("truncated batch: batchLength ",
                                       batch_length, " announces ", announced,
                                       " bytes, got ", bytes.size()));
  }
  if (announced < bytes.size()) {
    return CorruptMessage(absl::StrCat(
        "trailing bytes: batchLength ", batch_length, " announces ", announced,
        " bytes, got ", bytes.size(), " (more than one batch?)"));
  }
  RecordBatchView view(bytes);
  if (view.magic() != layout::kMagicV2) {
    return CorruptMessage(
        absl::StrCat("unsupported magic ", view.magic(),
                     " (only v2 RecordBatches are accepted)"));
  }
  return view;
}

absl::StatusOr<RecordBatchView> RecordBatchView::Parse(
    absl::string_view bytes) {
  return ParseChecked(bytes, /*stored=*/false);
}

absl::StatusOr<RecordBatchView> RecordBatchView::ParseStored(
    absl::string_view bytes) {
  return ParseChecked(bytes, /*stored=*/true);
}

absl::StatusOr<RecordBatchView> RecordBatchView::ParseChecked(
    absl::string_view bytes, bool stored) {
  KAAS_ASSIGN_OR_RETURN(const RecordBatchView view, ParseHeader(bytes));
  const uint32_t computed = view.ComputeCrc();
  if (computed != view.crc()) {
    return CorruptMessage(absl::StrFormat(
        "crc mismatch: stored 0x%08x, computed 0x%08x", view.crc(), computed));
  }
  const int codec = view.attributes() & layout::kCodecMask;
  if (codec > kMaxKnownCodec) {
    return InvalidRecord(absl::StrCat("unknown compression codec ", codec));
  }
  if (view.last_offset_delta() < 0) {
    return InvalidRecord(
        absl::StrCat("invalid lastOffsetDelta ", view.last_offset_delta()));
  }
  if (view.record_count() < (stored ? 0 : 1)) {
    return InvalidRecord(
        absl::StrCat("invalid recordCount ", view.record_count()));
  }
  // lastOffsetDelta >= 0 here, so the + 1 cannot overflow when compared as
  // int64.
  if (stored ? view.record_count() > int64_t{view.last_offset_delta()} + 1
             : view.record_count() != int64_t{view.last_offset_delta()} + 1) {
    return InvalidRecord(absl::StrCat("recordCount ", view.record_count(),
                                      " does not match lastOffsetDelta ",
                                      view.last_offset_delta()));
  }
  if (view.is_transactional() && !view.has_producer_id()) {
    return InvalidRecord(
        absl::StrCat("transactional batch without a producer id (producerId ",
                     view.producer_id(), ")"));
  }
  if (view.is_control() && view.record_count() != 1 &&
      !(stored && view.record_count() == 0)) {
    return InvalidRecord(
        absl::StrCat("control batch with ", view.record_count(), " records"));
  }
  return view;
}

int8_t RecordBatchView::magic() const {
  return static_cast<int8_t>(bytes_[layout::kMagic]);
}

CompressionCodec RecordBatchView::compression() const {
  return static_cast<CompressionCodec>(attributes() & layout::kCodecMask);
}

TimestampType RecordBatchView::timestamp_type() const {
  return (attributes() & layout::kTimestampTypeBit) != 0
             ? TimestampType::kLogAppendTime
             : TimestampType::kCreateTime;
}

bool RecordBatchView::is_transactional() const {
  return (attributes() & layout::kTransactionalBit) != 0;
}

bool RecordBatchView::is_control() const {
  return (attributes() & layout::kControlBit) != 0;
}

bool RecordBatchView::has_delete_horizon() const {
  return (attributes() & layout::kDeleteHorizonBit) != 0;
}

int32_t RecordBatchView::last_sequence() const {
  const int32_t base = base_sequence();
  if (base < 0) return -1;
  // Kafka's DefaultRecordBatch.incrementSequence: wraps past INT32_MAX to 0.
  // Computed in int64 so a hostile lastOffsetDelta cannot overflow.
  const int64_t last = int64_t{base} + last_offset_delta();
  constexpr int64_t kSequenceSpace =
      int64_t{std::numeric_limits<int32_t>::max()} + 1;
  return static_cast<int32_t>(((last % kSequenceSpace) + kSequenceSpace) %
                              kSequenceSpace);
}

absl::StatusOr<ControlType> RecordBatchView::control_type() const {
  if (!is_control()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("not a control batch (attributes 0x%04x)",
                        static_cast<uint16_t>(attributes())));
  }
  if (compression() != CompressionCodec::kNone) {
    return InvalidRecord(absl::StrCat("control batch is ",
                                      CompressionCodecName(compression()),
                                      "-compressed; markers never are"));
  }
  absl::string_view records = bytes_.substr(layout::kRecords);
  Record record;
  absl::Status status = ConsumeRecord(&records, &record);
  if (!status.ok()) {
    return InvalidRecord(absl::StrCat("control record: ", status.message()));
  }
  // Kafka's ControlRecordType.parse: key = version int16, type int16; later
  // versions may append fields, so only the first 4 bytes are required.
  if (!record.key.has_value()) {
    return InvalidRecord("control record has a null key");
  }
  if (record.key->size() < 4) {
    return InvalidRecord(absl::StrCat("control record key has ",
                                      record.key->size(),
                                      " bytes, needs 4 (version, type)"));
  }
  const int16_t version = ReadBigEndian16(record.key->data());
  if (version < 0) {
    return InvalidRecord(
        absl::StrCat("invalid control record key version ", version));
  }
  const int16_t type = ReadBigEndian16(record.key->data() + 2);
  switch (type) {
    case static_cast<int16_t>(ControlType::kAbort):
      return ControlType::kAbort;
    case static_cast<int16_t>(ControlType::kCommit):
      return ControlType::kCommit;
    default:
      return InvalidRecord(
          absl::StrCat("unsupported control record type ", type,
                       " (only ABORT 0 and COMMIT 1 are known)"));
  }
}

uint32_t RecordBatchView::ComputeCrc() const {
  return crc32c::Value(bytes_.data() + layout::kCrcStart,
                       bytes_.size() - layout::kCrcStart);
}

}  // namespace kaas
