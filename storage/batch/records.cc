#include "storage/batch/records.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "storage/common/storage_error.h"

namespace kaas {

absl::StatusOr<RecordReader> RecordReader::Create(
    const RecordBatchView& batch) {
  if (batch.compression() != CompressionCodec::kNone) {
    return absl::UnimplementedError(
        absl::StrCat("records of a ", CompressionCodecName(batch.compression()),
                     "-compressed batch are not decoded"));
  }
  if (batch.record_count() < 0) {
    return StorageError(
        StorageErrorCode::kInvalidRecord,
        absl::StrCat("invalid recordCount ", batch.record_count()));
  }
  return RecordReader(batch.bytes().substr(batch_layout::kRecords),
                      batch.size(), batch.record_count());
}

bool RecordReader::Next(Record* record) {
  if (!status_.ok()) return false;
  const size_t position = batch_size_ - remaining_.size();
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
  ++index_;
  return true;
}

absl::StatusOr<std::vector<Record>> DecodeRecords(
    const RecordBatchView& batch) {
  KAAS_ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(batch));
  std::vector<Record> records;
  Record record;
  while (reader.Next(&record)) records.push_back(std::move(record));
  KAAS_RETURN_IF_ERROR(reader.status());
  return records;
}

}  // namespace kaas
