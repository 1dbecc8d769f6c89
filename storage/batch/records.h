// File: storage/batch/records.h
//
// Iterating the records of a v2 RecordBatch (compressed ones decompressed
// with storage/batch/compression.h), for record validation, compaction,
// `kaaslog dump --records` and tests (the append path keeps batches opaque):
//
//   ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(view));
//   Record record;
//   while (reader.Next(&record)) Print(record);
//   RETURN_IF_ERROR(reader.status());
//
// Malformed records yield kInvalidRecord errors naming the record and its
// byte position (in the batch, or in the decompressed records); records that
// do not decompress yield kCorruptMessage (compression.h).
//
// Thread-safety: a RecordReader is thread-compatible; the batch bytes must
// outlive it and the Records it fills (a compressed batch's decompressed
// bytes belong to the reader: its Records live while it does).

#ifndef KAAS_STORAGE_BATCH_RECORDS_H_
#define KAAS_STORAGE_BATCH_RECORDS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/batch/compression.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"

namespace kaas {

class RecordReader {
 public:
  // A reader over the records of `batch`, decompressing them first when the
  // batch is compressed (at most `max_bytes` of them). Errors:
  // kCorruptMessage when they do not decompress, kInvalidRecord for a
  // negative recordCount (possible in a view from
  // RecordBatchView::ParseHeader).
  static absl::StatusOr<RecordReader> Create(
      const RecordBatchView& batch, size_t max_bytes = kMaxDecompressedBytes);

  // Decodes the next record into `*record` and returns true. Returns false
  // after the last of the batch's recordCount records or on error; status()
  // tells which. After the last record, bytes left in the batch are an error;
  // so is a record whose offsetDelta is not above the previous record's or
  // lies outside the batch (0..lastOffsetDelta): compaction leaves gaps but
  // keeps deltas ascending inside the batch.
  bool Next(Record* record);

  // OK while no error has occurred.
  const absl::Status& status() const { return status_; }

  // The decompressed records the Records point into (null for an
  // uncompressed batch), to keep them alive past the reader.
  std::shared_ptr<const std::string> decompressed() const {
    return decompressed_;
  }

 private:
  RecordReader(std::shared_ptr<const std::string> decompressed,
               absl::string_view records, size_t size, int32_t record_count,
               int32_t last_offset_delta)
      : decompressed_(std::move(decompressed)),
        remaining_(records),
        size_(size),
        record_count_(record_count),
        last_offset_delta_(last_offset_delta) {}

  // The decompressed records of a compressed batch (null otherwise), on the
  // heap so that views into it survive moves of the reader.
  std::shared_ptr<const std::string> decompressed_;
  // Bytes not yet decoded.
  absl::string_view remaining_;
  // Positions in messages count from the batch start (uncompressed) or the
  // start of the decompressed records: `size_` is what remaining_ counts
  // down from.
  size_t size_;
  int32_t record_count_;
  int32_t last_offset_delta_;
  // Records decoded so far, and the last one's offsetDelta.
  int32_t index_ = 0;
  int32_t previous_delta_ = -1;
  absl::Status status_;
};

// The records of a batch, with what they point into when the batch was
// compressed (they point into the batch otherwise).
struct DecodedRecords {
  std::vector<Record> records;
  std::shared_ptr<const std::string> decompressed;

  size_t size() const { return records.size(); }
  const Record& operator[](size_t i) const { return records[i]; }
  const Record& at(size_t i) const { return records.at(i); }
  std::vector<Record>::const_iterator begin() const { return records.begin(); }
  std::vector<Record>::const_iterator end() const { return records.end(); }
};

// All records of `batch`, or the first error RecordReader reports.
absl::StatusOr<DecodedRecords> DecodeRecords(const RecordBatchView& batch);

// What Kafka's broker checks of a batch's records before it accepts it
// (LogValidator), beyond the header checks of RecordBatchView::Parse: the
// records decompress (kCorruptMessage otherwise, e.g. codec bits on bytes
// that are not compressed) and decode exactly (every length, varint and
// count agrees; no bytes left over), each record's offsetDelta is its index
// and its attributes are 0, header keys are not null, and a control batch
// holds one record whose key is a control key (kInvalidRecord otherwise).
// Decompression is bounded by `max_bytes`.
absl::Status ValidateRecords(const RecordBatchView& batch,
                             size_t max_bytes = kMaxDecompressedBytes);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_RECORDS_H_
