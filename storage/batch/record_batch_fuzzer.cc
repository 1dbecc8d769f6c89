// libFuzzer target: RecordBatch validation and record decoding on arbitrary
// bytes (what a producer or a damaged segment may hold). Beyond "no crash",
// it checks:
//   * the parsers nest: what Parse accepts ParseStored accepts, and what
//     ParseStored accepts ParseHeader accepts;
//   * a batch Parse accepts decodes to exactly recordCount records, with
//     offset deltas inside the batch;
//   * a stored batch whose records decode is rewritten with all of them into
//     a batch that parses, carries a matching CRC, covers the same offsets
//     and decodes to the same records (same keys, values, headers, offsets
//     and timestamps).
// The first input byte is a mode: when its low bit is set the batch's CRC
// is recomputed before parsing, so that mutations reach record decoding
// instead of stopping at the checksum.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "storage/batch/batch_rewrite.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"

namespace kaas {
namespace {

void CheckSameRecord(const RecordBatchView& a_batch, const Record& a,
                     const RecordBatchView& b_batch, const Record& b) {
  CHECK(a.key == b.key);
  CHECK(a.value == b.value);
  CHECK_EQ(a.offset_delta, b.offset_delta);
  CHECK_EQ(a.headers.size(), b.headers.size());
  for (size_t i = 0; i < a.headers.size(); ++i) {
    CHECK(a.headers[i].key == b.headers[i].key);
    CHECK(a.headers[i].value == b.headers[i].value);
  }
  if (!a_batch.has_delete_horizon() && !b_batch.has_delete_horizon()) {
    // As Kafka's (Java long) arithmetic: wrapping.
    CHECK_EQ(static_cast<uint64_t>(a_batch.base_timestamp()) +
                 static_cast<uint64_t>(a.timestamp_delta),
             static_cast<uint64_t>(b_batch.base_timestamp()) +
                 static_cast<uint64_t>(b.timestamp_delta));
  }
}

void FuzzBatch(absl::string_view bytes) {
  const absl::StatusOr<RecordBatchView> header =
      RecordBatchView::ParseHeader(bytes);
  const absl::StatusOr<RecordBatchView> stored =
      RecordBatchView::ParseStored(bytes);
  const absl::StatusOr<RecordBatchView> batch = RecordBatchView::Parse(bytes);
  if (batch.ok()) CHECK(stored.ok()) << stored.status();
  if (stored.ok()) CHECK(header.ok()) << header.status();
  if (header.ok()) (void)header->control_type();
  if (!stored.ok()) return;
  CHECK(stored->CrcMatches());
  const absl::StatusOr<DecodedRecords> records = DecodeRecords(*stored);
  if (!records.ok()) return;
  if (batch.ok()) {
    CHECK_EQ(static_cast<int64_t>(records->size()), batch->record_count());
  }
  for (const Record& record : *records) {
    CHECK_GE(record.offset_delta, 0);
    CHECK_LE(record.offset_delta, stored->last_offset_delta());
  }
  const absl::StatusOr<std::string> rewritten =
      RewriteBatch(*stored, records->records, std::nullopt);
  if (!rewritten.ok()) return;  // timestamps that cannot be re-based
  const absl::StatusOr<RecordBatchView> again =
      RecordBatchView::ParseStored(*rewritten);
  CHECK(again.ok()) << again.status();
  CHECK(again->CrcMatches());
  CHECK_EQ(again->base_offset(), stored->base_offset());
  CHECK_EQ(again->last_offset_delta(), stored->last_offset_delta());
  CHECK_EQ(again->producer_id(), stored->producer_id());
  CHECK_EQ(again->is_control(), stored->is_control());
  const absl::StatusOr<DecodedRecords> decoded = DecodeRecords(*again);
  CHECK(decoded.ok()) << decoded.status();
  CHECK_EQ(decoded->size(), records->size());
  for (size_t i = 0; i < records->size(); ++i) {
    CheckSameRecord(*stored, (*records)[i], *again, (*decoded)[i]);
  }
}

}  // namespace
}  // namespace kaas

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) != 0 && bytes.size() >= kaas::batch_layout::kHeaderSize) {
    namespace layout = kaas::batch_layout;
    kaas::WriteBigEndian32(&bytes[layout::kCrc],
                           static_cast<int32_t>(kaas::crc32c::Value(
                               bytes.data() + layout::kCrcStart,
                               bytes.size() - layout::kCrcStart)));
  }
  kaas::FuzzBatch(bytes);
  return 0;
}
