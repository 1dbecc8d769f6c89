#include "storage/segment/batch_reader.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/segment/offset_index.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::segment {
namespace {

using ::kaas::test::BatchBuilder;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

namespace layout = batch_layout;

constexpr int64_t kBase = 1000;
constexpr size_t kUnlimited = size_t{1} << 30;

// A log as the engine writes it: batches with base offsets rewritten.
struct TestLog {
  std::string bytes;
  std::vector<uint64_t> positions;  // of each batch
  std::vector<int64_t> offsets;     // base offset of each batch
  int64_t next_offset = kBase;

  void Add(int records, size_t value_size) {
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
  // The batch that holds `offset`.
  size_t BatchOf(int64_t offset) const {
    return std::upper_bound(offsets.begin(), offsets.end(), offset) -
           offsets.begin() - 1;
  }
  // The bytes of batches [first, end).
  std::string Slice(size_t first, size_t end) const {
    const uint64_t from = positions[first];
    const uint64_t to = end < positions.size() ? positions[end] : bytes.size();
    return bytes.substr(from, to - from);
  }
  // An index with an entry every `interval` bytes, as the segment builds it.
  OffsetIndex Index(uint64_t interval) const {
    OffsetIndex index(kBase);
    uint64_t last_indexed = 0;
    for (size_t i = 1; i < positions.size(); ++i) {
      if (positions[i] - last_indexed >= interval) {
        index.Append(offsets[i], positions[i]);
        last_indexed = positions[i];
      }
    }
    return index;
  }
};

// Twenty batches of 1-4 records and 60-600 bytes per record.
TestLog TwentyBatches() {
  TestLog log;
  for (int i = 0; i < 20; ++i) log.Add(1 + i % 4, 60 + (i * 137) % 541);
  return log;
}

// Counts reads and remembers the furthest byte asked for.
class CountingFile : public fs::ReadableFile {
 public:
  explicit CountingFile(const fs::ReadableFile& file) : file_(file) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    ++reads_;
    bytes_asked_ += n;
    furthest_ = std::max(furthest_, offset + n);
    if (fail_) return absl::InternalError("injected read error");
    return file_.ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override { return file_.Size(); }
  const std::string& path() const override { return file_.path(); }

  int reads() const { return reads_; }
  uint64_t bytes_asked() const { return bytes_asked_; }
  uint64_t furthest() const { return furthest_; }
  void Fail() { fail_ = true; }

 private:
  const fs::ReadableFile& file_;
  mutable int reads_ = 0;
  mutable uint64_t bytes_asked_ = 0;
  mutable uint64_t furthest_ = 0;
  bool fail_ = false;
};

class BatchReaderTest : public ::testing::Test {
 protected:
  void Write(const TestLog& log) { Write(log.bytes); }
  void Write(const std::string& bytes) {
    ASSERT_OK(fs::WriteStringToFile(fs_, path_, bytes));
    ASSERT_OK_AND_ASSIGN(file_, fs::FileOpener::OpenForRead(fs_, path_));
    counting_ = std::make_unique<CountingFile>(*file_);
  }
  // A request over the whole log, hinted by `index`.
  static BatchReadRequest Request(const TestLog& log, const OffsetIndex& index,
                                  int64_t offset, size_t max_bytes) {
    const OffsetIndexEntry hint = index.Lookup(offset);
    BatchReadRequest request;
    request.hint_position = hint.position;
    request.hint_offset = hint.offset;
    request.end_position = log.bytes.size();
    request.offset = offset;
    request.end_offset = log.next_offset;
    request.max_bytes = max_bytes;
    return request;
  }
  absl::StatusOr<BatchReadResult> Read(const BatchReadRequest& request) {
    return ReadBatches(*counting_, request);
  }

  fs::FileSystem& fs_ = *fs::PosixFileSystem::Default();
  fs::ScopedTempDir dir_;
  const std::string path_ = dir_.path() + "/00000000-00000000000000001000.log";
  std::unique_ptr<fs::ReadableFile> file_;
  std::unique_ptr<CountingFile> counting_;
};

TEST_F(BatchReaderTest, ReadFromEveryOffsetReturnsItsBatchWholeAndTheRest) {
  const TestLog log = TwentyBatches();
  Write(log);
  for (uint64_t interval : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 40}) {
    const OffsetIndex index = log.Index(interval);
    for (int64_t offset = kBase; offset < log.next_offset; ++offset) {
      SCOPED_TRACE(absl::StrCat("offset ", offset, " interval ", interval));
      const size_t first = log.BatchOf(offset);
      ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                           Read(Request(log, index, offset, kUnlimited)));
      EXPECT_EQ(result.batches_view(), log.Slice(first, log.positions.size()));
      EXPECT_EQ(result.batches,
                static_cast<int64_t>(log.positions.size() - first));
      EXPECT_EQ(result.next_offset, log.next_offset);
      EXPECT_EQ(result.next_position, log.bytes.size());
      EXPECT_TRUE(result.reached_end);
    }
  }
}

TEST_F(BatchReaderTest, CommonCaseIsOneRead) {
  const TestLog log = TwentyBatches();
  Write(log);
  const OffsetIndex index = log.Index(4096);
  ASSERT_GT(index.size(), 0u);
  const int64_t offset = log.offsets[15] + 1;
  ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                       Read(Request(log, index, offset, 4000)));
  EXPECT_EQ(counting_->reads(), 1);
  EXPECT_GT(result.batches, 1);
  EXPECT_EQ(result.batches_view().substr(0, log.end_of(15) - log.positions[15]),
            log.Slice(15, 16));
}

TEST_F(BatchReaderTest, FirstBatchLargerThanMaxBytesIsReturnedWhole) {
  TestLog log;
  log.Add(1, 100);
  log.Add(3, 5000);  // ~15 KiB, larger than max_bytes + lookahead
  log.Add(1, 100);
  Write(log);
  const OffsetIndex index(kBase);
  ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                       Read(Request(log, index, log.offsets[1] + 2, 100)));
  EXPECT_EQ(result.batches_view(), log.Slice(1, 2));  // KIP-74
  EXPECT_EQ(result.batches, 1);
  EXPECT_EQ(result.next_offset, log.offsets[2]);
  EXPECT_EQ(result.next_position, log.positions[2]);
  EXPECT_FALSE(result.reached_end);
  // The second read only completed the batch.
  EXPECT_EQ(counting_->reads(), 2);
  EXPECT_EQ(counting_->furthest(), log.positions[2]);
}

TEST_F(BatchReaderTest, MaxBytesCutsAtWholeBatches) {
  const TestLog log = TwentyBatches();
  Write(log);
  const OffsetIndex index(kBase);
  const uint64_t whole_three = log.positions[8] - log.positions[5];
  const size_t max_bytes = whole_three + (log.end_of(8) - log.positions[8]) / 2;
  ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                       Read(Request(log, index, log.offsets[5], max_bytes)));
  EXPECT_EQ(result.batches_view(), log.Slice(5, 8));
  EXPECT_EQ(result.batches, 3);
  EXPECT_EQ(result.next_offset, log.offsets[8]);
  EXPECT_EQ(result.next_position, log.positions[8]);
  EXPECT_FALSE(result.reached_end);
}

TEST_F(BatchReaderTest, MaxBytesExactlyAtABatchEndIncludesThatBatch) {
  const TestLog log = TwentyBatches();
  Write(log);
  const OffsetIndex index(kBase);
  ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                       Read(Request(log, index, log.offsets[2],
                                    log.positions[4] - log.positions[2])));
  EXPECT_EQ(result.batches_view(), log.Slice(2, 4));
  EXPECT_FALSE(result.reached_end);
}

TEST_F(BatchReaderTest, EndOffsetBoundsTheRead) {
  const TestLog log = TwentyBatches();
  Write(log);
  const OffsetIndex index = log.Index(1000);
  BatchReadRequest request = Request(log, index, log.offsets[3], kUnlimited);
  request.end_offset = log.offsets[7];  // e.g. the high watermark
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches_view(), log.Slice(3, 7));
  EXPECT_EQ(result.next_offset, log.offsets[7]);
  EXPECT_EQ(result.next_position, log.positions[7]);
  EXPECT_TRUE(result.reached_end);
}

TEST_F(BatchReaderTest, EndOffsetInsideABatchExcludesOnlyLaterBatches) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[3], kUnlimited);
  request.end_offset = log.offsets[7] + 1;  // batch 7 starts below it
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches_view(), log.Slice(3, 8));
  EXPECT_TRUE(result.reached_end);
}

TEST_F(BatchReaderTest, EndPositionBoundsTheReadAndTheIo) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[3], kUnlimited);
  request.end_position = log.positions[9];  // the written size, say
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches_view(), log.Slice(3, 9));
  EXPECT_EQ(result.next_offset, log.offsets[9]);
  EXPECT_EQ(result.next_position, log.positions[9]);
  EXPECT_TRUE(result.reached_end);
  EXPECT_EQ(counting_->reads(), 1);
  EXPECT_EQ(counting_->furthest(), log.positions[9]);
}

TEST_F(BatchReaderTest, ReadingExactlyAtTheEndIsEmptyAndReachesTheEnd) {
  const TestLog log = TwentyBatches();
  Write(log);
  const OffsetIndex index = log.Index(1000);
  ASSERT_OK_AND_ASSIGN(BatchReadResult result,
                       Read(Request(log, index, log.next_offset, kUnlimited)));
  EXPECT_EQ(result.batches, 0);
  EXPECT_EQ(result.batches_view(), "");
  EXPECT_EQ(result.next_offset, log.next_offset);
  EXPECT_EQ(result.next_position, log.bytes.size());
  EXPECT_TRUE(result.reached_end);
}

TEST_F(BatchReaderTest, HintAtTheEndPositionReadsNothing) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request;
  request.hint_position = log.bytes.size();
  request.hint_offset = log.next_offset;
  request.end_position = log.bytes.size();
  request.offset = log.next_offset;
  request.end_offset = log.next_offset;
  request.max_bytes = kUnlimited;
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches, 0);
  EXPECT_TRUE(result.reached_end);
  EXPECT_EQ(result.next_position, log.bytes.size());
  EXPECT_EQ(counting_->furthest(), log.bytes.size());
}

TEST_F(BatchReaderTest, EmptySegmentReachesTheEnd) {
  Write(std::string());
  BatchReadRequest request;
  request.hint_offset = kBase;
  request.offset = kBase;
  request.end_offset = kBase;
  request.max_bytes = kUnlimited;
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches, 0);
  EXPECT_TRUE(result.reached_end);
  EXPECT_EQ(result.next_offset, kBase);
}

TEST_F(BatchReaderTest, HintFarBeforeTheWantedBatchStillFindsIt) {
  // No index at all and a small lookahead: the reader reads on from the
  // segment start until it reaches the wanted batch.
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[18], 10);
  request.lookahead_bytes = 100;
  ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
  EXPECT_EQ(result.batches_view(), log.Slice(18, 19));
  EXPECT_EQ(result.next_offset, log.offsets[19]);
}

TEST_F(BatchReaderTest, ContinuationsFromNextPositionReassembleTheLog) {
  // Fetch after fetch, each continuing where the previous one stopped, with
  // budgets smaller than most batches and a hint far from the first wanted
  // batch: the results are whole batches that add up to the log.
  const TestLog log = TwentyBatches();
  Write(log);
  for (size_t max_bytes : {size_t{1}, size_t{700}, size_t{3000}}) {
    SCOPED_TRACE(absl::StrCat("max_bytes ", max_bytes));
    const int64_t start = log.offsets[6] + 1;
    BatchReadRequest request =
        Request(log, OffsetIndex(kBase), start, max_bytes);
    request.lookahead_bytes = 100;
    std::string fetched;
    int fetches = 0;
    while (true) {
      ASSERT_OK_AND_ASSIGN(BatchReadResult result, Read(request));
      ASSERT_LT(++fetches, 100);
      fetched.append(result.batches_view().data(),
                     result.batches_view().size());
      if (result.batches > 1) {
        EXPECT_LE(result.batches_view().size(), max_bytes);
      }
      if (result.reached_end) {
        EXPECT_EQ(result.next_position, log.bytes.size());
        break;
      }
      ASSERT_GT(result.batches, 0);
      EXPECT_EQ(log.positions[log.BatchOf(result.next_offset)],
                result.next_position);
      request.hint_position = result.next_position;
      request.hint_offset = result.next_offset;
      request.offset = result.next_offset;
    }
    EXPECT_EQ(fetched, log.Slice(6, log.positions.size()));
  }
}

TEST_F(BatchReaderTest, HintInsideABatchIsDataLoss) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited);
  request.hint_position = log.positions[4] + 1;
  request.hint_offset = log.offsets[4];
  EXPECT_THAT(Read(request),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr(path_)));
}

TEST_F(BatchReaderTest, HintWithTheWrongOffsetIsDataLoss) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited);
  request.hint_position = log.positions[4];
  request.hint_offset = log.offsets[3];
  EXPECT_THAT(Read(request),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(absl::StrCat("baseOffset ", log.offsets[4],
                                              ", but the index hint says ",
                                              log.offsets[3]))));
}

TEST_F(BatchReaderTest, HintAboveTheWantedOffsetIsDataLoss) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited);
  request.hint_position = log.positions[6];
  request.hint_offset = log.offsets[6];
  EXPECT_THAT(Read(request), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("above the wanted offset")));
}

TEST_F(BatchReaderTest, HintPastTheEndPositionIsDataLoss) {
  const TestLog log = TwentyBatches();
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited);
  request.end_position = log.positions[3];
  request.hint_position = log.positions[4];
  request.hint_offset = log.offsets[4];
  EXPECT_THAT(Read(request), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("past the end position")));
}

TEST_F(BatchReaderTest, InvalidLengthIsDataLoss) {
  TestLog log = TwentyBatches();
  OverwriteBigEndian32(&log.bytes, log.positions[3] + layout::kBatchLength, 7);
  Write(log);
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited)),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr(absl::StrCat("batch at position ", log.positions[3],
                                      ": batchLength 7 is below the v2 "
                                      "minimum 49"))));
}

TEST_F(BatchReaderTest, LengthPastTheEndIsDataLoss) {
  TestLog log = TwentyBatches();
  OverwriteBigEndian32(&log.bytes, log.positions[3] + layout::kBatchLength,
                       0x7fffffff);
  Write(log);
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited)),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("announces 2147483659 bytes, past the end")));
}

TEST_F(BatchReaderTest, BadMagicIsDataLoss) {
  TestLog log = TwentyBatches();
  log.bytes[log.positions[3] + layout::kMagic] = 1;
  Write(log);
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("magic 1, expected 2")));
}

TEST_F(BatchReaderTest, OffsetsGoingBackwardsAreDataLoss) {
  TestLog log = TwentyBatches();
  SetBaseOffset(log.bytes.data() + log.positions[6], log.offsets[5]);
  Write(log);
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[5], kUnlimited)),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr(absl::StrCat("baseOffset ", log.offsets[5],
                                      " goes back below the previous "
                                      "batch's next offset ",
                                      log.offsets[6]))));
}

TEST_F(BatchReaderTest, FileShorterThanTheEndPositionIsDataLoss) {
  const TestLog log = TwentyBatches();
  Write(log.bytes.substr(0, log.positions[10] + 30));
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[10], kUnlimited)),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("the file ends at")));
}

TEST_F(BatchReaderTest, CrcIsNotVerified) {
  TestLog log = TwentyBatches();
  log.bytes[log.positions[4] + layout::kRecords + 3] ^= 1;
  Write(log);
  ASSERT_OK_AND_ASSIGN(
      BatchReadResult result,
      Read(Request(log, OffsetIndex(kBase), log.offsets[4], kUnlimited)));
  EXPECT_EQ(result.batches_view(), log.bytes.substr(log.positions[4]));
}

TEST_F(BatchReaderTest, ReadErrorsPassThrough) {
  const TestLog log = TwentyBatches();
  Write(log);
  counting_->Fail();
  EXPECT_THAT(
      Read(Request(log, OffsetIndex(kBase), log.offsets[4], kUnlimited)),
      StatusIs(absl::StatusCode::kInternal, HasSubstr("injected read error")));
}

// Locating walks the same batches as reading: the same range, counts and
// stopping reasons, for every offset, budget and index density.
TEST_F(BatchReaderTest, LocateFindsWhatReadReturns) {
  const TestLog log = TwentyBatches();
  Write(log);
  for (uint64_t interval : {uint64_t{1}, uint64_t{1000}, uint64_t{1} << 40}) {
    const OffsetIndex index = log.Index(interval);
    for (size_t max_bytes :
         {size_t{1}, size_t{700}, size_t{3000}, kUnlimited}) {
      for (int64_t offset = kBase; offset < log.next_offset; ++offset) {
        SCOPED_TRACE(absl::StrCat("offset ", offset, " interval ", interval,
                                  " max_bytes ", max_bytes));
        BatchReadRequest request = Request(log, index, offset, max_bytes);
        request.end_offset = log.offsets[17];
        ASSERT_OK_AND_ASSIGN(BatchReadResult read, Read(request));
        request.locate_only = true;
        ASSERT_OK_AND_ASSIGN(BatchReadResult located, Read(request));
        EXPECT_TRUE(located.buffer.empty());
        EXPECT_EQ(located.batches, read.batches);
        EXPECT_EQ(located.next_offset, read.next_offset);
        EXPECT_EQ(located.next_position, read.next_position);
        EXPECT_EQ(located.reached_end, read.reached_end);
        if (read.batches > 0) {
          EXPECT_EQ(
              log.bytes.substr(located.first_position,
                               located.next_position - located.first_position),
              read.batches_view());
        }
      }
    }
  }
}

TEST_F(BatchReaderTest, LocateOfLargeBatchesReadsOneHeaderEach) {
  TestLog log;
  for (int i = 0; i < 8; ++i) log.Add(2, 8000);  // ~16 KiB batches
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), kBase, kUnlimited);
  request.locate_only = true;
  ASSERT_OK_AND_ASSIGN(BatchReadResult located, Read(request));
  EXPECT_EQ(located.batches, 8);
  EXPECT_EQ(located.next_position, log.bytes.size());
  // The first read is a lookahead window; after it one header per batch.
  EXPECT_LE(counting_->bytes_asked(), request.lookahead_bytes + 8 * 64);
  EXPECT_LE(counting_->reads(), 9);
}

TEST_F(BatchReaderTest, LocateChecksHeadersAsReadDoes) {
  TestLog log = TwentyBatches();
  log.bytes[log.positions[7] + layout::kMagic] = 1;
  Write(log);
  BatchReadRequest request =
      Request(log, OffsetIndex(kBase), kBase, kUnlimited);
  request.locate_only = true;
  EXPECT_THAT(Read(request), StatusIs(absl::StatusCode::kDataLoss,
                                      HasSubstr("magic 1, expected 2")));
}

}  // namespace
}  // namespace kaas::segment
