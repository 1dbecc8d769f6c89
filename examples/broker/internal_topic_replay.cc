#include "examples/broker/internal_topic_replay.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"

namespace kaas::broker {
namespace {

// Reads go in pieces of about this size.
constexpr size_t kReplayReadBytes = size_t{1} << 20;

}  // namespace

absl::Status ReplayInternalTopic(
    StorageEngine& engine, const TopicPartition& tp, absl::string_view what,
    absl::FunctionRef<absl::Status(int64_t offset, absl::string_view key,
                                   std::optional<absl::string_view> value)>
        apply) {
  KAAS_ASSIGN_OR_RETURN(int64_t offset, engine.LogStartOffset(tp));
  KAAS_ASSIGN_OR_RETURN(const int64_t end, engine.HighWatermark(tp));
  while (offset < end) {
    KAAS_ASSIGN_OR_RETURN(
        ReadResult read,
        engine.Read(tp, offset, kReplayReadBytes, Isolation::kReadUncommitted));
    if (read.batches == 0 || read.next_offset <= offset) break;
    // Owned: the records stay valid while they are applied.
    const std::string bytes(read.records);
    absl::string_view rest = bytes;
    while (!rest.empty()) {
      KAAS_ASSIGN_OR_RETURN(size_t size, PeekBatchSize(rest));
      if (size > rest.size()) {
        return absl::DataLossError(absl::StrCat(what, ": truncated batch"));
      }
      KAAS_ASSIGN_OR_RETURN(RecordBatchView batch,
                            RecordBatchView::ParseStored(rest.substr(0, size)));
      rest.remove_prefix(size);
      if (batch.is_control()) continue;
      KAAS_ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(batch));
      Record record;
      while (reader.Next(&record)) {
        if (!record.key.has_value()) continue;
        const int64_t at = batch.base_offset() + record.offset_delta;
        std::optional<absl::string_view> value;
        if (record.value.has_value()) value = *record.value;
        if (absl::Status applied = apply(at, *record.key, value);
            !applied.ok()) {
          return absl::DataLossError(
              absl::StrCat(what, ": offset ", at, ": ", applied.message()));
        }
      }
      KAAS_RETURN_IF_ERROR(reader.status());
    }
    offset = read.next_offset;
  }
  return absl::OkStatus();
}

}  // namespace kaas::broker
