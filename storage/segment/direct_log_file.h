// File: storage/segment/direct_log_file.h
//
// The direct-I/O write path of an active segment's .log file: a WritableFile
// that copies appended bytes into aligned memory chunks and writes them to
// the file in whole aligned blocks that bypass the page cache
// (WritableFile::TryDirectIo). Through the page cache every byte is copied
// into a cache page the kernel must first find and zero, then written back
// in page-sized pieces; here a sync cycle writes what accumulated since the
// last one in a single aligned pwritev straight from the chunks, at the
// device's sequential rate, and the memory is reused.
//
//   * A flush writes from the block holding the first unwritten byte to the
//     end of the data, the last block padded with zeros: the partial last
//     block is rewritten by every flush until it fills. So the file may end
//     with up to one block of zeros past the last batch. A sealed log's next
//     sync cuts them; after a crash recovery truncates them as it does a
//     torn tail.
//   * Readers see every appended byte: bytes still in memory are copied from
//     the chunks, the rest is read from the file through a separate buffered
//     read handle (so reads of older data still use the page cache).
//   * DataSync/Sync flush first, then sync: the durability contract of
//     fs/file_system.h holds unchanged. Unlike a buffered write, an append
//     that no flush has written yet lives only in this process's memory: a
//     process crash loses it as a power loss does (acks=all appends are
//     never acknowledged before their sync, so they are not affected).
//   * An append that leaves `flush_bytes` or more unwritten writes the whole
//     blocks itself, so memory stays bounded when nobody syncs (acks=1
//     producers with flushes turned off).
//   * Memory: the unwritten bytes and up to `keep_written_bytes` (plus one
//     chunk) of written ones; when a flush leaves nothing pending (an idle
//     partition), only the partial last block, one block. Chunks come from a
//     pool (log_chunk_pool.h).
//
// Thread-safety: as fs::WritableFile: one writer (WriteAt, WriteAtV, Append,
// Truncate, Seal, Close); DataSync, Sync, ReadAt, SendTo, Prefetch and Size
// from any thread concurrently with it. Flushes are serialised on flush_mu_
// (an append that must flush waits for a sync's flush in flight:
// backpressure), and so are the rare writes below the end (rewrites after a
// failed sync) and truncations, so the memory a flush is writing from never
// changes under it. mu_ guards the chunk list and the offsets; appends copy
// under it, and it is held across file I/O only to read blocks back from the
// file before such a rewrite or truncation.

#ifndef KAAS_STORAGE_SEGMENT_DIRECT_LOG_FILE_H_
#define KAAS_STORAGE_SEGMENT_DIRECT_LOG_FILE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "fs/file_system.h"
#include "storage/segment/log_chunk_pool.h"

namespace kaas::segment {

struct DirectLogFileOptions {
  // Bytes per memory chunk (a multiple of fs::kDirectIoAlignment).
  size_t chunk_bytes = size_t{256} << 10;
  // Unwritten bytes at which an append writes the whole blocks itself.
  size_t flush_bytes = size_t{1} << 20;
  // Written bytes kept in memory behind the unwritten ones while appends
  // keep coming, for readers that follow the log's end (the page cache does
  // not hold what a direct write wrote).
  size_t keep_written_bytes = size_t{1} << 20;
  // Where chunks come from (not owned); null: LogChunkPool::Default().
  LogChunkPool* pool = nullptr;
};

class DirectLogFile final : public fs::WritableFile {
 public:
  // Takes over `base`, the log opened for writing with direct I/O granted
  // (TryDirectIo() returned true); nobody else may write through it from now
  // on. `reader` is a read handle on the same file. Reads the file's partial
  // last block into memory, so that the first flush rewrites it whole.
  static absl::StatusOr<std::unique_ptr<DirectLogFile>> Open(
      std::shared_ptr<fs::WritableFile> base,
      std::unique_ptr<fs::ReadableFile> reader,
      const DirectLogFileOptions& options = {});

  ~DirectLogFile() override = default;

  // No more appends come: from now on every sync also cuts the file to its
  // logical size, so that no padding stays behind the last byte.
  void Seal();

  // Memory held for the log's bytes, in bytes (tests, statistics).
  size_t MemoryBytes() const;

  // fs::ReadableFile.
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override;
  // The logical size: every byte appended, written to the file or not.
  absl::StatusOr<uint64_t> Size() const override;
  absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                int out_fd) const override;
  void Prefetch(uint64_t offset, size_t n) const override;
  const std::string& path() const override { return base_->path(); }

  // fs::WritableFile. A write starts at or below the logical size (past it:
  // kInvalidArgument, a log has no holes). A truncation cuts the file at once
  // if it held bytes past the new size.
  absl::Status WriteAt(uint64_t offset, absl::string_view data) override;
  absl::Status WriteAtV(uint64_t offset,
                        absl::Span<const absl::string_view> parts) override;
  absl::Status Append(absl::string_view data) override;
  absl::Status Truncate(uint64_t size) override;
  absl::Status DataSync() override;
  absl::Status Sync() override;
  absl::Status TryLock() override { return base_->TryLock(); }
  void Unlock() override { base_->Unlock(); }
  // Closes the write handle without flushing (what was not synced was not
  // promised to anyone) and frees the memory; reads fail afterwards.
  absl::Status Close() override;

 private:
  // Memory for file bytes [offset, offset + capacity).
  struct Chunk {
    uint64_t offset;
    size_t capacity;
    LogChunk data;
  };

  DirectLogFile(std::shared_ptr<fs::WritableFile> base,
                std::unique_ptr<fs::ReadableFile> reader,
                const DirectLogFileOptions& options);

  // Writes the unwritten bytes: all of them (a sync), or only the whole
  // blocks (an append past flush_bytes); once sealed, a sync also cuts the
  // padding.
  absl::Status Flush(bool whole_blocks_only) ABSL_LOCKS_EXCLUDED(mu_);

  // Copies `parts` (`total` bytes) into memory at `offset`.
  void CopyInLocked(uint64_t offset, absl::Span<const absl::string_view> parts,
                    size_t total) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls `visit` with the memory of bytes [from, to), piece by piece.
  // REQUIRES: mem_start_ <= from <= to <= the end of the last chunk.
  void ForEachPiece(uint64_t from, uint64_t to,
                    absl::FunctionRef<void(char*, size_t)> visit) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds chunks until memory reaches `to`.
  void CoverLocked(uint64_t to) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the blocks from the one holding `offset` up to mem_start_ back
  // from the file into memory.
  absl::Status ExtendMemoryDownLocked(uint64_t offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_, mu_);
  // After a flush: frees the chunks wholly written and more than
  // keep_written_bytes behind, and when nothing is pending keeps only the
  // partial last block.
  void ReleaseWrittenLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_, mu_);

  LogChunk TakeChunk(size_t bytes) const;

  const std::shared_ptr<fs::WritableFile> base_;
  const std::unique_ptr<fs::ReadableFile> reader_;
  const DirectLogFileOptions options_;
  std::atomic<bool> closed_{false};

  // Serialises flushes, rewrites and truncations (taken before mu_).
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // The file's size as the last write or truncation left it (a flush pads it
  // to a block boundary).
  uint64_t file_end_ ABSL_GUARDED_BY(flush_mu_) = 0;
  bool sealed_ ABSL_GUARDED_BY(flush_mu_) = false;

  mutable absl::Mutex mu_;
  // Contiguous, from mem_start_ (empty only when mem_start_ == end_ and that
  // is a block boundary).
  std::deque<Chunk> chunks_ ABSL_GUARDED_BY(mu_);
  // Memory holds bytes [mem_start_, end_); the file holds every byte below
  // mem_start_. Block aligned.
  uint64_t mem_start_ ABSL_GUARDED_BY(mu_) = 0;
  // The logical size.
  uint64_t end_ ABSL_GUARDED_BY(mu_) = 0;
  // Bytes from here on are not written to the file yet;
  // mem_start_ <= AlignDown(unwritten_from_), unwritten_from_ <= end_.
  uint64_t unwritten_from_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_DIRECT_LOG_FILE_H_
