// Tests of fs/fs_util.h. The multi-step helpers run on a test-local
// FileSystem wrapper over PosixFileSystem that records every call and can
// fail the Nth call of a chosen operation.

#include "fs/fs_util.h"

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/file_system_wrapper.h"
#include "fs/file_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::fs {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------------------
// A recording, failure-injecting FileSystem wrapper.

enum class Op {
  kOpenForRead,
  kOpenForWrite,
  kSyncDir,
  kRename,
  kUnlink,
  kRemoveDir,
  kListDir,
  kStat,
  kCreateDirs,
  kGetVolumeSpace,
  kReadAt,
  kSize,
  kWriteAt,
  kWriteAtV,
  kAppend,
  kTruncate,
  kDataSync,
  kSync,
  kClose,
};

class RecordingFileSystem final : public FileSystemWrapper {
 public:
  // One call: the operation and the path it was about (for handle
  // operations, the handle's path; for Rename, the source).
  using Call = std::pair<Op, std::string>;

  explicit RecordingFileSystem(FileSystem& base)
      : FileSystemWrapper(&base), base_(base) {}

  // Makes the `n`th call (1-based, counted from the start) of `op` fail with
  // kInternal "injected failure"; the call does not reach the base.
  void FailNthCall(Op op, int n) {
    absl::MutexLock lock(&mu_);
    fail_op_ = op;
    fail_at_ = n;
  }

  std::vector<Call> calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

  // Paths of the calls of `op`, in call order.
  std::vector<std::string> PathsOf(Op op) const {
    std::vector<std::string> paths;
    for (const Call& call : calls()) {
      if (call.first == op) paths.push_back(call.second);
    }
    return paths;
  }

  // Runs after every successful ReadableFile::Size, with the file's path:
  // lets a test change a file between a reader's Size and ReadAt.
  std::function<void(const std::string&)> after_size;

  // Records a call; returns the injected failure if it is the one to fail.
  absl::Status Record(Op op, const std::string& path) {
    absl::MutexLock lock(&mu_);
    calls_.emplace_back(op, path);
    int count = 0;
    for (const Call& call : calls_) count += call.first == op ? 1 : 0;
    if (op == fail_op_ && count == fail_at_) {
      return absl::InternalError("injected failure");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& path, OpenMode mode) override;

  absl::Status SyncDir(const std::string& dir) override {
    if (absl::Status s = Record(Op::kSyncDir, dir); !s.ok()) return s;
    return base_.SyncDir(dir);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    if (absl::Status s = Record(Op::kRename, from); !s.ok()) return s;
    return base_.Rename(from, to);
  }
  absl::Status Unlink(const std::string& path) override {
    if (absl::Status s = Record(Op::kUnlink, path); !s.ok()) return s;
    return base_.Unlink(path);
  }
  absl::Status RemoveDir(const std::string& dir) override {
    if (absl::Status s = Record(Op::kRemoveDir, dir); !s.ok()) return s;
    return base_.RemoveDir(dir);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override {
    if (absl::Status s = Record(Op::kListDir, dir); !s.ok()) return s;
    return base_.ListDir(dir);
  }
  absl::StatusOr<FileInfo> Stat(const std::string& path) override {
    if (absl::Status s = Record(Op::kStat, path); !s.ok()) return s;
    return base_.Stat(path);
  }
  absl::Status CreateDirs(const std::string& dir) override {
    if (absl::Status s = Record(Op::kCreateDirs, dir); !s.ok()) return s;
    return base_.CreateDirs(dir);
  }
  absl::StatusOr<VolumeSpace> GetVolumeSpace(const std::string& path) override {
    if (absl::Status s = Record(Op::kGetVolumeSpace, path); !s.ok()) return s;
    return base_.GetVolumeSpace(path);
  }

 private:
  FileSystem& base_;
  mutable absl::Mutex mu_;
  std::vector<Call> calls_ ABSL_GUARDED_BY(mu_);
  Op fail_op_ ABSL_GUARDED_BY(mu_) = Op::kOpenForRead;
  int fail_at_ ABSL_GUARDED_BY(mu_) = 0;  // 0: fail nothing.
};

class RecordingReadableFile final : public ReadableFile {
 public:
  RecordingReadableFile(RecordingFileSystem& fs,
                        std::unique_ptr<ReadableFile> base)
      : fs_(fs), base_(std::move(base)) {}

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (absl::Status s = fs_.Record(Op::kReadAt, path()); !s.ok()) return s;
    return base_->ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override {
    if (absl::Status s = fs_.Record(Op::kSize, path()); !s.ok()) return s;
    absl::StatusOr<uint64_t> size = base_->Size();
    if (size.ok() && fs_.after_size) fs_.after_size(path());
    return size;
  }
  const std::string& path() const override { return base_->path(); }

 private:
  RecordingFileSystem& fs_;
  const std::unique_ptr<ReadableFile> base_;
};

class RecordingWritableFile final : public WritableFile {
 public:
  RecordingWritableFile(RecordingFileSystem& fs,
                        std::unique_ptr<WritableFile> base)
      : fs_(fs), base_(std::move(base)) {}

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (absl::Status s = fs_.Record(Op::kReadAt, path()); !s.ok()) return s;
    return base_->ReadAt(offset, n, dst);
  }
  absl::StatusOr<uint64_t> Size() const override {
    if (absl::Status s = fs_.Record(Op::kSize, path()); !s.ok()) return s;
    return base_->Size();
  }
  const std::string& path() const override { return base_->path(); }
  absl::Status WriteAt(uint64_t offset, absl::string_view data) override {
    if (absl::Status s = fs_.Record(Op::kWriteAt, path()); !s.ok()) return s;
    return base_->WriteAt(offset, data);
  }
  absl::Status WriteAtV(uint64_t offset,
                        absl::Span<const absl::string_view> parts) override {
    if (absl::Status s = fs_.Record(Op::kWriteAtV, path()); !s.ok()) return s;
    return base_->WriteAtV(offset, parts);
  }
  absl::Status Append(absl::string_view data) override {
    if (absl::Status s = fs_.Record(Op::kAppend, path()); !s.ok()) return s;
    return base_->Append(data);
  }
  absl::Status Truncate(uint64_t size) override {
    if (absl::Status s = fs_.Record(Op::kTruncate, path()); !s.ok()) return s;
    return base_->Truncate(size);
  }
  absl::Status DataSync() override {
    if (absl::Status s = fs_.Record(Op::kDataSync, path()); !s.ok()) return s;
    return base_->DataSync();
  }
  absl::Status Sync() override {
    if (absl::Status s = fs_.Record(Op::kSync, path()); !s.ok()) return s;
    return base_->Sync();
  }
  absl::Status TryLock() override { return base_->TryLock(); }
  void Unlock() override { base_->Unlock(); }
  absl::Status Close() override {
    if (absl::Status s = fs_.Record(Op::kClose, path()); !s.ok()) return s;
    return base_->Close();
  }

 private:
  RecordingFileSystem& fs_;
  const std::unique_ptr<WritableFile> base_;
};

absl::StatusOr<std::unique_ptr<ReadableFile>> RecordingFileSystem::OpenForRead(
    const std::string& path) {
  if (absl::Status s = Record(Op::kOpenForRead, path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<ReadableFile>> file =
      FileOpener::OpenForRead(base_, path);
  if (!file.ok()) return file.status();
  return std::make_unique<RecordingReadableFile>(*this, std::move(*file));
}

absl::StatusOr<std::unique_ptr<WritableFile>> RecordingFileSystem::OpenForWrite(
    const std::string& path, OpenMode mode) {
  if (absl::Status s = Record(Op::kOpenForWrite, path); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      FileOpener::OpenForWrite(base_, path, mode);
  if (!file.ok()) return file.status();
  return std::make_unique<RecordingWritableFile>(*this, std::move(*file));
}

// ---------------------------------------------------------------------------
// Fixture.

class FsUtilTest : public ::testing::Test {
 protected:
  std::string Path(absl::string_view name) const {
    return JoinPath(dir_.path(), name);
  }

  void MakeFile(const std::string& path, absl::string_view contents) {
    ASSERT_OK(WriteStringToFile(posix_, path, contents));
  }

  std::string Contents(const std::string& path) {
    absl::StatusOr<std::string> contents = ReadFileToString(posix_, path);
    EXPECT_OK(contents);
    return contents.ok() ? *contents : "";
  }

  // Every entry below `dir` by relative path: file content, or "<dir>".
  std::map<std::string, std::string> Tree(const std::string& dir) {
    std::map<std::string, std::string> tree;
    AddTree(dir, "", tree);
    return tree;
  }

  ScopedTempDir dir_;
  PosixFileSystem posix_;
  RecordingFileSystem fs_{posix_};

 private:
  void AddTree(const std::string& dir, const std::string& prefix,
               std::map<std::string, std::string>& tree) {
    absl::StatusOr<std::vector<std::string>> names = posix_.ListDir(dir);
    ASSERT_OK(names);
    for (const std::string& name : *names) {
      const std::string path = JoinPath(dir, name);
      const std::string relative = JoinPath(prefix, name);
      absl::StatusOr<FileInfo> info = posix_.Stat(path);
      ASSERT_OK(info);
      if (info->is_directory) {
        tree[relative] = "<dir>";
        AddTree(path, relative, tree);
      } else {
        tree[relative] = Contents(path);
      }
    }
  }
};

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 random(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  return bytes;
}

// ---------------------------------------------------------------------------
// Paths.

TEST(JoinPath, PutsExactlyOneSlashBetweenParts) {
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a//", "//b"), "a/b");
  EXPECT_EQ(JoinPath("/", "b"), "/b");
  EXPECT_EQ(JoinPath("/a", "b/"), "/a/b/");
  EXPECT_EQ(JoinPath("a", "b", "c.log"), "a/b/c.log");
  EXPECT_EQ(JoinPath(std::string("a"), absl::string_view("b")), "a/b");
}

TEST(JoinPath, SkipsEmptyParts) {
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("a", ""), "a");
  EXPECT_EQ(JoinPath("a", "", "c"), "a/c");
  EXPECT_EQ(JoinPath("", ""), "");
}

TEST(JoinPath, KeepsEarlierPartsBeforeAnAbsolutePart) {
  EXPECT_EQ(JoinPath("a", "/b"), "a/b");
}

TEST(Dirname, FollowsPosixDirname) {
  EXPECT_EQ(Dirname("a/b"), "a");
  EXPECT_EQ(Dirname("/a/b/c.log"), "/a/b");
  EXPECT_EQ(Dirname("/a"), "/");
  EXPECT_EQ(Dirname("a"), ".");
  EXPECT_EQ(Dirname("a/b/"), "a");
  EXPECT_EQ(Dirname("a//b"), "a");
  EXPECT_EQ(Dirname("//a"), "/");
  EXPECT_EQ(Dirname("/"), "/");
  EXPECT_EQ(Dirname("///"), "/");
  EXPECT_EQ(Dirname(""), ".");
}

TEST(Basename, FollowsPosixBasename) {
  EXPECT_EQ(Basename("a/b"), "b");
  EXPECT_EQ(Basename("/a/b/c.log"), "c.log");
  EXPECT_EQ(Basename("a/b/"), "b");
  EXPECT_EQ(Basename("b"), "b");
  EXPECT_EQ(Basename("/"), "/");
  EXPECT_EQ(Basename("//"), "/");
  EXPECT_EQ(Basename(""), ".");
}

// ---------------------------------------------------------------------------
// ReadFileToString.

TEST_F(FsUtilTest, ReadFileToStringReadsTheWholeFile) {
  const std::string big = RandomBytes(3 * 1024 * 1024 + 17, 1);
  MakeFile(Path("big"), big);
  EXPECT_THAT(ReadFileToString(fs_, Path("big")), IsOkAndHolds(big));
  MakeFile(Path("empty"), "");
  EXPECT_THAT(ReadFileToString(fs_, Path("empty")), IsOkAndHolds(""));
}

TEST_F(FsUtilTest, ReadFileToStringOfAMissingFileIsNotFound) {
  EXPECT_THAT(ReadFileToString(fs_, Path("missing")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
}

TEST_F(FsUtilTest, ReadFileToStringReturnsTheStatedSizeWhenTheFileGrows) {
  MakeFile(Path("f"), "0123456789");
  fs_.after_size = [this](const std::string& path) {
    ASSERT_OK(WriteStringToFile(posix_, path, "0123456789 and more"));
  };
  EXPECT_THAT(ReadFileToString(fs_, Path("f")), IsOkAndHolds("0123456789"));
}

// A damaged data dir can hold a sparse file that claims terabytes: it is
// refused by its size, before anything is read into memory.
TEST_F(FsUtilTest, ReadFileToStringRefusesAFileLargerThanItsLimit) {
  MakeFile(Path("f"), "0123456789");
  EXPECT_THAT(ReadFileToString(fs_, Path("f"), 9),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("10 bytes, more than the 9 it may have")));
  EXPECT_THAT(fs_.PathsOf(Op::kReadAt), IsEmpty());
  EXPECT_THAT(ReadFileToString(fs_, Path("f"), 10), IsOkAndHolds("0123456789"));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> sparse,
      FileOpener::OpenForWrite(posix_, Path("sparse"), OpenMode::kTruncate));
  ASSERT_OK(sparse->Truncate(uint64_t{1} << 40));
  EXPECT_THAT(ReadFileToString(fs_, Path("sparse")),
              StatusIs(absl::StatusCode::kOutOfRange, ::testing::_));
}

TEST_F(FsUtilTest, ReadFileToStringReturnsWhatIsLeftWhenTheFileShrinks) {
  MakeFile(Path("f"), "0123456789");
  fs_.after_size = [this](const std::string& path) {
    ASSERT_OK(TruncateFile(posix_, path, 4));
  };
  EXPECT_THAT(ReadFileToString(fs_, Path("f")), IsOkAndHolds("0123"));
}

// ---------------------------------------------------------------------------
// AtomicReplaceFile.

TEST_F(FsUtilTest, AtomicReplaceFileCreatesAMissingFile) {
  ASSERT_OK(AtomicReplaceFile(fs_, Path("m.json"), "{}"));
  EXPECT_EQ(Contents(Path("m.json")), "{}");
  EXPECT_THAT(posix_.ListDir(dir_.path()), IsOkAndHolds(ElementsAre("m.json")));
}

TEST_F(FsUtilTest, AtomicReplaceFileReplacesTheContent) {
  MakeFile(Path("m.json"), "old content, longer than the new one");
  ASSERT_OK(AtomicReplaceFile(fs_, Path("m.json"), "new"));
  EXPECT_EQ(Contents(Path("m.json")), "new");
  EXPECT_THAT(posix_.ListDir(dir_.path()), IsOkAndHolds(ElementsAre("m.json")));
}

TEST_F(FsUtilTest, AtomicReplaceFileSyncsTheTempThenRenamesThenSyncsTheDir) {
  const std::string path = Path("m.json");
  ASSERT_OK(AtomicReplaceFile(fs_, path, "new"));
  const std::vector<RecordingFileSystem::Call> calls = fs_.calls();
  ASSERT_EQ(calls.size(), 6u);
  const std::string temp = calls[0].second;
  EXPECT_THAT(temp, StartsWith(path + "."));
  EXPECT_TRUE(IsAtomicTempFileName(Basename(temp))) << temp;
  EXPECT_THAT(
      calls,
      ElementsAre(Pair(Op::kOpenForWrite, temp), Pair(Op::kWriteAt, temp),
                  Pair(Op::kSync, temp), Pair(Op::kClose, temp),
                  Pair(Op::kRename, temp), Pair(Op::kSyncDir, dir_.path())));
}

TEST_F(FsUtilTest, AtomicReplaceFileUsesAFreshTempNameEachTime) {
  ASSERT_OK(AtomicReplaceFile(fs_, Path("m.json"), "1"));
  ASSERT_OK(AtomicReplaceFile(fs_, Path("m.json"), "2"));
  const std::vector<std::string> temps = fs_.PathsOf(Op::kOpenForWrite);
  ASSERT_EQ(temps.size(), 2u);
  EXPECT_NE(temps[0], temps[1]);
}

TEST_F(FsUtilTest, AtomicReplaceFileFailureBeforeRenameKeepsTheOldFile) {
  const struct {
    Op op;
    const char* step;
  } kSteps[] = {
      {Op::kOpenForWrite, "create temp file"},
      {Op::kWriteAt, "write temp file"},
      {Op::kSync, "sync temp file"},
      {Op::kClose, "close temp file"},
      {Op::kRename, "rename temp file over it"},
  };
  const std::string path = Path("m.json");
  for (const auto& step : kSteps) {
    SCOPED_TRACE(step.step);
    MakeFile(path, "old");
    RecordingFileSystem fs(posix_);
    fs.FailNthCall(step.op, 1);
    EXPECT_THAT(AtomicReplaceFile(fs, path, "new"),
                StatusIs(absl::StatusCode::kInternal,
                         absl::StrCat("atomic replace of \"", path, "\": ",
                                      step.step, ": injected failure")));
    EXPECT_EQ(Contents(path), "old");
    EXPECT_THAT(posix_.ListDir(dir_.path()),
                IsOkAndHolds(ElementsAre("m.json")));
  }
}

TEST_F(FsUtilTest, AtomicReplaceFileReportsAFailedDirectorySync) {
  const std::string path = Path("m.json");
  MakeFile(path, "old");
  fs_.FailNthCall(Op::kSyncDir, 1);
  EXPECT_THAT(AtomicReplaceFile(fs_, path, "new"),
              StatusIs(absl::StatusCode::kInternal,
                       absl::StrCat("atomic replace of \"", path,
                                    "\": sync directory: injected failure")));
  // The rename happened; only its durability is unknown.
  EXPECT_EQ(Contents(path), "new");
  EXPECT_THAT(posix_.ListDir(dir_.path()), IsOkAndHolds(ElementsAre("m.json")));
}

TEST_F(FsUtilTest, AtomicReplaceFileInAMissingDirectoryFails) {
  EXPECT_THAT(
      AtomicReplaceFile(fs_, Path("missing/m.json"), "new"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("create temp file")));
}

TEST_F(FsUtilTest, ConcurrentAtomicReplacesOfOneFileNeverMix) {
  const std::string path = Path("m.json");
  constexpr int kThreads = 4;
  constexpr int kReplacesPerThread = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string contents(1000 + t, static_cast<char>('a' + t));
      for (int i = 0; i < kReplacesPerThread; ++i) {
        EXPECT_OK(AtomicReplaceFile(posix_, path, contents));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string final_contents = Contents(path);
  ASSERT_GE(final_contents.size(), 1000u);
  const int writer = static_cast<int>(final_contents.size()) - 1000;
  ASSERT_LT(writer, kThreads);
  EXPECT_EQ(final_contents,
            std::string(1000 + writer, static_cast<char>('a' + writer)));
  EXPECT_THAT(posix_.ListDir(dir_.path()), IsOkAndHolds(ElementsAre("m.json")));
}

TEST(IsAtomicTempFileName, RecognisesTheTempNameShape) {
  EXPECT_TRUE(IsAtomicTempFileName("m.json.0123456789abcdef.tmp"));
  EXPECT_TRUE(IsAtomicTempFileName("x.0000000000000000.tmp"));
  EXPECT_TRUE(IsAtomicTempFileName("a.b.ffffffffffffffff.tmp"));
}

TEST(IsAtomicTempFileName, RejectsOtherNames) {
  EXPECT_FALSE(IsAtomicTempFileName(""));
  EXPECT_FALSE(IsAtomicTempFileName("m.json"));
  EXPECT_FALSE(IsAtomicTempFileName("m.json.tmp"));
  EXPECT_FALSE(IsAtomicTempFileName(".0123456789abcdef.tmp"));   // No name.
  EXPECT_FALSE(IsAtomicTempFileName("m0123456789abcdef.tmp"));   // No dot.
  EXPECT_FALSE(IsAtomicTempFileName("m.0123456789ABCDEF.tmp"));  // Uppercase.
  EXPECT_FALSE(IsAtomicTempFileName("m.0123456789abcde.tmp"));   // 15 digits.
  EXPECT_FALSE(IsAtomicTempFileName("m.0123456789abcdeg.tmp"));  // Not hex.
  EXPECT_FALSE(IsAtomicTempFileName("m.0123456789abcdef.tmpx"));
  EXPECT_FALSE(IsAtomicTempFileName("m.0123456789abcdef.log"));
}

// ---------------------------------------------------------------------------
// CreateDirsDurably.

TEST_F(FsUtilTest, CreateDirsDurablySyncsTheParentOfEveryNewLevel) {
  ASSERT_OK(CreateDirsDurably(fs_, Path("a/b/c")));
  EXPECT_TRUE(posix_.Stat(Path("a/b/c"))->is_directory);
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir),
              ElementsAre(dir_.path(), Path("a"), Path("a/b")));
}

TEST_F(FsUtilTest, CreateDirsDurablySyncsOnlyNewLevels) {
  ASSERT_OK(posix_.CreateDirs(Path("a")));
  ASSERT_OK(CreateDirsDurably(fs_, Path("a/b/c/")));
  EXPECT_TRUE(posix_.Stat(Path("a/b/c"))->is_directory);
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir), ElementsAre(Path("a"), Path("a/b")));
}

TEST_F(FsUtilTest, CreateDirsDurablyOfAnExistingDirSyncsNothing) {
  ASSERT_OK(CreateDirsDurably(fs_, dir_.path()));
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir), IsEmpty());
}

TEST_F(FsUtilTest, CreateDirsDurablyOverAFileFails) {
  MakeFile(Path("file"), "");
  EXPECT_THAT(CreateDirsDurably(fs_, Path("file")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
  EXPECT_THAT(CreateDirsDurably(fs_, Path("file/sub")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir), IsEmpty());
}

TEST_F(FsUtilTest, CreateDirsDurablyReportsAFailedSync) {
  fs_.FailNthCall(Op::kSyncDir, 2);
  EXPECT_THAT(CreateDirsDurably(fs_, Path("a/b")),
              StatusIs(absl::StatusCode::kInternal,
                       absl::StrCat("create directories \"", Path("a/b"),
                                    "\" durably: injected failure")));
}

// ---------------------------------------------------------------------------
// CopyTree.

class CopyTreeTest : public FsUtilTest {
 protected:
  // from/a.log (2.5 MiB), from/empty, from/emptydir/, from/sub/b.txt,
  // from/sub/deeper/c
  void MakeSourceTree() {
    ASSERT_OK(posix_.CreateDirs(Path("from/sub/deeper")));
    ASSERT_OK(posix_.CreateDirs(Path("from/emptydir")));
    MakeFile(Path("from/a.log"), RandomBytes(5 * 512 * 1024, 7));
    MakeFile(Path("from/empty"), "");
    MakeFile(Path("from/sub/b.txt"), "bee");
    MakeFile(Path("from/sub/deeper/c"), RandomBytes(1 << 20, 8));
  }
};

TEST_F(CopyTreeTest, CopiesNestedContentByteExact) {
  MakeSourceTree();
  ASSERT_OK(CopyTree(fs_, Path("from"), Path("to")));
  const std::map<std::string, std::string> copied = Tree(Path("to"));
  EXPECT_EQ(copied.size(), 7u);
  EXPECT_TRUE(copied == Tree(Path("from")));
}

TEST_F(CopyTreeTest, SyncsEveryFileAndEveryDirectory) {
  MakeSourceTree();
  ASSERT_OK(CopyTree(fs_, Path("from"), Path("to")));
  EXPECT_THAT(
      fs_.PathsOf(Op::kDataSync),
      UnorderedElementsAre(Path("to/a.log"), Path("to/empty"),
                           Path("to/sub/b.txt"), Path("to/sub/deeper/c")));
  const std::vector<std::string> synced_dirs = fs_.PathsOf(Op::kSyncDir);
  EXPECT_THAT(synced_dirs, UnorderedElementsAre(
                               Path("to"), Path("to/emptydir"), Path("to/sub"),
                               Path("to/sub/deeper"), dir_.path()));
  // The parent's sync, which makes `to` itself durable, comes last.
  EXPECT_EQ(synced_dirs.back(), dir_.path());
  // Each file is closed after its sync.
  EXPECT_EQ(fs_.PathsOf(Op::kClose).size(), 4u);
}

TEST_F(CopyTreeTest, CopiesInChunks) {
  MakeSourceTree();
  ASSERT_OK(CopyTree(fs_, Path("from"), Path("to")));
  int big_file_writes = 0;
  for (const std::string& path : fs_.PathsOf(Op::kWriteAt)) {
    big_file_writes += path == Path("to/a.log") ? 1 : 0;
  }
  EXPECT_EQ(big_file_writes, 3);  // 1 MiB + 1 MiB + 0.5 MiB.
}

TEST_F(CopyTreeTest, CopiesASingleFile) {
  MakeFile(Path("f"), "content");
  ASSERT_OK(CopyTree(fs_, Path("f"), Path("g")));
  EXPECT_EQ(Contents(Path("g")), "content");
  EXPECT_THAT(fs_.PathsOf(Op::kDataSync), ElementsAre(Path("g")));
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir), ElementsAre(dir_.path()));
}

TEST_F(CopyTreeTest, RefusesAnExistingTarget) {
  MakeSourceTree();
  ASSERT_OK(posix_.CreateDirs(Path("to")));
  EXPECT_THAT(
      CopyTree(fs_, Path("from"), Path("to")),
      StatusIs(absl::StatusCode::kAlreadyExists,
               HasSubstr(absl::StrCat("\"", Path("to"), "\" already exists"))));
  EXPECT_THAT(posix_.ListDir(Path("to")), IsOkAndHolds(IsEmpty()));
}

TEST_F(CopyTreeTest, RejectsSymbolicLinks) {
  MakeSourceTree();
  ASSERT_EQ(
      ::symlink(Path("from/sub/b.txt").c_str(), Path("from/sub/link").c_str()),
      0);
  EXPECT_THAT(CopyTree(fs_, Path("from"), Path("to")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(Path("from/sub/link")),
                             HasSubstr("symbolic link"))));
}

TEST_F(CopyTreeTest, MissingSourceIsNotFound) {
  EXPECT_THAT(CopyTree(fs_, Path("missing"), Path("to")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing")));
}

TEST_F(CopyTreeTest, FailuresNameTheCopy) {
  MakeSourceTree();
  fs_.FailNthCall(Op::kDataSync, 2);
  EXPECT_THAT(CopyTree(fs_, Path("from"), Path("to")),
              StatusIs(absl::StatusCode::kInternal,
                       absl::StrCat("copy \"", Path("from"), "\" to \"",
                                    Path("to"), "\": injected failure")));
}

// ---------------------------------------------------------------------------
// RemoveTree.

TEST_F(FsUtilTest, RemoveTreeRemovesEverythingAndSyncsTheParent) {
  ASSERT_OK(posix_.CreateDirs(Path("d/sub/deeper")));
  ASSERT_OK(posix_.CreateDirs(Path("d/empty")));
  MakeFile(Path("d/a"), "a");
  MakeFile(Path("d/sub/b"), "b");
  MakeFile(Path("d/sub/deeper/c"), "c");
  ASSERT_OK(RemoveTree(fs_, Path("d")));
  EXPECT_THAT(posix_.Exists(Path("d")), IsOkAndHolds(false));
  EXPECT_THAT(fs_.PathsOf(Op::kSyncDir), ElementsAre(dir_.path()));
  EXPECT_THAT(fs_.PathsOf(Op::kUnlink),
              UnorderedElementsAre(Path("d/a"), Path("d/sub/b"),
                                   Path("d/sub/deeper/c")));
}

TEST_F(FsUtilTest, RemoveTreeOfAMissingDirIsOk) {
  EXPECT_OK(RemoveTree(fs_, Path("missing")));
  EXPECT_OK(RemoveTree(fs_, Path("missing/below/missing")));
}

TEST_F(FsUtilTest, RemoveTreeRemovesASingleFile) {
  MakeFile(Path("f"), "");
  ASSERT_OK(RemoveTree(fs_, Path("f")));
  EXPECT_THAT(posix_.Exists(Path("f")), IsOkAndHolds(false));
}

TEST_F(FsUtilTest, RemoveTreeUnlinksSymbolicLinksWithoutFollowingThem) {
  ASSERT_OK(posix_.CreateDirs(Path("outside")));
  MakeFile(Path("outside/keep"), "keep");
  ASSERT_OK(posix_.CreateDirs(Path("d")));
  ASSERT_EQ(::symlink(Path("outside").c_str(), Path("d/dir-link").c_str()), 0);
  ASSERT_EQ(::symlink(Path("missing").c_str(), Path("d/dangling").c_str()), 0);
  ASSERT_OK(RemoveTree(fs_, Path("d")));
  EXPECT_THAT(posix_.Exists(Path("d")), IsOkAndHolds(false));
  EXPECT_EQ(Contents(Path("outside/keep")), "keep");
}

TEST_F(FsUtilTest, RemoveTreeFailuresNameTheTree) {
  ASSERT_OK(posix_.CreateDirs(Path("d/sub")));
  fs_.FailNthCall(Op::kRemoveDir, 1);
  EXPECT_THAT(RemoveTree(fs_, Path("d")),
              StatusIs(absl::StatusCode::kInternal,
                       absl::StrCat("remove tree \"", Path("d"),
                                    "\": injected failure")));
}

}  // namespace
}  // namespace kaas::fs
