// File: storage/segment/chunk_reader.h
//
// Sequential reads of a file range through a reusable buffer, for the log
// scanner: bytes are consumed from the front, and a refill keeps the
// unconsumed tail (a batch cut by the chunk boundary) in front of the next
// bytes, so the file is read in large chunks whatever the batch sizes.
//
// Read-ahead: a scan is bound by two costs, the copy out of the page cache
// (pread, ~1.6x the other on a warm cache) and the CRC32C pass over the
// copied bytes. With read-ahead on, a helper thread preads the next chunk
// into a second buffer, in 8 pieces, while the caller verifies the current
// one; a caller that needs the next chunk before the helper is done reads
// the pieces the helper has not started itself, so the two cores share the
// copy instead of the caller waiting for it (bench/recovery_benchmark).
// Adopting the next chunk swaps buffers; only the tail is copied. A refill
// the read-ahead chunk cannot serve (a batch larger than a chunk) finishes
// it, drops it and reads synchronously, so the bytes returned never depend
// on whether read-ahead is on.
//
// Memory is bounded: a buffer grows only when asked for more bytes than it
// holds (one batch larger than a chunk), and callers never ask for more than
// remaining(), so its size is bounded by the file.
//
// Thread-safety: thread-compatible (one caller). The read-ahead thread only
// touches the spare buffer's pieces it claimed, under a mutex that hands
// each piece to exactly one reader; it is joined by the destructor.

#ifndef KAAS_STORAGE_SEGMENT_CHUNK_READER_H_
#define KAAS_STORAGE_SEGMENT_CHUNK_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "fs/file_system.h"

namespace kaas::segment {

class ChunkReader {
 public:
  // Reads `file` bytes [position, limit) in chunks of `chunk_bytes` (at
  // least `min_chunk_bytes`), ahead on a helper thread if `read_ahead`.
  ChunkReader(const fs::ReadableFile& file, uint64_t position, uint64_t limit,
              size_t chunk_bytes, size_t min_chunk_bytes, bool read_ahead);
  ~ChunkReader();

  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // File position of data().
  uint64_t position() const { return position_; }
  // File bytes from position() to the limit (buffered or not).
  uint64_t remaining() const { return limit_ - position_; }
  // The buffered bytes at position().
  const char* data() const { return data_; }
  size_t available() const { return available_; }
  // Bytes handed to the caller's buffer so far (read ahead but never adopted
  // is not counted).
  uint64_t bytes_read() const { return bytes_read_; }

  // Drops `n` buffered bytes from the front. REQUIRES: n <= available().
  void Consume(size_t n);

  // Makes at least `n` bytes available. REQUIRES: n <= remaining(). If the
  // file turns out shorter than the limit (it shrank since its size was
  // taken), the limit moves to the real end and fewer bytes are available.
  absl::Status Fill(size_t n);

 private:
  struct Buffer {
    std::unique_ptr<char[]> bytes;
    size_t capacity = 0;
  };
  class ReadAhead;

  // Refill through the spare buffer the read-ahead filled. Returns false
  // (having dropped the read-ahead chunk) if that chunk cannot serve `n`.
  absl::StatusOr<bool> FillFromReadAhead(size_t n);
  // Refill by reading on this thread into the current buffer.
  absl::Status FillSynchronously(size_t n);
  // Starts reading the chunk that follows the buffered bytes into spare_.
  void StartReadAhead();
  // Records a read of `got` of `want` bytes at `at` (a short read is the end).
  void NoteRead(uint64_t at, size_t want, size_t got);

  const fs::ReadableFile& file_;
  const size_t chunk_bytes_;
  uint64_t position_;
  uint64_t limit_;
  const char* data_ = nullptr;
  size_t available_ = 0;
  uint64_t bytes_read_ = 0;

  Buffer current_;  // holds data_
  // Read-ahead target: `chunk_bytes_` of headroom (where the tail goes on
  // adoption), then the chunk.
  Buffer spare_;
  // The read started into spare_ and not yet waited for, if any.
  bool ahead_pending_ = false;
  uint64_t ahead_at_ = 0;
  size_t ahead_want_ = 0;
  // Declared last: destroyed (joined) before the buffers it writes into.
  std::unique_ptr<ReadAhead> read_ahead_;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_CHUNK_READER_H_
