// File: tools/read_only_file_system_test.cc

#include "tools/read_only_file_system.h"

#include <memory>
#include <string>
#include <vector>

#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::tools {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ReadOnlyFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(fs::AtomicReplaceFile(posix_, Path("file"), "content"));
  }

  std::string Path(const std::string& name) const {
    return fs::JoinPath(dir_.path(), name);
  }

  fs::FileSystem& posix_ = *fs::PosixFileSystem::Default();
  fs::ScopedTempDir dir_;
  ReadOnlyFileSystem read_only_{&posix_};
};

TEST_F(ReadOnlyFileSystemTest, ForwardsReads) {
  ASSERT_OK_AND_ASSIGN(std::string content,
                       fs::ReadFileToString(read_only_, Path("file")));
  EXPECT_EQ(content, "content");
  EXPECT_THAT(read_only_.ListDir(dir_.path()),
              IsOkAndHolds(ElementsAre("file")));
  ASSERT_OK_AND_ASSIGN(fs::FileInfo info, read_only_.Stat(Path("file")));
  EXPECT_EQ(info.size, 7u);
  EXPECT_THAT(read_only_.Exists(Path("absent")), IsOkAndHolds(false));
  EXPECT_OK(read_only_.GetVolumeSpace(dir_.path()).status());
  EXPECT_EQ(read_only_.refused(), 0);
}

TEST_F(ReadOnlyFileSystemTest, RefusesEveryChangeAndChangesNothing) {
  EXPECT_THAT(fs::FileOpener::OpenForWrite(read_only_, Path("file"),
                                           fs::OpenMode::kMustExist)
                  .status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("refused to open for writing")));
  EXPECT_THAT(fs::FileOpener::OpenForWrite(read_only_, Path("new"),
                                           fs::OpenMode::kTruncate)
                  .status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(fs::FileOpener::LockFile(read_only_, Path("lock")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(read_only_.Rename(Path("file"), Path("moved")),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(read_only_.Unlink(Path("file")),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(read_only_.CreateDirs(Path("sub")),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(read_only_.RemoveDir(dir_.path()),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(read_only_.SyncDir(dir_.path()),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_THAT(fs::AtomicReplaceFile(read_only_, Path("file"), "x"),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
  EXPECT_EQ(read_only_.refused(), 9);

  EXPECT_THAT(posix_.ListDir(dir_.path()), IsOkAndHolds(ElementsAre("file")));
  EXPECT_THAT(fs::ReadFileToString(posix_, Path("file")),
              IsOkAndHolds("content"));
}

}  // namespace
}  // namespace kaas::tools
