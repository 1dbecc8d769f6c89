#include "storage/batch/records.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/storage_error.h"

namespace kaas {

absl::StatusOr<RecordReader> RecordReader::Create(const RecordBatchView& batch,
                                                  size_t max_bytes) {
  if (batch.record_count() < 0) {
    return StorageError(
        StorageErrorCode::kInvalidRecord,
        absl::StrCat("invalid recordCount ", batch.record_count()));
  }
  const absl::string_view records =
      batch.bytes().substr(batch_layout::kRecords);
  if (batch.compression() == CompressionCodec::kNone) {
    return RecordReader(nullptr, records, batch.size(), batch.record_count(),
                        batch.last_offset_delta());
  }
  KAAS_ASSIGN_OR_RETURN(std::string decompressed,
                        Decompress(batch.compression(), records, max_bytes));
  auto owned = std::make_shared<const std::string>(std::move(decompressed));
  const absl::string_view view = *owned;
  return RecordReader(std::move(owned), view, view.size(), batch.record_count(),
                      batch.last_offset_delta());
}

bool RecordReader::Next(Record* record) {
  if (!status_.ok()) return false;
  const size_t position = size_ - remaining_.size();
  if (index_ == record_count_) {
    if (!remaining_.empty()) {
      status_ = StorageError(
          StorageErrorCode::kInvalidRecord,
          absl::StrCat(remaining_.size(), " bytes after the last of the ",
                       record_count_, " records, at byte ", position));
    }
    return false;
  }
  if (remaining_.empty()) {
    status_ = StorageError(StorageErrorCode::kInvalidRecord,
                           absl::StrCat("batch ends after ", index_, " of ",
                                        record_count_, " records"));
    return false;
  }
  absl::Status status = ConsumeRecord(&remaining_, record);
  if (!status.ok()) {
    status_ = StorageError(StorageErrorCode::kInvalidRecord,
                           absl::StrCat("record ", index_, " at byte ",
                                        position, ": ", status.message()));
    return false;
  }
  // Every offset a record gives itself lies in its batch, once: the cleaner
  // keys its offset map by them and lookups answer with them.
  if (record->offset_delta <= previous_delta_ ||
      record->offset_delta > last_offset_delta_) {
    status_ = StorageError(
        StorageErrorCode::kInvalidRecord,
        absl::StrCat("record ", index_, " at byte ", position, ": offsetDelta ",
                     record->offset_delta,
                     previous_delta_ < 0
                         ? ""
                         : absl::StrCat(" is not above the previous record's ",
                                        previous_delta_, " or"),
                     " lies outside the batch's 0..", last_offset_delta_));
    return false;
  }
  previous_delta_ = record->offset_delta;
  ++index_;
  return true;
}

absl::StatusOr<DecodedRecords> DecodeRecords(const RecordBatchView& batch) {
  KAAS_ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(batch));
  DecodedRecords decoded;
  Record record;
  while (reader.Next(&record)) decoded.records.push_back(std::move(record));
  KAAS_RETURN_IF_ERROR(reader.status());
  decoded.decompressed = reader.decompressed();
  return decoded;
}

absl::Status ValidateRecords(const RecordBatchView& batch, size_t max_bytes) {
  KAAS_ASSIGN_OR_RETURN(RecordReader reader,
                        RecordReader::Create(batch, max_bytes));
  auto invalid = [](int32_t index, absl::string_view why) {
    return StorageError(StorageErrorCode::kInvalidRecord,
                        absl::StrCat("record ", index, ": ", why));
  };
  Record record;
  int32_t index = 0;
  while (reader.Next(&record)) {
    if (record.offset_delta != index) {
      return invalid(index, absl::StrCat("offsetDelta ", record.offset_delta,
                                         ", expected ", index,
                                         " (inner offsets out of sequence)"));
    }
    if (record.attributes != 0) {
      return invalid(index, absl::StrCat("attributes ",
                                         static_cast<int>(record.attributes),
                                         ", expected 0"));
    }
    if (batch.is_control() && !record.key.has_value()) {
      return invalid(index, "a control record without a key");
    }
    ++index;
  }
  return reader.status();
}

}  // namespace kaas
