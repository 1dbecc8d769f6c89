// File: storage/segment/segment_test.cc
//
// Byte-level tests of Segment (storage/segment/segment.h), driven through its
// public API over a real temp dir behind the fault-injecting filesystem of
// //testing: file naming by epoch and base offset, appends (the base offset
// is the only byte range the engine rewrites), published sizes and offsets,
// reads bounded by max_bytes, end_offset, size() and the next segment's base,
// the sparse index cadence and the exact .index / .timeindex bytes, seal and
// persist, reopening a closed segment (persisted indexes, missing, damaged or
// misplaced ones rebuilt, damage found by a rebuild ending the readable
// part), FindEnd, IsBatchBoundary, recovery (torn tails, corrupt batches,
// checkpoints, bytes past the next segment's base), read-only segments that
// must change no file, lifecycle (delete, quarantine, dropped read state) and
// the typed absl::Status codes of every refusal and I/O error.
//
// Expected bytes are written out by hand (big-endian helpers below), never
// with the encoders under test.

#include "storage/segment/segment.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/segment/log_scanner.h"
#include "storage/segment/read_handle_cache.h"
#include "storage/segment/segment_name.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::segment {

namespace {

using ::kaas::test::BatchBuilder;
using ::kaas::test::Fault;
using ::kaas::test::FaultInjectingFileSystem;
using ::kaas::test::FsOp;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::PathPattern;
using ::kaas::test::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

namespace layout = batch_layout;

constexpr int64_t kBase = 1000;
constexpr uint32_t kEpoch = 7;
constexpr SegmentId kId{kBase, kEpoch};
constexpr size_t kUnlimited = size_t{1} << 30;
constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();
constexpr SegmentFileKind kLogFile = SegmentFileKind::kLog;
constexpr SegmentFileKind kIndexFile = SegmentFileKind::kOffsetIndex;
constexpr SegmentFileKind kTimeIndexFile = SegmentFileKind::kTimeIndex;
// What a producer puts in bytes [0, 8): anything; the engine replaces it.
constexpr int64_t kProducerBaseOffset = 0x0102030405060708;

// `value` as `bytes` big-endian bytes.
std::string BigEndian(uint64_t value, int bytes) {
  std::string out(static_cast<size_t>(bytes), '\0');
  for (int i = bytes - 1; i >= 0; --i) {
    out[static_cast<size_t>(i)] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  return out;
}

// One .index entry: int32 relative offset, uint32 position.
std::string IndexEntry(int64_t offset, uint64_t position) {
  return BigEndian(static_cast<uint64_t>(offset - kBase), 4) +
         BigEndian(position, 4);
}

// One .timeindex entry: int64 timestamp, int32 relative offset.
std::string TimeEntry(int64_t timestamp, int64_t offset) {
  return BigEndian(static_cast<uint64_t>(timestamp), 8) +
         BigEndian(static_cast<uint64_t>(offset - kBase), 4);
}

// A GetTimeInfo() result: OK, with this largest timestamp and the offset of
// the first batch carrying it.
MATCHER_P2(TimeInfoIs, max_timestamp, offset_of_max_timestamp,
           "is OK with time info {" + ::testing::PrintToString(max_timestamp) +
               ", " + ::testing::PrintToString(offset_of_max_timestamp) + "}") {
  if (!arg.ok()) {
    *result_listener << "status: " << arg.status();
    return false;
  }
  *result_listener << "time info {" << arg->max_timestamp << ", "
                   << arg->offset_of_max_timestamp << "}";
  return arg->max_timestamp == max_timestamp &&
         arg->offset_of_max_timestamp == offset_of_max_timestamp;
}

// The log a segment at kBase should hold, batch by batch.
struct TestLog {
  std::vector<std::string> producer;  // as sent: base offset not assigned
  std::string bytes;                  // as stored: base offsets assigned
  std::vector<uint64_t> positions;
  std::vector<int64_t> offsets;  // base offsets
  std::vector<int64_t> last_offsets;
  std::vector<int64_t> timestamps;  // maxTimestamp
  int64_t next_offset = kBase;

  void Add(int records, size_t value_size, int64_t timestamp) {
    std::string batch =
        BatchBuilder()
            .BaseOffset(kProducerBaseOffset)
            .BaseTimestamp(timestamp)
            .AddRandomRecords(records, value_size, /*seed=*/positions.size())
            .Build();
    positions.push_back(bytes.size());
    offsets.push_back(next_offset);
    last_offsets.push_back(next_offset + records - 1);
    timestamps.push_back(timestamp);
    bytes += BigEndian(static_cast<uint64_t>(next_offset), 8) + batch.substr(8);
    producer.push_back(std::move(batch));
    next_offset += records;
  }
  size_t count() const { return positions.size(); }
  uint64_t end_of(size_t i) const {
    return i + 1 < count() ? positions[i + 1] : bytes.size();
  }
  uint64_t size_of(size_t i) const { return end_of(i) - positions[i]; }
  // The stored bytes of batches [first, end).
  std::string Slice(size_t first, size_t end) const {
    const uint64_t to = end < count() ? positions[end] : bytes.size();
    return bytes.substr(positions[first], to - positions[first]);
  }
};

// Six batches of different sizes and record counts; the largest timestamp
// (500) is carried first by batch 3, then again by batch 4.
TestLog SixBatches() {
  TestLog log;
  log.Add(1, 40, 100);
  log.Add(3, 100, 300);
  log.Add(2, 10, 200);
  log.Add(5, 300, 500);
  log.Add(1, 0, 500);
  log.Add(4, 60, 400);
  return log;
}

// `count` batches of the same size (3 records of 50 bytes), with the given
// timestamps (one per batch).
TestLog EqualBatches(const std::vector<int64_t>& timestamps) {
  TestLog log;
  for (int64_t timestamp : timestamps) log.Add(3, 50, timestamp);
  return log;
}

struct Visit {
  int64_t base_offset;
  uint64_t position;
  friend bool operator==(const Visit& a, const Visit& b) {
    return a.base_offset == b.base_offset && a.position == b.position;
  }
  friend std::ostream& operator<<(std::ostream& os, const Visit& v) {
    return os << "{" << v.base_offset << " @" << v.position << "}";
  }
};

// The visits a walk over batches [first, log.count()) makes.
std::vector<Visit> VisitsOf(const TestLog& log, size_t first) {
  std::vector<Visit> visits;
  for (size_t i = first; i < log.count(); ++i) {
    visits.push_back({log.offsets[i], log.positions[i]});
  }
  return visits;
}

class SegmentTest : public ::testing::Test {
 protected:
  SegmentTest() : fs_(fs::PosixFileSystem::Default(), /*seed=*/20240611) {}

  FaultInjectingFileSystem& fs() { return fs_; }
  const std::string& dir() const { return temp_dir_.path(); }
  ReadHandleCache& cache() { return cache_; }

  SegmentOptions Options(uint64_t index_interval_bytes = 256,
                         bool read_only = false) {
    SegmentOptions options;
    options.fs = &fs_;
    options.cache = &cache_;
    options.index_interval_bytes = index_interval_bytes;
    options.read_only = read_only;
    return options;
  }
  SegmentOptions ReadOnly(uint64_t index_interval_bytes = 256) {
    return Options(index_interval_bytes, /*read_only=*/true);
  }

  std::string PathOf(SegmentFileKind kind, SegmentId id = kId) const {
    return fs::JoinPath(dir(), SegmentFileName(id, kind));
  }

  // The bytes of the file at `path`, read past the wrapper (not counted);
  // nullopt if there is no such file.
  static std::optional<std::string> FileBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in.is_open()) return std::nullopt;
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
  }
  // The size of the file at `path`, -1 if there is none.
  int64_t FileSize(const std::string& path) {
    const std::optional<std::string> bytes = FileBytes(path);
    return bytes.has_value() ? static_cast<int64_t>(bytes->size()) : -1;
  }
  // Creates or replaces a file, through the wrapper.
  void WriteFile(const std::string& path, absl::string_view bytes) {
    ASSERT_OK(fs::WriteStringToFile(fs_, path, bytes));
  }
  // Overwrites one byte of an existing file, through the wrapper.
  void OverwriteByte(const std::string& path, uint64_t at, char value) {
    std::optional<std::string> bytes = FileBytes(path);
    ASSERT_TRUE(bytes.has_value()) << path;
    ASSERT_LT(at, bytes->size());
    (*bytes)[at] = value;
    WriteFile(path, *bytes);
  }

  // Calls of the wrapper that change a file or the tree.
  int64_t Mutations() {
    int64_t n = 0;
    for (FsOp op :
         {FsOp::kOpenForWrite, FsOp::kWrite, FsOp::kAppend, FsOp::kTruncate,
          FsOp::kDataSync, FsOp::kSync, FsOp::kSyncDir, FsOp::kRename,
          FsOp::kUnlink, FsOp::kRemoveDir, FsOp::kCreateDirs, FsOp::kClose,
          FsOp::kLock}) {
      n += fs_.Count(op);
    }
    return n;
  }

  // Appends batch `i` of `log` as the partition does: the assigned base
  // offset as a part of its own, then the producer's bytes from byte 8.
  static absl::Status AppendBatch(Segment& segment, const TestLog& log,
                                  size_t i) {
    const std::string base =
        BigEndian(static_cast<uint64_t>(log.offsets[i]), 8);
    const absl::string_view producer = log.producer[i];
    const absl::string_view parts[2] = {base, producer.substr(8)};
    return segment.Append(
        parts, producer.size(),
        BatchSummary{log.offsets[i], log.last_offsets[i], log.timestamps[i]});
  }
  static absl::Status AppendAll(Segment& segment, const TestLog& log) {
    for (size_t i = 0; i < log.count(); ++i) {
      absl::Status status = AppendBatch(segment, log, i);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  // Writes `log` through an active segment and closes it as a roll does
  // (Seal, PersistIndexes, ReleaseWriteHandle).
  void WriteClosedSegment(const TestLog& log, const SegmentOptions& options) {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                         Segment::Create(options, dir(), kId));
    ASSERT_OK(AppendAll(*segment, log));
    segment->Seal();
    ASSERT_OK(segment->PersistIndexes());
    segment->ReleaseWriteHandle();
  }

  // The segment in dir() as a listing finds it: the file's size, and the
  // next offset the partition takes from the next segment's base.
  std::shared_ptr<Segment> ListSegment(const SegmentOptions& options,
                                       int64_t next_offset) {
    const std::optional<std::string> bytes = FileBytes(PathOf(kLogFile));
    EXPECT_TRUE(bytes.has_value());
    std::shared_ptr<Segment> segment = Segment::Listed(
        options, dir(), kId, bytes.has_value() ? bytes->size() : 0);
    if (next_offset >= 0) segment->SetNextOffset(next_offset);
    return segment;
  }

 private:
  // Declared first: removed last, after every handle is closed.
  fs::ScopedTempDir temp_dir_;
  FaultInjectingFileSystem fs_;
  // After fs_: destroyed first, so no cached handle outlives the wrapper.
  ReadHandleCache cache_{16};
};

// ---- Create, naming -------------------------------------------------------

TEST_F(SegmentTest, CreateMakesAnEmptyLogNamedAfterEpochAndBaseOffset) {
  const SegmentId id{123, 5};
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), id));

  EXPECT_EQ(segment->path(kLogFile),
            fs::JoinPath(dir(), "00000005-00000000000000000123.log"));
  EXPECT_EQ(segment->path(kIndexFile),
            fs::JoinPath(dir(), "00000005-00000000000000000123.index"));
  EXPECT_EQ(segment->path(kTimeIndexFile),
            fs::JoinPath(dir(), "00000005-00000000000000000123.timeindex"));
  EXPECT_EQ(segment->base_offset(), 123);
  EXPECT_EQ(segment->epoch(), 5u);
  EXPECT_EQ(segment->id(), id);
  EXPECT_EQ(segment->dir(), dir());
  EXPECT_EQ(segment->size(), 0u);
  EXPECT_EQ(segment->next_offset(), 123);
  EXPECT_TRUE(segment->has_write_handle());
  EXPECT_EQ(FileBytes(segment->path(kLogFile)), "");
  // The indexes live in memory until the first persist.
  EXPECT_EQ(FileBytes(segment->path(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(segment->path(kTimeIndexFile)), std::nullopt);
  // Nothing but the exclusive create: the directory is the caller's to sync.
  EXPECT_EQ(fs().Count(FsOp::kOpenForWrite), 1);
  EXPECT_EQ(fs().Count(FsOp::kSyncDir), 0);
}

TEST_F(SegmentTest, CreateTruncatesALeftoverFileOfTheSameName) {
  WriteFile(PathOf(kLogFile), "bytes of an earlier failed roll");
  fs().ResetCounts();

  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));

  EXPECT_EQ(FileBytes(PathOf(kLogFile)), "");
  EXPECT_EQ(segment->size(), 0u);
  EXPECT_EQ(fs().Count(FsOp::kOpenForWrite), 2);  // exclusive, then truncate
}

TEST_F(SegmentTest, CreatePropagatesTheFileSystemErrorCode) {
  Fault fault(FsOp::kOpenForWrite, ENOSPC);
  fault.count = Fault::kForever;
  fs().InjectFault(fault);

  EXPECT_THAT(
      Segment::Create(Options(), dir(), kId),
      StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("(injected)")));
}

TEST_F(SegmentTest, ListedOpensNothing) {
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, /*size=*/4096);

  EXPECT_EQ(segment->size(), 4096u);
  EXPECT_EQ(segment->next_offset(), -1);
  EXPECT_FALSE(segment->has_write_handle());
  EXPECT_EQ(fs().Count(FsOp::kAny), 0);
}

TEST_F(SegmentTest, OpenForWriteOfAListedSegmentNeedsItsFile) {
  std::shared_ptr<Segment> missing =
      Segment::Listed(Options(), dir(), kId, /*size=*/0);
  EXPECT_THAT(missing->OpenForWrite(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(".log")));
  EXPECT_FALSE(missing->has_write_handle());

  WriteFile(PathOf(kLogFile), "");
  std::shared_ptr<Segment> listed =
      Segment::Listed(Options(), dir(), kId, /*size=*/0);
  ASSERT_OK(listed->OpenForWrite());
  EXPECT_TRUE(listed->has_write_handle());
}

// ---- Append ---------------------------------------------------------------

TEST_F(SegmentTest, AppendRewritesOnlyTheBaseOffset) {
  const std::string producer =
      BatchBuilder()
          .BaseOffset(kProducerBaseOffset)
          .PartitionLeaderEpoch(-1)
          .BaseTimestamp(1700000000000)
          .AddRecord("key", "value")
          .AddRecord("k2", "second", /*timestamp_delta=*/5)
          .Build();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  const std::string base = BigEndian(kBase, 8);
  const absl::string_view parts[2] = {base,
                                      absl::string_view(producer).substr(8)};

  ASSERT_OK(segment->Append(parts, producer.size(),
                            BatchSummary{kBase, kBase + 1, 1700000000005}));

  const std::optional<std::string> stored = FileBytes(PathOf(kLogFile));
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->size(), producer.size());
  EXPECT_EQ(stored->substr(0, 8),
            std::string("\x00\x00\x00\x00\x00\x00\x03\xe8", 8));  // 1000
  EXPECT_EQ(stored->substr(8), producer.substr(8));
  // The CRC does not cover bytes [0, 8): the stored batch still verifies.
  ASSERT_OK_AND_ASSIGN(RecordBatchView view, RecordBatchView::Parse(*stored));
  EXPECT_EQ(view.base_offset(), kBase);
  EXPECT_EQ(view.partition_leader_epoch(), -1);
  EXPECT_EQ(fs().Count(FsOp::kWrite), 1);  // one pwritev
}

TEST_F(SegmentTest, AppendsAreContiguousAndPublishSizeAndNextOffset) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));

  for (size_t i = 0; i < log.count(); ++i) {
    ASSERT_OK(AppendBatch(*segment, log, i));
    EXPECT_EQ(segment->size(), log.end_of(i)) << "batch " << i;
    EXPECT_EQ(segment->next_offset(), log.last_offsets[i] + 1) << "batch " << i;
  }

  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
  EXPECT_EQ(segment->next_offset(), kBase + 16);  // 1+3+2+5+1+4 records
  // Nothing but the log is written on the append path.
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
  EXPECT_EQ(fs().Count(FsOp::kWrite), 6);
  EXPECT_EQ(fs().Count(FsOp::kDataSync), 0);
}

TEST_F(SegmentTest, FailedAppendPublishesNothingAndCutsOffItsTornWrite) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendBatch(*segment, log, 0));
  Fault fault(FsOp::kWrite, EIO);
  fault.torn_write_bytes = 20;
  fs().InjectFault(fault);

  EXPECT_THAT(AppendBatch(*segment, log, 1),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("(injected)")));

  EXPECT_EQ(segment->size(), log.end_of(0));
  EXPECT_EQ(segment->next_offset(), log.offsets[1]);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.Slice(0, 1));
  // The next append lands where the failed one would have.
  ASSERT_OK(AppendBatch(*segment, log, 1));
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.Slice(0, 2));
  EXPECT_EQ(segment->next_offset(), log.offsets[2]);
}

TEST_F(SegmentTest, SealCutsOffATornWriteTheFailedAppendCouldNotTruncate) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendBatch(*segment, log, 0));
  Fault write(FsOp::kWrite, EIO);
  write.torn_write_bytes = 30;
  fs().InjectFault(write);
  fs().InjectFault(Fault(FsOp::kTruncate, EIO));
  ASSERT_THAT(AppendBatch(*segment, log, 1),
              StatusIs(absl::StatusCode::kInternal, _));
  // The torn 30 bytes are still in the file, past size().
  ASSERT_EQ(FileBytes(PathOf(kLogFile)),
            log.Slice(0, 1) + log.Slice(1, 2).substr(0, 30));

  // Reads never serve them.
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), log.Slice(0, 1));
  EXPECT_TRUE(read.reached_end);

  segment->Seal();

  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.Slice(0, 1));
  EXPECT_EQ(segment->size(), log.end_of(0));
}

TEST_F(SegmentTest, AppendWithoutAWriteHandleFailsWithFailedPrecondition) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  segment->Seal();
  segment->ReleaseWriteHandle();
  EXPECT_FALSE(segment->has_write_handle());

  EXPECT_THAT(AppendBatch(*segment, log, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not open for writing")));
  std::shared_ptr<Segment> listed =
      Segment::Listed(Options(), dir(), kId, /*size=*/0);
  EXPECT_THAT(AppendBatch(*listed, log, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not open for writing")));
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), "");
}

TEST_F(SegmentTest, DataSyncSyncsTheLogUntilTheWriteHandleIsReleased) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, SixBatches()));

  ASSERT_OK(segment->DataSync());
  EXPECT_EQ(fs().Count(FsOp::kDataSync), 1);
  ASSERT_OK_AND_ASSIGN(uint64_t unsynced, fs().UnsyncedBytes(PathOf(kLogFile)));
  EXPECT_EQ(unsynced, 0u);

  segment->ReleaseWriteHandle();
  EXPECT_OK(segment->DataSync());
  EXPECT_EQ(fs().Count(FsOp::kDataSync), 1);  // nothing left to sync
}

TEST_F(SegmentTest, DataSyncPropagatesTheFileSystemErrorCode) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  Fault fault(FsOp::kDataSync, EIO);
  fault.path = PathPattern::Substring(".log");
  fs().InjectFault(fault);

  EXPECT_THAT(segment->DataSync(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("(injected)")));
}

// ---- Index cadence, seal, persist ----------------------------------------

// Eleven batches of the same size S with interval 2S + 1: batch i starts at
// i * S, so batches 3, 6 and 9 are indexed (3S >= 2S + 1 > 2S).
class IndexCadenceTest : public SegmentTest {
 protected:
  IndexCadenceTest()
      : log_(EqualBatches({10, 50, 20, 30, 40, 45, 60, 55, 58, 59, 70})),
        batch_size_(log_.size_of(0)) {}

  const TestLog log_;
  const uint64_t batch_size_;
};

TEST_F(IndexCadenceTest, IndexEntriesAreAddedEveryIndexIntervalBytes) {
  ASSERT_EQ(log_.bytes.size(), 11 * batch_size_);  // all the same size
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(2 * batch_size_ + 1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));

  ASSERT_OK(segment->PersistIndexes());

  EXPECT_EQ(FileBytes(PathOf(kIndexFile)),
            IndexEntry(kBase + 9, 3 * batch_size_) +
                IndexEntry(kBase + 18, 6 * batch_size_) +
                IndexEntry(kBase + 27, 9 * batch_size_));
  // (largest maxTimestamp so far, indexed batch) when the largest grew: 50 at
  // batch 3, 60 at batch 6; still 60 at batch 9, so no entry.
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)),
            TimeEntry(50, kBase + 9) + TimeEntry(60, kBase + 18));
  EXPECT_EQ(fs().Count(FsOp::kDataSync), 2);  // one per index file
}

TEST_F(IndexCadenceTest, AnIntervalOfOneBatchIndexesEveryBatchButTheFirst) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(batch_size_), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));

  ASSERT_OK(segment->PersistIndexes());

  std::string expected;
  for (size_t i = 1; i < log_.count(); ++i) {
    expected += IndexEntry(log_.offsets[i], i * batch_size_);
  }
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), expected);
}

TEST_F(IndexCadenceTest, SealAddsTheFinalTimeIndexEntry) {
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(2 * batch_size_ + 1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));

  segment->Seal();
  ASSERT_OK(segment->PersistIndexes());

  // The final entry: (the segment's largest timestamp, its last offset).
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), TimeEntry(50, kBase + 9) +
                                                   TimeEntry(60, kBase + 18) +
                                                   TimeEntry(70, kBase + 32));
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)),
            IndexEntry(kBase + 9, 3 * batch_size_) +
                IndexEntry(kBase + 18, 6 * batch_size_) +
                IndexEntry(kBase + 27, 9 * batch_size_));
  // A second seal adds nothing.
  segment->Seal();
  ASSERT_OK(segment->PersistIndexes());
  EXPECT_EQ(FileSize(PathOf(kTimeIndexFile)), 3 * 12);
}

TEST_F(IndexCadenceTest, PersistIndexesWritesNoEntryPastTheDurableBound) {
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(2 * batch_size_ + 1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));

  // Durable up to batch 6 exclusive (it starts at 6S, offset kBase + 18).
  ASSERT_OK(segment->PersistIndexes(6 * batch_size_, kBase + 18));
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)),
            IndexEntry(kBase + 9, 3 * batch_size_));
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), TimeEntry(50, kBase + 9));

  // Durable up to batch 6 inclusive.
  ASSERT_OK(segment->PersistIndexes(7 * batch_size_, kBase + 21));
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)),
            IndexEntry(kBase + 9, 3 * batch_size_) +
                IndexEntry(kBase + 18, 6 * batch_size_));
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)),
            TimeEntry(50, kBase + 9) + TimeEntry(60, kBase + 18));

  // A smaller bound later never takes entries back.
  ASSERT_OK(segment->PersistIndexes(0, kBase));
  EXPECT_EQ(FileSize(PathOf(kIndexFile)), 16);
  EXPECT_EQ(FileSize(PathOf(kTimeIndexFile)), 24);
}

TEST_F(IndexCadenceTest, PersistIndexesPropagatesTheFileSystemErrorCode) {
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(2 * batch_size_ + 1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));
  Fault fault(FsOp::kDataSync, EIO);
  fault.path = PathPattern::Substring(".index");
  fs().InjectFault(fault);

  EXPECT_THAT(segment->PersistIndexes(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("(injected)")));
}

TEST_F(IndexCadenceTest, StopPersistingMakesPersistIndexesWriteNothing) {
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(2 * batch_size_ + 1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log_));
  fs().ResetCounts();

  segment->StopPersisting();
  segment->Seal();
  EXPECT_OK(segment->PersistIndexes());

  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
  EXPECT_EQ(Mutations(), 0);
}

// ---- Reads ----------------------------------------------------------------

TEST_F(SegmentTest, ReadReturnsWholeBatchesFromTheBatchHoldingTheOffset) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));

  // Offset inside batch 1 (offsets 1001..1003).
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[1] + 2, kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(1, 6));
  EXPECT_EQ(read.batches, 5);
  EXPECT_EQ(read.next_offset, log.next_offset);
  EXPECT_EQ(read.next_position, log.bytes.size());
  EXPECT_TRUE(read.reached_end);
}

TEST_F(SegmentTest, ReadAlwaysReturnsTheFirstBatchWholeThenStopsAtMaxBytes) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));

  ASSERT_OK_AND_ASSIGN(BatchReadResult one,
                       segment->Read(log.offsets[3], kNoEnd, /*max_bytes=*/1));
  EXPECT_EQ(one.batches_view(), log.Slice(3, 4));
  EXPECT_EQ(one.next_offset, log.offsets[4]);
  EXPECT_EQ(one.next_position, log.end_of(3));
  EXPECT_FALSE(one.reached_end);

  // Exactly batches 1 and 2 fit.
  const size_t two_batches = log.size_of(1) + log.size_of(2);
  ASSERT_OK_AND_ASSIGN(BatchReadResult two,
                       segment->Read(log.offsets[1], kNoEnd, two_batches));
  EXPECT_EQ(two.batches_view(), log.Slice(1, 3));
  EXPECT_EQ(two.batches, 2);
  EXPECT_FALSE(two.reached_end);

  ASSERT_OK_AND_ASSIGN(BatchReadResult short_of_two,
                       segment->Read(log.offsets[1], kNoEnd, two_batches - 1));
  EXPECT_EQ(short_of_two.batches_view(), log.Slice(1, 2));
}

TEST_F(SegmentTest, ReadNeverReturnsABatchAtOrPastEndOffset) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));

  ASSERT_OK_AND_ASSIGN(BatchReadResult before,
                       segment->Read(kBase, log.offsets[4], kUnlimited));
  EXPECT_EQ(before.batches_view(), log.Slice(0, 4));
  EXPECT_EQ(before.next_offset, log.offsets[4]);
  EXPECT_TRUE(before.reached_end);

  // A bound inside batch 4's range lets batch 4 through (its base is below).
  ASSERT_OK_AND_ASSIGN(BatchReadResult inside,
                       segment->Read(kBase, log.offsets[4] + 1, kUnlimited));
  EXPECT_EQ(inside.batches_view(), log.Slice(0, 5));

  ASSERT_OK_AND_ASSIGN(BatchReadResult at_end,
                       segment->Read(log.next_offset, kNoEnd, kUnlimited));
  EXPECT_EQ(at_end.batches, 0);
  EXPECT_EQ(at_end.batches_view(), "");
  EXPECT_EQ(at_end.next_offset, log.next_offset);
  EXPECT_TRUE(at_end.reached_end);
}

TEST_F(SegmentTest, ClosedSegmentReadStopsAtTheNextSegmentBase) {
  // Batches 4 and 5 were appended by a deposed leader after the next
  // segment began at offsets[4] (D-5).
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.offsets[4]);

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(0, 4));
  EXPECT_EQ(read.next_offset, log.offsets[4]);
  EXPECT_TRUE(read.reached_end);
  ASSERT_OK_AND_ASSIGN(BatchReadResult past,
                       segment->Read(log.offsets[5], kNoEnd, kUnlimited));
  EXPECT_EQ(past.batches, 0);
  EXPECT_TRUE(past.reached_end);
}

// Batches past the next segment's base are not part of a closed segment
// (segment.h, RecoveryStart::end_offset): an index rebuild must not take
// them into the segment's time info or into the index files it writes back
// (FORMATS.md section 6: a valid .timeindex entry is below the segment's
// next offset). It used to walk to size() and count the deposed leader's
// batch, writing back a time index every later load found invalid.
TEST_F(SegmentTest,
       RebuildOfAClosedSegmentIgnoresBatchesPastTheNextSegmentBase) {
  TestLog log = SixBatches();
  log.Add(2, 20, 900);  // batch 6: a deposed leader's, with a later timestamp
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.offsets[6]);

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), log.Slice(0, 6));

  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(500, log.offsets[3]));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  ASSERT_TRUE(time_index.has_value());
  ASSERT_EQ(time_index->size() % 12, 0u);
  for (size_t i = 0; i < time_index->size(); i += 12) {
    EXPECT_LT(kBase + ReadBigEndian32(time_index->data() + i + 8),
              log.offsets[6])
        << "time index entry " << i / 12;
  }
  // So the next load of the same files finds them valid and rebuilds nothing.
  fs().ResetCounts();
  std::shared_ptr<Segment> reopened = ListSegment(Options(), log.offsets[6]);
  ASSERT_OK(reopened->Read(kBase, kNoEnd, kUnlimited).status());
  EXPECT_EQ(Mutations(), 0);
}

TEST_F(SegmentTest, ClosedSegmentReadStopsAtItsListedSize) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, log.end_of(3));
  segment->SetNextOffset(log.offsets[4]);

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[2], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(2, 4));
  EXPECT_EQ(read.next_position, log.end_of(3));
  EXPECT_TRUE(read.reached_end);
}

TEST_F(SegmentTest, ReadPropagatesIoErrorsWithTheirCode) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));
  Fault fault(FsOp::kRead, EIO);
  fault.path = PathPattern::Substring(".log");
  fs().InjectFault(fault);
  fs().ResetCounts();

  EXPECT_THAT(segment->Read(kBase, kNoEnd, kUnlimited),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("(injected)")));
  // One read failed, and was not taken for a bad index (no retry).
  EXPECT_EQ(fs().Count(FsOp::kRead), 1);
}

TEST_F(SegmentTest, ReadOfAClosedSegmentPropagatesIoErrorsWithTheirCode) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  Fault fault(FsOp::kOpenForRead, EACCES);
  fault.path = PathPattern::Substring(".log");
  fs().InjectFault(fault);

  EXPECT_THAT(
      segment->Read(kBase, kNoEnd, kUnlimited),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("(injected)")));
  // The next read opens the file again and works.
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), log.bytes);
}

TEST_F(SegmentTest, ASealedSegmentIsReadThroughTheCacheWithoutReopening) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));
  segment->Seal();
  EXPECT_EQ(cache().size(), 1u);
  ASSERT_OK(segment->PersistIndexes());
  segment->ReleaseWriteHandle();
  fs().ResetCounts();

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[2], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(2, 6));
  EXPECT_EQ(fs().Count(FsOp::kOpenForRead), 0);
  EXPECT_EQ(cache().hits(), 1u);
}

TEST_F(SegmentTest, ReadsConcurrentWithAppendsSeeOnlyWholeAppendedBatches) {
  TestLog log;
  for (int i = 0; i < 200; ++i) log.Add(1 + i % 3, 20 + (i * 37) % 200, i);
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  std::atomic<bool> appends_done{false};
  int64_t reader_offset = kBase;
  size_t reader_batch = 0;

  std::thread reader([&] {
    while (reader_offset < log.next_offset) {
      const bool done_before = appends_done.load();
      absl::StatusOr<BatchReadResult> read =
          segment->Read(reader_offset, kNoEnd, /*max_bytes=*/700);
      if (!read.ok()) {
        ADD_FAILURE() << read.status();
        return;
      }
      if (read->batches == 0) {
        if (done_before) return;  // an append failed: the loop would spin
        continue;
      }
      const size_t end = reader_batch + static_cast<size_t>(read->batches);
      ASSERT_LE(end, log.count());
      ASSERT_EQ(read->batches_view(), log.Slice(reader_batch, end))
          << "read from offset " << reader_offset;
      ASSERT_EQ(read->next_offset,
                end < log.count() ? log.offsets[end] : log.next_offset);
      reader_batch = end;
      reader_offset = read->next_offset;
    }
  });
  for (size_t i = 0; i < log.count(); ++i) {
    absl::Status status = AppendBatch(*segment, log, i);
    if (!status.ok()) {
      ADD_FAILURE() << status;
      break;
    }
  }
  appends_done.store(true);
  reader.join();

  EXPECT_EQ(reader_offset, log.next_offset);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
}

TEST_F(SegmentTest,
       PersistsConcurrentWithAppendsWriteOnlyEntriesBelowTheirBound) {
  TestLog log;
  for (int i = 0; i < 150; ++i) log.Add(1 + i % 4, 30 + (i * 53) % 150, i);
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(/*index_interval_bytes=*/300), dir(), kId));
  std::atomic<bool> appends_done{false};
  struct Snapshot {
    uint64_t position;  // the bound passed
    int64_t offset;
    std::string index;
    std::string time_index;
  };
  std::vector<Snapshot> snapshots;

  // The sync cycle: persists up to a published size (a batch boundary, with
  // the offset that goes with it) while the writer appends.
  std::thread syncer([&] {
    size_t batch = 0;
    bool last_round = false;
    do {
      last_round = appends_done.load();
      const uint64_t size = segment->size();
      while (batch < log.count() && log.positions[batch] < size) ++batch;
      const int64_t offset =
          batch < log.count() ? log.offsets[batch] : log.next_offset;
      absl::Status status = segment->PersistIndexes(size, offset);
      if (!status.ok()) {
        ADD_FAILURE() << status;
        return;
      }
      snapshots.push_back({size, offset,
                           FileBytes(PathOf(kIndexFile)).value_or("?"),
                           FileBytes(PathOf(kTimeIndexFile)).value_or("?")});
    } while (!last_round);  // at least once, and once after the last append
  });
  for (size_t i = 0; i < log.count(); ++i) {
    absl::Status status = AppendBatch(*segment, log, i);
    if (!status.ok()) {
      ADD_FAILURE() << status;
      break;
    }
  }
  appends_done.store(true);
  syncer.join();
  ASSERT_OK(segment->PersistIndexes());
  const std::string index = *FileBytes(PathOf(kIndexFile));
  const std::string time_index = *FileBytes(PathOf(kTimeIndexFile));

  ASSERT_FALSE(snapshots.empty());
  for (const Snapshot& snapshot : snapshots) {
    SCOPED_TRACE(absl::StrCat("persisted up to ", snapshot.position));
    // A prefix of the final files, pointing below the bound only.
    EXPECT_EQ(index.substr(0, snapshot.index.size()), snapshot.index);
    EXPECT_EQ(time_index.substr(0, snapshot.time_index.size()),
              snapshot.time_index);
    for (size_t i = 0; i + 8 <= snapshot.index.size(); i += 8) {
      EXPECT_LT(
          static_cast<uint32_t>(ReadBigEndian32(snapshot.index.data() + i + 4)),
          snapshot.position);
    }
    for (size_t i = 0; i + 12 <= snapshot.time_index.size(); i += 12) {
      EXPECT_LT(kBase + ReadBigEndian32(snapshot.time_index.data() + i + 8),
                snapshot.offset);
    }
  }
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
}

// ---- Closed segments: persisted, missing and damaged indexes -------------

TEST_F(SegmentTest, AReopenedSegmentUsesItsPersistedIndexesAsTheyAre) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  ASSERT_TRUE(index.has_value());
  ASSERT_FALSE(index->empty());
  fs().ResetCounts();

  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[4], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(4, 6));
  EXPECT_EQ(Mutations(), 0);  // nothing rebuilt, nothing written back
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index);
  // The time index gives the largest timestamp, not which batch carries it.
  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(500, -1));
}

TEST_F(SegmentTest, MissingIndexesAreRebuiltFromTheLogAndWrittenBack) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  ASSERT_OK(fs().Unlink(PathOf(kIndexFile)));
  ASSERT_OK(fs().Unlink(PathOf(kTimeIndexFile)));

  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[4], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(4, 6));
  // The rebuild writes what the writer persisted at its roll.
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index);
  // The walk saw which batch first carries the largest timestamp.
  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(500, log.offsets[3]));
  EXPECT_EQ(segment->size(), log.bytes.size());
}

TEST_F(SegmentTest, InvalidIndexFilesAreRebuiltFromTheLogAndWrittenBack) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  WriteFile(PathOf(kIndexFile), "12345");  // not a multiple of 8

  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.bytes);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index);
}

TEST_F(SegmentTest, AnIndexPointingAtTheWrongPlaceIsRebuiltAndTheReadRetried) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  // Well-formed (increasing, inside the log) but one byte off batch 3.
  WriteFile(PathOf(kIndexFile),
            IndexEntry(log.offsets[3], log.positions[3] + 1));

  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[3], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(3, 6));
  EXPECT_TRUE(read.reached_end);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index);
}

// Batch 3's magic byte is damaged: a header walk (no CRCs) stops there.
class DamagedSegmentTest : public SegmentTest {
 protected:
  DamagedSegmentTest() : log_(SixBatches()) {
    damaged_ = log_.bytes;
    damaged_[log_.positions[3] + layout::kMagic] = 1;
  }

  // Checks what the segment serves once a rebuild has found the damage.
  void ExpectReadsStopBeforeTheDamage(Segment& segment) {
    ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                         segment.Read(kBase, kNoEnd, kUnlimited));
    EXPECT_EQ(read.batches_view(), log_.Slice(0, 3));
    EXPECT_EQ(read.next_offset, log_.offsets[3]);
    EXPECT_FALSE(read.reached_end);  // the caller must not go on past it
    EXPECT_EQ(segment.size(), log_.positions[3]);

    const std::string range = absl::StrCat(
        "cannot be read: the batches end at offset ", log_.offsets[3],
        " (batch at position ", log_.positions[3], ": magic 1, expected 2)");
    for (int64_t offset :
         {log_.offsets[3], log_.offsets[3] + 2, log_.offsets[5]}) {
      EXPECT_THAT(
          segment.Read(offset, kNoEnd, kUnlimited),
          StatusIs(absl::StatusCode::kDataLoss,
                   HasSubstr(absl::StrCat("offset ", offset, " ", range))));
    }
    // Reads that end before the damage are not affected.
    ASSERT_OK_AND_ASSIGN(BatchReadResult early,
                         segment.Read(log_.offsets[1], kNoEnd, /*max=*/1));
    EXPECT_EQ(early.batches_view(), log_.Slice(1, 2));
  }

  const TestLog log_;
  std::string damaged_;
};

TEST_F(DamagedSegmentTest, DamageFoundByARebuildAtLoadEndsTheReadablePart) {
  WriteFile(PathOf(kLogFile), damaged_);  // no index files: rebuilt at load
  std::shared_ptr<Segment> segment = ListSegment(Options(), log_.next_offset);

  ExpectReadsStopBeforeTheDamage(*segment);

  // The rebuilt indexes describe the readable part only.
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  ASSERT_TRUE(index.has_value());
  EXPECT_EQ(index->size() % 8, 0u);
  for (size_t i = 0; i < index->size(); i += 8) {
    EXPECT_LT(ReadBigEndian32(index->data() + i + 4),
              static_cast<int32_t>(log_.positions[3]));
  }
}

TEST_F(DamagedSegmentTest, DamageFoundByARetriedReadEndsTheReadablePart) {
  WriteClosedSegment(log_, Options());  // valid persisted indexes
  OverwriteByte(PathOf(kLogFile), log_.positions[3] + layout::kMagic, 1);
  std::shared_ptr<Segment> segment = ListSegment(Options(), log_.next_offset);

  ExpectReadsStopBeforeTheDamage(*segment);
}

TEST_F(DamagedSegmentTest, AReadOnlySegmentFindsTheDamageAndWritesNothing) {
  WriteFile(PathOf(kLogFile), damaged_);
  fs().ResetCounts();
  std::shared_ptr<Segment> segment = ListSegment(ReadOnly(), log_.next_offset);

  ExpectReadsStopBeforeTheDamage(*segment);

  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), damaged_);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
}

// ---- FindEnd, IsBatchBoundary, WalkFrom -----------------------------------

TEST_F(SegmentTest, FindEndWalksFromTheLastIndexEntryToTheEndOfTheBatches) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  ASSERT_TRUE(index.has_value());
  ASSERT_GE(index->size(), 8u);
  const uint64_t last_entry =
      static_cast<uint32_t>(ReadBigEndian32(index->data() + index->size() - 4));
  // A torn write after the last batch.
  const std::string torn = log.producer[0].substr(0, 25);
  WriteFile(PathOf(kLogFile), log.bytes + torn);
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);

  ASSERT_OK_AND_ASSIGN(ScanResult end, segment->FindEnd());

  EXPECT_EQ(end.valid_end, log.bytes.size());
  EXPECT_EQ(end.next_offset, log.next_offset);
  EXPECT_EQ(end.stop, ScanStop::kTornBatch);
  EXPECT_EQ(end.file_size, log.bytes.size() + torn.size());
  EXPECT_EQ(end.scanned_bytes, end.file_size - last_entry);
}

TEST_F(SegmentTest, FindEndWithoutIndexesFindsTheSameEnd) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment = ListSegment(Options(), /*next=*/-1);

  ASSERT_OK_AND_ASSIGN(ScanResult end, segment->FindEnd());

  EXPECT_EQ(end.valid_end, log.bytes.size());
  EXPECT_EQ(end.next_offset, log.next_offset);
  EXPECT_EQ(end.stop, ScanStop::kEndOfFile);
}

TEST_F(SegmentTest, FindEndOfAnActiveSegmentIsItsEnd) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));

  ASSERT_OK_AND_ASSIGN(ScanResult end, segment->FindEnd());

  EXPECT_EQ(end.valid_end, log.bytes.size());
  EXPECT_EQ(end.next_offset, log.next_offset);
  EXPECT_EQ(end.stop, ScanStop::kEndOfFile);
}

// IsBatchBoundary's answers must not depend on the state of the index file.
enum class IndexState { kPersisted, kMissing, kDamaged };

class IsBatchBoundaryTest : public SegmentTest,
                            public ::testing::WithParamInterface<IndexState> {};

TEST_P(IsBatchBoundaryTest, AcceptsExactlyTheBatchStartsAndTheEnd) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options(/*index_interval_bytes=*/1));
  if (GetParam() == IndexState::kMissing) {
    ASSERT_OK(fs().Unlink(PathOf(kIndexFile)));
  } else if (GetParam() == IndexState::kDamaged) {
    WriteFile(PathOf(kIndexFile), std::string(13, '\x7f'));
  }
  fs().ResetCounts();
  std::shared_ptr<Segment> segment = Segment::Listed(
      Options(/*index_interval_bytes=*/1), dir(), kId, log.bytes.size());

  for (size_t i = 0; i < log.count(); ++i) {
    const uint64_t position = log.positions[i];
    const int64_t offset = log.offsets[i];
    EXPECT_THAT(segment->IsBatchBoundary(position, offset), IsOkAndHolds(true))
        << "batch " << i;
    EXPECT_THAT(segment->IsBatchBoundary(position, offset + 1),
                IsOkAndHolds(false))
        << "batch " << i;
    EXPECT_THAT(segment->IsBatchBoundary(position, offset - 1),
                IsOkAndHolds(false))
        << "batch " << i;
    EXPECT_THAT(segment->IsBatchBoundary(position + 1, offset),
                IsOkAndHolds(false))
        << "batch " << i;
    if (i > 0) {
      EXPECT_THAT(segment->IsBatchBoundary(position - 1, offset),
                  IsOkAndHolds(false))
          << "batch " << i;
    }
  }
  // Where the batches end, with the offset after them.
  EXPECT_THAT(segment->IsBatchBoundary(log.bytes.size(), log.next_offset),
              IsOkAndHolds(true));
  EXPECT_THAT(segment->IsBatchBoundary(log.bytes.size(), log.next_offset - 1),
              IsOkAndHolds(false));
  EXPECT_THAT(segment->IsBatchBoundary(log.bytes.size() + 1, log.next_offset),
              IsOkAndHolds(false));
  EXPECT_THAT(segment->IsBatchBoundary(0, kBase), IsOkAndHolds(true));
  EXPECT_THAT(segment->IsBatchBoundary(0, kBase + 1), IsOkAndHolds(false));
  // Only reads; the segment keeps no handle.
  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(cache().size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(IndexStates, IsBatchBoundaryTest,
                         ::testing::Values(IndexState::kPersisted,
                                           IndexState::kMissing,
                                           IndexState::kDamaged));

TEST_F(SegmentTest, IsBatchBoundaryOfAMissingFileIsNotFound) {
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, /*size=*/100);

  EXPECT_THAT(segment->IsBatchBoundary(61, kBase + 1),
              StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_F(SegmentTest, WalkFromVisitsTheBatchHoldingTheOffsetAndAllAfterIt) {
  // Interval 1: every batch but the first is indexed, so the walk starts at
  // the batch holding the offset itself.
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options(/*index_interval_bytes=*/1));
  std::shared_ptr<Segment> segment =
      ListSegment(Options(/*index_interval_bytes=*/1), log.next_offset);

  std::vector<Visit> visits;
  ASSERT_OK_AND_ASSIGN(
      ScanResult walk,
      segment->WalkFrom(log.offsets[3] + 2,
                        [&](const RecordBatchView& batch, uint64_t position) {
                          visits.push_back({batch.base_offset(), position});
                          return true;
                        }));

  EXPECT_THAT(visits, ElementsAreArray(VisitsOf(log, 3)));
  EXPECT_EQ(walk.batches, 3);
  EXPECT_EQ(walk.valid_end, log.bytes.size());
  EXPECT_EQ(walk.next_offset, log.next_offset);
  EXPECT_EQ(walk.stop, ScanStop::kEndOfFile);
}

// ---- Timestamps -----------------------------------------------------------

TEST_F(SegmentTest, FindByTimestampReturnsTheFirstBatchAtOrAboveIt) {
  // Timestamps 100, 300, 200, 500, 500, 400.
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Segment> segment,
      Segment::Create(Options(/*index_interval_bytes=*/1), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));

  // The hit as (offset, timestamp), nullopt for none.
  auto hit_matches =
      [&](int64_t ts, int64_t min_offset,
          int64_t end_offset) -> std::optional<std::pair<int64_t, int64_t>> {
    absl::StatusOr<std::optional<TimestampHit>> found =
        segment->FindByTimestamp(ts, min_offset, end_offset);
    EXPECT_OK(found.status());
    if (!found.ok() || !found->has_value()) return std::nullopt;
    return std::make_pair((*found)->offset, (*found)->timestamp);
  };
  using Hit = std::optional<std::pair<int64_t, int64_t>>;

  EXPECT_EQ(hit_matches(0, kBase, kNoEnd), Hit({log.offsets[0], 100}));
  EXPECT_EQ(hit_matches(100, kBase, kNoEnd), Hit({log.offsets[0], 100}));
  EXPECT_EQ(hit_matches(101, kBase, kNoEnd), Hit({log.offsets[1], 300}));
  EXPECT_EQ(hit_matches(250, kBase, kNoEnd), Hit({log.offsets[1], 300}));
  EXPECT_EQ(hit_matches(450, kBase, kNoEnd), Hit({log.offsets[3], 500}));
  // min_offset inside batch 1 keeps it; past it skips it.
  EXPECT_EQ(hit_matches(250, log.offsets[1] + 2, kNoEnd),
            Hit({log.offsets[1], 300}));
  EXPECT_EQ(hit_matches(250, log.offsets[2], kNoEnd),
            Hit({log.offsets[3], 500}));
  EXPECT_EQ(hit_matches(450, log.offsets[4], kNoEnd),
            Hit({log.offsets[4], 500}));
  EXPECT_EQ(hit_matches(350, log.offsets[5], kNoEnd),
            Hit({log.offsets[5], 400}));
  // Nothing at or above, or only at or past end_offset.
  EXPECT_EQ(hit_matches(501, kBase, kNoEnd), std::nullopt);
  EXPECT_EQ(hit_matches(450, kBase, log.offsets[3]), std::nullopt);
}

TEST_F(SegmentTest, TimeInfoOfAnActiveSegmentNamesTheFirstBatchWithTheMaximum) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(-1, -1));
  EXPECT_THAT(segment->FirstBatchMaxTimestamp(), IsOkAndHolds(-1));

  ASSERT_OK(AppendAll(*segment, log));

  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(500, log.offsets[3]));
  EXPECT_THAT(segment->FirstBatchMaxTimestamp(), IsOkAndHolds(100));
}

// ---- Recovery -------------------------------------------------------------

TEST_F(SegmentTest, RecoverVerifiesFromTheStartAndTruncatesATornTail) {
  const TestLog log = SixBatches();
  const std::string torn = log.producer[1].substr(0, 70);
  WriteFile(PathOf(kLogFile), log.bytes + torn);
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, log.bytes.size() + torn.size());
  ASSERT_OK(segment->OpenForRecovery());
  EXPECT_TRUE(segment->has_write_handle());

  RecoveryStart start;
  start.expected_offset = kBase;
  std::vector<Visit> visits;
  ASSERT_OK_AND_ASSIGN(
      SegmentRecovery recovery,
      segment->Recover(start, [&](const RecordBatchView& batch, uint64_t at) {
        visits.push_back({batch.base_offset(), at});
        return true;
      }));

  EXPECT_THAT(visits, ElementsAreArray(VisitsOf(log, 0)));
  EXPECT_EQ(recovery.file_size, log.bytes.size() + torn.size());
  EXPECT_EQ(recovery.truncated_bytes, torn.size());
  EXPECT_EQ(recovery.scan.valid_end, log.bytes.size());
  EXPECT_EQ(recovery.scan.next_offset, log.next_offset);
  EXPECT_EQ(recovery.scan.batches, 6);
  EXPECT_EQ(recovery.scan.stop, ScanStop::kTornBatch);
  EXPECT_EQ(recovery.index_problem, "");
  EXPECT_EQ(recovery.time_index_problem, "");
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
  EXPECT_EQ(segment->size(), log.bytes.size());
  EXPECT_EQ(segment->next_offset(), log.next_offset);
  EXPECT_THAT(segment->GetTimeInfo(), TimeInfoIs(500, log.offsets[3]));

  // The recovered segment is active: appends continue the log.
  TestLog longer = SixBatches();
  longer.Add(2, 30, 600);
  ASSERT_OK(AppendBatch(*segment, longer, 6));
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), longer.bytes);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(longer.offsets[5], kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), longer.Slice(5, 7));
}

TEST_F(SegmentTest, RecoverStopsAtABatchWhoseCrcDoesNotMatch) {
  const TestLog log = SixBatches();
  std::string damaged = log.bytes;
  damaged[log.positions[4] + layout::kRecords] ^= 0x01;
  WriteFile(PathOf(kLogFile), damaged);
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, damaged.size());
  ASSERT_OK(segment->OpenForRecovery());

  RecoveryStart start;
  start.expected_offset = kBase;
  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       segment->Recover(start, [](const RecordBatchView&,
                                                  uint64_t) { return true; }));

  EXPECT_EQ(recovery.scan.stop, ScanStop::kCorruptBatch);
  EXPECT_THAT(recovery.scan.detail, HasSubstr("crc mismatch"));
  EXPECT_EQ(recovery.scan.valid_end, log.positions[4]);
  EXPECT_EQ(recovery.truncated_bytes, log.bytes.size() - log.positions[4]);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.Slice(0, 4));
  EXPECT_EQ(segment->size(), log.positions[4]);
  EXPECT_EQ(segment->next_offset(), log.offsets[4]);
}

TEST_F(SegmentTest, RecoverCutsOffBatchesFromTheNextSegmentsBaseOffset) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(), dir(), kId, log.bytes.size());
  ASSERT_OK(segment->OpenForRecovery());

  RecoveryStart start;
  start.expected_offset = kBase;
  start.end_offset = log.offsets[4];
  std::vector<Visit> visits;
  ASSERT_OK_AND_ASSIGN(
      SegmentRecovery recovery,
      segment->Recover(start, [&](const RecordBatchView& batch, uint64_t at) {
        visits.push_back({batch.base_offset(), at});
        return true;
      }));

  EXPECT_THAT(visits, ElementsAre(Visit{log.offsets[0], log.positions[0]},
                                  Visit{log.offsets[1], log.positions[1]},
                                  Visit{log.offsets[2], log.positions[2]},
                                  Visit{log.offsets[3], log.positions[3]}));
  EXPECT_EQ(recovery.scan.valid_end, log.positions[4]);
  EXPECT_EQ(recovery.scan.next_offset, log.offsets[4]);
  EXPECT_THAT(recovery.scan.detail,
              HasSubstr(absl::StrCat("batch at position ", log.positions[4],
                                     " has base offset ", log.offsets[4],
                                     ", where the next segment begins (",
                                     log.offsets[4], ")")));
  EXPECT_EQ(recovery.truncated_bytes, log.bytes.size() - log.positions[4]);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.Slice(0, 4));
  EXPECT_EQ(segment->next_offset(), log.offsets[4]);
}

TEST_F(SegmentTest, RecoverWithoutOpenForRecoveryFailsWithFailedPrecondition) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  RecoveryStart start;
  start.expected_offset = kBase;
  auto any = [](const RecordBatchView&, uint64_t) { return true; };

  std::shared_ptr<Segment> writable =
      Segment::Listed(Options(), dir(), kId, log.bytes.size());
  EXPECT_THAT(writable->Recover(start, any),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not open for writing")));
  std::shared_ptr<Segment> read_only =
      Segment::Listed(ReadOnly(), dir(), kId, log.bytes.size());
  EXPECT_THAT(read_only->Recover(start, any),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not open for recovery")));
}

TEST_F(SegmentTest, OpenForRecoveryOfAMissingFileIsNotFound) {
  EXPECT_THAT(Segment::Listed(Options(), dir(), kId, 0)->OpenForRecovery(),
              StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_THAT(Segment::Listed(ReadOnly(), dir(), kId, 0)->OpenForRecovery(),
              StatusIs(absl::StatusCode::kNotFound, _));
}

// A segment written with its indexes persisted, then recovered from a
// checkpoint at batch `kCheckpoint` of eleven equal batches (entries at
// batches 3, 6 and 9, as in IndexCadenceTest).
class CheckpointRecoveryTest : public SegmentTest {
 protected:
  static constexpr size_t kCheckpoint = 5;

  CheckpointRecoveryTest()
      : log_(EqualBatches({10, 50, 20, 30, 40, 45, 60, 55, 58, 59, 70})),
        interval_(2 * log_.size_of(0) + 1) {}

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> writer,
                         Segment::Create(Options(interval_), dir(), kId));
    ASSERT_OK(AppendAll(*writer, log_));
    ASSERT_OK(writer->PersistIndexes());
    writer->ReleaseWriteHandle();  // a crash: no seal
    index_ = *FileBytes(PathOf(kIndexFile));
    time_index_ = *FileBytes(PathOf(kTimeIndexFile));
    ASSERT_EQ(index_.size(), 3 * 8u);
    ASSERT_EQ(time_index_.size(), 2 * 12u);
  }

  RecoveryStart Checkpoint() const {
    RecoveryStart start;
    start.position = log_.positions[kCheckpoint];
    start.expected_offset = log_.offsets[kCheckpoint];
    start.time_before = {50, log_.offsets[1]};  // the largest before batch 5
    return start;
  }

  // Recovers from Checkpoint() and checks what the verified part was.
  absl::StatusOr<SegmentRecovery> RecoverFromCheckpoint(Segment& segment) {
    std::vector<Visit> visits;
    absl::StatusOr<SegmentRecovery> recovery = segment.Recover(
        Checkpoint(), [&](const RecordBatchView& batch, uint64_t at) {
          visits.push_back({batch.base_offset(), at});
          return true;
        });
    if (recovery.ok()) {
      EXPECT_THAT(visits, ElementsAreArray(VisitsOf(log_, kCheckpoint)));
      EXPECT_EQ(recovery->scan.valid_end, log_.bytes.size());
      EXPECT_EQ(recovery->scan.next_offset, log_.next_offset);
      EXPECT_EQ(recovery->truncated_bytes, 0u);
      EXPECT_EQ(segment.size(), log_.bytes.size());
      EXPECT_EQ(segment.next_offset(), log_.next_offset);
      EXPECT_THAT(segment.GetTimeInfo(), TimeInfoIs(70, log_.offsets[10]));
    }
    return recovery;
  }

  const TestLog log_;
  const uint64_t interval_;
  std::string index_;
  std::string time_index_;
};

TEST_F(CheckpointRecoveryTest, KeepsTheIndexEntriesBeforeTheCheckpoint) {
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(interval_), dir(), kId, log_.bytes.size());
  ASSERT_OK(segment->OpenForRecovery());

  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       RecoverFromCheckpoint(*segment));

  EXPECT_EQ(recovery.index_problem, "");
  EXPECT_EQ(recovery.time_index_problem, "");
  EXPECT_EQ(recovery.scan.batches, 6);
  ASSERT_OK(segment->PersistIndexes());
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index_);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index_);
}

TEST_F(CheckpointRecoveryTest, RebuildsAMissingIndexBelowTheCheckpoint) {
  ASSERT_OK(fs().Unlink(PathOf(kIndexFile)));
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(interval_), dir(), kId, log_.bytes.size());
  ASSERT_OK(segment->OpenForRecovery());

  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       RecoverFromCheckpoint(*segment));

  EXPECT_EQ(recovery.index_problem, "missing");
  EXPECT_EQ(recovery.time_index_problem, "");
  ASSERT_OK(segment->PersistIndexes());
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index_);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index_);
}

TEST_F(CheckpointRecoveryTest, RebuildsADamagedTimeIndexBelowTheCheckpoint) {
  // Timestamps going down: not a valid time index.
  WriteFile(PathOf(kTimeIndexFile),
            TimeEntry(50, kBase + 9) + TimeEntry(40, kBase + 18));
  std::shared_ptr<Segment> segment =
      Segment::Listed(Options(interval_), dir(), kId, log_.bytes.size());
  ASSERT_OK(segment->OpenForRecovery());

  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       RecoverFromCheckpoint(*segment));

  EXPECT_EQ(recovery.index_problem, "");
  EXPECT_THAT(recovery.time_index_problem, HasSubstr("timestamp 40"));
  ASSERT_OK(segment->PersistIndexes());
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), index_);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index_);
}

TEST_F(CheckpointRecoveryTest, ReadOnlyRecoveryRebuildsInMemoryOnly) {
  WriteFile(PathOf(kIndexFile), "garbage");
  fs().ResetCounts();
  std::shared_ptr<Segment> segment =
      Segment::Listed(ReadOnly(interval_), dir(), kId, log_.bytes.size());
  ASSERT_OK(segment->OpenForRecovery());
  EXPECT_FALSE(segment->has_write_handle());

  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       RecoverFromCheckpoint(*segment));
  EXPECT_THAT(recovery.index_problem, HasSubstr("multiple of 8"));
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log_.offsets[7], kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), log_.Slice(7, 11));
  EXPECT_OK(segment->PersistIndexes());

  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), "garbage");
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index_);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log_.bytes);
}

// ---- Read-only segments ---------------------------------------------------

TEST_F(SegmentTest, ReadOnlyRecoveryRecordsTheValidEndAndChangesNoFile) {
  const TestLog log = SixBatches();
  const std::string torn = log.producer[2].substr(0, 40);
  WriteFile(PathOf(kLogFile), log.bytes + torn);
  fs().ResetCounts();
  std::shared_ptr<Segment> segment =
      Segment::Listed(ReadOnly(), dir(), kId, log.bytes.size() + torn.size());
  ASSERT_OK(segment->OpenForRecovery());

  RecoveryStart start;
  start.expected_offset = kBase;
  ASSERT_OK_AND_ASSIGN(SegmentRecovery recovery,
                       segment->Recover(start, [](const RecordBatchView&,
                                                  uint64_t) { return true; }));

  EXPECT_EQ(recovery.scan.valid_end, log.bytes.size());
  EXPECT_EQ(recovery.scan.stop, ScanStop::kTornBatch);
  EXPECT_EQ(recovery.truncated_bytes, torn.size());  // what a writer would cut
  EXPECT_EQ(segment->size(), log.bytes.size());
  EXPECT_EQ(segment->next_offset(), log.next_offset);
  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[4], kNoEnd, kUnlimited));
  EXPECT_EQ(read.batches_view(), log.Slice(4, 6));
  EXPECT_TRUE(read.reached_end);
  segment->Seal();
  EXPECT_OK(segment->PersistIndexes());
  segment->ReleaseWriteHandle();

  EXPECT_EQ(fs().Count(FsOp::kWrite), 0);
  EXPECT_EQ(fs().Count(FsOp::kTruncate), 0);
  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes + torn);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
}

TEST_F(SegmentTest, AReadOnlySegmentRefusesOpenForWriteAndAppend) {
  const TestLog log = SixBatches();
  WriteFile(PathOf(kLogFile), log.bytes);
  fs().ResetCounts();
  std::shared_ptr<Segment> segment =
      Segment::Listed(ReadOnly(), dir(), kId, log.bytes.size());

  EXPECT_THAT(segment->OpenForWrite(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("is opened read-only")));
  ASSERT_OK(segment->OpenForRecovery());
  EXPECT_THAT(AppendBatch(*segment, log, 0),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));

  EXPECT_FALSE(segment->has_write_handle());
  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
}

TEST_F(SegmentTest, AReadOnlyClosedSegmentRebuildsAMisplacedIndexInMemory) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::string misplaced =
      IndexEntry(log.offsets[3], log.positions[3] + 1);
  WriteFile(PathOf(kIndexFile), misplaced);
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  fs().ResetCounts();
  std::shared_ptr<Segment> segment = ListSegment(ReadOnly(), log.next_offset);

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(log.offsets[3], kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.Slice(3, 6));
  EXPECT_EQ(Mutations(), 0);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), misplaced);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), time_index);
}

// ---- RewriteTail ----------------------------------------------------------

TEST_F(SegmentTest, RewriteTailWritesTheVerifiedBytesBackInPlace) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));
  ASSERT_OK(segment->DataSync());
  fs().ResetCounts();

  ASSERT_OK(segment->RewriteTail(log.positions[2], log.offsets[2]));

  EXPECT_EQ(fs().Count(FsOp::kWrite), 1);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), log.bytes);
  // The rewritten range counts as not durable until the next DataSync.
  ASSERT_OK_AND_ASSIGN(uint64_t unsynced, fs().UnsyncedBytes(PathOf(kLogFile)));
  EXPECT_EQ(unsynced, log.bytes.size() - log.positions[2]);
}

TEST_F(SegmentTest, RewriteTailOfBytesThatNoLongerVerifyIsDataLoss) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));
  OverwriteByte(PathOf(kLogFile), log.positions[3] + layout::kRecords + 5,
                log.bytes[log.positions[3] + layout::kRecords + 5] ^ 0x40);
  fs().ResetCounts();

  EXPECT_THAT(
      segment->RewriteTail(log.positions[1], log.offsets[1]),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("no longer verify")));
  EXPECT_EQ(fs().Count(FsOp::kWrite), 0);
}

// ---- Lifecycle ------------------------------------------------------------

TEST_F(SegmentTest, DeleteFilesUnlinksAllThreeAndLaterReadsAreNotFound) {
  const TestLog log = SixBatches();
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));
  ASSERT_OK(AppendAll(*segment, log));
  segment->Seal();
  ASSERT_OK(segment->PersistIndexes());
  ASSERT_TRUE(FileBytes(PathOf(kIndexFile)).has_value());

  ASSERT_OK(segment->DeleteFiles());

  EXPECT_EQ(FileBytes(PathOf(kLogFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
  EXPECT_FALSE(segment->has_write_handle());
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_THAT(segment->Read(kBase, kNoEnd, kUnlimited),
              StatusIs(absl::StatusCode::kNotFound, _));
  // A late persist writes nothing back.
  fs().ResetCounts();
  EXPECT_OK(segment->PersistIndexes());
  EXPECT_EQ(Mutations(), 0);
}

TEST_F(SegmentTest, DeleteFilesWithoutIndexFilesSucceeds) {
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Segment> segment,
                       Segment::Create(Options(), dir(), kId));

  ASSERT_OK(segment->DeleteFiles());

  EXPECT_EQ(FileBytes(PathOf(kLogFile)), std::nullopt);
  EXPECT_EQ(fs().Count(FsOp::kUnlink), 3);
}

TEST_F(SegmentTest, QuarantineRenamesAllThreeFilesAside) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  const std::optional<std::string> index = FileBytes(PathOf(kIndexFile));
  const std::optional<std::string> time_index =
      FileBytes(PathOf(kTimeIndexFile));
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK(segment->Read(kBase, kNoEnd, kUnlimited).status());

  ASSERT_OK(segment->Quarantine());

  EXPECT_EQ(FileBytes(PathOf(kLogFile) + ".quarantined"), log.bytes);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile) + ".quarantined"), index);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile) + ".quarantined"), time_index);
  EXPECT_EQ(FileBytes(PathOf(kLogFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kIndexFile)), std::nullopt);
  EXPECT_EQ(FileBytes(PathOf(kTimeIndexFile)), std::nullopt);
  EXPECT_THAT(segment->Read(kBase, kNoEnd, kUnlimited),
              StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_F(SegmentTest, DropReadStateMakesLaterReadsNotFoundWithoutOpening) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  ASSERT_OK(segment->Read(kBase, kNoEnd, kUnlimited).status());
  ASSERT_EQ(cache().size(), 1u);

  segment->DropReadState();
  fs().ResetCounts();

  EXPECT_EQ(cache().size(), 0u);
  EXPECT_THAT(
      segment->Read(kBase, kNoEnd, kUnlimited),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("closed for reads")));
  EXPECT_THAT(segment->FindByTimestamp(0, kBase, kNoEnd),
              StatusIs(absl::StatusCode::kNotFound, _));
  EXPECT_EQ(fs().Count(FsOp::kOpenForRead), 0);
}

TEST_F(SegmentTest,
       AReadThatOpenedBeforeDropReadStateFinishesButCachesNothing) {
  const TestLog log = SixBatches();
  WriteClosedSegment(log, Options());
  std::shared_ptr<Segment> segment = ListSegment(Options(), log.next_offset);
  // Between the read's open of the .log and its use of the descriptor.
  fs().OnNextOpenForRead(PathPattern::Substring(".log"),
                         [&] { segment->DropReadState(); });

  ASSERT_OK_AND_ASSIGN(BatchReadResult read,
                       segment->Read(kBase, kNoEnd, kUnlimited));

  EXPECT_EQ(read.batches_view(), log.bytes);
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_THAT(segment->Read(kBase, kNoEnd, kUnlimited),
              StatusIs(absl::StatusCode::kNotFound, _));
}

}  // namespace
}  // namespace kaas::segment
