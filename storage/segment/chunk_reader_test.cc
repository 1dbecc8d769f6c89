// File: storage/segment/chunk_reader_test.cc
//
// Byte-level tests of ChunkReader (storage/segment/chunk_reader.h), the
// log scanner's sequential reader: what each Fill reads (positions and sizes
// of the preads, chunk boundaries, the unconsumed tail kept in front of the
// next bytes, a buffer grown for one large batch), short reads at the end of
// a file that shrank under its limit, read errors passed through with their
// code, the memory bound (buffer sizes, observed through a replacement of the
// global array operator new), and the read-ahead path: the helper thread
// reading the next chunk in pieces, a caller that needs the chunk first
// reading the pieces the helper has not started, refills the read-ahead
// chunk cannot serve, errors and end of file met by the helper, and bytes
// that never depend on whether read-ahead is on.
//
// The file is in memory (MemoryFile below), so that every pread is recorded
// with the thread that made it and the two threads can be made to meet
// deterministically, without sleeps.

#include "storage/segment/chunk_reader.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "fs/file_system.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

// ---- Allocation log ---------------------------------------------------------
//
// ChunkReader's buffers are `new char[]`. The replacements below record the
// size of every array allocation made on a thread while that thread has an
// AllocationLog; everything else is plain malloc/free, as the defaults.

namespace kaas::segment {
namespace {
thread_local std::vector<size_t>* array_allocations = nullptr;
}  // namespace
}  // namespace kaas::segment

void* operator new[](size_t size) {
  if (std::vector<size_t>* log = kaas::segment::array_allocations) {
    kaas::segment::array_allocations = nullptr;  // the log's own allocations
    log->push_back(size);
    kaas::segment::array_allocations = log;
  }
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  try {
    return operator new[](size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace kaas::segment {
namespace {

using ::kaas::test::StatusIs;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Le;

// The sizes of the array allocations of this thread during its lifetime.
class AllocationLog {
 public:
  AllocationLog() { array_allocations = &sizes_; }
  ~AllocationLog() { array_allocations = nullptr; }
  AllocationLog(const AllocationLog&) = delete;
  AllocationLog& operator=(const AllocationLog&) = delete;

  std::vector<size_t> sizes() const { return sizes_; }

 private:
  std::vector<size_t> sizes_;
};

// A bounded wait for the other thread: a test that would hang fails instead.
constexpr absl::Duration kDeadline = absl::Seconds(60);

struct Read {
  uint64_t offset;
  size_t n;
  bool helper;  // made by a thread other than the one that built the file

  friend bool operator==(const Read& a, const Read& b) {
    return a.offset == b.offset && a.n == b.n && a.helper == b.helper;
  }
  friend std::ostream& operator<<(std::ostream& os, const Read& r) {
    return os << "{" << r.offset << ", " << r.n
              << (r.helper ? ", helper}" : "}");
  }
};

Read Caller(uint64_t offset, size_t n) { return {offset, n, false}; }
Read Helper(uint64_t offset, size_t n) { return {offset, n, true}; }

// `size` bytes, every one different from its neighbours.
std::string Pattern(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<char>((i * 7 + i / 251) & 0xff);
  }
  return bytes;
}

// An in-memory file that records every pread. Reads past its end are short,
// as a shrunk file's. Optionally fails reads that reach past a position, and
// holds the helper thread's reads until the caller has made a number of
// reads.
class MemoryFile : public fs::ReadableFile {
 public:
  explicit MemoryFile(std::string bytes) : bytes_(std::move(bytes)) {}

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    const bool helper = std::this_thread::get_id() != caller_;
    {
      absl::MutexLock lock(&mu_);
      reads_.push_back({offset, n, helper});
      if (helper) {
        ++helper_reads_;
        ++helper_waiting_;
        if (!mu_.AwaitWithTimeout(
                absl::Condition(this, &MemoryFile::HelperMayRead), kDeadline)) {
          hold_timed_out_ = true;
        }
        --helper_waiting_;
      } else {
        ++caller_reads_;
      }
      if (offset + n > fail_from_) return fail_status_;
    }
    if (offset >= bytes_.size()) return 0;
    const size_t got =
        static_cast<size_t>(std::min<uint64_t>(n, bytes_.size() - offset));
    std::memcpy(dst, bytes_.data() + offset, got);
    return got;
  }
  absl::StatusOr<uint64_t> Size() const override { return bytes_.size(); }
  const std::string& path() const override { return path_; }

  const std::string& bytes() const { return bytes_; }

  // Reads that reach past `position` fail with `status`.
  void FailReadsPast(uint64_t position, absl::Status status) {
    absl::MutexLock lock(&mu_);
    fail_from_ = position;
    fail_status_ = std::move(status);
  }
  // The helper's reads wait until the caller has made `caller_reads` reads
  // in all.
  void HoldHelperUntilCallerReads(int caller_reads) {
    absl::MutexLock lock(&mu_);
    release_at_caller_reads_ = caller_reads;
  }
  // Waits until the helper has begun `n` reads; false if it never does.
  bool WaitForHelperReads(int n) const {
    absl::MutexLock lock(&mu_);
    auto started = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return helper_reads_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&started), kDeadline);
  }
  // Waits until a helper read is held; false if none ever is.
  bool WaitForAHeldHelperRead() const {
    absl::MutexLock lock(&mu_);
    auto held = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return helper_waiting_ > 0 && !HelperMayRead();
    };
    return mu_.AwaitWithTimeout(absl::Condition(&held), kDeadline);
  }

  std::vector<Read> reads() const {
    absl::MutexLock lock(&mu_);
    return reads_;
  }
  // The reads of bytes in [from, to), in offset order.
  std::vector<Read> ReadsWithin(uint64_t from, uint64_t to) const {
    std::vector<Read> within;
    for (const Read& read : reads()) {
      if (read.offset >= from && read.offset < to) within.push_back(read);
    }
    std::sort(within.begin(), within.end(),
              [](const Read& a, const Read& b) { return a.offset < b.offset; });
    return within;
  }
  int caller_reads() const {
    absl::MutexLock lock(&mu_);
    return caller_reads_;
  }
  bool hold_timed_out() const {
    absl::MutexLock lock(&mu_);
    return hold_timed_out_;
  }

 private:
  bool HelperMayRead() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return caller_reads_ >= release_at_caller_reads_;
  }

  const std::string bytes_;
  const std::string path_ = "/memory/chunk_reader_test.log";
  const std::thread::id caller_ = std::this_thread::get_id();
  mutable absl::Mutex mu_;
  mutable std::vector<Read> reads_ ABSL_GUARDED_BY(mu_);
  mutable int caller_reads_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int helper_reads_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int helper_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  mutable bool hold_timed_out_ ABSL_GUARDED_BY(mu_) = false;
  int release_at_caller_reads_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t fail_from_ ABSL_GUARDED_BY(mu_) = UINT64_MAX;
  absl::Status fail_status_ ABSL_GUARDED_BY(mu_);
};

// The buffered bytes of `reader`.
absl::string_view Buffered(const ChunkReader& reader) {
  return absl::string_view(reader.data(), reader.available());
}

// ---- Synchronous reads ------------------------------------------------------

TEST(ChunkReaderTest, StartsAtThePositionWithNothingBuffered) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 100, 1000, /*chunk_bytes=*/256,
                     /*min_chunk_bytes=*/61, /*read_ahead=*/false);

  EXPECT_EQ(reader.position(), 100u);
  EXPECT_EQ(reader.remaining(), 900u);
  EXPECT_EQ(reader.available(), 0u);
  EXPECT_EQ(reader.bytes_read(), 0u);
  EXPECT_THAT(file.reads(), ElementsAre());
}

TEST(ChunkReaderTest, FillReadsOneWholeChunkAtThePosition) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 100, 1000, 256, 61, false);

  ASSERT_OK(reader.Fill(10));

  EXPECT_THAT(file.reads(), ElementsAre(Caller(100, 256)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(100, 256));
  EXPECT_EQ(reader.position(), 100u);
  EXPECT_EQ(reader.remaining(), 900u);
  EXPECT_EQ(reader.bytes_read(), 256u);
}

TEST(ChunkReaderTest, ChunksAreAtLeastMinChunkBytes) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1000, /*chunk_bytes=*/1, /*min_chunk_bytes=*/61,
                     false);

  ASSERT_OK(reader.Fill(1));

  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 61)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(0, 61));
}

TEST(ChunkReaderTest, FillOfBytesAlreadyBufferedReadsNothing) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1000, 256, 61, false);
  ASSERT_OK(reader.Fill(1));

  ASSERT_OK(reader.Fill(256));
  reader.Consume(200);
  ASSERT_OK(reader.Fill(56));

  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 256)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(200, 56));
}

TEST(ChunkReaderTest, ConsumeMovesThePositionOverBufferedBytes) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 100, 1000, 256, 61, false);
  ASSERT_OK(reader.Fill(10));

  reader.Consume(100);

  EXPECT_EQ(reader.position(), 200u);
  EXPECT_EQ(reader.remaining(), 800u);
  EXPECT_EQ(Buffered(reader), file.bytes().substr(200, 156));
  reader.Consume(156);
  EXPECT_EQ(reader.position(), 356u);
  EXPECT_EQ(reader.available(), 0u);
  EXPECT_EQ(file.reads().size(), 1u);
}

TEST(ChunkReaderTest, ARefillKeepsTheUnconsumedTailInFrontOfTheNextBytes) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1000, 256, 61, false);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(250);  // a batch cut by the chunk boundary: 6 bytes left

  ASSERT_OK(reader.Fill(100));

  // The tail is not read again; the rest of the buffer is.
  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 256), Caller(256, 250)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(250, 256));
  EXPECT_EQ(reader.position(), 250u);
  EXPECT_EQ(reader.bytes_read(), 506u);
}

TEST(ChunkReaderTest, ChunkBoundariesFollowTheConsumedBytes) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1000, 256, 61, false);
  std::string seen;

  while (reader.remaining() > 0) {
    ASSERT_OK(reader.Fill(1));
    seen += std::string(Buffered(reader));
    reader.Consume(reader.available());
  }

  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 256), Caller(256, 256),
                                        Caller(512, 256), Caller(768, 232)));
  EXPECT_EQ(seen, file.bytes());
  EXPECT_EQ(reader.position(), 1000u);
  EXPECT_EQ(reader.bytes_read(), 1000u);
}

TEST(ChunkReaderTest, NothingPastTheLimitIsRead) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 300, 256, 61, false);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);

  ASSERT_OK(reader.Fill(44));

  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 256), Caller(256, 44)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(256, 44));
  EXPECT_EQ(reader.remaining(), 44u);
}

TEST(ChunkReaderTest, ABatchLargerThanAChunkIsReadWholeIntoAGrownBuffer) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1000, 256, 61, false);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(200);

  ASSERT_OK(reader.Fill(600));  // 56 bytes buffered, 544 more needed

  EXPECT_THAT(file.reads(), ElementsAre(Caller(0, 256), Caller(256, 544)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(200, 600));
  EXPECT_EQ(reader.position(), 200u);
}

TEST(ChunkReaderTest, AFileShorterThanTheLimitMovesTheLimitToItsEnd) {
  // The file shrank to 1000 bytes after its size (1500) was taken.
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 0, 1500, 256, 61, false);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);

  ASSERT_OK(reader.Fill(1));

  EXPECT_THAT(file.reads().back(), Caller(768, 256));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(768));
  EXPECT_EQ(reader.remaining(), 232u);
  EXPECT_EQ(reader.bytes_read(), 1000u);
}

TEST(ChunkReaderTest, AFillAskingForBytesTheShrunkFileLacksReturnsWhatIsThere) {
  MemoryFile file(Pattern(1000));
  ChunkReader reader(file, 900, 1500, 256, 61, false);

  ASSERT_OK(reader.Fill(500));

  EXPECT_THAT(file.reads(), ElementsAre(Caller(900, 500)));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(900));
  EXPECT_EQ(reader.available(), 100u);
  EXPECT_EQ(reader.remaining(), 100u);
  EXPECT_EQ(reader.bytes_read(), 100u);
  reader.Consume(100);
  EXPECT_EQ(reader.remaining(), 0u);
}

TEST(ChunkReaderTest, ReadErrorsPassThroughWithTheirCodeAndMessage) {
  for (const absl::Status& error :
       {absl::InternalError("pread \"/memory\": Input/output error"),
        absl::PermissionDeniedError("pread: Permission denied"),
        absl::FailedPreconditionError("handle from before the crash")}) {
    SCOPED_TRACE(error.ToString());
    MemoryFile file(Pattern(1000));
    file.FailReadsPast(0, error);
    ChunkReader reader(file, 0, 1000, 256, 61, false);

    EXPECT_THAT(reader.Fill(1),
                StatusIs(error.code(), std::string(error.message())));
    EXPECT_EQ(reader.available(), 0u);
    EXPECT_EQ(reader.bytes_read(), 0u);
  }
}

TEST(ChunkReaderTest, AReadErrorInALaterChunkPassesThrough) {
  MemoryFile file(Pattern(1000));
  file.FailReadsPast(600, absl::InternalError("injected EIO at 512"));
  ChunkReader reader(file, 0, 1000, 256, 61, false);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);
  ASSERT_OK(reader.Fill(1));
  reader.Consume(256);

  EXPECT_THAT(reader.Fill(1),
              StatusIs(absl::StatusCode::kInternal, "injected EIO at 512"));
  EXPECT_EQ(reader.bytes_read(), 512u);
}

// ---- Memory bound -----------------------------------------------------------

TEST(ChunkReaderTest, ASmallFileGetsABufferOfItsSizeNotOfAChunk) {
  MemoryFile file(Pattern(100));
  AllocationLog allocations;
  ChunkReader reader(file, 0, 100, /*chunk_bytes=*/1 << 20, 61, false);

  ASSERT_OK(reader.Fill(61));

  EXPECT_THAT(allocations.sizes(), ElementsAre(100u));
  EXPECT_EQ(Buffered(reader), file.bytes());
}

TEST(ChunkReaderTest, ABufferGrowsOnlyWhenAskedForMoreThanItHolds) {
  MemoryFile file(Pattern(10000));
  AllocationLog allocations;
  ChunkReader reader(file, 0, 10000, 256, 61, false);

  ASSERT_OK(reader.Fill(1));
  reader.Consume(200);
  ASSERT_OK(reader.Fill(256));  // fits the buffer: moved, not grown
  EXPECT_THAT(allocations.sizes(), ElementsAre(256u));
  ASSERT_OK(reader.Fill(600));  // one batch larger than a chunk
  EXPECT_THAT(allocations.sizes(), ElementsAre(256u, 600u));
  reader.Consume(600);
  ASSERT_OK(reader.Fill(100));  // back to chunk-sized needs: no new buffer

  EXPECT_THAT(allocations.sizes(), ElementsAre(256u, 600u));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(800, 600));
}

TEST(ChunkReaderTest, AScanAllocatesNoMoreThanTheLargestFillOrAChunk) {
  MemoryFile file(Pattern(20000));
  for (bool read_ahead : {false, true}) {
    SCOPED_TRACE(read_ahead ? "read-ahead" : "synchronous");
    AllocationLog allocations;
    {
      ChunkReader reader(file, 0, 20000, 800, 61, read_ahead);
      while (reader.remaining() > 0) {
        const size_t want =
            static_cast<size_t>(std::min<uint64_t>(300, reader.remaining()));
        ASSERT_OK(reader.Fill(want));
        reader.Consume(want);
      }
    }
    // Synchronous: one chunk. Read-ahead: two buffers of two chunks (the
    // chunk and the headroom its predecessor's tail moves into).
    const size_t bound = read_ahead ? 2 * 800 : 800;
    EXPECT_THAT(allocations.sizes(), Each(Le(bound)));
    EXPECT_LE(allocations.sizes().size(), read_ahead ? 2u : 1u);
  }
}

// ---- Read-ahead
// ---------------------------------------------------------------
//
// chunk_bytes 800: the helper reads a chunk in 8 pieces of 100 bytes. A
// reader with read-ahead reads the first two chunks synchronously (its first
// buffer is also the next read-ahead target) and starts reading the third
// at once.

constexpr size_t kChunk = 800;
constexpr size_t kPiece = 100;

TEST(ChunkReaderReadAheadTest, TheFirstFillStartsReadingTheNextChunkAhead) {
  MemoryFile file(Pattern(4000));
  ChunkReader reader(file, 0, 4000, kChunk, 61, /*read_ahead=*/true);

  ASSERT_OK(reader.Fill(100));
  ASSERT_TRUE(file.WaitForHelperReads(8));

  EXPECT_EQ(Buffered(reader), file.bytes().substr(0, 2 * kChunk));
  std::vector<Read> expected = {Caller(0, 2 * kChunk)};
  for (size_t i = 0; i < 8; ++i) {
    expected.push_back(Helper(2 * kChunk + i * kPiece, kPiece));
  }
  EXPECT_EQ(file.ReadsWithin(0, 3 * kChunk), expected);
  // Read ahead but not adopted yet: not counted.
  EXPECT_EQ(reader.bytes_read(), 2 * kChunk);
}

TEST(ChunkReaderReadAheadTest, ARefillAdoptsTheChunkTheHelperRead) {
  MemoryFile file(Pattern(4000));
  ChunkReader reader(file, 0, 4000, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));
  ASSERT_TRUE(file.WaitForHelperReads(8));  // all 8 pieces claimed
  reader.Consume(1550);                     // a 50-byte tail
  const int caller_reads = file.caller_reads();

  ASSERT_OK(reader.Fill(200));

  EXPECT_EQ(file.caller_reads(), caller_reads);  // nothing read here
  EXPECT_EQ(Buffered(reader), file.bytes().substr(1550, 50 + kChunk));
  EXPECT_EQ(reader.position(), 1550u);
  EXPECT_EQ(reader.bytes_read(), 3 * kChunk);
}

TEST(ChunkReaderReadAheadTest,
     ACallerThatNeedsTheChunkFirstReadsThePiecesTheHelperHasNotStarted) {
  MemoryFile file(Pattern(4000));
  // The helper's first piece is held until the caller has read the other 7
  // (its first, synchronous read is read number 1).
  file.HoldHelperUntilCallerReads(1 + 7);
  ChunkReader reader(file, 0, 4000, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));
  ASSERT_TRUE(file.WaitForAHeldHelperRead());
  reader.Consume(2 * kChunk);

  ASSERT_OK(reader.Fill(kChunk));

  EXPECT_FALSE(file.hold_timed_out());
  EXPECT_EQ(Buffered(reader), file.bytes().substr(2 * kChunk, kChunk));
  std::vector<Read> expected = {Helper(1600, kPiece)};
  for (size_t i = 1; i < 8; ++i) {
    expected.push_back(Caller(1600 + i * kPiece, kPiece));
  }
  EXPECT_EQ(file.ReadsWithin(2 * kChunk, 3 * kChunk), expected);
  EXPECT_EQ(reader.bytes_read(), 3 * kChunk);
}

TEST(ChunkReaderReadAheadTest, ATailLargerThanAChunkIsReadSynchronously) {
  MemoryFile file(Pattern(4000));
  ChunkReader reader(file, 0, 4000, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));
  ASSERT_TRUE(file.WaitForHelperReads(8));
  reader.Consume(100);  // 1500 bytes left: more than the headroom
  const size_t reads_before = file.reads().size();

  ASSERT_OK(reader.Fill(1501));

  // The read-ahead chunk is dropped; its first bytes are read again.
  const std::vector<Read> reads = file.reads();
  ASSERT_GE(reads.size(), reads_before + 1);
  EXPECT_EQ(reads[reads_before], Caller(1600, 100));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(100, 1600));
}

TEST(ChunkReaderReadAheadTest,
     ABatchTheReadAheadChunkCannotHoldIsReadSynchronously) {
  MemoryFile file(Pattern(4000));
  ChunkReader reader(file, 0, 4000, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));
  ASSERT_TRUE(file.WaitForHelperReads(8));
  reader.Consume(1550);  // 50 bytes left, and 800 read ahead: 850 < 1000
  const size_t reads_before = file.reads().size();

  ASSERT_OK(reader.Fill(1000));

  const std::vector<Read> reads = file.reads();
  ASSERT_GE(reads.size(), reads_before + 1);
  EXPECT_EQ(reads[reads_before], Caller(1600, 1550));
  EXPECT_EQ(Buffered(reader), file.bytes().substr(1550, 1600));
}

TEST(ChunkReaderReadAheadTest, AnErrorOfTheHelpersReadIsReturnedByTheRefill) {
  MemoryFile file(Pattern(4000));
  file.FailReadsPast(2 * kChunk, absl::InternalError("injected EIO"));
  ChunkReader reader(file, 0, 4000, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));  // [0, 1600) reads fine
  reader.Consume(2 * kChunk);

  EXPECT_THAT(reader.Fill(100),
              StatusIs(absl::StatusCode::kInternal, "injected EIO"));
  EXPECT_EQ(reader.bytes_read(), 2 * kChunk);
}

TEST(ChunkReaderReadAheadTest,
     TheHelperFindingTheEndOfAShrunkFileMovesTheLimit) {
  // 2000 bytes left of a file whose size was taken as 2500.
  MemoryFile file(Pattern(2000));
  ChunkReader reader(file, 0, 2500, kChunk, 61, true);
  ASSERT_OK(reader.Fill(100));
  reader.Consume(2 * kChunk);

  ASSERT_OK(reader.Fill(900));  // all that remains as far as it knows

  EXPECT_EQ(Buffered(reader), file.bytes().substr(2 * kChunk));
  EXPECT_EQ(reader.remaining(), 400u);
  EXPECT_EQ(reader.bytes_read(), 2000u);
}

TEST(ChunkReaderReadAheadTest, TheBytesNeverDependOnWhetherReadAheadIsOn) {
  const std::string bytes = Pattern(20000);
  // Fill sizes of a scan: headers, small and large batches, one larger than
  // two chunks.
  const std::vector<size_t> script = {61,  300, 61,   1700, 61, 799, 61,
                                      800, 61,  2500, 10,   61, 4000};
  std::vector<std::string> results[2];
  for (bool read_ahead : {false, true}) {
    MemoryFile file(bytes);
    ChunkReader reader(file, 37, 20000, kChunk, 61, read_ahead);
    for (size_t step = 0; reader.remaining() > 0; ++step) {
      const size_t want = static_cast<size_t>(
          std::min<uint64_t>(script[step % script.size()], reader.remaining()));
      const uint64_t position = reader.position();
      ASSERT_OK(reader.Fill(want));
      ASSERT_GE(reader.available(), want);
      ASSERT_EQ(absl::string_view(reader.data(), want),
                absl::string_view(bytes).substr(position, want))
          << "step " << step << (read_ahead ? " with" : " without")
          << " read-ahead";
      results[read_ahead].push_back(std::string(reader.data(), want));
      reader.Consume(want);
    }
    EXPECT_EQ(reader.position(), 20000u);
  }
  EXPECT_EQ(results[0], results[1]);
}

TEST(ChunkReaderReadAheadTest, DestroyingAReaderWithAReadInFlightWaitsForIt) {
  MemoryFile file(Pattern(4000));
  file.HoldHelperUntilCallerReads(2);
  {
    ChunkReader reader(file, 0, 4000, kChunk, 61, true);
    ASSERT_OK(reader.Fill(100));
    ASSERT_TRUE(file.WaitForAHeldHelperRead());
    // Lets the held piece go on only now, from this thread: the destructor
    // must wait for it before freeing the buffer it reads into.
    char byte;
    ASSERT_OK(file.ReadAt(0, 1, &byte).status());
  }
  EXPECT_FALSE(file.hold_timed_out());
  EXPECT_THAT(file.ReadsWithin(2 * kChunk, 3 * kChunk),
              Each(testing::Field(&Read::helper, true)));
}

}  // namespace
}  // namespace kaas::segment
