// Log dirs: placement resolution and crash-safe moves between log dirs.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fs/fs_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/static_placement.h"
#include "storage/common/storage_error.h"
#include "storage/engine/disk_engine_test_fixture.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::testing::HasStorageError;
using ::kaas::testing::IsOkAndHolds;

const TopicPartition kTp{"orders", 0};

class MoveTest : public DiskEngineTest {
 protected:
  // Writes `batches` batches at epoch 1 and returns the bytes read back.
  std::string Fill(DiskEngine& engine, int batches) {
    EXPECT_OK(engine.TakeOver(kTp, 1).status());
    for (int i = 0; i < batches; ++i) {
      EXPECT_OK(
          engine.AppendAndWait(kTp, 1, Acks::kAll, Batch(2, 300)).status());
    }
    return ReadAll(engine);
  }
  std::string ReadAll(DiskEngine& engine) {
    std::string out;
    int64_t offset = 0;
    while (true) {
      absl::StatusOr<ReadResult> read =
          engine.Read(kTp, offset, 1 << 20, Isolation::kReadUncommitted);
      EXPECT_OK(read.status());
      if (!read.ok() || read->batches == 0) return out;
      out += std::string(read->records);
      offset = read->next_offset;
    }
  }
  // How many roots hold a partition dir with a manifest.
  int CopiesOnDisk() {
    int copies = 0;
    for (const std::string& root : {data_dir(), ExtraDir("fast")}) {
      absl::StatusOr<bool> exists =
          fs().Exists(fs::JoinPath(root, "orders", "0", "manifest"));
      copies += exists.ok() && *exists;
    }
    return copies;
  }
};

TEST_F(MoveTest, PlacementDecidesWhereNewPartitionsGo) {
  auto engine = NewEngine({"fast", "bulk"});
  auto placement = std::make_shared<placement::StaticPlacement>();
  placement->Assign("orders", 0, "fast");
  placement->Assign("orders", 1, "nonexistent");
  engine->SetPlacementResolver(placement);
  ASSERT_OK(engine->TakeOver({"orders", 0}, 1).status());
  ASSERT_OK(engine->TakeOver({"orders", 1}, 1).status());
  EXPECT_THAT(engine->PartitionLogDir({"orders", 0}), IsOkAndHolds("fast"));
  EXPECT_THAT(engine->PartitionLogDir({"orders", 1}), IsOkAndHolds("default"));
  EXPECT_THAT(fs().Exists(fs::JoinPath(ExtraDir("fast"), "orders", "0")),
              IsOkAndHolds(true));
}

TEST_F(MoveTest, DataOnDiskOutranksALatePlacementRecord) {
  auto engine = NewEngine({"bulk"});
  std::string written = Fill(*engine, 3);
  ASSERT_OK(engine->Relinquish(kTp));
  auto placement = std::make_shared<placement::StaticPlacement>();
  placement->Assign("orders", 0, "bulk");
  engine->SetPlacementResolver(placement);
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_EQ(ReadAll(*engine), written);
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("default"));
  EXPECT_THAT(fs().Exists(fs::JoinPath(ExtraDir("bulk"), "orders", "0")),
              IsOkAndHolds(false));  // no empty shell on the assigned dir
}

TEST_F(MoveTest, MoveCopiesSwitchesReclaimsAndLeadsAgain) {
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 20);
  ASSERT_OK(engine->TakeOver(kTp, 4).status());
  ASSERT_OK_AND_ASSIGN(std::string source,
                       engine->MovePartitionToLogDir(kTp, "fast"));
  EXPECT_EQ(source, "default");
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("fast"));
  EXPECT_EQ(CopiesOnDisk(), 1);
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders", "0")),
              IsOkAndHolds(false));
  // Led again at the same epoch, from the new place.
  EXPECT_EQ(engine->PartitionEpoch(kTp), 4);
  EXPECT_EQ(ReadAll(*engine), written);
  ASSERT_OK(engine->AppendAndWait(kTp, 4, Acks::kAll, Batch()).status());
  // Same dir: nothing to do.
  EXPECT_THAT(engine->MovePartitionToLogDir(kTp, "fast"), IsOkAndHolds("fast"));
}

TEST_F(MoveTest, UnknownOrCordonedTargetsAreTypedErrors) {
  DiskEngine::Options options = MakeOptions({"fast", "cold"});
  options.extra_log_dirs[1].cordoned = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(options));
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_THAT(engine->MovePartitionToLogDir(kTp, "nope").status(),
              HasStorageError(StorageErrorCode::kLogDirNotFound));
  EXPECT_THAT(engine->MovePartitionToLogDir(kTp, "cold").status(),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  EXPECT_EQ(engine->PartitionEpoch(kTp), 1);  // untouched
}

// A crash at any step of a move leaves exactly one complete copy in use: the
// step's operation fails (as the power goes), the machine "reboots", and a new
// engine serves the partition with all its data.
TEST_F(MoveTest, ACrashAtAnyStepLeavesExactlyOneCompleteCopyInUse) {
  struct Step {
    const char* name;
    testing::FsOp op;
    const char* path_regex;  // anchored to this step's files only
    int skip;
  };
  const std::vector<Step> steps = {
      {"writing the marker", testing::FsOp::kRename, R"(/\.moving-to$)", 0},
      {"copying a file", testing::FsOp::kWrite, R"(/\.0\.moving/)", 0},
      {"syncing the copy", testing::FsOp::kDataSync, R"(/\.0\.moving/)", 1},
      {"the switch rename", testing::FsOp::kRename,
       R"(fast/orders/\.0\.moving$)", 0},
      {"syncing after the switch", testing::FsOp::kSyncDir, R"(fast/orders$)",
       0},
      {"moving the source aside", testing::FsOp::kRename, R"(data/orders/0$)",
       0},
      {"deleting the source", testing::FsOp::kUnlink, R"(/\.0\.moved/)", 2},
  };
  for (const Step& step : steps) {
    SCOPED_TRACE(step.name);
    std::string written;
    {
      auto engine = NewEngine({"fast"});
      written = Fill(*engine, 6);
      testing::Fault fault(step.op, EIO);
      fault.path = testing::PathPattern::Regex(step.path_regex);
      fault.skip = step.skip;
      fs().InjectFault(fault);
      absl::StatusOr<std::string> moved =
          engine->MovePartitionToLogDir(kTp, "fast");
      fs().Crash();
      fs().ClearFaults();
      EXPECT_FALSE(moved.ok()) << "the fault did not hit the move";
    }
    auto engine = NewEngine({"fast"});
    ASSERT_OK(engine->TakeOver(kTp, 1).status());
    EXPECT_EQ(ReadAll(*engine), written);
    ASSERT_OK(engine->Relinquish(kTp));
    // Whatever was left behind, only one copy is the partition's data; a
    // retried move completes.
    ASSERT_OK(engine->MovePartitionToLogDir(kTp, "fast").status());
    EXPECT_EQ(CopiesOnDisk(), 1);
    ASSERT_OK(engine->TakeOver(kTp, 1).status());
    EXPECT_EQ(ReadAll(*engine), written);
    engine.reset();
    ASSERT_OK(fs::RemoveTree(fs(), data_dir()));
    ASSERT_OK(fs::RemoveTree(fs(), ExtraDir("fast")));
  }
}

TEST_F(MoveTest, ThePartitionIsFencedWhileMoving) {
  auto engine = NewEngine({"fast"});
  Fill(*engine, 2);
  fs().BlockSyncs(testing::PathPattern::Substring(".0.moving"));
  std::thread mover(
      [&] { EXPECT_OK(engine->MovePartitionToLogDir(kTp, "fast").status()); });
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_THAT(engine->Append(kTp, 1, Acks::kAll, Batch()).status(),
              HasStorageError(StorageErrorCode::kMigrating));
  EXPECT_THAT(engine->Read(kTp, 0, 100, Isolation::kReadUncommitted).status(),
              HasStorageError(StorageErrorCode::kMigrating));
  fs().ReleaseSyncs();
  mover.join();
  ASSERT_OK(engine->AppendAndWait(kTp, 1, Acks::kAll, Batch()).status());
}

}  // namespace
}  // namespace kaas
