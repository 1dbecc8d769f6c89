// File: tools/log_dump.cc

#include "tools/log_dump.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "storage/batch/record.h"
#include "storage/batch/records.h"
#include "storage/segment/log_scanner.h"

namespace kaas::tools {
namespace {

const char* Bool(bool value) { return value ? "true" : "false"; }

std::string OptionalBytes(const absl::optional<absl::string_view>& bytes,
                          size_t limit) {
  return bytes.has_value() ? PrintableOrHex(*bytes, limit) : "null";
}

// Prints the records of `batch`; false if they could not all be decoded.
bool PrintRecords(const RecordBatchView& batch, size_t limit,
                  std::ostream& out) {
  absl::StatusOr<RecordReader> reader = RecordReader::Create(batch);
  if (!reader.ok()) {
    out << "| records not decoded: " << reader.status().message() << "\n";
    return false;
  }
  Record record;
  while (reader->Next(&record)) {
    std::vector<std::string> headers;
    for (const RecordHeader& header : record.headers) {
      headers.push_back(absl::StrCat(PrintableOrHex(header.key, limit), "=",
                                     OptionalBytes(header.value, limit)));
    }
    out << "| offset: " << batch.base_offset() + record.offset_delta
        << " timestamp: " << batch.base_timestamp() + record.timestamp_delta;
    if (batch.base_sequence() >= 0) {
      out << " sequence: "
          << static_cast<int64_t>(batch.base_sequence()) + record.offset_delta;
    }
    out << " key: " << OptionalBytes(record.key, limit)
        << " value: " << OptionalBytes(record.value, limit) << " headers: ["
        << absl::StrJoin(headers, ", ") << "]\n";
  }
  if (!reader->status().ok()) {
    out << "| records damaged: " << reader->status().message() << "\n";
    return false;
  }
  return true;
}

// The base offset of the batch at `position` (whose framing ScanLog checked).
absl::StatusOr<int64_t> BaseOffsetAt(const fs::ReadableFile& file,
                                     uint64_t position) {
  char bytes[8];
  KAAS_ASSIGN_OR_RETURN(size_t got,
                        file.ReadAt(position, sizeof(bytes), bytes));
  if (got < sizeof(bytes)) {
    return absl::DataLossError(
        absl::StrCat(file.path(), " shrank while being dumped"));
  }
  return ReadBigEndian64(bytes);
}

}  // namespace

std::string PrintableOrHex(absl::string_view bytes, size_t limit) {
  absl::string_view shown =
      limit > 0 && bytes.size() > limit ? bytes.substr(0, limit) : bytes;
  bool printable = std::all_of(shown.begin(), shown.end(),
                               [](char c) { return c >= 0x20 && c <= 0x7e; });
  std::string text = printable
                         ? absl::StrCat("\"", absl::CEscape(shown), "\"")
                         : absl::StrCat("0x", absl::BytesToHexString(shown));
  if (shown.size() < bytes.size()) {
    absl::StrAppend(&text, "...(", bytes.size(), " bytes)");
  }
  return text;
}

std::string DescribeBatch(const RecordBatchView& batch, uint64_t position,
                          uint32_t computed_crc) {
  const bool crc_valid = computed_crc == batch.crc();
  std::string line = absl::StrFormat(
      "baseOffset: %d lastOffset: %d count: %d baseSequence: %d "
      "lastSequence: %d producerId: %d producerEpoch: %d "
      "partitionLeaderEpoch: %d isTransactional: %s isControl: %s "
      "position: %d baseTimestamp: %d maxTimestamp: %d timestampType: %s "
      "size: %d magic: %d compresscodec: %s crc: 0x%08x isvalid: %s",
      batch.base_offset(), batch.last_offset(), batch.record_count(),
      batch.base_sequence(), batch.last_sequence(), batch.producer_id(),
      batch.producer_epoch(), batch.partition_leader_epoch(),
      Bool(batch.is_transactional()), Bool(batch.is_control()), position,
      batch.base_timestamp(), batch.max_timestamp(),
      batch.timestamp_type() == TimestampType::kLogAppendTime ? "LogAppendTime"
                                                              : "CreateTime",
      batch.size(), batch.magic(), CompressionCodecName(batch.compression()),
      batch.crc(), Bool(crc_valid));
  if (!crc_valid)
    absl::StrAppendFormat(&line, " computedCrc: 0x%08x", computed_crc);
  if (batch.has_delete_horizon()) {
    // KIP-534: compaction stamped the horizon in the baseTimestamp field.
    absl::StrAppend(&line, " hasDeleteHorizon: true deleteHorizonMs: ",
                    batch.base_timestamp());
  }
  const int64_t offsets = int64_t{batch.last_offset_delta()} + 1;
  if (batch.record_count() >= 0 && batch.record_count() < offsets) {
    // Compaction keeps a batch's offsets when it removes records: the gap.
    absl::StrAppend(&line, " compacted: ", offsets - batch.record_count(),
                    " of ", offsets, " offsets removed");
    if (batch.record_count() == 0 && !batch.has_producer_id()) {
      absl::StrAppend(&line, " (stands for batches compaction removed)");
    }
  }
  if (batch.is_control()) {
    absl::StatusOr<ControlType> type = batch.control_type();
    if (type.ok()) {
      absl::StrAppend(&line, " endTxnMarker: ",
                      *type == ControlType::kCommit ? "COMMIT" : "ABORT");
    } else {
      absl::StrAppend(&line, " endTxnMarker: unreadable (",
                      type.status().message(), ")");
    }
  }
  return line;
}

absl::StatusOr<LogDumpSummary> DumpLogFile(fs::FileSystem& fs,
                                           const std::string& path,
                                           std::optional<int64_t> base_offset,
                                           const LogDumpOptions& options,
                                           std::ostream& out) {
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::ReadableFile> file,
                        fs::FileOpener::OpenForRead(fs, path));
  LogDumpSummary summary;
  KAAS_ASSIGN_OR_RETURN(summary.file_size, file->Size());
  out << "Dumping " << path << " (" << summary.file_size << " bytes)\n";
  int64_t expected = base_offset.value_or(0);
  if (!base_offset.has_value() &&
      summary.file_size >= batch_layout::kLogOverhead) {
    KAAS_ASSIGN_OR_RETURN(expected, BaseOffsetAt(*file, 0));
  }
  out << "Starting offset: " << expected << "\n";

  segment::ScanOptions scan_options;
  scan_options.verify_crc = false;  // shown per batch instead
  scan_options.buffer_bytes = 1 << 20;
  uint64_t position = 0;
  while (true) {
    KAAS_ASSIGN_OR_RETURN(
        segment::ScanResult scan,
        segment::ScanLog(
            *file, position, expected, scan_options,
            [&](const RecordBatchView& batch, uint64_t batch_position) {
              if (summary.first_offset < 0) {
                summary.first_offset = batch.base_offset();
              }
              ++summary.batches;
              const uint32_t computed_crc = batch.ComputeCrc();
              if (computed_crc != batch.crc()) ++summary.crc_failures;
              out << DescribeBatch(batch, batch_position, computed_crc) << "\n";
              if (options.records &&
                  !PrintRecords(batch, options.print_limit, out)) {
                ++summary.damaged_records;
              }
              return true;
            }));
    summary.valid_end = scan.valid_end;
    summary.next_offset = scan.next_offset;
    if (scan.stop != segment::ScanStop::kOffsetMismatch) {
      if (scan.stop != segment::ScanStop::kEndOfFile) {
        summary.damage =
            absl::StrFormat("%s; bytes [%d, %d) (%d bytes) are not batches",
                            scan.detail, scan.valid_end, summary.file_size,
                            summary.file_size - scan.valid_end);
      }
      break;
    }
    // A batch whose (not CRC-covered) base offset does not continue the log:
    // say so and go on from its own offset.
    ++summary.discontinuities;
    out << "OFFSET DISCONTINUITY: " << scan.detail << "\n";
    position = scan.valid_end;
    KAAS_ASSIGN_OR_RETURN(expected, BaseOffsetAt(*file, position));
  }
  if (!summary.damage.empty())
    out << "DAMAGED TAIL: " << summary.damage << "\n";
  out << "End: " << summary.batches << " batches";
  if (summary.batches > 0) {
    out << ", offsets " << summary.first_offset << ".."
        << summary.next_offset - 1;
  }
  out << ", " << summary.valid_end << " of " << summary.file_size
      << " bytes framed";
  if (summary.crc_failures > 0) {
    out << ", " << summary.crc_failures << " with a CRC mismatch";
  }
  if (summary.damaged_records > 0) {
    out << ", " << summary.damaged_records << " with records not decoded";
  }
  out << "\n";
  return summary;
}

}  // namespace kaas::tools
