// File: storage/segment/batch_reader.cc

#include "storage/segment/batch_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "fs/file_system.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {
namespace {

namespace layout = batch_layout;

constexpr int32_t kMinBatchLength =
    static_cast<int32_t>(layout::kHeaderSize - layout::kLogOverhead);
// The header bytes the walk reads: up to and including lastOffsetDelta.
constexpr size_t kWalkedHeaderSize = layout::kLastOffsetDelta + 4;

uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b
             ? std::numeric_limits<uint64_t>::max()
             : a + b;
}

// File bytes [position, position + bytes.size()) held in memory.
struct Window {
  std::string bytes;
  uint64_t position = 0;

  uint64_t end() const { return position + bytes.size(); }
  bool Holds(uint64_t from, uint64_t n) const {
    return from >= position && from + n <= end();
  }
  const char* At(uint64_t file_position) const {
    return bytes.data() + (file_position - position);
  }
};

// Replaces `window` with file bytes [from, from + n), keeping the bytes of
// [from, window->end()) it already holds (the start of a batch that did not
// fit) instead of reading them again. A short read leaves a shorter window.
absl::Status ReadWindow(const fs::ReadableFile& file, uint64_t from, uint64_t n,
                        Window* window) {
  std::string bytes(static_cast<size_t>(n), '\0');
  uint64_t kept = 0;
  if (window->Holds(from, 0) && from < window->end()) {
    kept = std::min(n, window->end() - from);
    std::memcpy(bytes.data(), window->At(from), static_cast<size_t>(kept));
  }
  KAAS_ASSIGN_OR_RETURN(const size_t got,
                        file.ReadAt(from + kept, static_cast<size_t>(n - kept),
                                    bytes.data() + kept));
  bytes.resize(static_cast<size_t>(kept + got));
  window->bytes = std::move(bytes);
  window->position = from;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BatchReadResult> ReadBatches(const fs::ReadableFile& file,
                                            const BatchReadRequest& request) {
  auto data_loss = [&](uint64_t position, const std::string& what) {
    return absl::DataLossError(absl::StrFormat(
        "read of %s from offset %d (index hint: offset %d at position %d): "
        "batch at position %d: %s",
        file.path(), request.offset, request.hint_offset, request.hint_position,
        position, what));
  };
  if (request.hint_position > request.end_position) {
    return data_loss(request.hint_position,
                     absl::StrFormat("the hint is past the end position %d",
                                     request.end_position));
  }
  if (request.hint_offset > request.offset) {
    return data_loss(request.hint_position,
                     "the hint's offset is above the wanted offset");
  }

  BatchReadResult result;
  result.next_offset = request.offset;
  // The common case: one read covering the hint, the distance to the wanted
  // batch (about one index interval) and max_bytes.
  // A locating walk reads headers only: a lookahead window while batches
  // are small (several headers per read), one header once they are larger.
  uint64_t last_batch_size = 0;
  auto header_window = [&] {
    return last_batch_size >= request.lookahead_bytes
               ? uint64_t{kWalkedHeaderSize}
               : std::max<uint64_t>(request.lookahead_bytes, kWalkedHeaderSize);
  };
  const uint64_t first_read_bytes =
      std::min(request.end_position - request.hint_position,
               request.locate_only
                   ? header_window()
                   : SaturatingAdd(request.lookahead_bytes, request.max_bytes));
  if (request.locate_only) {
    // The headers lie one per batch across the whole range: where batches
    // are large and the range is not cached, each header read would be a
    // small synchronous read of its own. Asking for the range up front has
    // the kernel read it in large requests, which the send then finds
    // cached; asking for as much again after it keeps the next sequential
    // fetch's reads in flight meanwhile (what the kernel's own readahead
    // does for a sequential reader, and does not do for these header reads).
    const uint64_t range =
        SaturatingAdd(request.lookahead_bytes, request.max_bytes);
    file.Prefetch(request.hint_position,
                  static_cast<size_t>(
                      std::min(request.end_position - request.hint_position,
                               SaturatingAdd(range, range))));
  }
  Window window;
  KAAS_RETURN_IF_ERROR(
      ReadWindow(file, request.hint_position, first_read_bytes, &window));

  uint64_t position = request.hint_position;
  int64_t previous_next_offset = request.hint_offset;
  uint64_t returned_from = 0;  // file position of the first returned batch
  while (true) {
    if (position == request.end_position) {
      result.reached_end = true;
      break;
    }
    const uint64_t remaining = request.end_position - position;
    if (remaining < layout::kHeaderSize) {
      return data_loss(position,
                       absl::StrFormat("only %d bytes before the end position "
                                       "%d, less than a batch header",
                                       remaining, request.end_position));
    }
    if (!window.Holds(position, kWalkedHeaderSize)) {
      // Past what was read: stop if batches were returned (the budget is
      // spent), else the hint was far from the wanted batch: read on.
      if (result.batches > 0 && !request.locate_only) break;
      KAAS_RETURN_IF_ERROR(ReadWindow(
          file, position,
          std::min(remaining, request.locate_only
                                  ? header_window()
                                  : SaturatingAdd(request.lookahead_bytes,
                                                  request.max_bytes)),
          &window));
      if (!window.Holds(position, kWalkedHeaderSize)) {
        return data_loss(position,
                         absl::StrFormat("the file ends at %d, before the end "
                                         "position %d",
                                         window.end(), request.end_position));
      }
    }
    const char* header = window.At(position);
    const int32_t batch_length = ReadBigEndian32(header + layout::kBatchLength);
    if (batch_length < kMinBatchLength) {
      return data_loss(position,
                       absl::StrFormat("batchLength %d is below the v2 "
                                       "minimum %d",
                                       batch_length, kMinBatchLength));
    }
    const uint64_t size =
        layout::kLogOverhead + static_cast<uint64_t>(batch_length);
    if (size > remaining) {
      return data_loss(position,
                       absl::StrFormat("announces %d bytes, past the end "
                                       "position %d",
                                       size, request.end_position));
    }
    const int8_t magic = static_cast<int8_t>(header[layout::kMagic]);
    if (magic != layout::kMagicV2) {
      return data_loss(position, absl::StrFormat("magic %d, expected %d", magic,
                                                 layout::kMagicV2));
    }
    const int64_t base_offset = ReadBigEndian64(header + layout::kBaseOffset);
    const int32_t last_offset_delta =
        ReadBigEndian32(header + layout::kLastOffsetDelta);
    if (last_offset_delta < 0) {
      return data_loss(
          position,
          absl::StrFormat("lastOffsetDelta %d is negative", last_offset_delta));
    }
    if (position == request.hint_position) {
      if (base_offset != request.hint_offset) {
        return data_loss(position,
                         absl::StrFormat("baseOffset %d, but the index hint "
                                         "says %d",
                                         base_offset, request.hint_offset));
      }
    } else if (base_offset < previous_next_offset) {
      return data_loss(position,
                       absl::StrFormat("baseOffset %d goes back below the "
                                       "previous batch's next offset %d",
                                       base_offset, previous_next_offset));
    }
    if (base_offset >= request.end_offset) {
      result.reached_end = true;
      break;
    }
    const int64_t next_offset = base_offset + last_offset_delta + 1;
    previous_next_offset = next_offset;
    last_batch_size = size;
    if (next_offset <= request.offset) {  // ends before the wanted offset
      position += size;
      continue;
    }
    if (result.batches == 0) {
      // The wanted batch: always returned whole (KIP-74), even when larger
      // than max_bytes; the second read happens only here.
      if (!request.locate_only && !window.Holds(position, size)) {
        KAAS_RETURN_IF_ERROR(ReadWindow(
            file, position,
            std::min(remaining, std::max<uint64_t>(size, request.max_bytes)),
            &window));
        if (!window.Holds(position, size)) {
          return data_loss(position,
                           absl::StrFormat("the file ends at %d, before the "
                                           "batch's end %d",
                                           window.end(), position + size));
        }
      }
      returned_from = position;
      result.first_position = position;
      result.begin = static_cast<size_t>(position - window.position);
    } else if (position + size - returned_from > request.max_bytes ||
               (!request.locate_only && !window.Holds(position, size))) {
      break;
    }
    ++result.batches;
    result.next_offset = next_offset;
    position += size;
    result.end = static_cast<size_t>(position - window.position);
  }
  result.next_position = position;
  if (result.batches > 0 && !request.locate_only) {
    result.buffer = std::move(window.bytes);
  } else {
    result.begin = result.end = 0;
  }
  return result;
}

}  // namespace kaas::segment
