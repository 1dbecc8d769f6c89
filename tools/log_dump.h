// File: tools/log_dump.h
//
// `kaaslog dump` of a segment's .log file, in the spirit of Kafka's
// kafka-dump-log: one line per batch (position, offsets, record count,
// timestamps, producer id/epoch/sequence, transactional and control flags
// with the marker type, CRC valid or not), and with `records` one line per
// record (key, value and headers, printable or hex).
//
// Damage is reported, never crashed on: a batch whose CRC does not match is
// shown (isvalid: false) and the walk goes on; an offset discontinuity is
// reported and the walk goes on from the batch's own offset; a torn or
// garbage tail ends the walk with a line saying where it starts and how many
// bytes it covers. Framing follows the recovery scan (storage/segment/
// log_scanner.h), so a garbage length never allocates.
//
// Thread-safety: thread-compatible (writes to the given stream).

#ifndef KAAS_TOOLS_LOG_DUMP_H_
#define KAAS_TOOLS_LOG_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "storage/batch/record_batch.h"

namespace kaas::tools {

struct LogDumpOptions {
  // Print each record of uncompressed batches.
  bool records = false;
  // Bytes shown of each key, value and header value (0: all of them).
  size_t print_limit = 256;
};

// What a dump found.
struct LogDumpSummary {
  int64_t batches = 0;
  int64_t crc_failures = 0;
  int64_t discontinuities = 0;
  // Batches whose records could not be decoded (with records shown only).
  int64_t damaged_records = 0;
  int64_t first_offset = -1;
  int64_t next_offset = -1;  // one past the last batch shown
  uint64_t valid_end = 0;    // position just past the last framed batch
  uint64_t file_size = 0;
  // Why the walk stopped before the end of the file; empty if it did not.
  std::string damage;

  bool damaged() const {
    return crc_failures > 0 || discontinuities > 0 || damaged_records > 0 ||
           !damage.empty();
  }
};

// Dumps the .log file at `path` to `out`. `base_offset` is the segment's
// base offset from its name, if known (else the first batch's). Errors are
// I/O errors only.
absl::StatusOr<LogDumpSummary> DumpLogFile(fs::FileSystem& fs,
                                           const std::string& path,
                                           std::optional<int64_t> base_offset,
                                           const LogDumpOptions& options,
                                           std::ostream& out);

// The one-line description of the batch at `position` (without a trailing
// newline); `computed_crc` is batch.ComputeCrc().
std::string DescribeBatch(const RecordBatchView& batch, uint64_t position,
                          uint32_t computed_crc);

// `bytes` as a double-quoted C-escaped string when every byte is printable
// ASCII, else as 0x-prefixed hex; cut after `limit` bytes (0: never) with
// the total size noted.
std::string PrintableOrHex(absl::string_view bytes, size_t limit);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_LOG_DUMP_H_
