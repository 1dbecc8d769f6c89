// Log dirs: placement resolution and crash-safe moves between log dirs.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/static_placement.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/partition_files.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

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
  // The data dir's partition dir and its copy in "fast".
  std::string Source() { return fs::JoinPath(data_dir(), "orders", "0"); }
  std::string Copy() { return fs::JoinPath(ExtraDir("fast"), "orders", "0"); }
  // Leaves what a move interrupted after its switch leaves: the marker in
  // the source, a complete copy in place. REQUIRES: kTp relinquished.
  void InterruptAMoveAfterItsSwitch() {
    ASSERT_OK(fs::ReplaceFileDurably(
        fs(), fs::JoinPath(Source(), kMovingToFileName), "fast"));
    ASSERT_OK(fs::CreateDirsDurably(fs(), fs::Dirname(Copy())));
    ASSERT_OK(fs::CopyTreeDurably(fs(), Source(), Copy()));
    ASSERT_OK(fs().Unlink(fs::JoinPath(Copy(), kMovingToFileName)));
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

// The reopen after a move keeps the broker-managed high watermark (a fresh
// open would start it at the log start, hiding committed records).
TEST_F(MoveTest, AMoveKeepsTheBrokerHighWatermark) {
  DiskEngine::Options options = MakeOptions({"fast"});
  options.default_config.broker_managed_high_watermark = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(options));
  Fill(*engine, 4);  // offsets [0, 8)
  ASSERT_OK(engine->SetHighWatermark(kTp, 6));
  ASSERT_OK(engine->MovePartitionToLogDir(kTp, "fast").status());
  EXPECT_THAT(engine->HighWatermark(kTp), IsOkAndHolds(6));
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
    test::FsOp op;
    const char* path_regex;  // anchored to this step's files only
    int skip;
    bool switched;  // whether the switch rename happened before the fault
  };
  const std::vector<Step> steps = {
      {"writing the marker", test::FsOp::kRename, R"(/\.moving-to$)", 0, false},
      {"copying a file", test::FsOp::kWrite, R"(/\.0\.moving/)", 0, false},
      {"syncing the copy", test::FsOp::kDataSync, R"(/\.0\.moving/)", 1, false},
      {"the switch rename", test::FsOp::kRename, R"(fast/orders/\.0\.moving$)",
       0, false},
      // fast/orders is synced three times before the switch: by the
      // RemoveTree of a stale staging dir and of a stale destination (both
      // sync the parent even when there was nothing to remove) and by
      // CopyTree (the parent of the copy).
      {"syncing after the switch", test::FsOp::kSyncDir, R"(fast/orders$)", 3,
       true},
      {"moving the source aside", test::FsOp::kRename, R"(data/orders/0$)", 0,
       true},
      {"deleting the source", test::FsOp::kUnlink, R"(/\.0\.moved/)", 2, true},
  };
  for (const Step& step : steps) {
    SCOPED_TRACE(step.name);
    std::string written;
    {
      auto engine = NewEngine({"fast"});
      written = Fill(*engine, 6);
      test::Fault fault(step.op, EIO);
      fault.path = test::PathPattern::Regex(step.path_regex);
      fault.skip = step.skip;
      fs().InjectFault(fault);
      absl::StatusOr<std::string> moved =
          engine->MovePartitionToLogDir(kTp, "fast");
      // The fault hit this step, not an earlier or later one.
      EXPECT_THAT(fs().Exists(fs::JoinPath(ExtraDir("fast"), "orders", "0",
                                           "manifest")),
                  IsOkAndHolds(step.switched));
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

// A topic's config and identity are read from the topic dir of the log dir
// holding the partition: they move with it. (Left behind, a keep-forever
// topic fell back to the default retention and the identity gate opened.)
TEST_F(MoveTest, MoveCarriesTheTopicConfigAndIdentity) {
  const std::string id = "11111111-2222-4333-8444-555555555555";
  const std::string source_topic_dir = fs::JoinPath(data_dir(), "orders");
  const std::string target_topic_dir = fs::JoinPath(ExtraDir("fast"), "orders");
  ASSERT_OK(fs::CreateDirsDurably(fs(), source_topic_dir));
  ASSERT_OK(fs::ReplaceFileDurably(
      fs(), fs::JoinPath(source_topic_dir, kTopicConfigFileName),
      R"({"retentionMs": -1})"));
  ASSERT_OK(WriteTopicIdStamp(fs(), source_topic_dir, id));
  auto engine = NewEngine({"fast"});
  engine->SetIdentityResolver(
      std::make_shared<FixedIdentity>(TopicIncarnation::Known(id)));
  std::string written = Fill(*engine, 3);
  ASSERT_OK(engine->MovePartitionToLogDir(kTp, "fast").status());
  ASSERT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("fast"));
  EXPECT_EQ(ReadAll(*engine), written);
  ASSERT_OK_AND_ASSIGN(std::optional<TopicConfigOverrides> config,
                       engine->GetTopicConfig("orders"));
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->retention_ms, -1);
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  EXPECT_EQ(view.config.retention_ms, std::nullopt);  // kept forever
  EXPECT_THAT(ReadTopicIdStamp(fs(), target_topic_dir),
              IsOkAndHolds(std::optional<std::string>(id)));
  // The identity gate still guards the partition at its new place.
  ASSERT_OK(engine->Relinquish(kTp));
  engine->SetIdentityResolver(std::make_shared<FixedIdentity>(
      TopicIncarnation::Known("66666666-7777-4888-9999-aaaaaaaaaaaa")));
  EXPECT_THAT(engine->TakeOver(kTp, 1).status(),
              HasStorageError(StorageErrorCode::kStaleTopicDir));
}

// Files the target's topic dir already has are compared as parsed: the same
// stamp in another hex case agrees, another stamp fails the move before
// anything is copied, and the partition is served from the source again.
TEST_F(MoveTest, AMoveIntoATopicDirOfAnotherIdentityFails) {
  const std::string id = "11111111-2222-4333-8444-555555555555";
  const std::string other_id = "66666666-7777-4888-9999-aaaaaaaaaaaa";
  const std::string target_topic_dir = fs::JoinPath(ExtraDir("fast"), "orders");
  ASSERT_OK(fs::CreateDirsDurably(fs(), fs::JoinPath(data_dir(), "orders")));
  ASSERT_OK(WriteTopicIdStamp(fs(), fs::JoinPath(data_dir(), "orders"), id));
  ASSERT_OK(fs::CreateDirsDurably(fs(), target_topic_dir));
  ASSERT_OK(WriteTopicIdStamp(fs(), target_topic_dir, other_id));
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 3);
  EXPECT_THAT(engine->MovePartitionToLogDir(kTp, "fast").status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr(kTopicIdFileName)));
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("default"));
  EXPECT_EQ(engine->PartitionEpoch(kTp), 1);
  EXPECT_EQ(ReadAll(*engine), written);
  EXPECT_THAT(fs().Exists(fs::JoinPath(target_topic_dir, "0")),
              IsOkAndHolds(false));
  EXPECT_THAT(ReadTopicIdStamp(fs(), target_topic_dir),
              IsOkAndHolds(std::optional<std::string>(other_id)));

  ASSERT_OK(fs::ReplaceFileDurably(
      fs(), fs::JoinPath(target_topic_dir, kTopicIdFileName),
      absl::StrCat(R"({"topicId": ")", absl::AsciiStrToUpper(id), R"("})")));
  EXPECT_OK(engine->MovePartitionToLogDir(kTp, "fast").status());
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("fast"));
}

// Only a copy with a manifest is a move's completed copy: a bare directory
// at the target (say, another engine's creation in flight) never makes the
// source look reclaimable.
TEST_F(MoveTest, ABareTargetDirNeverMakesTheSourceReclaimable) {
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 3);
  ASSERT_OK(engine->Relinquish(kTp));
  ASSERT_OK(fs::ReplaceFileDurably(
      fs(), fs::JoinPath(data_dir(), "orders", "0", kMovingToFileName),
      "fast"));
  ASSERT_OK(fs::CreateDirsDurably(
      fs(), fs::JoinPath(ExtraDir("fast"), "orders", "0")));
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_EQ(ReadAll(*engine), written);
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("default"));
}

// Only lifecycle calls, under the partition's lifecycle lock, finish an
// interrupted move; the others resolve without touching the tree (they
// could race a move's steps, and must not do its I/O).
TEST_F(MoveTest, OnlyLifecycleCallsFinishAnInterruptedMove) {
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 3);
  ASSERT_OK(engine->Relinquish(kTp));
  InterruptAMoveAfterItsSwitch();
  const std::string source = Source();
  const std::string copy = Copy();

  fs().ResetCounts();
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("fast"));
  EXPECT_THAT(engine->PartitionDir(kTp), IsOkAndHolds(copy));
  EXPECT_OK(engine->GetTopicConfig("orders").status());
  EXPECT_OK(engine->EffectiveConfig(kTp).status());
  for (test::FsOp op : {test::FsOp::kRename, test::FsOp::kUnlink,
                        test::FsOp::kRemoveDir, test::FsOp::kSyncDir}) {
    EXPECT_EQ(fs().Count(op), 0) << test::FsOpName(op);
  }
  EXPECT_THAT(fs().Exists(source), IsOkAndHolds(true));

  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_EQ(ReadAll(*engine), written);
  EXPECT_THAT(fs().Exists(source), IsOkAndHolds(false));
}

// An engine sharing the volume that holds the source's lock is in the
// middle of that move: another engine's lifecycle call leaves the source
// alone (and serves the copy), rather than delete under it.
TEST_F(MoveTest, AFinishedMovesSourceLockedByAnotherEngineIsLeftAlone) {
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 3);
  ASSERT_OK(engine->Relinquish(kTp));
  InterruptAMoveAfterItsSwitch();
  const std::string source = Source();
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::FileLock> mover,
                         metadata::LockPartitionDir(fs(), source));
    ASSERT_OK(engine->TakeOver(kTp, 1).status());
    EXPECT_EQ(ReadAll(*engine), written);
    EXPECT_THAT(fs().Exists(source), IsOkAndHolds(true));
    ASSERT_OK(engine->Relinquish(kTp));
  }
  // Once nobody holds it, the next lifecycle call reclaims it.
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_THAT(fs().Exists(source), IsOkAndHolds(false));
}

TEST_F(MoveTest, ThePartitionIsFencedWhileMoving) {
  auto engine = NewEngine({"fast"});
  Fill(*engine, 2);
  fs().BlockSyncs(test::PathPattern::Substring(".0.moving"));
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

// The move holds the partition's lifecycle lock for its whole copy: the
// lifecycle calls that would wait for it fail fast instead.
TEST_F(MoveTest, LifecycleCallsFailFastWhileMoving) {
  auto engine = NewEngine({"fast", "bulk"});
  Fill(*engine, 2);
  fs().BlockSyncs(test::PathPattern::Substring(".0.moving"));
  std::thread mover(
      [&] { EXPECT_OK(engine->MovePartitionToLogDir(kTp, "fast").status()); });
  fs().WaitUntilBlockedSyncs(1);
  const auto migrating = HasStorageError(StorageErrorCode::kMigrating);
  EXPECT_THAT(engine->TakeOver(kTp, 2).status(), migrating);
  EXPECT_THAT(engine->CreatePartition(kTp), migrating);
  EXPECT_THAT(engine->DeletePartition(kTp), migrating);
  EXPECT_THAT(engine->MovePartitionToLogDir(kTp, "bulk").status(), migrating);
  fs().ReleaseSyncs();
  mover.join();
  EXPECT_EQ(engine->PartitionEpoch(kTp), 1);
  EXPECT_THAT(engine->PartitionLogDir(kTp), IsOkAndHolds("fast"));
}

// The move leads the partition again inside its critical section, so a
// Relinquish issued meanwhile takes effect after that and is never undone.
TEST_F(MoveTest, ARelinquishDuringAMoveIsNotUndoneByItsReLead) {
  auto engine = NewEngine({"fast"});
  std::string written = Fill(*engine, 2);
  fs().BlockSyncs(test::PathPattern::Substring(".0.moving"));
  std::thread mover(
      [&] { EXPECT_OK(engine->MovePartitionToLogDir(kTp, "fast").status()); });
  fs().WaitUntilBlockedSyncs(1);
  std::thread relinquisher([&] { EXPECT_OK(engine->Relinquish(kTp)); });
  fs().ReleaseSyncs();
  mover.join();
  relinquisher.join();
  EXPECT_THAT(engine->LedPartitions(), IsEmpty());
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  EXPECT_EQ(ReadAll(*engine), written);
}

// The topic is deleted while one of its partitions moves: the move finishes
// (the data is the operator's to reclaim) but does not lead it again.
TEST_F(MoveTest, AnAbandonDuringAMoveIsNotUndoneByItsReLead) {
  auto engine = NewEngine({"fast"});
  Fill(*engine, 2);
  fs().BlockSyncs(test::PathPattern::Substring(".0.moving"));
  std::thread mover(
      [&] { EXPECT_OK(engine->MovePartitionToLogDir(kTp, "fast").status()); });
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_EQ(engine->AbandonTopic("orders"), 0);  // not led while it moves
  fs().ReleaseSyncs();
  mover.join();
  EXPECT_THAT(engine->LedPartitions(), IsEmpty());
  EXPECT_THAT(engine->HighWatermark(kTp).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
}

}  // namespace
}  // namespace kaas
