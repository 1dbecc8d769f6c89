// File: fs/posix_file_system.h
//
// The production implementation of the filesystem seam (fs/file_system.h) on
// POSIX system calls (Linux):
//
//   kaas::fs::FileSystem* fs = kaas::fs::PosixFileSystem::Default();
//   KAAS_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> log,
//                         fs::FileOpener::OpenForWrite(
//                             *fs, path, OpenMode::kCreateIfMissing));
//
// Implementation notes that callers can rely on:
//   * every file descriptor is opened with O_CLOEXEC, so no descriptor leaks
//     into a child process;
//   * reads and writes use pread/pwrite/pwritev and retry EINTR and short
//     transfers; a file handle has no shared file position;
//   * files are opened with O_NOFOLLOW | O_NONBLOCK and checked with fstat
//     before use (fs/file_system.h lists what is refused); kTruncate
//     truncates only after those checks;
//   * LockFile is flock(LOCK_EX | LOCK_NB) on a descriptor of its own;
//   * files are never opened with O_APPEND (Linux pwrite ignores the offset
//     of an O_APPEND descriptor); Append writes at the end tracked by the
//     handle;
//   * DataSync is fdatasync(2), Sync is fsync(2), SyncDir opens the directory
//     (O_RDONLY|O_DIRECTORY) and fsyncs it;
//   * errors carry absl::ErrnoToStatusCode(errno) and a message naming the
//     operation, the path(s) and strerror, e.g.
//     `open "/d/x.log" for write: No such file or directory`.
//   * new files get mode 0644 and new directories 0755 (before the umask).
//
// Thread-safety: thread-safe (stateless); the file handles follow the contract
// of fs/file_system.h.

#ifndef KAAS_FS_POSIX_FILE_SYSTEM_H_
#define KAAS_FS_POSIX_FILE_SYSTEM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fs/file_system.h"

namespace kaas::fs {

class PosixFileSystem final : public FileSystem {
 public:
  // The process-wide instance; never destroyed. Production code uses this
  // one. The class is stateless, so a separately constructed instance (e.g. a
  // test fixture member) behaves identically.
  static FileSystem* Default();

  PosixFileSystem() = default;
  PosixFileSystem(const PosixFileSystem&) = delete;
  PosixFileSystem& operator=(const PosixFileSystem&) = delete;

  absl::Status SyncDir(const std::string& dir) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Unlink(const std::string& path) override;
  absl::Status RemoveDir(const std::string& dir) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override;
  // readdir's d_type, or fstatat(AT_SYMLINK_NOFOLLOW) where it is unknown.
  absl::StatusOr<std::vector<DirEntry>> ListDirEntries(
      const std::string& dir) override;
  // lstat(2), then stat(2) when the path is a symbolic link.
  absl::StatusOr<FileInfo> Stat(const std::string& path) override;
  // Creates the missing levels top-down with mkdir(2). A level that appears
  // concurrently (EEXIST) is fine if it is a directory; an existing
  // non-directory level fails with kFailedPrecondition ("Not a directory").
  absl::Status CreateDirs(const std::string& dir) override;
  // statvfs(2): total = f_blocks * f_frsize, free = f_bavail * f_frsize.
  absl::StatusOr<VolumeSpace> GetVolumeSpace(const std::string& path) override;

 private:
  // Opening is private, as in FileSystem (fs/file_opener.h).
  absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& path, OpenMode mode) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path) override;
};

}  // namespace kaas::fs

#endif  // KAAS_FS_POSIX_FILE_SYSTEM_H_
