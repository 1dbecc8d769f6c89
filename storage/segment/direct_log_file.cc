// File: storage/segment/direct_log_file.cc

#include "storage/segment/direct_log_file.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kaas::segment {
namespace {

constexpr uint64_t kBlock = fs::kDirectIoAlignment;

uint64_t AlignDown(uint64_t n) { return n - n % kBlock; }
uint64_t AlignUp(uint64_t n) { return AlignDown(n + kBlock - 1); }

absl::Status ClosedError(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, ": the log file was closed"));
}

absl::Status ShortFileError(const std::string& path, uint64_t at) {
  return absl::DataLossError(absl::StrCat(path, ": the file ends at ", at,
                                          ", before bytes written to it"));
}

}  // namespace

DirectLogFile::DirectLogFile(std::shared_ptr<fs::WritableFile> base,
                             std::unique_ptr<fs::ReadableFile> reader,
                             const DirectLogFileOptions& options)
    : base_(std::move(base)), reader_(std::move(reader)), options_(options) {
  CHECK(options_.chunk_bytes > 0 && options_.chunk_bytes % kBlock == 0)
      << "chunk_bytes " << options_.chunk_bytes;
}

absl::StatusOr<std::unique_ptr<DirectLogFile>> DirectLogFile::Open(
    std::shared_ptr<fs::WritableFile> base,
    std::unique_ptr<fs::ReadableFile> reader,
    const DirectLogFileOptions& options) {
  KAAS_ASSIGN_OR_RETURN(const uint64_t size, reader->Size());
  std::unique_ptr<DirectLogFile> file(
      new DirectLogFile(std::move(base), std::move(reader), options));
  absl::MutexLock flush(&file->flush_mu_);
  absl::MutexLock lock(&file->mu_);
  file->file_end_ = size;
  file->end_ = size;
  file->unwritten_from_ = size;
  file->mem_start_ = AlignDown(size);
  if (size > file->mem_start_) {
    // The partial last block, which the first flush rewrites whole.
    Chunk block{file->mem_start_, kBlock, file->TakeChunk(kBlock)};
    const size_t n = static_cast<size_t>(size - file->mem_start_);
    KAAS_ASSIGN_OR_RETURN(
        const size_t got,
        file->reader_->ReadAt(file->mem_start_, n, block.data.get()));
    if (got != n) return ShortFileError(file->path(), file->mem_start_ + got);
    file->chunks_.push_back(std::move(block));
  }
  return file;
}

LogChunk DirectLogFile::TakeChunk(size_t bytes) const {
  if (bytes != options_.chunk_bytes && bytes != kBlock) {
    return LogChunkPool::Allocate(bytes);
  }
  LogChunkPool* pool =
      options_.pool != nullptr ? options_.pool : &LogChunkPool::Default();
  return pool->Take(bytes);
}

void DirectLogFile::Seal() {
  absl::MutexLock flush(&flush_mu_);
  sealed_ = true;
}

size_t DirectLogFile::MemoryBytes() const {
  absl::MutexLock lock(&mu_);
  size_t bytes = 0;
  for (const Chunk& chunk : chunks_) bytes += chunk.capacity;
  return bytes;
}

void DirectLogFile::ForEachPiece(
    uint64_t from, uint64_t to,
    absl::FunctionRef<void(char*, size_t)> visit) const {
  for (const Chunk& chunk : chunks_) {
    if (from >= to) return;
    const uint64_t chunk_end = chunk.offset + chunk.capacity;
    if (chunk_end <= from) continue;
    const uint64_t piece_end = std::min(to, chunk_end);
    visit(chunk.data.get() + (from - chunk.offset),
          static_cast<size_t>(piece_end - from));
    from = piece_end;
  }
  CHECK_GE(from, to) << path() << ": no memory for the log's bytes up to "
                     << to;
}

void DirectLogFile::CoverLocked(uint64_t to) {
  uint64_t covered = chunks_.empty()
                         ? mem_start_
                         : chunks_.back().offset + chunks_.back().capacity;
  while (covered < to) {
    chunks_.push_back(
        Chunk{covered, options_.chunk_bytes, TakeChunk(options_.chunk_bytes)});
    covered += options_.chunk_bytes;
  }
}

void DirectLogFile::CopyInLocked(uint64_t offset,
                                 absl::Span<const absl::string_view> parts,
                                 size_t total) {
  CoverLocked(offset + total);
  size_t part = 0;
  size_t part_offset = 0;
  ForEachPiece(offset, offset + total, [&](char* memory, size_t n) {
    while (n > 0) {
      const absl::string_view from = parts[part];
      const size_t take = std::min(n, from.size() - part_offset);
      if (take > 0) std::memcpy(memory, from.data() + part_offset, take);
      memory += take;
      n -= take;
      part_offset += take;
      if (part_offset == from.size()) {
        ++part;
        part_offset = 0;
      }
    }
  });
  if (offset < end_) unwritten_from_ = std::min(unwritten_from_, offset);
  end_ = std::max(end_, offset + total);
}

absl::Status DirectLogFile::ExtendMemoryDownLocked(uint64_t offset) {
  const uint64_t start = AlignDown(offset);
  if (start >= mem_start_) return absl::OkStatus();
  const size_t below = static_cast<size_t>(mem_start_ - start);
  Chunk chunk{start, below, TakeChunk(below)};
  KAAS_ASSIGN_OR_RETURN(const size_t got,
                        reader_->ReadAt(start, below, chunk.data.get()));
  if (got != below) return ShortFileError(path(), start + got);
  chunks_.push_front(std::move(chunk));
  mem_start_ = start;
  return absl::OkStatus();
}

void DirectLogFile::ReleaseWrittenLocked() {
  const uint64_t written = AlignDown(unwritten_from_);
  const uint64_t keep_from =
      written > options_.keep_written_bytes
          ? AlignDown(written - options_.keep_written_bytes)
          : 0;
  while (!chunks_.empty() &&
         chunks_.front().offset + chunks_.front().capacity <= keep_from) {
    chunks_.pop_front();
  }
  mem_start_ = chunks_.empty() ? written : chunks_.front().offset;
  if (unwritten_from_ != end_ || chunks_.empty()) return;
  // Nothing pending (an idle partition): keep one block, the partial last
  // one the next flush rewrites, not a whole chunk.
  const uint64_t last_block = AlignDown(end_);
  if (last_block < end_ && chunks_.size() == 1 &&
      chunks_.front().capacity == kBlock) {
    return;  // already just that block
  }
  std::deque<Chunk> kept;
  if (last_block < end_) {
    Chunk block{last_block, kBlock, TakeChunk(kBlock)};
    size_t at = 0;
    ForEachPiece(last_block, end_, [&](char* memory, size_t n) {
      std::memcpy(block.data.get() + at, memory, n);
      at += n;
    });
    kept.push_back(std::move(block));
  }
  chunks_ = std::move(kept);
  mem_start_ = last_block;
}

absl::StatusOr<size_t> DirectLogFile::ReadAt(uint64_t offset, size_t n,
                                             char* dst) const {
  if (closed_.load()) return ClosedError(path());
  size_t from_file = 0;
  {
    absl::MutexLock lock(&mu_);
    if (offset >= end_) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, end_ - offset));
    const uint64_t from_memory = std::max(offset, mem_start_);
    size_t at = static_cast<size_t>(from_memory - offset);
    ForEachPiece(from_memory, std::max(from_memory, offset + n),
                 [&](char* memory, size_t piece) {
                   std::memcpy(dst + at, memory, piece);
                   at += piece;
                 });
    if (offset < mem_start_) {
      from_file =
          static_cast<size_t>(std::min<uint64_t>(n, mem_start_ - offset));
    }
  }
  // Bytes below mem_start_ are in the file and stay there (a rewrite first
  // reads them back into memory and then writes the same bytes again).
  if (from_file > 0) {
    KAAS_ASSIGN_OR_RETURN(const size_t got,
                          reader_->ReadAt(offset, from_file, dst));
    if (got != from_file) return ShortFileError(path(), offset + got);
  }
  return n;
}

absl::StatusOr<uint64_t> DirectLogFile::Size() const {
  if (closed_.load()) return ClosedError(path());
  absl::MutexLock lock(&mu_);
  return end_;
}

absl::StatusOr<size_t> DirectLogFile::SendTo(uint64_t offset, size_t n,
                                             int out_fd) const {
  if (closed_.load()) return ClosedError(path());
  uint64_t split;
  {
    absl::MutexLock lock(&mu_);
    if (offset >= end_) return 0;
    n = static_cast<size_t>(std::min<uint64_t>(n, end_ - offset));
    split = mem_start_;
  }
  size_t sent = 0;
  if (offset < split) {
    // The written part goes with sendfile, from the read handle.
    const size_t from_file =
        static_cast<size_t>(std::min<uint64_t>(n, split - offset));
    KAAS_ASSIGN_OR_RETURN(sent, reader_->SendTo(offset, from_file, out_fd));
    if (sent < from_file) return sent;
  }
  if (sent < n) {
    // The part in memory is copied (through ReadAt).
    KAAS_ASSIGN_OR_RETURN(
        const size_t more,
        fs::ReadableFile::SendTo(offset + sent, n - sent, out_fd));
    sent += more;
  }
  return sent;
}

void DirectLogFile::Prefetch(uint64_t offset, size_t n) const {
  uint64_t split;
  {
    absl::MutexLock lock(&mu_);
    split = mem_start_;
  }
  if (offset < split) {
    reader_->Prefetch(
        offset, static_cast<size_t>(std::min<uint64_t>(n, split - offset)));
  }
}

absl::Status DirectLogFile::WriteAt(uint64_t offset, absl::string_view data) {
  const absl::string_view parts[] = {data};
  return WriteAtV(offset, parts);
}

absl::Status DirectLogFile::Append(absl::string_view data) {
  uint64_t end;
  {
    absl::MutexLock lock(&mu_);
    end = end_;
  }
  return WriteAt(end, data);
}

absl::Status DirectLogFile::WriteAtV(
    uint64_t offset, absl::Span<const absl::string_view> parts) {
  if (closed_.load()) return ClosedError(path());
  size_t total = 0;
  for (absl::string_view part : parts) total += part.size();
  bool rewrite = false;
  bool flush = false;
  {
    absl::MutexLock lock(&mu_);
    if (offset > end_) {
      return absl::InvalidArgumentError(absl::StrCat(
          path(), ": write at ", offset, " past the end of the log (", end_,
          " bytes): a log has no holes"));
    }
    rewrite = offset < end_;
    if (!rewrite) {
      // The common case, an append: no flush reads memory at or past end_.
      CopyInLocked(offset, parts, total);
      flush = end_ - unwritten_from_ >= options_.flush_bytes;
    }
  }
  if (rewrite) {
    // Below the end a flush may be writing from the same memory: wait for
    // it (rare: a rewrite after a failed sync).
    absl::MutexLock flush_lock(&flush_mu_);
    absl::MutexLock lock(&mu_);
    KAAS_RETURN_IF_ERROR(ExtendMemoryDownLocked(offset));
    CopyInLocked(offset, parts, total);
    flush = end_ - unwritten_from_ >= options_.flush_bytes;
  }
  return flush ? Flush(/*whole_blocks_only=*/true) : absl::OkStatus();
}

absl::Status DirectLogFile::Flush(bool whole_blocks_only) {
  absl::MutexLock flush(&flush_mu_);
  uint64_t from = 0;
  uint64_t to = 0;
  std::vector<absl::string_view> parts;
  LogChunk edge;  // the partial last block, zero padded
  {
    absl::MutexLock lock(&mu_);
    to = whole_blocks_only ? AlignDown(end_) : end_;
    if (to > unwritten_from_) {
      from = AlignDown(unwritten_from_);
      const uint64_t whole_end = AlignDown(to);
      // Whole blocks straight from the chunks: appends only write at or
      // past end_, and rewrites wait for flush_mu_.
      ForEachPiece(from, whole_end, [&](char* memory, size_t n) {
        parts.emplace_back(memory, n);
      });
      if (to > whole_end) {
        // The partial last block goes from a copy, zero padded: an append
        // may be filling the rest of that block in its chunk meanwhile.
        edge = TakeChunk(kBlock);
        size_t at = 0;
        ForEachPiece(whole_end, to, [&](char* memory, size_t n) {
          std::memcpy(edge.get() + at, memory, n);
          at += n;
        });
        std::memset(edge.get() + at, 0, kBlock - at);
        parts.emplace_back(edge.get(), kBlock);
      }
    }
  }
  if (!parts.empty()) {
    // Even a failed write may have extended the file: a later truncation
    // must cut what it left there (a rejected append's bytes must not
    // survive behind the log's end).
    file_end_ = std::max(file_end_, AlignUp(to));
    KAAS_RETURN_IF_ERROR(base_->WriteAtV(from, parts));
    absl::MutexLock lock(&mu_);
    // No rewrite or truncation ran meanwhile (they wait for flush_mu_).
    unwritten_from_ = std::max(unwritten_from_, to);
    ReleaseWrittenLocked();
  }
  if (sealed_ && !whole_blocks_only) {
    // The last syncs of the segment: no padding stays behind the last byte.
    // The writer has stopped, so end_ is final.
    uint64_t end;
    {
      absl::MutexLock lock(&mu_);
      end = end_;
    }
    if (file_end_ != end) {
      KAAS_RETURN_IF_ERROR(base_->Truncate(end));
      file_end_ = end;
    }
  }
  return absl::OkStatus();
}

absl::Status DirectLogFile::Truncate(uint64_t size) {
  if (closed_.load()) return ClosedError(path());
  absl::MutexLock flush(&flush_mu_);
  absl::MutexLock lock(&mu_);
  if (size >= end_) {
    // Zero-extends, as ftruncate does.
    const uint64_t old_end = end_;
    CoverLocked(size);
    ForEachPiece(old_end, size,
                 [](char* memory, size_t n) { std::memset(memory, 0, n); });
    end_ = size;
    return absl::OkStatus();
  }
  KAAS_RETURN_IF_ERROR(ExtendMemoryDownLocked(size));
  while (!chunks_.empty() && chunks_.back().offset >= size) chunks_.pop_back();
  end_ = size;
  unwritten_from_ = std::min(unwritten_from_, size);
  if (file_end_ > size) {
    // Cut at once, so that no byte past the new end outlives a crash after
    // the next sync (rare: after a failed append).
    KAAS_RETURN_IF_ERROR(base_->Truncate(size));
    file_end_ = size;
  }
  return absl::OkStatus();
}

absl::Status DirectLogFile::DataSync() {
  KAAS_RETURN_IF_ERROR(Flush(/*whole_blocks_only=*/false));
  return base_->DataSync();
}

absl::Status DirectLogFile::Sync() {
  KAAS_RETURN_IF_ERROR(Flush(/*whole_blocks_only=*/false));
  return base_->Sync();
}

absl::Status DirectLogFile::Close() {
  if (closed_.exchange(true)) return ClosedError(path());
  {
    absl::MutexLock flush(&flush_mu_);
    absl::MutexLock lock(&mu_);
    chunks_.clear();
    mem_start_ = end_;
  }
  return base_->Close();
}

}  // namespace kaas::segment
