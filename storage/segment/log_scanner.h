// File: storage/segment/log_scanner.h
//
// Sequential walk over the batches of a segment's .log file, used by
// recovery (verify every batch and find where the valid log ends), by index
// rebuilding, and by the producer-state replay.
//
// The scanner reads the file in large chunks and stops at the first batch
// that is not valid:
//   * kEndOfFile      the walk consumed the file exactly;
//   * kTornBatch      fewer bytes remain than the next batch announces (a
//                     write cut short by a crash; includes tails shorter than
//                     the 12-byte length prefix). A length field corrupted
//                     into a value past the end of the file looks the same
//                     and is reported the same way: only bytes that are there
//                     can be checked;
//   * kCorruptBatch   a batch whose length field is below the v2 minimum
//                     (e.g. a zero-filled tail), whose magic is not 2 (checked
//                     as soon as byte 16 is in the file, before the length is
//                     compared with what remains, so garbage announcing a
//                     huge length is corrupt unless its byte 16 is 2), whose
//                     CRC32C does not match, or whose lastOffsetDelta is
//                     negative;
//   * kOffsetMismatch a valid batch whose base offset is not the expected
//                     next offset (the CRC does not cover baseOffset, so this
//                     is how a flipped base offset or bytes spliced in by
//                     another writer are caught).
// `valid_end` is the position just past the last valid batch: everything
// from there to the end of the file is what recovery truncates. `detail`
// names the position and the values, and says "zero-filled" when the bytes
// at the stop are zeros (a preallocated or delayed-allocation tail).
//
// Not covered by any check: partitionLeaderEpoch (bytes 12..16) is outside
// the CRC and has no expected value, so a flipped bit there goes unnoticed.
//
// Memory is bounded: a batch is only read once its announced length has been
// checked against the bytes remaining in the file (a garbage length never
// allocates). Large scans read ahead on a helper thread (ScanOptions); the
// result never depends on it.
//
// Thread-safety: a scan uses only its arguments; concurrent scans of
// different files are fine.

#ifndef KAAS_STORAGE_SEGMENT_LOG_SCANNER_H_
#define KAAS_STORAGE_SEGMENT_LOG_SCANNER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "fs/file_system.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {

enum class ScanStop {
  kEndOfFile,
  kTornBatch,
  kCorruptBatch,
  kOffsetMismatch,
  kStoppedByVisitor,  // the visitor returned false
};

absl::string_view ScanStopName(ScanStop stop);

struct ScanOptions {
  // Verify each batch's CRC32C (recovery). Index rebuilds and replays of
  // already-verified data may skip it.
  bool verify_crc = true;
  // Read chunk size. 1 MiB keeps the chunk in cache between the copy out of
  // the page cache and the CRC pass (bench/scan_benchmark).
  size_t buffer_bytes = 1 << 20;
  // Stop before this position even if the file is longer (0 = file size).
  uint64_t end_position = 0;
  // Scans of at least this many bytes read the next chunk on a helper thread
  // (one per scan, for its duration) while the current one is verified, and
  // the caller reads what the helper has not reached when it needs it: the
  // copy out of the page cache and the CRC pass then share two cores (see
  // chunk_reader.h). Small scans are not worth a thread. 0 = never.
  uint64_t read_ahead_min_bytes = 16 << 20;
};

struct ScanResult {
  uint64_t valid_end = 0;      // position just past the last valid batch
  int64_t next_offset = 0;     // last valid batch's last offset + 1
  uint64_t scanned_bytes = 0;  // bytes read from the file
  uint64_t file_size = 0;
  int64_t batches = 0;
  ScanStop stop = ScanStop::kEndOfFile;
  std::string detail;  // why the walk stopped, with position and values
};

// Called for each valid batch, in order, with its position in the file.
// Returning false ends the walk after this batch (stop = kStoppedByVisitor;
// valid_end and next_offset then include the batch).
using BatchVisitor =
    absl::FunctionRef<bool(const RecordBatchView& batch, uint64_t position)>;

// Walks `file` from `start_position` (a batch boundary) expecting the first
// batch to have base offset `expected_offset`. Returns an error only for I/O
// failures and for a `start_position` past the end (kOutOfRange); invalid
// data ends the walk with a stop reason. A file that shrinks during the scan
// ends it where the reads found its end.
absl::StatusOr<ScanResult> ScanLog(const fs::ReadableFile& file,
                                   uint64_t start_position,
                                   int64_t expected_offset,
                                   const ScanOptions& options,
                                   BatchVisitor visitor);

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_LOG_SCANNER_H_
