// Tests of the default implementations in fs/file_system.cc.

#include "fs/file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::fs {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// A read-only file of fixed bytes: only ReadAt, so SendTo is the default.
class BytesFile final : public ReadableFile {
 public:
  explicit BytesFile(std::string bytes) : bytes_(std::move(bytes)) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (offset >= bytes_.size()) return 0;
    return bytes_.copy(dst, n, offset);
  }
  absl::StatusOr<uint64_t> Size() const override { return bytes_.size(); }
  const std::string& path() const override { return path_; }

 private:
  const std::string bytes_;
  const std::string path_ = "bytes";
};

TEST(ReadableFileSendTo, DefaultCopiesThroughReadAtUpToEndOfFile) {
  const BytesFile file("0123456789");
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_THAT(file.SendTo(2, 100, pipe_fds[1]), IsOkAndHolds(8));
  EXPECT_EQ(ReadUpTo(pipe_fds[0], 8), "23456789");
  EXPECT_THAT(file.SendTo(10, 1, pipe_fds[1]), IsOkAndHolds(0));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(ReadableFileSendTo, DefaultStopsWhereANonBlockingPipeIsFull) {
  std::string content(300 * 1024, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = 'a' + i % 19;
  const BytesFile file(content);
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_NONBLOCK), 0);
  ASSERT_OK_AND_ASSIGN(size_t first,
                       file.SendTo(0, content.size(), pipe_fds[1]));
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, content.size());
  EXPECT_EQ(ReadUpTo(pipe_fds[0], first), content.substr(0, first));
  ASSERT_OK_AND_ASSIGN(size_t second,
                       file.SendTo(first, content.size(), pipe_fds[1]));
  EXPECT_EQ(ReadUpTo(pipe_fds[0], second), content.substr(first, second));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

// Records WriteAt calls; fails the call number `fail_call` (1-based) if set.
class RecordingFile final : public WritableFile {
 public:
  std::vector<std::pair<uint64_t, std::string>> writes;
  int fail_call = 0;

  absl::Status WriteAt(uint64_t offset, absl::string_view data) override {
    writes.emplace_back(offset, std::string(data));
    if (static_cast<int>(writes.size()) == fail_call) {
      return absl::ResourceExhaustedError("disk full");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> ReadAt(uint64_t, size_t, char*) const override {
    return absl::UnimplementedError("ReadAt");
  }
  absl::StatusOr<uint64_t> Size() const override {
    return absl::UnimplementedError("Size");
  }
  const std::string& path() const override { return path_; }
  absl::Status Append(absl::string_view) override {
    return absl::UnimplementedError("Append");
  }
  absl::Status Truncate(uint64_t) override {
    return absl::UnimplementedError("Truncate");
  }
  absl::Status DataSync() override {
    return absl::UnimplementedError("DataSync");
  }
  absl::Status Sync() override { return absl::UnimplementedError("Sync"); }
  absl::Status TryLock() override { return absl::UnimplementedError("lock"); }
  void Unlock() override {}
  absl::Status Close() override { return absl::UnimplementedError("Close"); }

 private:
  const std::string path_ = "recording";
};

TEST(WritableFileWriteAtV, WritesEachPartAtTheAdvancingOffset) {
  RecordingFile file;
  const std::vector<absl::string_view> parts = {"ab", "", "cde", "f"};
  ASSERT_OK(file.WriteAtV(10, parts));
  EXPECT_THAT(file.writes,
              ElementsAre(Pair(10, "ab"), Pair(12, "cde"), Pair(15, "f")));
}

TEST(WritableFileWriteAtV, StopsAtTheFirstFailedPart) {
  RecordingFile file;
  file.fail_call = 2;
  const std::vector<absl::string_view> parts = {"ab", "cd", "ef"};
  EXPECT_THAT(file.WriteAtV(0, parts),
              StatusIs(absl::StatusCode::kResourceExhausted, "disk full"));
  EXPECT_THAT(file.writes, ElementsAre(Pair(0, "ab"), Pair(2, "cd")));
}

TEST(WritableFileWriteAtV, NoPartsWritesNothing) {
  RecordingFile file;
  ASSERT_OK(file.WriteAtV(0, {}));
  EXPECT_TRUE(file.writes.empty());
}

// A FileSystem whose Stat returns a preset result.
class StatOnlyFileSystem final : public FileSystem {
 public:
  explicit StatOnlyFileSystem(absl::StatusOr<FileInfo> stat_result)
      : stat_result_(std::move(stat_result)) {}

  absl::StatusOr<FileInfo> Stat(const std::string&) override {
    return stat_result_;
  }

  absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      const std::string&) override {
    return absl::UnimplementedError("OpenForRead");
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string&, OpenMode) override {
    return absl::UnimplementedError("OpenForWrite");
  }
  absl::Status SyncDir(const std::string&) override {
    return absl::UnimplementedError("SyncDir");
  }
  absl::Status Rename(const std::string&, const std::string&) override {
    return absl::UnimplementedError("Rename");
  }
  absl::Status Unlink(const std::string&) override {
    return absl::UnimplementedError("Unlink");
  }
  absl::Status RemoveDir(const std::string&) override {
    return absl::UnimplementedError("RemoveDir");
  }
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string&) override {
    return absl::UnimplementedError("ListDir");
  }
  absl::Status CreateDirs(const std::string&) override {
    return absl::UnimplementedError("CreateDirs");
  }
  absl::StatusOr<VolumeSpace> GetVolumeSpace(const std::string&) override {
    return absl::UnimplementedError("GetVolumeSpace");
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string&) override {
    return absl::UnimplementedError("LockFile");
  }

 private:
  const absl::StatusOr<FileInfo> stat_result_;
};

TEST(FileSystemExists, TrueWhenStatSucceeds) {
  StatOnlyFileSystem fs{FileInfo{}};
  EXPECT_THAT(fs.Exists("x"), IsOkAndHolds(true));
}

TEST(FileSystemExists, FalseWhenStatSaysNotFound) {
  StatOnlyFileSystem fs{absl::NotFoundError("stat \"x\": missing")};
  EXPECT_THAT(fs.Exists("x"), IsOkAndHolds(false));
}

TEST(FileSystemExists, ReturnsOtherStatErrors) {
  StatOnlyFileSystem fs{absl::PermissionDeniedError("stat \"x\": denied")};
  EXPECT_THAT(fs.Exists("x"), StatusIs(absl::StatusCode::kPermissionDenied,
                                       HasSubstr("denied")));
}

}  // namespace
}  // namespace kaas::fs
