// A full disk: ENOSPC at every write site of a scenario that appends (with
// rolls, index and checkpoint writes, producer snapshots), fences a
// producer, deletes records, hands leadership over and moves the partition
// to another log dir. The disk stays full from the chosen operation on.
// Every call fails with a typed, retriable error or succeeds; nothing
// acknowledged is lost; every metadata file left behind is whole; once
// space returns the partition takes appends again, and a restarted engine
// serves every acknowledged batch byte for byte.
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/disk_engine_testlib.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

const TopicPartition kTp{"orders", 0};

// The operations that take space (or may report ENOSPC, as fsync does for
// delayed allocation).
constexpr test::FsOp kSpaceOps[] = {
    test::FsOp::kOpenForWrite, test::FsOp::kWrite,      test::FsOp::kAppend,
    test::FsOp::kTruncate,     test::FsOp::kDataSync,   test::FsOp::kSync,
    test::FsOp::kRename,       test::FsOp::kCreateDirs,
};

class DiskFullTest : public DiskEngineTest {
 protected:
  std::unique_ptr<DiskEngine> Engine() {
    DiskEngine::Options options = MakeOptions({"fast"});
    options.default_config.segment_bytes = 8 << 10;
    options.default_config.checkpoint_interval_bytes = 4 << 10;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  // An error a full disk may cause: typed and retriable for a Kafka
  // client (KAFKA_STORAGE_ERROR), or the leadership error of a partition
  // that had to let go.
  // (kStalled: an fsync failed, and the partition refuses appends until a
  // probe's fsync succeeds), or the leadership error of a partition that
  // had to let go. DeleteRecords may also find nothing to delete.
  void ExpectDiskFullError(const absl::Status& status, const char* call,
                           bool may_be_out_of_range = false) {
    const StorageErrorCode code = GetStorageErrorCode(status);
    EXPECT_TRUE(
        code == StorageErrorCode::kStorageError ||
        code == StorageErrorCode::kStalled ||
        code == StorageErrorCode::kNotLeader ||
        (may_be_out_of_range && code == StorageErrorCode::kOffsetOutOfRange))
        << call << ": " << status;
  }

  // Appends a batch; remembers it if acknowledged.
  void Append(DiskEngine& engine, int64_t epoch, const std::string& batch) {
    absl::StatusOr<AppendResult> result =
        engine.AppendAndWait(kTp, epoch, Acks::kAll, batch);
    if (!result.ok()) {
      ExpectDiskFullError(result.status(), "append");
      return;
    }
    acked_[result->base_offset] = batch;
  }

  // The scenario; returns the epoch the partition was last taken over at.
  int64_t Scenario(DiskEngine& engine) {
    int64_t epoch = 1;
    absl::Status taken = engine.TakeOver(kTp, epoch).status();
    if (!taken.ok()) {
      ExpectDiskFullError(taken, "take over");
      return epoch;
    }
    for (int i = 0; i < 6; ++i) Append(engine, epoch, Batch(3, 900));
    for (int32_t seq = 0; seq < 6; seq += 3) {
      Append(engine, epoch,
             test::BatchBuilder()
                 .Producer(5, 0, seq)
                 .AddRecord("k", std::string(900, 'p'))
                 .AddRecord("k", std::string(900, 'q'))
                 .AddRecord("k", std::string(900, 'r'))
                 .Build());
    }
    if (absl::Status fenced = engine.FenceProducerEpoch(77, 3); !fenced.ok()) {
      ExpectDiskFullError(fenced, "fence");
    }
    if (absl::StatusOr<int64_t> deleted = engine.DeleteRecords(kTp, 1);
        !deleted.ok()) {
      ExpectDiskFullError(deleted.status(), "delete records",
                          /*may_be_out_of_range=*/true);
    }
    if (absl::Status relinquished = engine.Relinquish(kTp);
        !relinquished.ok()) {
      ExpectDiskFullError(relinquished, "relinquish");
    }
    epoch = 2;
    if (absl::Status again = engine.TakeOver(kTp, epoch).status();
        !again.ok()) {
      ExpectDiskFullError(again, "take over again");
    }
    if (absl::StatusOr<std::string> moved =
            engine.MovePartitionToLogDir(kTp, "fast");
        !moved.ok()) {
      ExpectDiskFullError(moved.status(), "move");
    }
    for (int i = 0; i < 2; ++i) Append(engine, epoch, Batch(2, 900));
    return epoch;
  }

  // Reads from the log start to the end; every acknowledged batch at or
  // past `log_start` must be there, byte for byte (but for the leader
  // epoch and base offset the engine stamps, both outside the CRC).
  void ExpectAckedServed(DiskEngine& engine, const std::string& when) {
    absl::StatusOr<int64_t> start = engine.LogStartOffset(kTp);
    ASSERT_OK(start.status()) << when;
    std::map<int64_t, std::string> served;
    for (int64_t offset = *start;;) {
      absl::StatusOr<ReadResult> read =
          engine.Read(kTp, offset, 1 << 20, Isolation::kReadUncommitted);
      ASSERT_OK(read.status()) << when;
      if (read->batches == 0) break;
      const std::string flat(read->records);
      absl::string_view bytes = flat;
      while (!bytes.empty()) {
        const size_t size = *PeekBatchSize(bytes);
        served[RecordBatchView::ParseHeader(bytes.substr(0, size))
                   ->base_offset()] = std::string(bytes.substr(0, size));
        bytes.remove_prefix(size);
      }
      offset = read->next_offset;
    }
    for (const auto& [offset, batch] : acked_) {
      if (RecordBatchView::ParseHeader(batch)->record_count() + offset <=
          *start) {
        continue;  // deleted by DeleteRecords
      }
      auto found = served.find(offset);
      ASSERT_NE(found, served.end())
          << when << ": acknowledged batch at offset " << offset << " lost";
      EXPECT_TRUE(SameBatchButForLeaderFields(found->second, batch))
          << when << ": batch at " << offset << " differs";
    }
  }

  std::map<int64_t, std::string> acked_;
};

TEST_F(DiskFullTest, EveryWriteSiteFailsCleanlyAndNothingAckedIsLost) {
  // How many calls of each kind the scenario makes on a disk with room.
  std::map<test::FsOp, int64_t> calls;
  {
    fs().ResetCounts();
    auto engine = Engine();
    Scenario(*engine);
    ExpectAckedServed(*engine, "with room");
    for (test::FsOp op : kSpaceOps) {
      calls[op] = fs().Count(op);
      std::cout << test::FsOpName(op) << ": " << calls[op] << " calls\n";
    }
    engine.reset();
    ASSERT_OK(fs::RemoveTree(fs(), data_dir()));
    ASSERT_OK(fs::RemoveTree(fs(), ExtraDir("fast")));
    acked_.clear();
  }
  // Every site costs a whole scenario: by default the first three calls of
  // each kind, the last, and every sixth between (KAAS_EXHAUSTIVE=1: all).
  const bool exhaustive = std::getenv("KAAS_EXHAUSTIVE") != nullptr;
  int walks = 0;
  for (test::FsOp op : kSpaceOps) {
    for (int64_t skip = 0; skip < calls[op]; ++skip) {
      if (!exhaustive && skip >= 3 && skip % 6 != 0 && skip + 1 != calls[op]) {
        continue;
      }
      const std::string when =
          absl::StrCat("ENOSPC from ", test::FsOpName(op), " #", skip, " on");
      SCOPED_TRACE(when);
      ++walks;
      {
        auto engine = Engine();
        test::Fault full(op, ENOSPC);
        full.skip = static_cast<int>(skip);
        full.count = test::Fault::kForever;
        fs().InjectFault(full);
        const int64_t epoch = Scenario(*engine);
        // Space returns: the partition takes appends again, at most after
        // the broker hands it over once more.
        fs().ClearFaults();
        // A stalled partition's probe (every 10 ms here) rewrites and syncs
        // what was not known durable, then clears the stall.
        while (true) {
          absl::StatusOr<PartitionStats> stats = engine->PartitionStatsOf(kTp);
          if (!stats.ok() || !stats->stalled) break;
          std::this_thread::yield();
        }
        absl::StatusOr<AppendResult> after =
            engine->AppendAndWait(kTp, epoch, Acks::kAll, Batch());
        if (!after.ok()) {
          ASSERT_OK(engine->TakeOver(kTp, epoch + 1).status()) << when;
          after = engine->AppendAndWait(kTp, epoch + 1, Acks::kAll, Batch());
        }
        ASSERT_OK(after.status()) << when << " (space back)";
        acked_[after->base_offset] = Batch();
        ExpectAckedServed(*engine, "before the restart");
        if (HasFatalFailure()) return;
      }
      // A restarted engine recovers what was left (whole metadata files
      // or none) and serves every acknowledged batch.
      {
        auto engine = Engine();
        ASSERT_OK(engine->TakeOver(kTp, 10).status()) << when;
        ExpectAckedServed(*engine, "after the restart");
        if (HasFatalFailure()) return;
      }
      ASSERT_OK(fs::RemoveTree(fs(), data_dir()));
      ASSERT_OK(fs::RemoveTree(fs(), ExtraDir("fast")));
      acked_.clear();
    }
  }
  std::cout << "disk full at " << walks << " write sites\n";
  EXPECT_GT(walks, exhaustive ? 250 : 50);
}

}  // namespace
}  // namespace kaas
