// File: storage/segment/chunk_reader.cc

#include "storage/segment/chunk_reader.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kaas::segment {

// One chunk read at a time, split into pieces that the helper thread reads
// in order. A caller that needs the chunk before the helper is done reads
// the pieces nobody has claimed yet itself instead of waiting, so when the
// copy is the longer of the two costs (it is: ~1.6x the CRC pass on a warm
// page cache) the two cores share it. Start hands over a destination the
// caller does not touch until Finish returned.
class ChunkReader::ReadAhead {
 public:
  explicit ReadAhead(const fs::ReadableFile& file)
      : file_(file), thread_([this] { Run(); }) {}

  ~ReadAhead() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    thread_.join();  // a piece in flight finishes first
  }

  void Start(char* dst, uint64_t at, size_t want) {
    absl::MutexLock lock(&mu_);
    DCHECK(!started_);
    chunk_ = Chunk{dst, at, want};
    piece_bytes_ = std::max<size_t>(1, (want + kPieces - 1) / kPieces);
    pieces_ = static_cast<int>((want + piece_bytes_ - 1) / piece_bytes_);
    claimed_ = 0;
    finished_ = 0;
    started_ = true;
  }

  // Reads the pieces not claimed yet, waits for those in flight, and returns
  // the bytes read from the chunk's start up to the first short piece (the
  // end of the file), or the first piece's error. REQUIRES: Start was called
  // and Finish was not since.
  absl::StatusOr<size_t> Finish() {
    absl::MutexLock lock(&mu_);
    DCHECK(started_);
    while (claimed_ < pieces_) ReadPieceLocked(claimed_++);
    mu_.Await(absl::Condition(this, &ReadAhead::AllFinished));
    started_ = false;
    size_t got = 0;
    for (int i = 0; i < pieces_; ++i) {
      KAAS_RETURN_IF_ERROR(results_[i].status());
      got += *results_[i];
      if (*results_[i] < PieceBytes(i)) break;  // the end of the file
    }
    return got;
  }

 private:
  // Pieces per chunk. 8 (128 KiB of the default 1 MiB chunk): small enough
  // that the caller is rarely left waiting for the helper's last piece,
  // large enough that a pread's fixed cost stays negligible.
  static constexpr int kPieces = 8;

  struct Chunk {
    char* dst = nullptr;
    uint64_t at = 0;
    size_t want = 0;
  };

  size_t PieceBytes(int i) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::min(piece_bytes_, chunk_.want - i * piece_bytes_);
  }

  bool HelperHasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (started_ && claimed_ < pieces_) || stopping_;
  }
  bool AllFinished() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return finished_ == pieces_;
  }

  // Reads claimed piece `i` with mu_ released (chunk_ does not change while
  // a piece of it is unfinished).
  void ReadPieceLocked(int i) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const size_t offset = i * piece_bytes_;
    const size_t want = PieceBytes(i);
    char* dst = chunk_.dst + offset;
    const uint64_t at = chunk_.at + offset;
    mu_.Unlock();
    absl::StatusOr<size_t> got = file_.ReadAt(at, want, dst);
    mu_.Lock();
    results_[i] = std::move(got);
    ++finished_;
  }

  void Run() {
    absl::MutexLock lock(&mu_);
    while (true) {
      mu_.Await(absl::Condition(this, &ReadAhead::HelperHasWork));
      if (stopping_) return;
      ReadPieceLocked(claimed_++);
    }
  }

  const fs::ReadableFile& file_;
  absl::Mutex mu_;
  Chunk chunk_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  int pieces_ ABSL_GUARDED_BY(mu_) = 0;
  size_t piece_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int claimed_ ABSL_GUARDED_BY(mu_) = 0;   // pieces handed to a reader
  int finished_ ABSL_GUARDED_BY(mu_) = 0;  // pieces whose read returned
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::StatusOr<size_t> results_[kPieces] ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is initialised
};

ChunkReader::ChunkReader(const fs::ReadableFile& file, uint64_t position,
                         uint64_t limit, size_t chunk_bytes,
                         size_t min_chunk_bytes, bool read_ahead)
    : file_(file),
      chunk_bytes_(std::max(chunk_bytes, min_chunk_bytes)),
      position_(position),
      limit_(limit) {
  if (read_ahead) read_ahead_ = std::make_unique<ReadAhead>(file);
}

ChunkReader::~ChunkReader() = default;

void ChunkReader::Consume(size_t n) {
  DCHECK_LE(n, available_);
  data_ += n;
  available_ -= n;
  position_ += n;
}

absl::Status ChunkReader::Fill(size_t n) {
  DCHECK_LE(n, remaining());
  if (available_ >= n) return absl::OkStatus();
  bool served = false;
  if (ahead_pending_) {
    KAAS_ASSIGN_OR_RETURN(served, FillFromReadAhead(n));
  }
  if (!served) KAAS_RETURN_IF_ERROR(FillSynchronously(n));
  if (read_ahead_ != nullptr) StartReadAhead();
  return absl::OkStatus();
}

absl::StatusOr<bool> ChunkReader::FillFromReadAhead(size_t n) {
  ahead_pending_ = false;
  KAAS_ASSIGN_OR_RETURN(const size_t got, read_ahead_->Finish());
  DCHECK_EQ(ahead_at_, position_ + available_);
  const size_t tail = available_;
  const bool at_end = got < ahead_want_;
  if (tail > chunk_bytes_ || (tail + got < n && !at_end)) {
    return false;  // a batch larger than a chunk: read it synchronously
  }
  // The tail goes into the headroom right before the chunk: contiguous.
  char* start = spare_.bytes.get() + chunk_bytes_ - tail;
  if (tail > 0) std::memcpy(start, data_, tail);
  std::swap(current_, spare_);
  data_ = start;
  available_ = tail + got;
  NoteRead(ahead_at_, ahead_want_, got);
  return true;
}

absl::Status ChunkReader::FillSynchronously(size_t n) {
  const size_t tail = available_;
  if (n > current_.capacity) {
    // First fill, or one batch larger than the buffer. Without read-ahead a
    // small file gets a buffer of its size; with it, the buffer must also
    // serve as the next read-ahead target.
    size_t capacity = std::max(n, chunk_bytes_);
    if (read_ahead_ == nullptr) {
      capacity = static_cast<size_t>(std::min<uint64_t>(capacity, remaining()));
    } else {
      capacity = std::max(capacity, 2 * chunk_bytes_);
    }
    Buffer grown{std::unique_ptr<char[]>(new char[capacity]), capacity};
    if (tail > 0) std::memcpy(grown.bytes.get(), data_, tail);
    current_ = std::move(grown);
  } else if (tail > 0 && data_ != current_.bytes.get()) {
    std::memmove(current_.bytes.get(), data_, tail);
  }
  char* base = current_.bytes.get();
  data_ = base;
  size_t filled = tail;
  while (filled < n) {
    const uint64_t at = position_ + filled;
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(current_.capacity - filled, limit_ - at));
    KAAS_ASSIGN_OR_RETURN(const size_t got,
                          file_.ReadAt(at, want, base + filled));
    filled += got;
    NoteRead(at, want, got);
    if (got < want) break;
  }
  available_ = filled;
  return absl::OkStatus();
}

void ChunkReader::StartReadAhead() {
  const uint64_t at = position_ + available_;
  if (at >= limit_) return;
  if (spare_.capacity < 2 * chunk_bytes_) {
    spare_ = Buffer{std::unique_ptr<char[]>(new char[2 * chunk_bytes_]),
                    2 * chunk_bytes_};
  }
  ahead_at_ = at;
  ahead_want_ =
      static_cast<size_t>(std::min<uint64_t>(chunk_bytes_, limit_ - at));
  ahead_pending_ = true;
  read_ahead_->Start(spare_.bytes.get() + chunk_bytes_, ahead_at_, ahead_want_);
}

void ChunkReader::NoteRead(uint64_t at, size_t want, size_t got) {
  bytes_read_ += got;
  if (got < want) limit_ = at + got;  // the file shrank: this is its end
}

}  // namespace kaas::segment
