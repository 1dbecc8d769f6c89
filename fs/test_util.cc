// File: fs/test_util.cc

#include "fs/test_util.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "glog/logging.h"
#include "gtest/gtest.h"

namespace kaas::fs {

ScopedTempDir::ScopedTempDir() : ScopedTempDir(::testing::TempDir()) {}

ScopedTempDir::ScopedTempDir(const std::string& parent) {
  std::string name_template = JoinPath(parent, "fs_test.XXXXXX");
  PCHECK(::mkdtemp(name_template.data()) != nullptr)
      << "mkdtemp " << name_template;
  path_ = std::move(name_template);
}

ScopedTempDir::~ScopedTempDir() {
  const absl::Status removed = RemoveTree(*PosixFileSystem::Default(), path_);
  EXPECT_TRUE(removed.ok()) << removed;
}

absl::Status WriteStringToFile(FileSystem& fs, const std::string& path,
                               absl::string_view contents) {
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs, path, OpenMode::kTruncate));
  KAAS_RETURN_IF_ERROR(file->WriteAt(0, contents));
  return file->Close();
}

absl::Status TruncateFile(FileSystem& fs, const std::string& path,
                          uint64_t size) {
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs, path, OpenMode::kMustExist));
  KAAS_RETURN_IF_ERROR(file->Truncate(size));
  return file->Close();
}

absl::Status AppendToFile(FileSystem& fs, const std::string& path,
                          absl::string_view contents) {
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<WritableFile> file,
      FileOpener::OpenForWrite(fs, path, OpenMode::kMustExist));
  KAAS_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  KAAS_RETURN_IF_ERROR(file->WriteAt(size, contents));
  return file->Close();
}

absl::Status ReplaceFileDurably(FileSystem& fs, const std::string& path,
                                absl::string_view contents) {
  return AtomicReplaceFile(fs, path, contents);
}

absl::Status CopyTreeDurably(FileSystem& fs, const std::string& from,
                             const std::string& to) {
  return CopyTree(fs, from, to);
}

absl::StatusOr<std::string> ReadWholeFile(FileSystem& fs,
                                          const std::string& path) {
  return ReadFileToString(fs, path);
}

std::string ReadUpTo(int fd, size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, &out[got], n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

}  // namespace kaas::fs
