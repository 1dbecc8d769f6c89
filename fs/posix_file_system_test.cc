// Tests of PosixFileSystem against the real filesystem, in a fresh scratch
// directory per test.

#include "fs/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::fs {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::_;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

class PosixFileSystemTest : public ::testing::Test {
 protected:
  std::string Path(absl::string_view name) const {
    return JoinPath(dir_.path(), name);
  }

  // The whole content of `path`, read through the filesystem under test.
  std::string Contents(const std::string& path) {
    absl::StatusOr<std::string> contents = ReadFileToString(fs_, path);
    EXPECT_OK(contents);
    return contents.ok() ? *contents : "";
  }

  void MakeFile(const std::string& path, absl::string_view contents) {
    ASSERT_OK(WriteStringToFile(fs_, path, contents));
  }

  // Descriptors of this process whose target is `path`.
  static std::vector<int> DescriptorsOf(const std::string& path) {
    char resolved[PATH_MAX];
    EXPECT_NE(::realpath(path.c_str(), resolved), nullptr) << path;
    std::vector<int> fds;
    DIR* proc = ::opendir("/proc/self/fd");
    EXPECT_NE(proc, nullptr);
    if (proc == nullptr) return fds;
    while (const dirent* entry = ::readdir(proc)) {
      const std::string link = absl::StrCat("/proc/self/fd/", entry->d_name);
      char target[PATH_MAX];
      const ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
      if (n <= 0) continue;
      if (absl::string_view(target, n) == resolved) {
        fds.push_back(std::stoi(entry->d_name));
      }
    }
    ::closedir(proc);
    return fds;
  }

  ScopedTempDir dir_;
  PosixFileSystem fs_;
};

// ---------------------------------------------------------------------------
// Reads and writes.

// Direct I/O is granted on a local disk filesystem and then bypasses the
// page cache with the device's alignment rules; elsewhere it is refused and
// the handle stays as it was.
TEST_F(PosixFileSystemTest, TryDirectIoOnlyOnLocalDiskFilesystems) {
  struct statfs info;
  ASSERT_EQ(::statfs(dir_.path().c_str(), &info), 0);
  const bool local_disk = info.f_type == 0xEF53 || info.f_type == 0x58465342 ||
                          info.f_type == 0x9123683E ||
                          info.f_type == 0xF2F52010;
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, Path("direct"), OpenMode::kTruncate));
  ASSERT_EQ(file->TryDirectIo(), local_disk);
  if (local_disk) {
    // A misaligned write is the kernel's EINVAL.
    EXPECT_THAT(file->WriteAt(1, "x"),
                StatusIs(absl::StatusCode::kInvalidArgument, _));
    std::unique_ptr<char, decltype(&std::free)> block(
        static_cast<char*>(
            std::aligned_alloc(kDirectIoAlignment, kDirectIoAlignment)),
        &std::free);
    std::memset(block.get(), 'd', kDirectIoAlignment);
    ASSERT_OK(
        file->WriteAt(0, absl::string_view(block.get(), kDirectIoAlignment)));
    EXPECT_EQ(Contents(Path("direct")), std::string(kDirectIoAlignment, 'd'));
  }
  // tmpfs is never granted (where the machine has one).
  if (::statfs("/dev/shm", &info) == 0 && info.f_type == 0x01021994) {
    ScopedTempDir shm("/dev/shm");
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<WritableFile> in_memory,
        FileOpener::OpenForWrite(fs_, JoinPath(shm.path(), "f"),
                                 OpenMode::kTruncate));
    EXPECT_FALSE(in_memory->TryDirectIo());
    ASSERT_OK(in_memory->WriteAt(1, "unaligned is fine"));
  }
}

TEST_F(PosixFileSystemTest, WriteThenReadRoundTrips) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->WriteAt(0, "hello, world"));
  EXPECT_THAT(file->Size(), IsOkAndHolds(12));
  char buffer[5];
  EXPECT_THAT(file->ReadAt(7, 5, buffer), IsOkAndHolds(5));
  EXPECT_EQ(absl::string_view(buffer, 5), "world");
  ASSERT_OK(file->Close());

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> reader,
                       FileOpener::OpenForRead(fs_, path));
  EXPECT_EQ(reader->path(), path);
  EXPECT_THAT(reader->Size(), IsOkAndHolds(12));
  EXPECT_THAT(reader->ReadAt(0, 5, buffer), IsOkAndHolds(5));
  EXPECT_EQ(absl::string_view(buffer, 5), "hello");
}

TEST_F(PosixFileSystemTest, ReadAtStopsShortOnlyAtEndOfFile) {
  const std::string path = Path("a.log");
  MakeFile(path, "0123456789");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> file,
                       FileOpener::OpenForRead(fs_, path));
  char buffer[16];
  EXPECT_THAT(file->ReadAt(6, 16, buffer), IsOkAndHolds(4));
  EXPECT_EQ(absl::string_view(buffer, 4), "6789");
  EXPECT_THAT(file->ReadAt(10, 16, buffer), IsOkAndHolds(0));
  EXPECT_THAT(file->ReadAt(1000, 16, buffer), IsOkAndHolds(0));
  EXPECT_THAT(file->ReadAt(3, 0, buffer), IsOkAndHolds(0));
}

TEST_F(PosixFileSystemTest, SendToStopsShortOnlyAtEndOfFile) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> writer,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(writer->WriteAt(0, "0123456789"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> reader,
                       FileOpener::OpenForRead(fs_, path));
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  // Both kinds of handle send; the write handle is what an active segment
  // reads through.
  EXPECT_THAT(reader->SendTo(3, 100, pipe_fds[1]), IsOkAndHolds(7));
  EXPECT_EQ(ReadUpTo(pipe_fds[0], 7), "3456789");
  EXPECT_THAT(writer->SendTo(0, 4, pipe_fds[1]), IsOkAndHolds(4));
  EXPECT_EQ(ReadUpTo(pipe_fds[0], 4), "0123");
  EXPECT_THAT(reader->SendTo(10, 5, pipe_fds[1]), IsOkAndHolds(0));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_F(PosixFileSystemTest, SendToANonBlockingFullPipeReturnsWhatWent) {
  const std::string path = Path("a.log");
  std::string content(256 * 1024, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = 'a' + i % 23;
  MakeFile(path, content);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> file,
                       FileOpener::OpenForRead(fs_, path));
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_NONBLOCK), 0);
  ASSERT_OK_AND_ASSIGN(size_t first,
                       file->SendTo(0, content.size(), pipe_fds[1]));
  EXPECT_GT(first, 0u);
  EXPECT_LT(first, content.size());  // a pipe holds 64 KiB
  EXPECT_EQ(ReadUpTo(pipe_fds[0], first), content.substr(0, first));
  // Resumed where it stopped, the bytes continue.
  ASSERT_OK_AND_ASSIGN(size_t second,
                       file->SendTo(first, content.size(), pipe_fds[1]));
  EXPECT_GT(second, 0u);
  EXPECT_EQ(ReadUpTo(pipe_fds[0], second), content.substr(first, second));
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_F(PosixFileSystemTest, SendToAClosedPeerFailsNamingTheFile) {
  const std::string path = Path("a.log");
  MakeFile(path, "0123456789");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> file,
                       FileOpener::OpenForRead(fs_, path));
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[0]);
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);
  const absl::StatusOr<size_t> sent = file->SendTo(0, 10, pipe_fds[1]);
  EXPECT_FALSE(sent.ok());
  EXPECT_THAT(sent.status().message(),
              AllOf(HasSubstr(path), HasSubstr("pipe")));
  ::sigaction(SIGPIPE, &previous, nullptr);
  ::close(pipe_fds[1]);
}

TEST_F(PosixFileSystemTest, ReadAtOfHugeOffsetIsInvalidArgument) {
  const std::string path = Path("a.log");
  MakeFile(path, "x");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> file,
                       FileOpener::OpenForRead(fs_, path));
  char buffer[4];
  EXPECT_THAT(file->ReadAt(UINT64_MAX - 1, 4, buffer),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(path)));
}

TEST_F(PosixFileSystemTest, WriteAtPastEndZeroFillsTheGap) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->WriteAt(0, "ab"));
  ASSERT_OK(file->WriteAt(5, "cd"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), std::string("ab\0\0\0cd", 7));
}

TEST_F(PosixFileSystemTest, WriteAtOverwritesInPlace) {
  const std::string path = Path("a.log");
  MakeFile(path, "0123456789");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kMustExist));
  ASSERT_OK(file->WriteAt(2, "ab"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "01ab456789");
}

TEST_F(PosixFileSystemTest, WriteAtVWritesThePartsContiguously) {
  const std::string path = Path("a.log");
  MakeFile(path, "0123456789");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kMustExist));
  const std::vector<absl::string_view> parts = {"ab", "", "cde", "f"};
  ASSERT_OK(file->WriteAtV(3, parts));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "012abcdef9");
}

TEST_F(PosixFileSystemTest, WriteAtVHandlesMoreThanIovMaxParts) {
  const std::string path = Path("a.log");
  std::vector<std::string> storage;
  std::string expected;
  for (int i = 0; i < 3 * IOV_MAX + 7; ++i) {
    storage.push_back(std::string(1 + i % 3, static_cast<char>('a' + i % 26)));
    expected += storage.back();
  }
  const std::vector<absl::string_view> parts(storage.begin(), storage.end());
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->WriteAtV(0, parts));
  // Append continues after what WriteAtV wrote.
  ASSERT_OK(file->Append("!"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), expected + "!");
}

// While alive, writes that would grow a file past `limit` bytes are cut
// short at the limit and then fail with EFBIG (RLIMIT_FSIZE, with SIGXFSZ
// ignored so that it does not kill the process).
class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(rlim_t limit) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &saved_limit_), 0);
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    EXPECT_EQ(::sigaction(SIGXFSZ, &ignore, &saved_action_), 0);
    const rlimit lowered = {limit, saved_limit_.rlim_max};
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &lowered), 0);
  }
  ~ScopedFileSizeLimit() {
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &saved_limit_), 0);
    EXPECT_EQ(::sigaction(SIGXFSZ, &saved_action_, nullptr), 0);
  }

 private:
  rlimit saved_limit_;
  struct sigaction saved_action_;
};

TEST_F(PosixFileSystemTest, ShortWritesAreContinuedUntilTheyFail) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  const std::string too_large =
      absl::StrCat("write \"", path, "\" at offset 10: File too large");
  {
    ScopedFileSizeLimit limit(10);
    // The first pwritev stops inside the second part; the retry of the rest
    // fails at the limit.
    const std::vector<absl::string_view> parts = {"0123", "456789ab", "cdef"};
    EXPECT_THAT(file->WriteAtV(0, parts),
                StatusIs(absl::StatusCode::kOutOfRange, too_large));
    EXPECT_THAT(file->WriteAt(0, "0123456789abcdef"),
                StatusIs(absl::StatusCode::kOutOfRange, too_large));
  }
  // What was written before the failure is counted: Append continues there.
  ASSERT_OK(file->Append("!"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "0123456789!");
}

TEST_F(PosixFileSystemTest, AppendAfterReopenWritesAtTheEnd) {
  const std::string path = Path("a.log");
  MakeFile(path, "first;");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Append("second;"));
  ASSERT_OK(file->Append("third"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "first;second;third");
}

TEST_F(PosixFileSystemTest, AppendFollowsAWriteAtPastTheEnd) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->WriteAt(3, "ab"));
  ASSERT_OK(file->Append("c"));
  // A write inside the file does not move the end back.
  ASSERT_OK(file->WriteAt(0, "x"));
  ASSERT_OK(file->Append("d"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), std::string("x\0\0abcd", 7));
}

TEST_F(PosixFileSystemTest, TruncateShrinksAndMovesTheAppendPoint) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Append("0123456789"));
  ASSERT_OK(file->Truncate(4));
  EXPECT_THAT(file->Size(), IsOkAndHolds(4));
  ASSERT_OK(file->Append("ab"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "0123ab");
}

TEST_F(PosixFileSystemTest, TruncateExtendsWithZeros) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Append("ab"));
  ASSERT_OK(file->Truncate(4));
  ASSERT_OK(file->Append("c"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), std::string("ab\0\0c", 5));
}

TEST_F(PosixFileSystemTest, DataSyncAndSyncSucceed) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, Path("a.log"), OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Append("x"));
  EXPECT_OK(file->DataSync());
  EXPECT_OK(file->Sync());
  EXPECT_OK(file->Close());
}

TEST_F(PosixFileSystemTest, ReadsAndSyncsRunConcurrentlyWithTheWriter) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, Path("a.log"), OpenMode::kCreateIfMissing));
  constexpr int kAppends = 200;
  std::thread syncer([&] {
    for (int i = 0; i < 20; ++i) EXPECT_OK(file->DataSync());
  });
  std::thread reader([&] {
    char buffer[8];
    for (int i = 0; i < kAppends; ++i) {
      absl::StatusOr<size_t> n = file->ReadAt(0, sizeof(buffer), buffer);
      ASSERT_OK(n);
      // Whatever is visible is a prefix of "abababab".
      for (size_t j = 0; j < *n; ++j) EXPECT_EQ(buffer[j], "ab"[j % 2]);
    }
  });
  for (int i = 0; i < kAppends; ++i) ASSERT_OK(file->Append("ab"));
  syncer.join();
  reader.join();
  EXPECT_THAT(file->Size(), IsOkAndHolds(2 * kAppends));
  EXPECT_OK(file->Close());
}

// ---------------------------------------------------------------------------
// OpenMode.

TEST_F(PosixFileSystemTest, MustExistFailsOnAMissingFile) {
  const std::string path = Path("a.log");
  EXPECT_THAT(FileOpener::OpenForWrite(fs_, path, OpenMode::kMustExist),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
  EXPECT_THAT(fs_.Exists(path), IsOkAndHolds(false));
}

TEST_F(PosixFileSystemTest, MustExistKeepsTheContent) {
  const std::string path = Path("a.log");
  MakeFile(path, "old");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kMustExist));
  EXPECT_THAT(file->Size(), IsOkAndHolds(3));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "old");
}

TEST_F(PosixFileSystemTest, CreateIfMissingCreatesOrKeeps) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> created,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  EXPECT_THAT(created->Size(), IsOkAndHolds(0));
  ASSERT_OK(created->Append("old"));
  ASSERT_OK(created->Close());
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> reopened,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  EXPECT_THAT(reopened->Size(), IsOkAndHolds(3));
  ASSERT_OK(reopened->Close());
  EXPECT_EQ(Contents(path), "old");
}

TEST_F(PosixFileSystemTest, CreateExclusiveCreatesButNeverOpensAnExistingFile) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateExclusive));
  ASSERT_OK(file->Append("old"));
  ASSERT_OK(file->Close());
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateExclusive),
      StatusIs(absl::StatusCode::kAlreadyExists,
               absl::StrCat("open \"", path, "\" for write: File exists")));
  EXPECT_EQ(Contents(path), "old");
}

TEST_F(PosixFileSystemTest, TruncateModeEmptiesOrCreates) {
  const std::string path = Path("a.log");
  MakeFile(path, "old");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kTruncate));
  EXPECT_THAT(file->Size(), IsOkAndHolds(0));
  ASSERT_OK(file->Append("new"));
  ASSERT_OK(file->Close());
  EXPECT_EQ(Contents(path), "new");

  const std::string other = Path("b.log");
  ASSERT_OK_AND_ASSIGN(
      file, FileOpener::OpenForWrite(fs_, other, OpenMode::kTruncate));
  ASSERT_OK(file->Close());
  EXPECT_THAT(fs_.Exists(other), IsOkAndHolds(true));
}

// ---------------------------------------------------------------------------
// Errors and handle lifetime.

TEST_F(PosixFileSystemTest, ErrorsNameTheOperationThePathAndTheErrno) {
  const std::string path = Path("no-such-dir/x.log");
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing),
      StatusIs(absl::StatusCode::kNotFound,
               absl::StrCat("open \"", path,
                            "\" for write: No such file or directory")));
  EXPECT_THAT(
      FileOpener::OpenForRead(fs_, path),
      StatusIs(absl::StatusCode::kNotFound,
               absl::StrCat("open \"", path, "\": No such file or directory")));
  EXPECT_THAT(
      fs_.Stat(path),
      StatusIs(absl::StatusCode::kNotFound,
               absl::StrCat("stat \"", path, "\": No such file or directory")));
  EXPECT_THAT(fs_.Unlink(path),
              StatusIs(absl::StatusCode::kNotFound,
                       absl::StrCat("unlink \"", path,
                                    "\": No such file or directory")));
  EXPECT_THAT(
      fs_.GetVolumeSpace(path),
      StatusIs(absl::StatusCode::kNotFound,
               AllOf(HasSubstr(path), HasSubstr("No such file or directory"))));
}

TEST_F(PosixFileSystemTest, RenameErrorsNameBothPaths) {
  const std::string from = Path("from");
  const std::string to = Path("to");
  EXPECT_THAT(fs_.Rename(from, to),
              StatusIs(absl::StatusCode::kNotFound,
                       absl::StrCat("rename \"", from, "\" to \"", to,
                                    "\": No such file or directory")));
}

TEST_F(PosixFileSystemTest, DirectoriesAreNotOpenedAsFiles) {
  ASSERT_OK(fs_.CreateDirs(Path("d")));
  EXPECT_THAT(FileOpener::OpenForRead(fs_, Path("d")),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       AllOf(HasSubstr(Path("d")),
                             HasSubstr("is a directory, not a regular file"))));
  EXPECT_THAT(FileOpener::OpenForWrite(fs_, Path("d"), OpenMode::kMustExist),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Is a directory")));
}

// The engine runs as root on many machines: a link planted in a partition
// dir must never let it read, truncate or write a file elsewhere.
TEST_F(PosixFileSystemTest, SymbolicLinksAreNeverFollowedToAFile) {
  MakeFile(Path("outside"), "precious");
  ASSERT_EQ(::symlink(Path("outside").c_str(), Path("a.log").c_str()), 0);
  const auto refused =
      StatusIs(absl::StatusCode::kPermissionDenied,
               AllOf(HasSubstr(Path("a.log")), HasSubstr("symbolic link")));
  EXPECT_THAT(FileOpener::OpenForRead(fs_, Path("a.log")), refused);
  for (OpenMode mode : {OpenMode::kMustExist, OpenMode::kCreateIfMissing,
                        OpenMode::kTruncate}) {
    EXPECT_THAT(FileOpener::OpenForWrite(fs_, Path("a.log"), mode), refused);
  }
  EXPECT_THAT(FileOpener::LockFile(fs_, Path("a.log")), refused);
  // A dangling link is refused too, rather than created through.
  ASSERT_EQ(::symlink(Path("nowhere").c_str(), Path("b.log").c_str()), 0);
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, Path("b.log"), OpenMode::kCreateIfMissing),
      StatusIs(absl::StatusCode::kPermissionDenied,
               HasSubstr("symbolic link")));
  EXPECT_THAT(fs_.Exists(Path("nowhere")), IsOkAndHolds(false));
  EXPECT_EQ(Contents(Path("outside")), "precious");
}

// A FIFO would block open(2) forever: it is refused at once.
TEST_F(PosixFileSystemTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(Path("manifest").c_str(), 0644), 0);
  const auto refused = StatusIs(absl::StatusCode::kPermissionDenied,
                                HasSubstr("not a regular file"));
  EXPECT_THAT(FileOpener::OpenForRead(fs_, Path("manifest")), refused);
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, Path("manifest"), OpenMode::kMustExist),
      refused);
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, Path("manifest"), OpenMode::kTruncate),
      refused);
  EXPECT_THAT(ReadFileToString(fs_, Path("manifest")), refused);
}

TEST_F(PosixFileSystemTest, AFileWithSeveralHardLinksIsNotWritten) {
  MakeFile(Path("outside"), "precious");
  ASSERT_EQ(::link(Path("outside").c_str(), Path("a.log").c_str()), 0);
  EXPECT_THAT(
      FileOpener::OpenForWrite(fs_, Path("a.log"), OpenMode::kTruncate),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("2 hard links")));
  EXPECT_EQ(Contents(Path("a.log")), "precious");  // reading is harmless
}

TEST_F(PosixFileSystemTest, ListDirEntriesTellsTypesWithoutFollowingLinks) {
  MakeFile(Path("file"), "x");
  ASSERT_OK(fs_.CreateDirs(Path("dir")));
  ASSERT_EQ(::symlink(Path("file").c_str(), Path("link").c_str()), 0);
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0644), 0);
  ASSERT_OK_AND_ASSIGN(std::vector<DirEntry> entries,
                       fs_.ListDirEntries(dir_.path()));
  std::vector<std::pair<std::string, FileType>> got;
  for (const DirEntry& entry : entries)
    got.emplace_back(entry.name, entry.type);
  EXPECT_THAT(got, ElementsAre(Pair("dir", FileType::kDirectory),
                               Pair("fifo", FileType::kOther),
                               Pair("file", FileType::kRegular),
                               Pair("link", FileType::kSymlink)));
}

TEST_F(PosixFileSystemTest, ALockHasOneHolderAtATime) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FileLock> first,
                       FileOpener::LockFile(fs_, Path("leader.lock")));
  EXPECT_EQ(first->path(), Path("leader.lock"));
  // Another holder, even in this process, is refused without waiting.
  EXPECT_THAT(
      FileOpener::LockFile(fs_, Path("leader.lock")),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("held by another")));
  first.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FileLock> second,
                       FileOpener::LockFile(fs_, Path("leader.lock")));
  EXPECT_THAT(fs_.Stat(Path("leader.lock")),
              IsOkAndHolds(::testing::Field(&FileInfo::is_regular, true)));
}

TEST_F(PosixFileSystemTest, ALockIsHeldAgainstOtherProcesses) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FileLock> lock,
                       FileOpener::LockFile(fs_, Path("leader.lock")));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A separate process: its own open file description, same file.
    PosixFileSystem own;
    absl::StatusOr<std::unique_ptr<FileLock>> theirs =
        FileOpener::LockFile(own, Path("leader.lock"));
    ::_exit(absl::IsUnavailable(theirs.status()) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child process got the lock";
}

// A lock file unlinked while held locks nothing anyone else finds: a new
// file at the name is lockable. (The engine's second line of defence is the
// lock on the writer's own handle, below.)
TEST_F(PosixFileSystemTest, ALockFileRemovedWhileHeldLeavesTheNameLockable) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<FileLock> first,
                       FileOpener::LockFile(fs_, Path("leader.lock")));
  ASSERT_OK(fs_.Unlink(Path("leader.lock")));
  EXPECT_OK(FileOpener::LockFile(fs_, Path("leader.lock")).status());
}

// A write handle's lock keeps a second writer of the same file out, even
// through another handle of this process, until it is unlocked or closed.
TEST_F(PosixFileSystemTest, AWriteHandleLockHasOneHolderAtATime) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> first,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> second,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kMustExist));
  ASSERT_OK(first->TryLock());
  EXPECT_OK(first->TryLock());  // its own lock again
  EXPECT_THAT(second->TryLock(), StatusIs(absl::StatusCode::kUnavailable,
                                          HasSubstr("held by another")));
  first->Unlock();
  ASSERT_OK(second->TryLock());
  EXPECT_THAT(first->TryLock(), StatusIs(absl::StatusCode::kUnavailable, _));
  ASSERT_OK(second->Close());
  EXPECT_OK(first->TryLock());
}

TEST_F(PosixFileSystemTest,
       EveryCallOnAClosedHandleFailsWithFailedPrecondition) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK(file->Close());
  const auto closed = StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr(path), HasSubstr("closed")));
  char buffer[1];
  EXPECT_THAT(file->ReadAt(0, 1, buffer), closed);
  EXPECT_THAT(file->Size(), closed);
  EXPECT_THAT(file->WriteAt(0, "x"), closed);
  const std::vector<absl::string_view> parts = {"x"};
  EXPECT_THAT(file->WriteAtV(0, parts), closed);
  EXPECT_THAT(file->Append("x"), closed);
  EXPECT_THAT(file->Truncate(0), closed);
  EXPECT_THAT(file->DataSync(), closed);
  EXPECT_THAT(file->Sync(), closed);
  EXPECT_THAT(file->Close(), closed);
  EXPECT_EQ(file->path(), path);
}

TEST_F(PosixFileSystemTest, DescriptorsAreCloseOnExec) {
  const std::string path = Path("a.log");
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<WritableFile> writer,
      FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> reader,
                       FileOpener::OpenForRead(fs_, path));
  const std::vector<int> fds = DescriptorsOf(path);
  ASSERT_EQ(fds.size(), 2u);
  for (int fd : fds) {
    const int flags = ::fcntl(fd, F_GETFD);
    ASSERT_GE(flags, 0);
    EXPECT_TRUE(flags & FD_CLOEXEC) << "fd " << fd;
  }
}

TEST_F(PosixFileSystemTest, DestructorAndCloseReleaseTheDescriptor) {
  const std::string path = Path("a.log");
  {
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<WritableFile> writer,
        FileOpener::OpenForWrite(fs_, path, OpenMode::kCreateIfMissing));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ReadableFile> reader,
                         FileOpener::OpenForRead(fs_, path));
    EXPECT_EQ(DescriptorsOf(path).size(), 2u);
    ASSERT_OK(writer->Close());
    EXPECT_EQ(DescriptorsOf(path).size(), 1u);
  }
  EXPECT_THAT(DescriptorsOf(path), IsEmpty());
}

// ---------------------------------------------------------------------------
// Directories and metadata.

TEST_F(PosixFileSystemTest, ListDirIsSortedAndHasNoDotEntries) {
  MakeFile(Path("b"), "");
  MakeFile(Path("a"), "");
  MakeFile(Path("c.log"), "");
  ASSERT_OK(fs_.CreateDirs(Path("sub")));
  MakeFile(Path("sub/nested"), "");
  EXPECT_THAT(fs_.ListDir(dir_.path()),
              IsOkAndHolds(ElementsAre("a", "b", "c.log", "sub")));
  EXPECT_THAT(fs_.ListDir(Path("sub")), IsOkAndHolds(ElementsAre("nested")));
}

TEST_F(PosixFileSystemTest, ListDirOfAnEmptyDirIsEmpty) {
  EXPECT_THAT(fs_.ListDir(dir_.path()), IsOkAndHolds(IsEmpty()));
}

TEST_F(PosixFileSystemTest, ListDirFailsOnMissingDirOrFile) {
  EXPECT_THAT(fs_.ListDir(Path("missing")),
              StatusIs(absl::StatusCode::kNotFound,
                       absl::StrCat("list directory \"", Path("missing"),
                                    "\": No such file or directory")));
  MakeFile(Path("file"), "");
  EXPECT_THAT(fs_.ListDir(Path("file")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
}

TEST_F(PosixFileSystemTest, StatOfAFile) {
  const std::string path = Path("a.log");
  MakeFile(path, "12345");
  // An mtime with nanoseconds, to check sub-second precision exactly.
  const timespec times[2] = {{1700000000, 123456789}, {1700000000, 987654321}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_.Stat(path));
  EXPECT_EQ(info.size, 5u);
  EXPECT_FALSE(info.is_directory);
  EXPECT_FALSE(info.is_symlink);
  EXPECT_EQ(info.mtime,
            absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(987654321));
}

TEST_F(PosixFileSystemTest, StatOfADirectory) {
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_.Stat(dir_.path()));
  EXPECT_TRUE(info.is_directory);
  EXPECT_FALSE(info.is_symlink);
  EXPECT_THAT(fs_.Exists(dir_.path()), IsOkAndHolds(true));
}

TEST_F(PosixFileSystemTest, StatFollowsSymbolicLinks) {
  MakeFile(Path("target"), "123");
  ASSERT_EQ(::symlink(Path("target").c_str(), Path("link").c_str()), 0);
  ASSERT_EQ(::symlink(dir_.path().c_str(), Path("dir-link").c_str()), 0);
  ASSERT_EQ(::symlink(Path("missing").c_str(), Path("dangling").c_str()), 0);

  ASSERT_OK_AND_ASSIGN(FileInfo file_link, fs_.Stat(Path("link")));
  EXPECT_TRUE(file_link.is_symlink);
  EXPECT_FALSE(file_link.is_directory);
  EXPECT_EQ(file_link.size, 3u);
  ASSERT_OK_AND_ASSIGN(FileInfo dir_link, fs_.Stat(Path("dir-link")));
  EXPECT_TRUE(dir_link.is_symlink);
  EXPECT_TRUE(dir_link.is_directory);
  EXPECT_THAT(fs_.Stat(Path("dangling")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("dangling")));
}

TEST_F(PosixFileSystemTest, StatUnderAFileFailsWithNotADirectory) {
  MakeFile(Path("file"), "");
  EXPECT_THAT(fs_.Stat(Path("file/x")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
  EXPECT_THAT(fs_.Exists(Path("file/x")),
              StatusIs(absl::StatusCode::kFailedPrecondition, _));
}

TEST_F(PosixFileSystemTest, CreateDirsCreatesEveryMissingLevel) {
  const std::string nested = Path("a/b/c");
  ASSERT_OK(fs_.CreateDirs(nested));
  ASSERT_OK_AND_ASSIGN(FileInfo info, fs_.Stat(nested));
  EXPECT_TRUE(info.is_directory);
  // Existing directories, repeated and trailing slashes are fine.
  EXPECT_OK(fs_.CreateDirs(nested));
  EXPECT_OK(fs_.CreateDirs(Path("a//b/d/")));
  EXPECT_THAT(fs_.ListDir(Path("a/b")), IsOkAndHolds(ElementsAre("c", "d")));
}

TEST_F(PosixFileSystemTest, CreateDirsFailsWhenALevelIsAFile) {
  MakeFile(Path("file"), "");
  EXPECT_THAT(
      fs_.CreateDirs(Path("file")),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               absl::StrCat("create directory \"", Path("file"), "\": \"",
                            Path("file"), "\" exists: Not a directory")));
  EXPECT_THAT(
      fs_.CreateDirs(Path("file/sub/x")),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr(absl::StrCat("\"", Path("file"), "\" exists")),
                     HasSubstr("Not a directory"))));
}

TEST_F(PosixFileSystemTest, CreateDirsOfEmptyPathIsInvalid) {
  EXPECT_THAT(fs_.CreateDirs(""), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("empty path")));
}

TEST_F(PosixFileSystemTest, RemoveDirRemovesOnlyEmptyDirectories) {
  ASSERT_OK(fs_.CreateDirs(Path("d")));
  MakeFile(Path("d/x"), "");
  EXPECT_THAT(fs_.RemoveDir(Path("d")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       absl::StrCat("remove directory \"", Path("d"),
                                    "\": Directory not empty")));
  ASSERT_OK(fs_.Unlink(Path("d/x")));
  ASSERT_OK(fs_.RemoveDir(Path("d")));
  EXPECT_THAT(fs_.Exists(Path("d")), IsOkAndHolds(false));
  EXPECT_THAT(fs_.RemoveDir(Path("d")),
              StatusIs(absl::StatusCode::kNotFound, _));
}

TEST_F(PosixFileSystemTest, UnlinkRemovesAFileButNotADirectory) {
  MakeFile(Path("x"), "");
  ASSERT_OK(fs_.Unlink(Path("x")));
  EXPECT_THAT(fs_.Exists(Path("x")), IsOkAndHolds(false));
  ASSERT_OK(fs_.CreateDirs(Path("d")));
  EXPECT_FALSE(fs_.Unlink(Path("d")).ok());
}

TEST_F(PosixFileSystemTest, RenameReplacesTheTarget) {
  MakeFile(Path("from"), "new");
  MakeFile(Path("to"), "old");
  ASSERT_OK(fs_.Rename(Path("from"), Path("to")));
  EXPECT_EQ(Contents(Path("to")), "new");
  EXPECT_THAT(fs_.Exists(Path("from")), IsOkAndHolds(false));
}

TEST_F(PosixFileSystemTest, SyncDirSyncsDirectoriesOnly) {
  EXPECT_OK(fs_.SyncDir(dir_.path()));
  EXPECT_THAT(fs_.SyncDir(Path("missing")),
              StatusIs(absl::StatusCode::kNotFound,
                       absl::StrCat("open directory \"", Path("missing"),
                                    "\" for sync: No such file or directory")));
  MakeFile(Path("file"), "");
  EXPECT_THAT(fs_.SyncDir(Path("file")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("Not a directory")));
}

TEST_F(PosixFileSystemTest, GetVolumeSpaceIsSane) {
  ASSERT_OK_AND_ASSIGN(VolumeSpace space, fs_.GetVolumeSpace(dir_.path()));
  EXPECT_GT(space.total_bytes, 0u);
  EXPECT_LE(space.free_bytes, space.total_bytes);
}

TEST(PosixFileSystemDefault, IsOneSharedInstance) {
  FileSystem* fs = PosixFileSystem::Default();
  ASSERT_NE(fs, nullptr);
  EXPECT_EQ(fs, PosixFileSystem::Default());
}

}  // namespace
}  // namespace kaas::fs
