#include "bench/null_file_system.h"

#include <memory>
#include <string>
#include <vector>

#include "bench/bench_engine.h"
#include "bench/workload_batch.h"
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

using ::kaas::test::StatusIs;
using ::testing::ElementsAre;

TEST(NullFileSystem, SegmentLogsDiscardTheirBytes) {
  NullFileSystem fs;
  ASSERT_OK(fs.CreateDirs("/d"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> log,
                       fs::FileOpener::OpenForWrite(
                           fs, "/d/0.log", fs::OpenMode::kCreateExclusive));
  ASSERT_OK(log->Append("hello"));
  ASSERT_OK(log->WriteAt(100, "x"));
  ASSERT_OK(log->DataSync());
  EXPECT_THAT(log->Size(), ::kaas::test::IsOkAndHolds(101u));
  char buffer[5] = {'?', '?', '?', '?', '?'};
  EXPECT_THAT(log->ReadAt(0, 5, buffer), ::kaas::test::IsOkAndHolds(5u));
  EXPECT_EQ(std::string(buffer, 5), std::string(5, '\0'));
  ASSERT_OK_AND_ASSIGN(fs::FileInfo info, fs.Stat("/d/0.log"));
  EXPECT_EQ(info.size, 101u);
}

TEST(NullFileSystem, OtherFilesKeepTheirBytes) {
  NullFileSystem fs;
  ASSERT_OK(fs.CreateDirs("/d"));
  ASSERT_OK(fs::AtomicReplaceFile(fs, "/d/manifest", "contents"));
  EXPECT_THAT(fs::ReadFileToString(fs, "/d/manifest"),
              ::kaas::test::IsOkAndHolds(std::string("contents")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> file,
                       fs::FileOpener::OpenForWrite(fs, "/d/manifest",
                                                    fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+more"));
  ASSERT_OK(file->Truncate(10));
  EXPECT_THAT(fs::ReadFileToString(fs, "/d/manifest"),
              ::kaas::test::IsOkAndHolds(std::string("contents+m")));
}

TEST(NullFileSystem, NamespaceFollowsTheSeamContract) {
  NullFileSystem fs;
  EXPECT_THAT(fs::FileOpener::OpenForWrite(fs, "/missing/f",
                                           fs::OpenMode::kCreateIfMissing)
                  .status(),
              StatusIs(absl::StatusCode::kNotFound, ::testing::_));
  ASSERT_OK(fs.CreateDirs("/a/b/"));
  ASSERT_OK(fs::AtomicReplaceFile(fs, "/a/b/x", "1"));
  ASSERT_OK(fs::AtomicReplaceFile(fs, "/a/b-sibling", "2"));
  EXPECT_THAT(
      fs::FileOpener::OpenForWrite(fs, "/a/b/x", fs::OpenMode::kCreateExclusive)
          .status(),
      StatusIs(absl::StatusCode::kAlreadyExists, ::testing::_));
  EXPECT_THAT(
      fs::FileOpener::OpenForWrite(fs, "/a/b/y", fs::OpenMode::kMustExist)
          .status(),
      StatusIs(absl::StatusCode::kNotFound, ::testing::_));
  EXPECT_THAT(fs.ListDir("/a"),
              ::kaas::test::IsOkAndHolds(ElementsAre("b", "b-sibling")));
  EXPECT_THAT(fs.ListDir("/"), ::kaas::test::IsOkAndHolds(ElementsAre("a")));
  EXPECT_THAT(fs.RemoveDir("/a/b"),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
  ASSERT_OK(fs.Rename("/a/b", "/a/c"));
  EXPECT_THAT(fs::ReadFileToString(fs, "/a/c/x"),
              ::kaas::test::IsOkAndHolds(std::string("1")));
  EXPECT_THAT(fs.Exists("/a/b/x"), ::kaas::test::IsOkAndHolds(false));
  ASSERT_OK(fs.Unlink("/a/c/x"));
  ASSERT_OK(fs.RemoveDir("/a/c"));
  ASSERT_OK(fs::RemoveTree(fs, "/a"));
  EXPECT_THAT(fs.ListDir("/"),
              ::kaas::test::IsOkAndHolds(::testing::IsEmpty()));
  EXPECT_THAT(fs.CreateDirs("/f"), ::kaas::test::IsOk());
  ASSERT_OK(fs::AtomicReplaceFile(fs, "/f/file", ""));
  EXPECT_THAT(fs.CreateDirs("/f/file/sub"),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
}

TEST(NullFileSystem, ClosedHandlesFail) {
  NullFileSystem fs;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> file,
                       fs::FileOpener::OpenForWrite(
                           fs, "/f.log", fs::OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Close());
  EXPECT_THAT(file->Append("x"),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
  EXPECT_THAT(file->DataSync(),
              StatusIs(absl::StatusCode::kFailedPrecondition, ::testing::_));
}

// What the append micro-benchmark relies on.
TEST(NullFileSystem, HostsADiskEngine) {
  NullFileSystem fs;
  DiskEngine::Options options;
  options.data_dir = "/null/engine";
  options.fs = &fs;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(std::move(options)));
  const TopicPartition tp{"bench", 0};
  ASSERT_OK(StartTopic(*engine, tp));
  const std::string batch = BuildWorkloadBatch(kBatch1KiB, 1, 0);
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(
        engine->AppendAndWait(tp, kWriterEpoch, Acks::kAll, batch).status());
  }
  EXPECT_THAT(engine->HighWatermark(tp), ::kaas::test::IsOkAndHolds(800));
  EXPECT_THAT(engine->PartitionSize(tp),
              ::kaas::test::IsOkAndHolds(100u * batch.size()));
  ASSERT_OK(engine->Relinquish(tp));
}

}  // namespace
}  // namespace kaas::bench
