#include "testing/stored_records.h"

#include <utility>

#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"

namespace kaas::test {

absl::StatusOr<std::vector<StoredRecord>> StoredRecordsOf(
    absl::string_view bytes) {
  std::vector<StoredRecord> out;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok()) return size.status();
    absl::StatusOr<RecordBatchView> batch =
        RecordBatchView::ParseStored(bytes.substr(0, *size));
    if (!batch.ok()) return batch.status();
    absl::StatusOr<DecodedRecords> records = DecodeRecords(*batch);
    if (!records.ok()) return records.status();
    for (const Record& record : *records) {
      StoredRecord stored;
      stored.offset = batch->base_offset() + record.offset_delta;
      if (record.key) stored.key = std::string(*record.key);
      if (record.value) stored.value = std::string(*record.value);
      stored.timestamp = batch->base_timestamp() + record.timestamp_delta;
      stored.control = batch->is_control();
      out.push_back(std::move(stored));
    }
    bytes.remove_prefix(*size);
  }
  return out;
}

absl::StatusOr<std::map<int64_t, std::string>> BatchesOf(
    absl::string_view bytes) {
  std::map<int64_t, std::string> batches;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok()) return size.status();
    if (*size > bytes.size()) {
      return absl::DataLossError("a read returned a partial batch");
    }
    const absl::string_view batch = bytes.substr(0, *size);
    batches[ReadBigEndian64(batch.data() + batch_layout::kBaseOffset)] =
        std::string(batch);
    bytes.remove_prefix(*size);
  }
  return batches;
}

std::map<std::string, RecordValue> LatestByKey(
    const std::vector<StoredRecord>& records) {
  std::map<std::string, RecordValue> latest;
  for (const StoredRecord& record : records) {
    if (record.key && !record.control) latest[*record.key] = record.value;
  }
  return latest;
}

}  // namespace kaas::test
