// File: storage/segment/batch_reader.h
//
// The fetch path inside one segment: read whole batches starting at the batch
// that contains a given offset, with one positional read in the common case.
//
// The caller passes an index hint (a batch boundary at or before the wanted
// batch, from OffsetIndex::Lookup). The reader issues one pread covering the
// hint, the distance to the wanted batch (at most about one index interval)
// and `max_bytes`, then walks the batch headers in memory: batches ending
// before `offset` are skipped, batches are returned whole, and the walk stops
// before a batch that would exceed `max_bytes` (except the first one, which
// is always returned whole, even when larger: KIP-74), before `end_position`
// (a closed segment's size or the active segment's written size), and before
// any batch whose base offset is >= `end_offset` (the visible end: high
// watermark or last stable offset). A second read happens only when the
// wanted batch itself does not fit the first one; it reads the rest of that
// batch and up to `max_bytes` from its start. (Only a hint further than
// lookahead_bytes + max_bytes before the wanted batch, i.e. a missing or very
// sparse index, makes the walk read on in further chunks of that size.) The
// walk may stop before `max_bytes` when the batches after the first one were
// not in the bytes read; `reached_end` is then false and the caller continues
// from `next_position`.
//
// Headers are checked as they are walked: batchLength at least the v2
// minimum and within end_position, magic 2, lastOffsetDelta >= 0, the batch
// at the hint has base offset `hint_offset` (<= `offset`), and base offsets
// never go back below the previous batch's next offset (gaps are allowed).
// Any violation, a hint past end_position, or a file shorter than
// end_position yields kDataLoss with the path, the position and the values,
// so that the owner can rebuild the index and retry from the segment start.
// I/O errors pass through. CRCs are not verified on reads: recovery verified
// the bytes.
//
// With `locate_only` the same walk reads headers only (one small read per
// batch where batches are larger than lookahead_bytes), checks the same
// things, and returns the file range of the batches instead of their bytes.
//
// Thread-safety: uses only its arguments (ReadableFile::ReadAt is
// thread-safe).

#ifndef KAAS_STORAGE_SEGMENT_BATCH_READER_H_
#define KAAS_STORAGE_SEGMENT_BATCH_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::segment {

struct BatchReadRequest {
  uint64_t hint_position = 0;  // batch boundary at or before the wanted batch
  int64_t hint_offset = 0;     // base offset of the batch at hint_position
  uint64_t end_position = 0;   // never read at or past this position
  int64_t offset = 0;          // the first offset wanted
  int64_t end_offset = 0;      // never return a batch whose base is >= this
  size_t max_bytes = 0;        // soft limit (the first batch is always whole)
  // Extra bytes read past `max_bytes` so that the distance from the hint to
  // the wanted batch usually fits the first read (the index interval).
  size_t lookahead_bytes = 4096;
  // Locate the batches without reading them: the walk reads only headers
  // (a lookahead_bytes window where batches are small, one header where they
  // are large) and the result names the file range [first_position,
  // next_position) with an empty buffer, for a caller that sends the range
  // to a socket (sendfile) instead of copying it.
  bool locate_only = false;
};

struct BatchReadResult {
  // The batches are bytes [begin, end) of `buffer` (no copy of the read).
  // Empty (begin == end == 0) when nothing was returned.
  std::string buffer;
  size_t begin = 0;
  size_t end = 0;
  int64_t batches = 0;
  // One past the last returned batch's last offset (== request.offset when
  // nothing was returned).
  int64_t next_offset = 0;
  // File position of the first returned batch (0 when nothing was returned):
  // the batches are file bytes [first_position, next_position).
  uint64_t first_position = 0;
  // Position just past the last returned batch (where a continuation starts);
  // when nothing was returned, where the walk stopped.
  uint64_t next_position = 0;
  // True when the walk stopped at end_position or end_offset (not max_bytes):
  // the caller may continue in the next segment.
  bool reached_end = false;

  absl::string_view batches_view() const {
    return absl::string_view(buffer).substr(begin, end - begin);
  }
};

absl::StatusOr<BatchReadResult> ReadBatches(const fs::ReadableFile& file,
                                            const BatchReadRequest& request);

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_BATCH_READER_H_
