// Resource faults other than a full disk (disk_engine_disk_full_test.cc),
// seen through the DiskEngine as a broker sees them:
//   * no file descriptor left (EMFILE) at a segment roll, at a read that has
//     to open a segment whose handle is not cached, at every
//     descriptor-taking call of a take-over's recovery and of a workload of
//     appends and reads;
//   * I/O errors (EIO) reading a segment's log, and its offset and time
//     indexes, during reads and timestamp lookups, and at every read of a
//     recovery after a power loss;
//   * an fdatasync that hangs past the watchdog deadline.
// Why: these are what a broker meets on a bad day, and each must end in a
// typed, retriable error (never a crash, an empty success or wrong bytes)
// for the calls that needed the missing resource only; nothing acknowledged
// may be lost; and the fault must go away with its cause: the partition
// serves every acknowledged batch byte for byte and takes appends again,
// and a restarted engine serves everything acknowledged. The partition-level
// tests prove each mechanism on its own (stall and re-arm, the watchdog, the
// read-handle cache); these prove the broker-facing contract they add up to.
#include <cerrno>
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/retention_host.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"
#include "testing/stored_records.h"

namespace kaas {
namespace {

using ::kaas::test::FsOp;
using ::kaas::test::HasStorageError;
using ::kaas::test::PathPattern;

const TopicPartition kTp{"orders", 0};
const TopicPartition kOther{"orders", 1};

// Every call of the seam that needs a new file descriptor: opening a file,
// taking a lock file, and listing or syncing a directory (both open it).
constexpr FsOp kDescriptorOps[] = {
    FsOp::kOpenForRead, FsOp::kOpenForWrite, FsOp::kLock,
    FsOp::kListDir,     FsOp::kSyncDir,
};

// The .log files of one partition of "orders" (0 or 1).
PathPattern LogsOf(const TopicPartition& tp) {
  return PathPattern::Regex(
      absl::StrCat("/orders/", tp.partition, "/[^/]*\\.log$"));
}

class ResourceFaultsTest : public DiskEngineTest {
 protected:
  // Segments of about ten batches, so that a few dozen appends roll often.
  // `cached_read_handles` bounds the engine-wide read-handle cache: 1 makes
  // a read of an older segment open it afresh. `watchdog` is the fsync
  // deadline (zero: off).
  std::unique_ptr<DiskEngine> Engine(
      size_t cached_read_handles = 1024,
      absl::Duration watchdog = absl::ZeroDuration()) {
    DiskEngine::Options options = MakeOptions();
    options.default_config.segment_bytes = 4 << 10;
    options.default_config.fsync_max_latency = watchdog;
    options.max_cached_read_handles = cached_read_handles;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  // A one-record batch whose timestamp is distinct from every other one's
  // (ascending), so that a timestamp lookup has exactly one answer.
  std::string NextBatch() {
    return test::BatchBuilder()
        .BaseTimestamp(next_timestamp_++ * 10)
        .AddRandomRecords(1, 300)
        .Build();
  }

  static int64_t TimestampOf(absl::string_view batch) {
    return RecordBatchView::ParseHeader(batch)->max_timestamp();
  }

  // An error a broker answers with a retriable KAFKA_STORAGE_ERROR: an I/O
  // failure (kStorageError) or a stalled partition (kStalled).
  static void ExpectRetriable(const absl::Status& status,
                              absl::string_view what) {
    const StorageErrorCode code = GetStorageErrorCode(status);
    EXPECT_TRUE(code == StorageErrorCode::kStorageError ||
                code == StorageErrorCode::kStalled)
        << what << ": " << status << " (" << StorageErrorCodeName(code) << ")";
    EXPECT_TRUE(IsRetriable(code)) << what << ": " << status;
  }

  // Appends with acks=all and waits. An acknowledged batch is remembered;
  // a failure must be retriable.
  absl::Status AppendAcked(DiskEngine& engine, const TopicPartition& tp,
                           int64_t epoch, const std::string& batch) {
    absl::StatusOr<AppendResult> result =
        engine.AppendAndWait(tp, epoch, Acks::kAll, batch);
    if (!result.ok()) {
      ExpectRetriable(result.status(), "append");
      return result.status();
    }
    acked_[tp][result->base_offset] = batch;
    return absl::OkStatus();
  }

  // The first batch the partition serves at `offset`.
  absl::StatusOr<std::string> BatchAt(DiskEngine& engine,
                                      const TopicPartition& tp,
                                      int64_t offset) {
    absl::StatusOr<ReadResult> read =
        engine.Read(tp, offset, 1, Isolation::kReadUncommitted);
    if (!read.ok()) return read.status();
    if (read->batches == 0) return std::string();
    const std::string flat(read->records);
    absl::StatusOr<size_t> size = PeekBatchSize(flat);
    if (!size.ok()) return size.status();
    return flat.substr(0, *size);
  }

  // Reads from the log start to the end: every acknowledged batch must be
  // there, byte for byte (but for the leader epoch and base offset the
  // engine stamps, both outside the CRC).
  void ExpectAckedServed(DiskEngine& engine, const TopicPartition& tp,
                         const std::string& when) {
    absl::StatusOr<int64_t> start = engine.LogStartOffset(tp);
    ASSERT_OK(start.status()) << when;
    std::map<int64_t, std::string> served;
    for (int64_t offset = *start;;) {
      absl::StatusOr<ReadResult> read =
          engine.Read(tp, offset, 1 << 20, Isolation::kReadUncommitted);
      ASSERT_OK(read.status()) << when << ": read at " << offset;
      if (read->batches == 0) break;
      absl::StatusOr<std::map<int64_t, std::string>> batches =
          test::BatchesOf(std::string(read->records));
      ASSERT_OK(batches.status()) << when;
      served.insert(batches->begin(), batches->end());
      offset = read->next_offset;
    }
    ASSERT_FALSE(acked_[tp].empty()) << when;
    for (const auto& [offset, batch] : acked_[tp]) {
      auto found = served.find(offset);
      ASSERT_NE(found, served.end())
          << when << ": acknowledged batch at " << tp.ToString() << " offset "
          << offset << " lost";
      EXPECT_TRUE(SameBatchButForLeaderFields(found->second, batch))
          << when << ": batch at " << offset << " differs";
    }
  }

  // Every call that needs a new descriptor fails with EMFILE from now on
  // (until ClearFaults), as when the process has none left.
  void RunOutOfDescriptors() {
    for (FsOp op : kDescriptorOps) {
      test::Fault emfile(op, EMFILE);
      emfile.count = test::Fault::kForever;
      fs().InjectFault(emfile);
    }
  }

  // Waits until `tp` is not stalled: its probe (every 10 ms here) re-arms
  // it once an fsync succeeds again. A generous deadline fails the test
  // instead of hanging it.
  void WaitUntilNotStalled(DiskEngine& engine, const TopicPartition& tp) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (true) {
      absl::StatusOr<PartitionStats> stats = engine.PartitionStatsOf(tp);
      ASSERT_OK(stats.status());
      if (!stats->stalled) return;
      ASSERT_LT(absl::Now(), deadline)
          << tp.ToString() << " is still stalled after a minute";
      std::this_thread::yield();
    }
  }

  // Writes a few segments and an idempotent producer's batches to kTp, then
  // restarts the engine once per call of each of `ops` that a take-over at
  // start-up makes: `error` from that call on fails the take-over
  // retriably or leaves it done; once the fault is cleared a re-drive leads
  // the partition, which serves everything acknowledged, keeps the
  // producer's state and takes appends. With `power_loss`, each engine ends
  // in a simulated power loss, so that every take-over recovers. Returns
  // how many take-overs failed.
  int TakeOverWithFaultsAtEveryCall(absl::Span<const FsOp> ops, int error,
                                    bool power_loss) {
    int64_t epoch = 1;
    int32_t sequence = 0;
    auto producer_batch = [&] {
      return test::BatchBuilder()
          .Producer(7, 0, sequence++)
          .BaseTimestamp(next_timestamp_++ * 10)
          .AddRandomRecords(1, 300)
          .Build();
    };
    {
      auto engine = Engine();
      EXPECT_OK(engine->TakeOver(kTp, epoch).status());
      for (int i = 0; i < 30; ++i) {
        EXPECT_OK(AppendAcked(*engine, kTp, epoch, NextBatch()));
        if (i % 4 == 0) {
          EXPECT_OK(AppendAcked(*engine, kTp, epoch, producer_batch()));
        }
      }
      if (power_loss) fs().Crash();
    }
    // How many calls of each kind a take-over at start-up makes.
    std::map<FsOp, int64_t> calls;
    {
      auto engine = Engine();
      fs().ResetCounts();
      EXPECT_OK(engine->TakeOver(kTp, ++epoch).status());
      for (FsOp op : ops) calls[op] = fs().Count(op);
      if (power_loss) fs().Crash();
    }
    int failed = 0;
    for (FsOp op : ops) {
      for (int64_t skip = 0; skip < calls[op]; ++skip) {
        const std::string when =
            absl::StrCat(error == EIO ? "EIO" : "EMFILE", " from ",
                         test::FsOpName(op), " #", skip, " on");
        SCOPED_TRACE(when);
        ++epoch;
        auto engine = Engine();
        test::Fault fault(op, error);
        fault.skip = static_cast<int>(skip);
        fault.count = test::Fault::kForever;
        fs().InjectFault(fault);
        absl::StatusOr<int64_t> taken = engine->TakeOver(kTp, epoch);
        if (!taken.ok()) {
          ++failed;
          ExpectRetriable(taken.status(), "take-over");
        }
        fs().ClearFaults();
        EXPECT_OK(engine->TakeOver(kTp, epoch).status()) << when;
        WaitUntilNotStalled(*engine, kTp);
        ExpectAckedServed(*engine, kTp, when);
        // The producer's state survived: its next sequence is in order.
        EXPECT_OK(AppendAcked(*engine, kTp, epoch, producer_batch())) << when;
        EXPECT_OK(AppendAcked(*engine, kTp, epoch, NextBatch())) << when;
        if (HasFailure()) return failed;
        if (power_loss) fs().Crash();
      }
    }
    int64_t sites = 0;
    for (FsOp op : ops) sites += calls[op];
    std::cout << (error == EIO ? "EIO" : "EMFILE") << " at " << sites
              << " calls of a take-over: " << failed << " failed it\n";
    auto engine = Engine();
    EXPECT_OK(engine->TakeOver(kTp, ++epoch).status());
    ExpectAckedServed(*engine, kTp, "after the last restart");
    return failed;
  }

  std::map<TopicPartition, std::map<int64_t, std::string>> acked_;

 private:
  int64_t next_timestamp_ = 100;
};

// (i) A roll needs a new descriptor for the new segment. Without one, the
// append that needs the roll fails (retriable) and changes nothing; the
// appends and reads that need no new descriptor go on; once descriptors
// are back, the next append rolls.
TEST_F(ResourceFaultsTest, NoDescriptorForARollFailsThatAppendRetriably) {
  {
    auto engine = Engine();
    ASSERT_OK(engine->TakeOver(kTp, 1).status());
    for (int i = 0; i < 25; ++i) {
      ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));
    }
    ASSERT_OK_AND_ASSIGN(PartitionStats before, engine->PartitionStatsOf(kTp));
    ASSERT_GE(before.segments_rolled, 2u);

    RunOutOfDescriptors();
    int failed = 0;
    for (int i = 0; i < 25; ++i) {
      if (!AppendAcked(*engine, kTp, 1, NextBatch()).ok()) ++failed;
    }
    // More than a segment's worth: a roll was due, and every append from
    // there on needs it.
    EXPECT_GT(failed, 0);
    ASSERT_OK_AND_ASSIGN(PartitionStats during, engine->PartitionStatsOf(kTp));
    EXPECT_EQ(during.segments_rolled, before.segments_rolled);
    // Closed segments are read through the handles cached when they were
    // sealed, the active one through its write handle: nothing to open.
    ExpectAckedServed(*engine, kTp, "while no descriptor is free");

    fs().ClearFaults();
    WaitUntilNotStalled(*engine, kTp);
    ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));
    ASSERT_OK_AND_ASSIGN(PartitionStats after, engine->PartitionStatsOf(kTp));
    EXPECT_GT(after.segments_rolled, before.segments_rolled);
    ExpectAckedServed(*engine, kTp, "once descriptors are back");
  }
  auto engine = Engine();
  ASSERT_OK(engine->TakeOver(kTp, 2).status());
  ExpectAckedServed(*engine, kTp, "after a restart");
}

// The storage_engine.h contract: "Every error is an absl::Status carrying a
// StorageErrorCode". GetStorageErrorCode reads an error without one as
// kStorageError, so a broker still answers KAFKA_STORAGE_ERROR; but the
// status's canonical code is then the filesystem's (RESOURCE_EXHAUSTED for
// EMFILE and ENOSPC), not the one StorageError derives.
// The error of a failed roll (Partition::RollLocked, from Segment::Create)
// used to reach DiskEngine::Append and AppendAndWait untyped; the engine's
// append and read paths now pass their errors through EnsureStorageError.
TEST_F(ResourceFaultsTest, AFailedRollIsATypedError) {
  auto engine = Engine();
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  test::Fault emfile(FsOp::kOpenForWrite, EMFILE);
  emfile.path = LogsOf(kTp);
  emfile.count = test::Fault::kForever;
  fs().InjectFault(emfile);
  absl::Status failed;
  for (int i = 0; i < 25 && failed.ok(); ++i) {
    failed = AppendAcked(*engine, kTp, 1, NextBatch());
  }
  ASSERT_FALSE(failed.ok()) << "no roll was needed";
  EXPECT_EQ(EnsureStorageError(failed), failed)
      << "carries no StorageErrorCode: " << failed;
  EXPECT_EQ(failed.code(), absl::StatusCode::kInternal) << failed;
  fs().ClearFaults();
}

// Descriptors run out at any one descriptor-taking call of a workload (a
// take-over, appends with rolls, index and checkpoint writes, reads of
// evicted segments, timestamp lookups) and stay out from there on: every
// call fails retriably or answers right (a read never serves other bytes or
// nothing where acknowledged batches are); once descriptors are back the
// partition serves everything acknowledged and takes appends, also after a
// restart.
TEST_F(ResourceFaultsTest,
       DescriptorsRunningOutAnywhereInAWorkloadLoseNothing) {
  auto workload = [&](DiskEngine& engine) {
    if (absl::Status taken = engine.TakeOver(kTp, 1).status(); !taken.ok()) {
      ExpectRetriable(taken, "take-over");
      return;
    }
    for (int i = 1; i <= 36; ++i) {
      (void)AppendAcked(engine, kTp, 1, NextBatch());
      if (i % 12 != 0 || acked_[kTp].count(0) == 0) continue;
      // The first segment's handle is evicted (one is cached): these open
      // it again.
      const std::string& first = acked_[kTp][0];
      absl::StatusOr<std::string> read = BatchAt(engine, kTp, 0);
      if (read.ok()) {
        EXPECT_TRUE(SameBatchButForLeaderFields(*read, first));
      } else {
        ExpectRetriable(read.status(), "read");
      }
      absl::StatusOr<OffsetAndTimestamp> found = engine.OffsetForTimestamp(
          kTp, TimestampOf(first), Isolation::kReadUncommitted);
      if (found.ok()) {
        EXPECT_EQ(found->offset, 0);
      } else {
        ExpectRetriable(found.status(), "timestamp lookup");
      }
    }
  };
  std::map<FsOp, int64_t> calls;
  {
    auto engine = Engine(/*cached_read_handles=*/1);
    fs().ResetCounts();
    workload(*engine);
    for (FsOp op : kDescriptorOps) calls[op] = fs().Count(op);
    ExpectAckedServed(*engine, kTp, "with descriptors");
    engine.reset();
    ASSERT_OK(fs::RemoveTree(fs(), data_dir()));
    acked_.clear();
  }
  int sites = 0;
  for (FsOp op : kDescriptorOps) {
    for (int64_t skip = 0; skip < calls[op]; ++skip) {
      const std::string when =
          absl::StrCat("EMFILE from ", test::FsOpName(op), " #", skip, " on");
      SCOPED_TRACE(when);
      ++sites;
      {
        auto engine = Engine(/*cached_read_handles=*/1);
        test::Fault emfile(op, EMFILE);
        emfile.skip = static_cast<int>(skip);
        emfile.count = test::Fault::kForever;
        fs().InjectFault(emfile);
        workload(*engine);
        fs().ClearFaults();
        ASSERT_OK(engine->TakeOver(kTp, 1).status()) << when;
        WaitUntilNotStalled(*engine, kTp);
        ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch())) << when;
        ExpectAckedServed(*engine, kTp, when);
        if (HasFatalFailure()) return;
      }
      {
        auto engine = Engine(/*cached_read_handles=*/1);
        ASSERT_OK(engine->TakeOver(kTp, 2).status()) << when;
        ExpectAckedServed(*engine, kTp, absl::StrCat(when, ", restarted"));
        if (HasFatalFailure()) return;
      }
      ASSERT_OK(fs::RemoveTree(fs(), data_dir()));
      acked_.clear();
    }
  }
  std::cout << "EMFILE at " << sites << " descriptor-taking calls\n";
  EXPECT_GT(sites, 50);
}

// (ii) A closed segment whose read handle was evicted from the cache is
// opened again by the next read or timestamp lookup that needs it. Without
// a descriptor, those fail (retriable), never with an empty success; the
// active segment still serves; once descriptors are back, the same calls
// answer right.
TEST_F(ResourceFaultsTest,
       NoDescriptorForAnEvictedSegmentFailsItsReadsRetriably) {
  auto engine = Engine(/*cached_read_handles=*/1);
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));
  }
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  ASSERT_GE(view.segments.size(), 3u);
  ASSERT_LT(2, view.segments[0].next_offset);
  // Reading everything leaves only the last closed segment cached.
  ExpectAckedServed(*engine, kTp, "before");
  const std::string first = acked_[kTp][2];
  const int64_t last = acked_[kTp].rbegin()->first;

  RunOutOfDescriptors();
  const int64_t opens = fs().Count(FsOp::kOpenForRead);
  absl::StatusOr<ReadResult> read =
      engine->Read(kTp, 2, 1 << 20, Isolation::kReadUncommitted);
  EXPECT_FALSE(read.ok()) << "served " << read->batches << " batches";
  ExpectRetriable(read.status(), "read of the evicted segment");
  EXPECT_GT(fs().Count(FsOp::kOpenForRead), opens) << "no open was needed";
  absl::StatusOr<OffsetAndTimestamp> found = engine->OffsetForTimestamp(
      kTp, TimestampOf(first), Isolation::kReadUncommitted);
  EXPECT_FALSE(found.ok()) << "found offset " << found->offset;
  ExpectRetriable(found.status(), "timestamp lookup in the evicted segment");
  // The active segment is read through its write handle.
  EXPECT_THAT(BatchAt(*engine, kTp, last),
              test::IsOkAndHolds(::testing::Truly([&](const std::string& b) {
                return SameBatchButForLeaderFields(b, acked_[kTp][last]);
              })));

  fs().ClearFaults();
  ASSERT_OK_AND_ASSIGN(std::string again, BatchAt(*engine, kTp, 2));
  EXPECT_TRUE(SameBatchButForLeaderFields(again, first));
  ASSERT_OK_AND_ASSIGN(found,
                       engine->OffsetForTimestamp(kTp, TimestampOf(first),
                                                  Isolation::kReadUncommitted));
  EXPECT_EQ(found->offset, 2);
  EXPECT_EQ(found->timestamp, TimestampOf(first));
  ExpectAckedServed(*engine, kTp, "once descriptors are back");
  ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));
}

// (iii) A take-over at engine start opens the lock file, the last segments
// (for writing), metadata and index files, lists and syncs the directory,
// and creates the new epoch's segment. Running out of descriptors at any
// one of those calls (and from there on) fails the take-over retriably or
// leaves it done; once descriptors are back, a re-drive leads the
// partition, which serves everything acknowledged, keeps its producer state
// and takes appends.
TEST_F(ResourceFaultsTest, NoDescriptorsAtAnyStepOfATakeOverFailItRetriably) {
  const int failed = TakeOverWithFaultsAtEveryCall(kDescriptorOps, EMFILE,
                                                   /*power_loss=*/false);
  EXPECT_GT(failed, 5);
}

// The same with EIO from any one read of a take-over on, after a power loss
// each time (so that recovery verifies the log past its checkpoint and
// replays producer state): a read error must fail the take-over, never be
// taken for the end of the valid log (truncating acknowledged batches).
TEST_F(ResourceFaultsTest, AnIoErrorAtAnyReadOfARecoveryFailsItRetriably) {
  constexpr FsOp kReads[] = {FsOp::kRead};
  const int failed =
      TakeOverWithFaultsAtEveryCall(kReads, EIO, /*power_loss=*/true);
  EXPECT_GT(failed, 5);
}

// EIO reading one partition's .log: its reads and timestamp lookups fail
// (retriable), never with an empty success or other bytes; appends (which
// read nothing) and the other partition go on; the next read after the
// fault answers right.
TEST_F(ResourceFaultsTest, AnIoErrorReadingALogFailsOnlyTheCallsThatReadIt) {
  auto engine = Engine(/*cached_read_handles=*/1);
  for (const TopicPartition& tp : {kTp, kOther}) {
    ASSERT_OK(engine->TakeOver(tp, 1).status());
    for (int i = 0; i < 30; ++i) {
      ASSERT_OK(AppendAcked(*engine, tp, 1, NextBatch()));
    }
  }
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  ASSERT_GE(view.segments.size(), 3u);
  ASSERT_LT(2, view.segments[0].next_offset);
  const std::string first = acked_[kTp][2];
  const int64_t last = acked_[kTp].rbegin()->first;
  ASSERT_GE(last, view.segments.back().base_offset);
  const std::string other_first = acked_[kOther][2];

  test::Fault eio(FsOp::kRead, EIO);
  eio.path = LogsOf(kTp);
  eio.count = test::Fault::kForever;
  fs().InjectFault(eio);
  // A closed segment (opened afresh: the cache holds one handle) and the
  // active one.
  for (int64_t offset : {int64_t{2}, last}) {
    absl::StatusOr<ReadResult> read =
        engine->Read(kTp, offset, 1 << 20, Isolation::kReadUncommitted);
    EXPECT_FALSE(read.ok())
        << "offset " << offset << ": served " << read->batches << " batches";
    ExpectRetriable(read.status(), absl::StrCat("read at ", offset));
  }
  absl::StatusOr<OffsetAndTimestamp> found = engine->OffsetForTimestamp(
      kTp, TimestampOf(first), Isolation::kReadUncommitted);
  EXPECT_FALSE(found.ok()) << "found offset " << found->offset;
  ExpectRetriable(found.status(), "timestamp lookup");
  // The other partition is not touched; appends here read nothing.
  ExpectAckedServed(*engine, kOther, "the other partition, during the fault");
  EXPECT_THAT(
      engine->OffsetForTimestamp(kOther, TimestampOf(other_first),
                                 Isolation::kReadUncommitted),
      test::IsOkAndHolds(::testing::Field(&OffsetAndTimestamp::offset, 2)));
  ASSERT_OK(AppendAcked(*engine, kOther, 1, NextBatch()));
  EXPECT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));

  fs().ClearFaults();
  ASSERT_OK_AND_ASSIGN(std::string again, BatchAt(*engine, kTp, 2));
  EXPECT_TRUE(SameBatchButForLeaderFields(again, first));
  ASSERT_OK_AND_ASSIGN(found,
                       engine->OffsetForTimestamp(kTp, TimestampOf(first),
                                                  Isolation::kReadUncommitted));
  EXPECT_EQ(found->offset, 2);
  EXPECT_EQ(found->timestamp, TimestampOf(first));
  ExpectAckedServed(*engine, kTp, "after the fault");
  ExpectAckedServed(*engine, kOther, "the other partition, after the fault");
}

// EIO reading a closed segment's .index or .timeindex (read when its handle
// was evicted): the indexes only locate batches, so the engine may rebuild
// them from the log or fail the call (retriable), but never serve other
// bytes or a wrong offset; after the fault both answer right.
TEST_F(ResourceFaultsTest, AnIoErrorReadingAnIndexNeverServesWrongData) {
  auto engine = Engine(/*cached_read_handles=*/1);
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  for (int i = 0; i < 40; ++i) {
    ASSERT_OK(AppendAcked(*engine, kTp, 1, NextBatch()));
  }
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  ASSERT_GE(view.segments.size(), 3u);
  // An offset in the middle of the first segment (index entries every 256
  // bytes: the lookup starts from one), and one in the last closed segment,
  // whose read caches that segment and so evicts the first one's handle.
  const int64_t target = 6;
  ASSERT_LT(target, view.segments[0].next_offset);
  const int64_t elsewhere = view.segments[view.segments.size() - 2].base_offset;
  const std::string expected = acked_[kTp][target];
  for (const char* index : {"\\.index$", "\\.timeindex$"}) {
    SCOPED_TRACE(index);
    ASSERT_OK(BatchAt(*engine, kTp, elsewhere).status());
    absl::Notification opened;
    fs().OnNextOpenForRead(PathPattern::Regex(index),
                           [&opened] { opened.Notify(); });
    test::Fault eio(FsOp::kRead, EIO);
    eio.path = PathPattern::Regex(index);
    eio.count = test::Fault::kForever;
    fs().InjectFault(eio);
    absl::StatusOr<std::string> read = BatchAt(*engine, kTp, target);
    if (read.ok()) {
      EXPECT_TRUE(SameBatchButForLeaderFields(*read, expected));
    } else {
      ExpectRetriable(read.status(), "read");
    }
    EXPECT_TRUE(opened.HasBeenNotified()) << "the read opened no index file";
    ASSERT_OK(BatchAt(*engine, kTp, elsewhere).status());
    absl::StatusOr<OffsetAndTimestamp> found = engine->OffsetForTimestamp(
        kTp, TimestampOf(expected), Isolation::kReadUncommitted);
    if (found.ok()) {
      EXPECT_EQ(found->offset, target);
      EXPECT_EQ(found->timestamp, TimestampOf(expected));
    } else {
      ExpectRetriable(found.status(), "timestamp lookup");
    }
    fs().ClearFaults();
    fs().OnNextOpenForRead(PathPattern::Any(), nullptr);

    ASSERT_OK_AND_ASSIGN(std::string again, BatchAt(*engine, kTp, target));
    EXPECT_TRUE(SameBatchButForLeaderFields(again, expected));
    ASSERT_OK_AND_ASSIGN(
        found, engine->OffsetForTimestamp(kTp, TimestampOf(expected),
                                          Isolation::kReadUncommitted));
    EXPECT_EQ(found->offset, target);
  }
  ExpectAckedServed(*engine, kTp, "after the faults");
}

// (c) An fdatasync of one partition's log hangs past the watchdog deadline
// (held by the fault-injecting filesystem until released: the deadline
// passes on the engine's timer thread, nothing here sleeps). The waiting
// acks=all appends (AppendAndWait, and Append's durable future) fail with
// kStalled, never OK while their bytes are not durable; the partition counts as
// stalled and refuses appends; the other partition goes on; once the sync
// returns the probe re-arms the partition and appends work again; a restarted
// engine serves everything acknowledged.
TEST_F(ResourceFaultsTest, AHungFdatasyncStallsOnlyItsPartitionUntilItReturns) {
  // Long enough that the unblocked syncs of a loaded machine do not trip it
  // (if one does, the stall is retriable and the append is retried once the
  // probe cleared it).
  const absl::Duration watchdog = absl::Seconds(1);
  auto append = [&](DiskEngine& engine, const TopicPartition& tp,
                    int64_t epoch) {
    for (int attempt = 0; attempt < 5; ++attempt) {
      absl::Status status = AppendAcked(engine, tp, epoch, NextBatch());
      if (status.ok()) return;
      ASSERT_THAT(status, HasStorageError(StorageErrorCode::kStalled));
      WaitUntilNotStalled(engine, tp);
    }
    FAIL() << "no append acknowledged in five attempts";
  };
  {
    auto engine = Engine(/*cached_read_handles=*/1024, watchdog);
    for (const TopicPartition& tp : {kTp, kOther}) {
      ASSERT_OK(engine->TakeOver(tp, 1).status());
      for (int i = 0; i < 5; ++i) append(*engine, tp, 1);
    }
    WaitUntilNotStalled(*engine, kTp);

    fs().BlockSyncs(LogsOf(kTp));
    // A blocking producer: its append's fdatasync hangs (on this thread if
    // it leads the cycle, else on an I/O thread).
    absl::StatusOr<AppendResult> waited;
    std::thread waiter([&] {
      waited = engine->AppendAndWait(kTp, 1, Acks::kAll, NextBatch());
    });
    fs().WaitUntilBlockedSyncs(1);
    // An event-loop producer: it waits on the durable future.
    absl::StatusOr<AppendResult> doomed =
        engine->Append(kTp, 1, Acks::kAll, NextBatch());
    if (doomed.ok()) {
      // The deadline passes while the sync is held: a minute is far beyond
      // it, so a missing watchdog fails here instead of hanging.
      const std::optional<absl::Status> outcome =
          doomed->durable.WaitFor(absl::Seconds(60));
      EXPECT_TRUE(outcome.has_value()) << "the watchdog never fired";
      if (outcome.has_value()) {
        EXPECT_THAT(*outcome, HasStorageError(StorageErrorCode::kStalled));
      }
    } else {
      // The watchdog fired first.
      EXPECT_THAT(doomed.status(), HasStorageError(StorageErrorCode::kStalled));
    }
    // (No fatal assertion until the waiter is joined.)
    EXPECT_EQ(engine->StalledPartitions(), 1);
    absl::StatusOr<PartitionStats> stats = engine->PartitionStatsOf(kTp);
    EXPECT_TRUE(stats.ok() && stats->stalled) << stats.status();
    EXPECT_THAT(engine->Append(kTp, 1, Acks::kAll, NextBatch()).status(),
                HasStorageError(StorageErrorCode::kStalled));
    // What was acknowledged is still served; the other partition goes on.
    ExpectAckedServed(*engine, kTp, "while stalled");
    append(*engine, kOther, 1);
    ExpectAckedServed(*engine, kOther, "the other partition, while stalled");

    fs().ReleaseSyncs();
    waiter.join();
    EXPECT_THAT(waited, HasStorageError(StorageErrorCode::kStalled));
    WaitUntilNotStalled(*engine, kTp);
    EXPECT_EQ(engine->StalledPartitions(), 0);
    append(*engine, kTp, 1);
    ExpectAckedServed(*engine, kTp, "re-armed");
  }
  auto engine = Engine();
  for (const TopicPartition& tp : {kTp, kOther}) {
    ASSERT_OK(engine->TakeOver(tp, 2).status());
    ExpectAckedServed(*engine, tp, "after a restart");
  }
}

}  // namespace
}  // namespace kaas
