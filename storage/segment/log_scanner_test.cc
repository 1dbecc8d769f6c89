#include "storage/segment/log_scanner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::segment {
namespace {

using ::kaas::test::BatchBuilder;
using ::kaas::test::FixCrc;
using ::kaas::test::FlipBit;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::StatusIs;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace layout = batch_layout;

constexpr int64_t kBase = 1000;

// A log as the engine writes it: batches with base offsets rewritten.
struct TestLog {
  std::string bytes;
  std::vector<uint64_t> positions;  // of each batch
  std::vector<int64_t> offsets;     // base offset of each batch
  int64_t next_offset = kBase;

  // Appends a batch of `records` records of `value_size` bytes each.
  void Add(int records, size_t value_size = 40) {
    std::string batch =
        BatchBuilder()
            .AddRandomRecords(records, value_size, /*seed=*/positions.size())
            .Build();
    SetBaseOffset(batch.data(), next_offset);
    positions.push_back(bytes.size());
    offsets.push_back(next_offset);
    bytes += batch;
    next_offset += records;
  }
  uint64_t end_of(size_t batch) const {
    return batch + 1 < positions.size() ? positions[batch + 1] : bytes.size();
  }
};

// Five batches of different sizes and record counts.
TestLog FiveBatches() {
  TestLog log;
  log.Add(1);
  log.Add(3, 100);
  log.Add(2, 10);
  log.Add(5, 300);
  log.Add(1, 0);
  return log;
}

struct Visited {
  int64_t base_offset;
  uint64_t position;
  size_t size;
  friend bool operator==(const Visited& a, const Visited& b) {
    return a.base_offset == b.base_offset && a.position == b.position &&
           a.size == b.size;
  }
};

// Fails every read, to check that I/O errors pass through.
class FailingFile : public fs::ReadableFile {
 public:
  explicit FailingFile(const fs::ReadableFile& file) : file_(file) {}
  absl::StatusOr<size_t> ReadAt(uint64_t, size_t, char*) const override {
    return absl::InternalError("injected read error");
  }
  absl::StatusOr<uint64_t> Size() const override { return file_.Size(); }
  const std::string& path() const override { return file_.path(); }

 private:
  const fs::ReadableFile& file_;
};

// Every scan runs twice: reading synchronously, and reading ahead on a
// helper thread (forced for any size). The results must not differ.
// Passes reads through, failing those at or past `fail_from`, and notes
// which threads read.
class ObservedFile : public fs::ReadableFile {
 public:
  explicit ObservedFile(const fs::ReadableFile& file,
                        uint64_t fail_from = UINT64_MAX)
      : file_(file), fail_from_(fail_from) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    {
      absl::MutexLock lock(&mu_);
      if (std::this_thread::get_id() != caller_) ++reads_elsewhere_;
    }
    if (offset + n > fail_from_) {
      return absl::InternalError(absl::StrCat("injected error at ", offset));
    }
    return file_.ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override { return file_.Size(); }
  const std::string& path() const override { return file_.path(); }
  int reads_elsewhere() const {
    absl::MutexLock lock(&mu_);
    return reads_elsewhere_;
  }

 private:
  const fs::ReadableFile& file_;
  const uint64_t fail_from_;
  const std::thread::id caller_ = std::this_thread::get_id();
  mutable absl::Mutex mu_;
  mutable int reads_elsewhere_ ABSL_GUARDED_BY(mu_) = 0;
};

// Holds the reads of one side of a read-ahead scan until the other side has
// read: kHelper holds every read of the helper thread until the caller has
// read a piece of a read-ahead chunk itself (at or past the first chunk,
// which the caller reads synchronously); kCaller holds the caller's reads
// past the first chunk until the helper has read. A hold gives up for good
// after a deadline (a failure, not a hang) if the other side never reads.
class HoldingFile : public fs::ReadableFile {
 public:
  enum class Hold { kHelper, kCaller };

  HoldingFile(const fs::ReadableFile& file, Hold hold, uint64_t first_chunk_end)
      : file_(file), hold_(hold), first_chunk_end_(first_chunk_end) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    {
      absl::MutexLock lock(&mu_);
      const bool caller = std::this_thread::get_id() == caller_;
      const bool ahead = !caller || offset >= first_chunk_end_;
      if (caller && ahead) ++caller_ahead_reads_;
      if (!caller) ++helper_reads_;
      if (ahead && caller == (hold_ == Hold::kCaller)) {
        auto other_read = [this, caller]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return timeouts_ > 0 ||
                 (caller ? helper_reads_ : caller_ahead_reads_) > 0;
        };
        if (!mu_.AwaitWithTimeout(absl::Condition(&other_read),
                                  absl::Seconds(30))) {
          ++timeouts_;  // holds no more reads
        }
      }
    }
    return file_.ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override { return file_.Size(); }
  const std::string& path() const override { return file_.path(); }
  int caller_ahead_reads() const {
    absl::MutexLock lock(&mu_);
    return caller_ahead_reads_;
  }
  int helper_reads() const {
    absl::MutexLock lock(&mu_);
    return helper_reads_;
  }
  int timeouts() const {
    absl::MutexLock lock(&mu_);
    return timeouts_;
  }

 private:
  const fs::ReadableFile& file_;
  const Hold hold_;
  const uint64_t first_chunk_end_;
  const std::thread::id caller_ = std::this_thread::get_id();
  mutable absl::Mutex mu_;
  mutable int caller_ahead_reads_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int helper_reads_ ABSL_GUARDED_BY(mu_) = 0;
  mutable int timeouts_ ABSL_GUARDED_BY(mu_) = 0;
};

// Many batches of varied sizes (some larger than the small chunks below).
TestLog ManyBatches() {
  TestLog log;
  for (int i = 0; i < 200; ++i) log.Add(1 + i % 4, (i * 37) % 700);
  return log;
}

class LogScannerTest : public ::testing::TestWithParam<bool> {
 protected:
  // `options` with read-ahead on or off, as the parameter says.
  static ScanOptions WithReadAhead(ScanOptions options) {
    options.read_ahead_min_bytes = GetParam() ? 1 : 0;
    return options;
  }

  // Writes `contents` as the log file and scans it.
  absl::StatusOr<ScanResult> Scan(const std::string& contents,
                                  uint64_t start_position = 0,
                                  int64_t expected_offset = kBase,
                                  const ScanOptions& options = {}) {
    if (absl::Status s = fs::WriteStringToFile(fs_, path_, contents); !s.ok()) {
      return s;
    }
    return ScanFile(start_position, expected_offset, options);
  }

  // Scans the log file as it is.
  absl::StatusOr<ScanResult> ScanFile(uint64_t start_position = 0,
                                      int64_t expected_offset = kBase,
                                      const ScanOptions& options = {}) {
    visited_.clear();
    absl::StatusOr<std::unique_ptr<fs::ReadableFile>> file =
        fs::FileOpener::OpenForRead(fs_, path_);
    if (!file.ok()) return file.status();
    return ScanLog(
        **file, start_position, expected_offset, WithReadAhead(options),
        [this](const RecordBatchView& batch, uint64_t position) {
          visited_.push_back({batch.base_offset(), position, batch.size()});
          return true;
        });
  }

  // Scans `file` from the start in 1000-byte chunks (8 read-ahead pieces of
  // 125 bytes), noting the batches in visited_.
  absl::StatusOr<ScanResult> ScanInChunksOf1000(const fs::ReadableFile& file) {
    visited_.clear();
    ScanOptions options = WithReadAhead(ScanOptions());
    options.buffer_bytes = 1000;
    return ScanLog(
        file, 0, kBase, options,
        [this](const RecordBatchView& batch, uint64_t position) {
          visited_.push_back({batch.base_offset(), position, batch.size()});
          return true;
        });
  }

  std::vector<Visited> AllBatches(const TestLog& log) {
    std::vector<Visited> all;
    for (size_t i = 0; i < log.positions.size(); ++i) {
      all.push_back({log.offsets[i], log.positions[i],
                     static_cast<size_t>(log.end_of(i) - log.positions[i])});
    }
    return all;
  }

  fs::FileSystem& fs_ = *fs::PosixFileSystem::Default();
  fs::ScopedTempDir dir_;
  const std::string path_ = dir_.path() + "/00000000-00000000000000001000.log";
  std::vector<Visited> visited_;
};

TEST_P(LogScannerTest, CleanLogEndsAtEndOfFile) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << result.detail;
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.batches, 5);
  EXPECT_EQ(result.file_size, log.bytes.size());
  EXPECT_EQ(result.scanned_bytes, log.bytes.size());
  EXPECT_EQ(result.detail,
            absl::StrCat("clean end at position ", log.bytes.size()));
  EXPECT_EQ(visited_, AllBatches(log));
}

TEST_P(LogScannerTest, EmptyLogEndsAtEndOfFile) {
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(""));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, 0u);
  EXPECT_EQ(result.next_offset, kBase);
  EXPECT_EQ(result.batches, 0);
  EXPECT_EQ(result.scanned_bytes, 0u);
}

TEST_P(LogScannerTest, BufferSmallerThanBatchesGivesTheSameResult) {
  // Every refill then moves a partial batch to the front or grows the buffer.
  const TestLog log = FiveBatches();
  for (size_t buffer_bytes : {0, 1, 61, 100, 333, 1000, 4096}) {
    ScanOptions options;
    options.buffer_bytes = buffer_bytes;
    ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes, 0, kBase, options));
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << buffer_bytes;
    EXPECT_EQ(result.valid_end, log.bytes.size()) << buffer_bytes;
    EXPECT_EQ(result.next_offset, log.next_offset) << buffer_bytes;
    EXPECT_EQ(result.scanned_bytes, log.bytes.size()) << buffer_bytes;
    EXPECT_EQ(visited_, AllBatches(log)) << buffer_bytes;
  }
}

TEST_P(LogScannerTest, TornTailOfEveryLengthStopsAtTheLastFullBatch) {
  TestLog log;
  log.Add(2);
  log.Add(3);
  log.Add(4, 50);  // the batch that gets cut
  const uint64_t last = log.positions[2];
  const uint64_t last_size = log.bytes.size() - last;
  ASSERT_GT(last_size, layout::kHeaderSize + 100);
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  for (uint64_t kept = last_size - 1; kept >= 1; --kept) {
    SCOPED_TRACE(absl::StrCat("kept ", kept, " bytes of the last batch"));
    ASSERT_OK(fs::TruncateFile(fs_, path_, last + kept));
    ASSERT_OK_AND_ASSIGN(ScanResult result, ScanFile());
    EXPECT_EQ(result.stop, ScanStop::kTornBatch) << result.detail;
    EXPECT_EQ(result.valid_end, last);
    EXPECT_EQ(result.next_offset, log.offsets[2]);
    EXPECT_EQ(result.batches, 2);
    if (kept < layout::kLogOverhead) {
      // (plus a zero-filled note when the kept bytes happen to be zeros: the
      // high bytes of a small baseOffset)
      EXPECT_THAT(result.detail,
                  StartsWith(absl::StrCat(
                      "torn batch at position ", last, ": ", kept,
                      " bytes remain, fewer than the 12-byte length prefix")));
    } else {
      EXPECT_EQ(result.detail,
                absl::StrCat("torn batch at position ", last, ": announces ",
                             last_size, " bytes, ", kept, " remain"));
    }
  }
}

TEST_P(LogScannerTest, FlippedBitInEveryByteOfAMiddleBatchIsDetected) {
  TestLog log;
  log.Add(2);
  log.Add(3, 20);  // the batch that gets corrupted
  log.Add(1);
  const uint64_t middle = log.positions[1];
  const uint64_t middle_size = log.end_of(1) - middle;
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<fs::WritableFile> writer,
      fs::FileOpener::OpenForWrite(fs_, path_, fs::OpenMode::kMustExist));
  for (uint64_t byte = 0; byte < middle_size; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      SCOPED_TRACE(absl::StrCat("byte ", byte, " bit ", bit));
      std::string flipped = log.bytes.substr(middle + byte, 1);
      FlipBit(&flipped, 0, bit);
      ASSERT_OK(writer->WriteAt(middle + byte, flipped));
      ASSERT_OK_AND_ASSIGN(ScanResult result, ScanFile());
      ASSERT_OK(
          writer->WriteAt(middle + byte, log.bytes.substr(middle + byte, 1)));
      if (byte >= layout::kPartitionLeaderEpoch && byte < layout::kMagic) {
        // partitionLeaderEpoch is covered by nothing: not by the CRC (which
        // starts at byte 21) and not by a check (it has no expected value).
        EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << result.detail;
        continue;
      }
      EXPECT_EQ(result.valid_end, middle) << result.detail;
      EXPECT_EQ(result.next_offset, log.offsets[1]);
      if (byte < layout::kBatchLength) {
        // baseOffset is outside the CRC: the offset sequence catches it.
        EXPECT_EQ(result.stop, ScanStop::kOffsetMismatch) << result.detail;
      } else if (byte < layout::kPartitionLeaderEpoch) {
        // batchLength: below the minimum or past the end (framing), or a
        // plausible length that moves the CRC range (crc mismatch).
        EXPECT_THAT(result.stop,
                    AnyOf(ScanStop::kCorruptBatch, ScanStop::kTornBatch))
            << result.detail;
      } else if (byte == layout::kMagic) {
        EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
        EXPECT_THAT(result.detail, HasSubstr("magic"));
      } else {
        // The crc field itself and everything it covers.
        EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
        EXPECT_THAT(result.detail, HasSubstr("crc mismatch"));
      }
    }
  }
}

TEST_P(LogScannerTest, CrcMismatchDetailNamesBothValues) {
  TestLog log;
  log.Add(1);
  log.Add(1);
  std::string bytes = log.bytes;
  OverwriteBigEndian32(&bytes, log.positions[1] + layout::kCrc, 0x1234abcd);
  std::string batch = log.bytes.substr(log.positions[1]);
  const uint32_t real_crc =
      static_cast<uint32_t>(ReadBigEndian32(batch.data() + layout::kCrc));
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(bytes));
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  char computed[16];
  snprintf(computed, sizeof(computed), "0x%08x", real_crc);
  EXPECT_EQ(result.detail,
            absl::StrCat("batch at position ", log.positions[1],
                         ": crc mismatch (stored 0x1234abcd, computed ",
                         computed, ")"));
}

TEST_P(LogScannerTest, VerifyCrcFalseAcceptsAFlippedPayload) {
  TestLog log = FiveBatches();
  std::string bytes = log.bytes;
  FlipBit(&bytes, log.positions[2] + layout::kRecords + 2);
  ScanOptions options;
  options.verify_crc = false;
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(bytes, 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, bytes.size());
}

TEST_P(LogScannerTest, BaseOffsetGapIsAnOffsetMismatch) {
  TestLog log;
  log.Add(2);
  log.Add(2);
  log.next_offset += 5;  // a gap, or bytes spliced in by another writer
  log.Add(1);
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes));
  EXPECT_EQ(result.stop, ScanStop::kOffsetMismatch);
  EXPECT_EQ(result.valid_end, log.positions[2]);
  EXPECT_EQ(result.next_offset, kBase + 4);
  EXPECT_EQ(result.detail, absl::StrCat("batch at position ", log.positions[2],
                                        ": baseOffset 1009 but expected 1004"));
}

TEST_P(LogScannerTest, NegativeLastOffsetDeltaIsCorrupt) {
  TestLog log;
  log.Add(2);
  std::string batch = BatchBuilder().AddRecord("k", "v").Build();
  SetBaseOffset(batch.data(), log.next_offset);
  OverwriteBigEndian32(&batch, layout::kLastOffsetDelta, -3);
  FixCrc(&batch);
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes + batch));
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.detail, absl::StrCat("batch at position ", log.bytes.size(),
                                        ": lastOffsetDelta -3 is negative"));
}

TEST_P(LogScannerTest, GarbageAfterACleanLogStopsAtTheCleanEnd) {
  const TestLog log = FiveBatches();
  const std::string garbage =
      "this is not a record batch, just text appended by someone else";
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes + garbage));
  // The text's bytes 8..12 read as a huge length; its byte 16 ('c') is
  // not 2.
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.detail, absl::StrCat("batch at position ", log.bytes.size(),
                                        ": magic 99, expected 2"));
}

TEST_P(LogScannerTest, PseudoRandomGarbageNeverPassesAsABatch) {
  const TestLog log = FiveBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<fs::WritableFile> writer,
      fs::FileOpener::OpenForWrite(fs_, path_, fs::OpenMode::kMustExist));
  uint64_t state = 42;
  for (int round = 0; round < 200; ++round) {
    // Longer every round, so each write replaces the whole tail.
    std::string garbage(1 + round * 7, '\0');
    for (char& c : garbage) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      c = static_cast<char>(state >> 56);
    }
    ASSERT_OK(writer->WriteAt(log.bytes.size(), garbage));
    ASSERT_OK_AND_ASSIGN(ScanResult result, ScanFile());
    EXPECT_THAT(result.stop,
                AnyOf(ScanStop::kCorruptBatch, ScanStop::kTornBatch))
        << result.detail;
    EXPECT_EQ(result.valid_end, log.bytes.size()) << result.detail;
  }
}

TEST_P(LogScannerTest, ZeroFilledTailIsCorruptAndSaysSo) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       Scan(log.bytes + std::string(4096, '\0')));
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.detail,
            absl::StrCat("batch at position ", log.bytes.size(),
                         ": batchLength 0 is below the v2 minimum 49 "
                         "(zero-filled: all 4096 remaining bytes are zero)"));
}

TEST_P(LogScannerTest, ZeroFilledTailLargerThanTheBufferSaysHowMuchWasSeen) {
  const TestLog log = FiveBatches();
  ScanOptions options;
  options.buffer_bytes = 1024;
  ASSERT_OK_AND_ASSIGN(
      ScanResult result,
      Scan(log.bytes + std::string(1 << 20, '\0'), 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_THAT(result.detail, HasSubstr("zero-filled: the first "));
  EXPECT_THAT(result.detail, HasSubstr(" of 1048576 remaining bytes are zero"));
  // It did not read the megabyte of zeros.
  EXPECT_LT(result.scanned_bytes, log.bytes.size() + 4096);
}

TEST_P(LogScannerTest, ShortZeroFilledTailIsTornAndSaysSo) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       Scan(log.bytes + std::string(7, '\0')));
  EXPECT_EQ(result.stop, ScanStop::kTornBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_THAT(result.detail,
              HasSubstr("(zero-filled: all 7 remaining bytes are zero)"));
}

TEST_P(LogScannerTest, HugeGarbageLengthIsTornWithoutReadingOrAllocating) {
  const TestLog log = FiveBatches();
  // A plausible header (magic 2) announcing ~2 GiB.
  std::string header = BatchBuilder().AddRecord("k", "v").Build();
  SetBaseOffset(header.data(), log.next_offset);
  OverwriteBigEndian32(&header, layout::kBatchLength, 0x7fffffff);
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes + header));
  EXPECT_EQ(result.stop, ScanStop::kTornBatch);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(
      result.detail,
      absl::StrCat("torn batch at position ", log.bytes.size(),
                   ": announces 2147483659 bytes, ", header.size(), " remain"));
  // Nothing past the file was asked for; the buffer never grew to the length
  // (an allocation of 2 GiB would fail under the sanitizers' limits).
  EXPECT_EQ(result.scanned_bytes, log.bytes.size() + header.size());
}

TEST_P(LogScannerTest, VisitorCanStopTheWalk) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(auto file, [&]() {
    EXPECT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
    return fs::FileOpener::OpenForRead(fs_, path_);
  }());
  int seen = 0;
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       ScanLog(*file, 0, kBase, WithReadAhead(ScanOptions()),
                               [&seen](const RecordBatchView&, uint64_t) {
                                 return ++seen < 2;
                               }));
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(result.stop, ScanStop::kStoppedByVisitor);
  EXPECT_EQ(result.batches, 2);
  EXPECT_EQ(result.valid_end, log.positions[2]);
  EXPECT_EQ(result.next_offset, log.offsets[2]);
}

TEST_P(LogScannerTest, StartsMidFileAtABatchBoundary) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       Scan(log.bytes, log.positions[3], log.offsets[3]));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.batches, 2);
  EXPECT_EQ(result.scanned_bytes, log.bytes.size() - log.positions[3]);
  EXPECT_EQ(visited_.front().position, log.positions[3]);
}

TEST_P(LogScannerTest, StartingAtTheEndScansNothing) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       Scan(log.bytes, log.bytes.size(), log.next_offset));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.batches, 0);
}

TEST_P(LogScannerTest, WrongExpectedOffsetMidFileIsAnOffsetMismatch) {
  const TestLog log = FiveBatches();
  ASSERT_OK_AND_ASSIGN(ScanResult result,
                       Scan(log.bytes, log.positions[3], log.offsets[3] + 1));
  EXPECT_EQ(result.stop, ScanStop::kOffsetMismatch);
  EXPECT_EQ(result.valid_end, log.positions[3]);
  EXPECT_EQ(result.next_offset, log.offsets[3] + 1);
}

TEST_P(LogScannerTest, StartPastTheEndIsOutOfRange) {
  const TestLog log = FiveBatches();
  EXPECT_THAT(
      Scan(log.bytes, log.bytes.size() + 1),
      StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("is past the end")));
}

TEST_P(LogScannerTest, EndPositionStopsEarly) {
  const TestLog log = FiveBatches();
  ScanOptions options;
  options.end_position = log.positions[3];
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes, 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, log.positions[3]);
  EXPECT_EQ(result.next_offset, log.offsets[3]);
  EXPECT_EQ(result.batches, 3);
  EXPECT_EQ(result.file_size, log.bytes.size());
  EXPECT_EQ(result.scanned_bytes, log.positions[3]);
}

TEST_P(LogScannerTest, EndPositionInsideABatchIsTorn) {
  const TestLog log = FiveBatches();
  ScanOptions options;
  options.end_position = log.positions[3] + 70;
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes, 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kTornBatch);
  EXPECT_EQ(result.valid_end, log.positions[3]);
}

TEST_P(LogScannerTest, EndPositionPastTheFileIsTheFileSize) {
  const TestLog log = FiveBatches();
  ScanOptions options;
  options.end_position = log.bytes.size() + 1000;
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes, 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, log.bytes.size());
}

TEST_P(LogScannerTest, ReadErrorsPassThrough) {
  const TestLog log = FiveBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs_, path_));
  FailingFile failing(*file);
  EXPECT_THAT(
      ScanLog(failing, 0, kBase, WithReadAhead(ScanOptions()),
              [](const RecordBatchView&, uint64_t) { return true; }),
      StatusIs(absl::StatusCode::kInternal, HasSubstr("injected read error")));
}

// Chunks smaller than some batches: read-ahead chunks are dropped for those
// and read again synchronously; the walk is the same either way.
TEST_P(LogScannerTest, ManyChunksGiveTheSameWalk) {
  const TestLog log = ManyBatches();
  for (size_t buffer_bytes : {61, 100, 1000, 4096, 65536}) {
    ScanOptions options;
    options.buffer_bytes = buffer_bytes;
    ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(log.bytes, 0, kBase, options));
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << buffer_bytes;
    EXPECT_EQ(result.valid_end, log.bytes.size()) << buffer_bytes;
    EXPECT_EQ(result.scanned_bytes, log.bytes.size()) << buffer_bytes;
    EXPECT_EQ(visited_, AllBatches(log)) << buffer_bytes;
  }
}

TEST_P(LogScannerTest, AFlippedBitInALaterChunkStopsThere) {
  const TestLog log = ManyBatches();
  const size_t victim = 150;
  std::string bytes = log.bytes;
  FlipBit(&bytes, log.positions[victim] + layout::kRecords + 2, 3);
  ScanOptions options;
  options.buffer_bytes = 1000;
  ASSERT_OK_AND_ASSIGN(ScanResult result, Scan(bytes, 0, kBase, options));
  EXPECT_EQ(result.stop, ScanStop::kCorruptBatch);
  EXPECT_EQ(result.valid_end, log.positions[victim]);
  EXPECT_EQ(visited_.size(), victim);
}

TEST_P(LogScannerTest, AReadErrorInALaterChunkPassesThrough) {
  const TestLog log = ManyBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs_, path_));
  ObservedFile failing(*file, /*fail_from=*/log.bytes.size() / 2);
  ScanOptions options;
  options.buffer_bytes = 1000;
  int visited = 0;
  EXPECT_THAT(
      ScanLog(failing, 0, kBase, WithReadAhead(options),
              [&](const RecordBatchView&, uint64_t) {
                ++visited;
                return true;
              }),
      StatusIs(absl::StatusCode::kInternal, HasSubstr("injected error")));
  EXPECT_GT(visited, 0);
}

// Read-ahead reads on a helper thread (the caller's reads past the first
// chunk are held until it did); below the threshold, or off, every read is
// the caller's.
TEST_P(LogScannerTest, ReadAheadReadsOnAnotherThread) {
  const TestLog log = ManyBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs_, path_));
  ScanOptions options = WithReadAhead(ScanOptions());
  options.buffer_bytes = 1000;
  if (GetParam()) {
    HoldingFile held(*file, HoldingFile::Hold::kCaller, options.buffer_bytes);
    ASSERT_OK_AND_ASSIGN(
        ScanResult result,
        ScanLog(held, 0, kBase, options,
                [](const RecordBatchView&, uint64_t) { return true; }));
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
    EXPECT_GT(held.helper_reads(), 0);
    EXPECT_EQ(held.timeouts(), 0);
  } else {
    ObservedFile observed(*file);
    ASSERT_OK_AND_ASSIGN(
        ScanResult result,
        ScanLog(observed, 0, kBase, options,
                [](const RecordBatchView&, uint64_t) { return true; }));
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
    EXPECT_EQ(observed.reads_elsewhere(), 0);
  }
  ObservedFile small_scan(*file);
  options.read_ahead_min_bytes = log.bytes.size() + 1;
  ASSERT_OK(ScanLog(small_scan, 0, kBase, options,
                    [](const RecordBatchView&, uint64_t) { return true; })
                .status());
  EXPECT_EQ(small_scan.reads_elsewhere(), 0);
}

// A file whose size or reads do not agree with its bytes: Size() reports
// `extra_size` bytes more than it holds (a file that shrank after its size
// was taken), and reads covering position `short_at` return only the bytes
// before it while reads starting past it return data (a file that shrank
// and grew again between reads).
class DistortedFile : public fs::ReadableFile {
 public:
  DistortedFile(const fs::ReadableFile& file, uint64_t extra_size,
                uint64_t short_at = UINT64_MAX)
      : file_(file), extra_size_(extra_size), short_at_(short_at) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (offset < short_at_ && offset + n > short_at_) n = short_at_ - offset;
    return file_.ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override {
    KAAS_ASSIGN_OR_RETURN(uint64_t size, file_.Size());
    return size + extra_size_;
  }
  const std::string& path() const override { return file_.path(); }

 private:
  const fs::ReadableFile& file_;
  const uint64_t extra_size_;
  const uint64_t short_at_;
};

// A short read is the end of the file, wherever in a chunk (or a read-ahead
// piece) it falls.
TEST_P(LogScannerTest, AFileShorterThanItsSizeEndsWhereItsBytesEnd) {
  const TestLog log = ManyBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs_, path_));
  for (uint64_t extra : {1, 100, 999, 5000}) {
    DistortedFile oversized(*file, extra);
    ASSERT_OK_AND_ASSIGN(ScanResult result, ScanInChunksOf1000(oversized));
    const int64_t visited = static_cast<int64_t>(visited_.size());
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << extra;
    EXPECT_EQ(result.valid_end, log.bytes.size()) << extra;
    EXPECT_EQ(result.scanned_bytes, log.bytes.size()) << extra;
    EXPECT_EQ(result.next_offset, log.next_offset) << extra;
    EXPECT_EQ(visited, static_cast<int64_t>(log.positions.size())) << extra;
  }
}

// The first short read is the end of the file: bytes read after it (by a
// later read-ahead piece) are never appended behind the gap.
TEST_P(LogScannerTest, TheFirstShortReadIsTheEndEvenIfLaterReadsReturnBytes) {
  const TestLog log = ManyBatches();
  ASSERT_OK(fs::WriteStringToFile(fs_, path_, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs_, path_));
  for (size_t batch : {size_t{60}, size_t{100}, size_t{150}}) {
    const uint64_t end = log.positions[batch];
    DistortedFile short_at(*file, /*extra_size=*/0, end);
    ASSERT_OK_AND_ASSIGN(ScanResult result, ScanInChunksOf1000(short_at));
    const int64_t visited = static_cast<int64_t>(visited_.size());
    EXPECT_EQ(result.stop, ScanStop::kEndOfFile) << batch;
    EXPECT_EQ(result.valid_end, end) << batch;
    EXPECT_EQ(result.next_offset, log.offsets[batch]) << batch;
    EXPECT_EQ(visited, static_cast<int64_t>(batch)) << batch;
  }
}

INSTANTIATE_TEST_SUITE_P(ReadAhead, LogScannerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ReadAhead" : "Synchronous";
                         });

TEST(ScanStopName, NamesEveryStop) {
  EXPECT_EQ(ScanStopName(ScanStop::kEndOfFile), "end of file");
  EXPECT_EQ(ScanStopName(ScanStop::kTornBatch), "torn batch");
  EXPECT_EQ(ScanStopName(ScanStop::kCorruptBatch), "corrupt batch");
  EXPECT_EQ(ScanStopName(ScanStop::kOffsetMismatch), "offset mismatch");
  EXPECT_EQ(ScanStopName(ScanStop::kStoppedByVisitor), "stopped by visitor");
}

// A caller that needs the next chunk before the read-ahead is done reads the
// pieces the helper has not started instead of waiting: the copy is shared.
TEST(ChunkReadAhead, TheCallerReadsThePiecesTheHelperHasNotStarted) {
  TestLog log;
  for (int i = 0; i < 100; ++i) log.Add(2, 100);  // batches well under a chunk
  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  fs::ScopedTempDir dir;
  const std::string path = dir.path() + "/00000000-00000000000000001000.log";
  ASSERT_OK(fs::WriteStringToFile(fs, path, log.bytes));
  ASSERT_OK_AND_ASSIGN(auto file, fs::FileOpener::OpenForRead(fs, path));
  ScanOptions options;
  options.buffer_bytes = 1000;
  options.read_ahead_min_bytes = 1;
  HoldingFile held(*file, HoldingFile::Hold::kHelper, options.buffer_bytes);
  int64_t visited = 0;
  ASSERT_OK_AND_ASSIGN(
      ScanResult result,
      ScanLog(held, 0, kBase, options, [&](const RecordBatchView&, uint64_t) {
        ++visited;
        return true;
      }));
  EXPECT_EQ(result.stop, ScanStop::kEndOfFile);
  EXPECT_EQ(result.valid_end, log.bytes.size());
  EXPECT_EQ(visited, 100);
  EXPECT_GT(held.caller_ahead_reads(), 0);
  EXPECT_EQ(held.timeouts(), 0);
}

}  // namespace
}  // namespace kaas::segment
