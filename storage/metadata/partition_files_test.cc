#include "storage/metadata/partition_files.h"

#include <cerrno>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/metadata/metadata_file.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::metadata {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

class PartitionFilesTest : public ::testing::Test {
 protected:
  fs::FileSystem& fs() { return *fs::PosixFileSystem::Default(); }
  const std::string& dir() { return dir_.path(); }

  fs::ScopedTempDir dir_;
};

PartitionManifest Manifest(int64_t epoch, int64_t log_start) {
  PartitionManifest manifest;
  manifest.set_leader_epoch(epoch);
  manifest.set_log_start_offset(log_start);
  manifest.set_log_end_offset(log_start);
  return manifest;
}

TEST_F(PartitionFilesTest, MissingManifestIsNotFound) {
  EXPECT_THAT(ReadManifest(fs(), dir()).status(),
              StatusIs(absl::StatusCode::kNotFound, ::testing::_));
}

TEST_F(PartitionFilesTest, ManifestIsCreatedThenAdvanced) {
  ASSERT_OK_AND_ASSIGN(ManifestWrite first, WriteManifestUnlessSuperseded(
                                                fs(), dir(), Manifest(3, 0)));
  EXPECT_FALSE(first.superseded);
  ASSERT_OK_AND_ASSIGN(ManifestWrite second, WriteManifestUnlessSuperseded(
                                                 fs(), dir(), Manifest(3, 10)));
  EXPECT_FALSE(second.superseded);
  ASSERT_OK_AND_ASSIGN(PartitionManifest read, ReadManifest(fs(), dir()));
  EXPECT_EQ(read.leader_epoch(), 3);
  EXPECT_EQ(read.log_start_offset(), 10);
}

TEST_F(PartitionFilesTest, ManifestEpochIsNeverLowered) {
  ASSERT_OK(
      WriteManifestUnlessSuperseded(fs(), dir(), Manifest(9, 5)).status());
  ASSERT_OK_AND_ASSIGN(ManifestWrite write, WriteManifestUnlessSuperseded(
                                                fs(), dir(), Manifest(3, 50)));
  EXPECT_TRUE(write.superseded);
  EXPECT_EQ(write.on_disk.leader_epoch(), 9);
  ASSERT_OK_AND_ASSIGN(PartitionManifest read, ReadManifest(fs(), dir()));
  EXPECT_EQ(read.leader_epoch(), 9);
  EXPECT_EQ(read.log_start_offset(), 5);
}

TEST_F(PartitionFilesTest, IdenticalManifestIsNotRewritten) {
  ASSERT_OK(
      WriteManifestUnlessSuperseded(fs(), dir(), Manifest(2, 5)).status());
  ASSERT_OK_AND_ASSIGN(fs::FileInfo before,
                       fs().Stat(fs::JoinPath(dir(), kManifestFileName)));
  // Make the file recognisable: a rewrite would replace the inode's mtime.
  ASSERT_OK(
      WriteManifestUnlessSuperseded(fs(), dir(), Manifest(2, 5)).status());
  ASSERT_OK_AND_ASSIGN(fs::FileInfo after,
                       fs().Stat(fs::JoinPath(dir(), kManifestFileName)));
  EXPECT_EQ(before.mtime, after.mtime);
}

TEST_F(PartitionFilesTest, CorruptManifestIsReportedAndReplaced) {
  ASSERT_OK(fs::WriteStringToFile(fs(), fs::JoinPath(dir(), kManifestFileName),
                                  "garbage"));
  EXPECT_THAT(ReadManifest(fs(), dir()).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("manifest")));
  ASSERT_OK(
      WriteManifestUnlessSuperseded(fs(), dir(), Manifest(1, 0)).status());
  ASSERT_OK_AND_ASSIGN(PartitionManifest read, ReadManifest(fs(), dir()));
  EXPECT_EQ(read.leader_epoch(), 1);
}

// Only a missing or corrupt manifest may be replaced without the superseded
// check: one that could not be read may hold a higher epoch.
// A manifest is trusted for what it says only if it could have been written
// by the engine: a checksum alone proves nothing about a hand-made file.
TEST_F(PartitionFilesTest, AManifestSayingImpossibleThingsIsCorrupt) {
  std::vector<std::pair<std::string, PartitionManifest>> cases;
  PartitionManifest descending = Manifest(5, 0);
  for (auto [epoch, start] : {std::pair{3, 0}, std::pair{2, 10}}) {
    EpochStart* entry = descending.add_epochs();
    entry->set_epoch(epoch);
    entry->set_start_offset(start);
  }
  cases.emplace_back("not ascending", descending);
  cases.emplace_back("not a Kafka leader epoch", Manifest(int64_t{1} << 31, 0));
  cases.emplace_back("negative offsets", Manifest(1, -5));
  PartitionManifest start_past_end = Manifest(1, 1000);
  start_past_end.set_log_end_offset(40);
  cases.emplace_back("log start 1000 is past the log end 40", start_past_end);
  PartitionManifest above = Manifest(1, 0);
  EpochStart* entry = above.add_epochs();
  entry->set_epoch(4);
  cases.emplace_back("above the leader epoch", above);
  PartitionManifest cut_past_end = Manifest(1, 0);
  cut_past_end.set_log_end_offset(40);
  cut_past_end.set_truncate_to(41);
  cases.emplace_back("a truncation to 41 outside the log [0, 40]",
                     cut_past_end);
  PartitionManifest full_not_empty = Manifest(1, 0);
  full_not_empty.set_log_end_offset(40);
  full_not_empty.set_truncate_fully(true);
  cases.emplace_back("a full truncation whose log start 0 is not its log end",
                     full_not_empty);
  for (const auto& [why, manifest] : cases) {
    SCOPED_TRACE(why);
    ASSERT_OK(WriteMetadataFile(fs(), fs::JoinPath(dir(), kManifestFileName),
                                MetadataKind::kManifest, kManifestVersion,
                                manifest));
    EXPECT_THAT(ReadManifest(fs(), dir()).status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(why)));
  }
}

TEST_F(PartitionFilesTest, ACheckpointOutsideAnyLogIsCorrupt) {
  RecoveryCheckpoint checkpoint;
  checkpoint.set_segment_base_offset(10);
  checkpoint.set_next_offset(5);  // below its segment's base
  ASSERT_OK(WriteCheckpoint(fs(), dir(), checkpoint));
  EXPECT_THAT(
      ReadCheckpoint(fs(), dir()).status(),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not a place in a log")));
}

TEST_F(PartitionFilesTest, APartitionDirHasOneLockHolder) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::FileLock> lock,
                       LockPartitionDir(fs(), dir()));
  EXPECT_THAT(LockPartitionDir(fs(), dir()).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  lock.reset();
  EXPECT_OK(LockPartitionDir(fs(), dir()).status());
}

TEST_F(PartitionFilesTest, UnreadableManifestIsNeverOverwritten) {
  ASSERT_OK(
      WriteManifestUnlessSuperseded(fs(), dir(), Manifest(9, 5)).status());
  test::FaultInjectingFileSystem faulty(&fs(), /*seed=*/1);
  for (test::FsOp op : {test::FsOp::kOpenForRead, test::FsOp::kRead}) {
    SCOPED_TRACE(test::FsOpName(op));
    for (int error : {EIO, EMFILE, EACCES}) {
      test::Fault fault(op, error);
      fault.path = test::PathPattern::Substring(kManifestFileName);
      faulty.InjectFault(fault);
      EXPECT_FALSE(
          WriteManifestUnlessSuperseded(faulty, dir(), Manifest(3, 50)).ok());
      faulty.ClearFaults();
    }
  }
  ASSERT_OK_AND_ASSIGN(PartitionManifest read, ReadManifest(fs(), dir()));
  EXPECT_EQ(read.leader_epoch(), 9);
  EXPECT_EQ(read.log_start_offset(), 5);
}

TEST_F(PartitionFilesTest, CheckpointRoundTrips) {
  RecoveryCheckpoint checkpoint;
  checkpoint.set_segment_base_offset(100);
  checkpoint.set_segment_epoch(2);
  checkpoint.set_position(4096);
  checkpoint.set_next_offset(150);
  ASSERT_OK(WriteCheckpoint(fs(), dir(), checkpoint));
  ASSERT_OK_AND_ASSIGN(RecoveryCheckpoint read, ReadCheckpoint(fs(), dir()));
  EXPECT_EQ(read.position(), 4096u);
  EXPECT_EQ(read.next_offset(), 150);
}

TEST_F(PartitionFilesTest, SnapshotNamesParse) {
  EXPECT_EQ(SnapshotFileName(123), "00000000000000000123.snapshot");
  EXPECT_EQ(ParseSnapshotFileName("00000000000000000123.snapshot"), 123);
  EXPECT_EQ(ParseSnapshotFileName("123.snapshot"), std::nullopt);
  EXPECT_EQ(ParseSnapshotFileName("0000000000000000012x.snapshot"),
            std::nullopt);
  EXPECT_EQ(ParseSnapshotFileName("00000000000000000123.snapshot.corrupt"),
            std::nullopt);
}

TEST_F(PartitionFilesTest, SnapshotRoundTripsAndChecksItsOffset) {
  PartitionStateSnapshot snapshot;
  snapshot.set_offset(42);
  snapshot.mutable_producers()->add_producers()->set_producer_id(7);
  ASSERT_OK(WriteStateSnapshot(fs(), dir(), snapshot));
  ASSERT_OK_AND_ASSIGN(PartitionStateSnapshot read,
                       ReadStateSnapshot(fs(), dir(), 42));
  EXPECT_EQ(read.producers().producers(0).producer_id(), 7);
  // A file whose content disagrees with its name is not trusted.
  ASSERT_OK(fs().Rename(fs::JoinPath(dir(), SnapshotFileName(42)),
                        fs::JoinPath(dir(), SnapshotFileName(43))));
  EXPECT_THAT(
      ReadStateSnapshot(fs(), dir(), 43).status(),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("covers offset 42")));
}

}  // namespace
}  // namespace kaas::metadata
