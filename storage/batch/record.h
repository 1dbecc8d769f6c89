// File: storage/batch/record.h
//
// One record of a Kafka v2 RecordBatch, and its decoder. Inside an
// uncompressed batch the records follow the 61-byte header back to back:
//
//   length             varint   bytes of the record after this field
//   attributes         int8     unused by Kafka
//   timestampDelta     varlong  relative to the batch's baseTimestamp
//   offsetDelta        varint   relative to the batch's baseOffset
//   keyLength          varint   -1 for a null key
//   key                bytes
//   valueLength        varint   -1 for a null value
//   value              bytes
//   headers count      varint
//   headers            headerKeyLength varint (>= 0), headerKey bytes,
//                      headerValueLength varint (-1 for null), value bytes
//
// The engine never decodes records on the append path ("byte opacity");
// this is for control markers (RecordBatchView::control_type), compaction
// (which re-encodes the records it keeps), `kaaslog dump --records` and
// tests. To walk a whole batch use storage/batch/records.h.
//
// Thread-safety: pure functions; a Record is a value.

#ifndef KAAS_STORAGE_BATCH_RECORD_H_
#define KAAS_STORAGE_BATCH_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"

namespace kaas {

struct RecordHeader {
  absl::string_view key;
  // nullopt for a null value (headerValueLength -1).
  absl::optional<absl::string_view> value;
};

// A decoded record. The string_views point into the decoded bytes, which must
// outlive the Record.
struct Record {
  int8_t attributes = 0;
  int64_t timestamp_delta = 0;
  int32_t offset_delta = 0;
  // nullopt for a null key or value (length -1).
  absl::optional<absl::string_view> key;
  absl::optional<absl::string_view> value;
  std::vector<RecordHeader> headers;
};

// Decodes the record at the front of `*input` into `*record` and removes its
// bytes from `*input`. Never reads outside `*input`. Errors carry
// StorageErrorCode::kInvalidRecord and name the field, e.g.
//   "record length 50 exceeds the 20 bytes left"
//   "keyLength: truncated varint: input ends after 1 bytes"
//   "valueLength 9 exceeds the 4 bytes left in the record"
//   "record length 40 but its fields end after 38 bytes"
// On error `*input` and `*record` are in an unspecified state.
absl::Status ConsumeRecord(absl::string_view* input, Record* record);

// Appends the v2 encoding of `record` (length prefix included) to `*out`,
// with its offset_delta and attributes and the given timestamp delta (a
// rewritten batch may move its base timestamp). ConsumeRecord reads it back.
void AppendRecord(const Record& record, int64_t timestamp_delta,
                  std::string* out);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_RECORD_H_
