// File: storage/segment/log_scanner.cc

#include "storage/segment/log_scanner.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "fs/file_system.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/segment/chunk_reader.h"

namespace kaas::segment {
namespace {

namespace layout = batch_layout;

constexpr int32_t kMinBatchLength =
    static_cast<int32_t>(layout::kHeaderSize - layout::kLogOverhead);

bool AllZero(const char* p, size_t n) {
  return std::all_of(p, p + n, [](char c) { return c == 0; });
}

// " (zero-filled: ...)" when the buffered bytes at the stop are zeros, the
// trace of a preallocated or delayed-allocation tail after a crash.
std::string ZeroFillNote(const ChunkReader& reader) {
  const size_t checked = static_cast<size_t>(
      std::min<uint64_t>(reader.available(), reader.remaining()));
  if (checked == 0 || !AllZero(reader.data(), checked)) return "";
  if (checked == reader.remaining()) {
    return absl::StrFormat(" (zero-filled: all %d remaining bytes are zero)",
                           checked);
  }
  return absl::StrFormat(
      " (zero-filled: the first %d of %d remaining bytes are zero)", checked,
      reader.remaining());
}

}  // namespace

absl::string_view ScanStopName(ScanStop stop) {
  switch (stop) {
    case ScanStop::kEndOfFile:
      return "end of file";
    case ScanStop::kTornBatch:
      return "torn batch";
    case ScanStop::kCorruptBatch:
      return "corrupt batch";
    case ScanStop::kOffsetMismatch:
      return "offset mismatch";
    case ScanStop::kStoppedByVisitor:
      return "stopped by visitor";
  }
  return "unknown";
}

absl::StatusOr<ScanResult> ScanLog(const fs::ReadableFile& file,
                                   uint64_t start_position,
                                   int64_t expected_offset,
                                   const ScanOptions& options,
                                   BatchVisitor visitor) {
  ScanResult result;
  KAAS_ASSIGN_OR_RETURN(result.file_size, file.Size());
  const uint64_t limit = options.end_position == 0
                             ? result.file_size
                             : std::min(options.end_position, result.file_size);
  if (start_position > limit) {
    return absl::OutOfRangeError(absl::StrFormat(
        "scan of %s: start position %d is past the end (%d bytes)", file.path(),
        start_position, limit));
  }
  result.valid_end = start_position;
  result.next_offset = expected_offset;

  const bool read_ahead =
      options.read_ahead_min_bytes > 0 &&
      limit - start_position >= options.read_ahead_min_bytes;
  ChunkReader reader(file, start_position, limit, options.buffer_bytes,
                     layout::kHeaderSize, read_ahead);
  auto stop = [&](ScanStop why, std::string detail) {
    result.stop = why;
    result.detail = std::move(detail);
  };
  while (true) {
    const uint64_t position = reader.position();
    const uint64_t remaining = reader.remaining();
    if (remaining == 0) {
      stop(ScanStop::kEndOfFile,
           absl::StrFormat("clean end at position %d", position));
      break;
    }
    // The fixed header, or whatever is left of the file.
    const size_t header_wanted =
        static_cast<size_t>(std::min<uint64_t>(remaining, layout::kHeaderSize));
    KAAS_RETURN_IF_ERROR(reader.Fill(header_wanted));
    if (reader.available() < header_wanted) continue;  // the file shrank
    if (remaining < layout::kLogOverhead) {
      stop(ScanStop::kTornBatch,
           absl::StrFormat("torn batch at position %d: %d bytes remain, fewer "
                           "than the %d-byte length prefix%s",
                           position, remaining, layout::kLogOverhead,
                           ZeroFillNote(reader)));
      break;
    }
    const char* header = reader.data();
    const int32_t batch_length = ReadBigEndian32(header + layout::kBatchLength);
    if (batch_length < kMinBatchLength) {
      stop(ScanStop::kCorruptBatch,
           absl::StrFormat("batch at position %d: batchLength %d is below the "
                           "v2 minimum %d%s",
                           position, batch_length, kMinBatchLength,
                           ZeroFillNote(reader)));
      break;
    }
    const bool magic_visible = header_wanted > layout::kMagic;
    const int8_t magic =
        magic_visible ? static_cast<int8_t>(header[layout::kMagic]) : 0;
    if (magic_visible && magic != layout::kMagicV2) {
      stop(ScanStop::kCorruptBatch,
           absl::StrFormat("batch at position %d: magic %d, expected %d",
                           position, magic, layout::kMagicV2));
      break;
    }
    const uint64_t size =
        layout::kLogOverhead + static_cast<uint64_t>(batch_length);
    if (size > remaining) {
      // Checked before reading the body: a garbage length never allocates.
      stop(ScanStop::kTornBatch,
           absl::StrFormat("torn batch at position %d: announces %d bytes, %d "
                           "remain",
                           position, size, remaining));
      break;
    }
    KAAS_RETURN_IF_ERROR(reader.Fill(size));
    if (reader.available() < size) continue;  // the file shrank
    absl::StatusOr<RecordBatchView> view = RecordBatchView::ParseHeader(
        absl::string_view(reader.data(), static_cast<size_t>(size)));
    if (!view.ok()) {  // not expected after the checks above
      stop(ScanStop::kCorruptBatch,
           absl::StrFormat("batch at position %d: %s", position,
                           view.status().message()));
      break;
    }
    if (options.verify_crc) {
      const uint32_t computed = view->ComputeCrc();
      if (computed != view->crc()) {
        stop(ScanStop::kCorruptBatch,
             absl::StrFormat("batch at position %d: crc mismatch (stored "
                             "0x%08x, computed 0x%08x)",
                             position, view->crc(), computed));
        break;
      }
    }
    if (view->base_offset() != result.next_offset) {
      stop(ScanStop::kOffsetMismatch,
           absl::StrFormat("batch at position %d: baseOffset %d but expected "
                           "%d",
                           position, view->base_offset(), result.next_offset));
      break;
    }
    if (view->last_offset_delta() < 0) {
      stop(ScanStop::kCorruptBatch,
           absl::StrFormat("batch at position %d: lastOffsetDelta %d is "
                           "negative",
                           position, view->last_offset_delta()));
      break;
    }
    ++result.batches;
    result.valid_end = position + size;
    result.next_offset = view->next_offset();
    reader.Consume(static_cast<size_t>(size));
    if (!visitor(*view, position)) {
      stop(ScanStop::kStoppedByVisitor,
           absl::StrFormat("visitor stopped after the batch at position %d",
                           position));
      break;
    }
  }
  result.scanned_bytes = reader.bytes_read();
  return result;
}

}  // namespace kaas::segment
