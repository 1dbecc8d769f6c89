// File: storage/batch/records.h
//
// Iterating the records of an uncompressed v2 RecordBatch, for
// `kaaslog dump --records` and tests (the engine itself never decodes
// records):
//
//   ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(view));
//   Record record;
//   while (reader.Next(&record)) Print(record);
//   RETURN_IF_ERROR(reader.status());
//
// Records of a compressed batch are not decoded (the engine links no
// codecs). Malformed records yield kInvalidRecord errors naming the record
// and its byte position in the batch.
//
// Thread-safety: a RecordReader is thread-compatible; the batch bytes must
// outlive it and the Records it fills.

#ifndef KAAS_STORAGE_BATCH_RECORDS_H_
#define KAAS_STORAGE_BATCH_RECORDS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"

namespace kaas {

class RecordReader {
 public:
  // A reader over the records of `batch`. Errors: Unimplemented for a
  // compressed batch ("records of a gzip-compressed batch are not decoded"),
  // kInvalidRecord for a negative recordCount (possible in a view from
  // RecordBatchView::ParseHeader).
  static absl::StatusOr<RecordReader> Create(const RecordBatchView& batch);

  // Decodes the next record into `*record` and returns true. Returns false
  // after the last of the batch's recordCount records or on error; status()
  // tells which. After the last record, bytes left in the batch are an error.
  bool Next(Record* record);

  // OK while no error has occurred.
  const absl::Status& status() const { return status_; }

 private:
  RecordReader(absl::string_view records, size_t batch_size,
               int32_t record_count)
      : remaining_(records),
        batch_size_(batch_size),
        record_count_(record_count) {}

  // Bytes of the batch not yet decoded.
  absl::string_view remaining_;
  size_t batch_size_;
  int32_t record_count_;
  // Records decoded so far.
  int32_t index_ = 0;
  absl::Status status_;
};

// All records of `batch`, or the first error RecordReader reports.
absl::StatusOr<std::vector<Record>> DecodeRecords(const RecordBatchView& batch);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_RECORDS_H_
