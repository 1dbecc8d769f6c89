// File: testing/stored_records.h
//
// Decodes what a read returned (a run of stored RecordBatches, compacted
// ones included) into records, for tests that compare a log with a model:
//
//   ASSERT_OK_AND_ASSIGN(std::vector<StoredRecord> records,
//                        StoredRecordsOf(read->records));
//   EXPECT_EQ(LatestByKey(records), model);
//
// Thread-safety: the functions are thread-safe.

#ifndef KAAS_TESTING_STORED_RECORDS_H_
#define KAAS_TESTING_STORED_RECORDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kaas::test {

using RecordValue = std::optional<std::string>;  // nullopt: null (tombstone)

struct StoredRecord {
  int64_t offset = 0;
  RecordValue key;
  RecordValue value;
  int64_t timestamp = 0;
  bool control = false;  // a transaction marker's record
};

// The records of the batches in `bytes`, in order, with the offsets their
// batches give them. Errors: the first batch that does not parse or whose
// records do not decode (kInvalidRecord / kCorruptRecord as the batch layer
// reports them).
absl::StatusOr<std::vector<StoredRecord>> StoredRecordsOf(
    absl::string_view bytes);

// The batches in `bytes` (a read's records), by base offset. Errors: the
// first batch that does not frame (PeekBatchSize's).
absl::StatusOr<std::map<int64_t, std::string>> BatchesOf(
    absl::string_view bytes);

// key -> value of the latest data record of each key (control records and
// null keys are skipped).
std::map<std::string, RecordValue> LatestByKey(
    const std::vector<StoredRecord>& records);

}  // namespace kaas::test

#endif  // KAAS_TESTING_STORED_RECORDS_H_
