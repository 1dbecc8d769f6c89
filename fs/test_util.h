// File: fs/test_util.h
//
// Test-only helpers (//fs:test_util) for tests of code built on the
// filesystem seam: a scratch directory per test, and readers and writers of
// whole files for setting up fixtures and damaging files on purpose. They
// open files, which only the owners of files may do (fs/file_opener.h); a
// test of any layer may, through these (the target is testonly).

#ifndef KAAS_FS_TEST_UTIL_H_
#define KAAS_FS_TEST_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::fs {

// A new, empty directory under ::testing::TempDir() with a unique name,
// removed with everything below it when this object is destroyed (a failed
// removal is a test failure).
class ScopedTempDir {
 public:
  ScopedTempDir();
  // The same under `parent` (e.g. a tmpfs, for tests where fsync cost does
  // not matter).
  explicit ScopedTempDir(const std::string& parent);
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Creates or truncates `path` and writes `contents` into it. No sync.
absl::Status WriteStringToFile(FileSystem& fs, const std::string& path,
                               absl::string_view contents);

// Sets the size of the existing file `path` (through a write handle). No sync.
absl::Status TruncateFile(FileSystem& fs, const std::string& path,
                          uint64_t size);

// Writes `contents` at the end of the existing file `path`. No sync.
absl::Status AppendToFile(FileSystem& fs, const std::string& path,
                          absl::string_view contents);

// As fs::AtomicReplaceFile (fs/file_util.h): durable, all or nothing.
absl::Status ReplaceFileDurably(FileSystem& fs, const std::string& path,
                                absl::string_view contents);

// As fs::CopyTree (fs/file_util.h): a durable copy of a tree.
absl::Status CopyTreeDurably(FileSystem& fs, const std::string& from,
                             const std::string& to);

// As fs::ReadFileToString (fs/file_util.h), with its default bound.
absl::StatusOr<std::string> ReadWholeFile(FileSystem& fs,
                                          const std::string& path);

// Reads up to `n` bytes from the pipe or socket `fd`, stopping early at end
// of file, an error, or (non-blocking `fd`) when nothing more is there.
std::string ReadUpTo(int fd, size_t n);

}  // namespace kaas::fs

#endif  // KAAS_FS_TEST_UTIL_H_
