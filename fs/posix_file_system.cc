// File: fs/posix_file_system.cc

#include "fs/posix_file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "fs/file_system.h"

namespace kaas::fs {
namespace {

constexpr mode_t kNewFileMode = 0644;
constexpr mode_t kNewDirMode = 0755;

std::string Quote(absl::string_view path) {
  return absl::StrCat("\"", path, "\"");
}

// The status for a failed system call: message "<what>: <strerror>", code
// absl::ErrnoToStatusCode except EIO -> kInternal (absl says kUnknown; the
// seam's contract in fs/file_system.h promises kInternal for I/O errors).
absl::Status OsError(int error_number, absl::string_view what) {
  absl::Status status = absl::ErrnoToStatus(error_number, what);
  if (error_number == EIO) {
    return absl::InternalError(status.message());
  }
  return status;
}

absl::Status ClosedError(absl::string_view operation, const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat(operation, " ", Quote(path), ": file is closed"));
}

// Rejects byte ranges that end beyond what off_t can address, so that the
// casts to off_t below never overflow.
absl::Status CheckRange(absl::string_view operation, const std::string& path,
                        uint64_t offset, uint64_t length) {
  constexpr uint64_t kMaxOffset = std::numeric_limits<off_t>::max();
  if (offset > kMaxOffset || length > kMaxOffset - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat(operation, " ", Quote(path), " at offset ", offset,
                     " length ", length, ": beyond the largest file offset"));
  }
  return absl::OkStatus();
}

// open(2) with O_CLOEXEC added, retrying EINTR. Returns -1 with errno set.
int OpenCloexec(const std::string& path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// What the seam refuses to open (fs/file_system.h): kPermissionDenied naming
// the path and what it is.
absl::Status RefusedError(absl::string_view what, absl::string_view why) {
  return absl::PermissionDeniedError(absl::StrCat(what, ": ", why));
}

FileType TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

absl::Status CloseFd(int fd, const std::string& path);

// Opens `path` as a regular file: never through a symbolic link in the last
// component (O_NOFOLLOW) and never waiting on a FIFO (O_NONBLOCK, cleared
// once the file is known to be regular). `for_write` also refuses files with
// more than one hard link. `what` names the operation in errors.
absl::StatusOr<int> OpenRegular(const std::string& path, int flags,
                                bool for_write, absl::string_view what) {
  const int fd =
      OpenCloexec(path, flags | O_NOFOLLOW | O_NONBLOCK, kNewFileMode);
  if (fd < 0) {
    const int open_errno = errno;
    struct stat st;
    if (open_errno == ELOOP && ::lstat(path.c_str(), &st) == 0 &&
        S_ISLNK(st.st_mode)) {
      return RefusedError(what,
                          "it is a symbolic link (the engine never follows "
                          "links to its own files)");
    }
    if (open_errno == ENXIO || open_errno == ENODEV) {
      return RefusedError(what, "it is not a regular file");
    }
    return OsError(open_errno, what);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int fstat_errno = errno;
    (void)CloseFd(fd, path);
    return OsError(fstat_errno, what);
  }
  if (!S_ISREG(st.st_mode)) {
    (void)CloseFd(fd, path);
    return RefusedError(
        what, absl::StrCat("it is a ", FileTypeName(TypeOf(st.st_mode)),
                           ", not a regular file"));
  }
  if (for_write && st.st_nlink > 1) {
    (void)CloseFd(fd, path);
    return RefusedError(
        what, absl::StrCat("it has ", st.st_nlink,
                           " hard links (it may be shared with a file the "
                           "engine does not own)"));
  }
  const int status_flags = ::fcntl(fd, F_GETFL);
  if (status_flags < 0 ||
      ::fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK) != 0) {
    const int fcntl_errno = errno;
    (void)CloseFd(fd, path);
    return OsError(fcntl_errno, what);
  }
  return fd;
}

// close(2). On Linux the descriptor is released even when close fails with
// EINTR, so EINTR is not retried (that could close a reused descriptor) and
// not reported (no data is lost by it).
absl::Status CloseFd(int fd, const std::string& path) {
  if (::close(fd) != 0 && errno != EINTR) {
    return OsError(errno, absl::StrCat("close ", Quote(path)));
  }
  return absl::OkStatus();
}

// Reads until `n` bytes or end-of-file.
absl::StatusOr<size_t> PreadFully(int fd, const std::string& path,
                                  uint64_t offset, size_t n, char* dst) {
  KAAS_RETURN_IF_ERROR(CheckRange("read", path, offset, n));
  size_t done = 0;
  while (done < n) {
    const ssize_t r =
        ::pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return OsError(errno, absl::StrCat("read ", Quote(path), " at offset ",
                                         offset + done));
    }
    if (r == 0) break;  // End of file.
    done += static_cast<size_t>(r);
  }
  return done;
}

// posix_fadvise(WILLNEED): starts reading the range in large requests.
void AdviseWillNeed(int fd, uint64_t offset, size_t n) {
  if (!CheckRange("prefetch", "", offset, n).ok()) return;
  (void)::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(n),
                        POSIX_FADV_WILLNEED);
}

// sendfile(2) from `fd` until `n` bytes went, end of file, or a non-blocking
// `out_fd` would block.
absl::StatusOr<size_t> SendfileFully(int fd, const std::string& path,
                                     uint64_t offset, size_t n, int out_fd) {
  KAAS_RETURN_IF_ERROR(CheckRange("send", path, offset, n));
  // Linux transfers at most 0x7ffff000 bytes per call.
  constexpr size_t kMaxPerCall = size_t{1} << 30;
  size_t done = 0;
  while (done < n) {
    off_t position = static_cast<off_t>(offset + done);
    const ssize_t r =
        ::sendfile(out_fd, fd, &position, std::min(kMaxPerCall, n - done));
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return OsError(errno, absl::StrCat("send ", Quote(path), " at offset ",
                                         offset + done));
    }
    if (r == 0) break;  // End of file.
    done += static_cast<size_t>(r);
  }
  return done;
}

absl::StatusOr<uint64_t> FstatSize(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return OsError(errno, absl::StrCat("stat ", Quote(path)));
  }
  return static_cast<uint64_t>(st.st_size);
}

// pwrite(2)/pwritev(2) never return 0 for a non-empty regular-file write;
// if one did, retrying would loop forever.
absl::Status NoProgressError(const std::string& path, uint64_t offset) {
  return absl::InternalError(absl::StrCat("write ", Quote(path), " at offset ",
                                          offset, ": wrote 0 bytes"));
}

class PosixReadableFile final : public ReadableFile {
 public:
  // Takes ownership of `fd`.
  PosixReadableFile(std::string path, int fd)
      : path_(std::move(path)), fd_(fd) {}
  ~PosixReadableFile() override { (void)CloseFd(fd_, path_); }

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    return PreadFully(fd_, path_, offset, n, dst);
  }

  absl::StatusOr<uint64_t> Size() const override {
    return FstatSize(fd_, path_);
  }

  absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                int out_fd) const override {
    return SendfileFully(fd_, path_, offset, n, out_fd);
  }

  void Prefetch(uint64_t offset, size_t n) const override {
    AdviseWillNeed(fd_, offset, n);
  }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
};

// The single writer (WriteAt/WriteAtV/Append/Truncate/Close) owns `end_` and
// is the only mutator of `fd_`; ReadAt/Size/DataSync/Sync only read `fd_`,
// which Close (not concurrent with anything, per the contract) changes.
// flock(LOCK_EX | LOCK_NB) on `fd`; kUnavailable if another open file
// description holds a lock.
absl::Status FlockExclusive(int fd, absl::string_view what) {
  int rc;
  do {
    rc = ::flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return absl::OkStatus();
  const int flock_errno = errno;
  if (flock_errno == EWOULDBLOCK) {
    return absl::UnavailableError(
        absl::StrCat(what, ": held by another process or handle"));
  }
  return OsError(flock_errno, what);
}

// Whether `fd` lies on a filesystem of a local block device whose direct
// I/O the engine may use (WritableFile::TryDirectIo). Shared and FUSE
// filesystems are left out on purpose: a direct write there bypasses the
// client cache another client's coherence may rely on.
bool OnLocalBlockFilesystem(int fd) {
  struct statfs info;
  int rc;
  do {
    rc = ::fstatfs(fd, &info);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return false;
  constexpr int64_t kExt4 = 0xEF53;  // also ext2 and ext3
  constexpr int64_t kXfs = 0x58465342;
  constexpr int64_t kBtrfs = 0x9123683E;
  constexpr int64_t kF2fs = 0xF2F52010;
  const int64_t type = static_cast<int64_t>(info.f_type);
  return type == kExt4 || type == kXfs || type == kBtrfs || type == kF2fs;
}

class PosixWritableFile final : public WritableFile {
 public:
  // Takes ownership of `fd`; `size` is the file size at open.
  PosixWritableFile(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), end_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) (void)CloseFd(fd_, path_);
  }

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (fd_ < 0) return ClosedError("read", path_);
    return PreadFully(fd_, path_, offset, n, dst);
  }

  absl::StatusOr<uint64_t> Size() const override {
    if (fd_ < 0) return ClosedError("stat", path_);
    return FstatSize(fd_, path_);
  }

  absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                int out_fd) const override {
    if (fd_ < 0) return ClosedError("send", path_);
    return SendfileFully(fd_, path_, offset, n, out_fd);
  }

  void Prefetch(uint64_t offset, size_t n) const override {
    if (fd_ >= 0) AdviseWillNeed(fd_, offset, n);
  }

  const std::string& path() const override { return path_; }

  absl::Status WriteAt(uint64_t offset, absl::string_view data) override {
    if (fd_ < 0) return ClosedError("write", path_);
    KAAS_RETURN_IF_ERROR(CheckRange("write", path_, offset, data.size()));
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t w = ::pwrite(fd_, data.data() + done, data.size() - done,
                                 static_cast<off_t>(offset + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        return OsError(errno, absl::StrCat("write ", Quote(path_),
                                           " at offset ", offset + done));
      }
      if (w == 0) return NoProgressError(path_, offset + done);
      done += static_cast<size_t>(w);
      end_ = std::max(end_, offset + done);
    }
    return absl::OkStatus();
  }

  absl::Status WriteAtV(uint64_t offset,
                        absl::Span<const absl::string_view> parts) override {
    if (fd_ < 0) return ClosedError("write", path_);
    std::vector<iovec> iov;
    iov.reserve(parts.size());
    uint64_t total = 0;
    for (absl::string_view part : parts) {
      if (part.empty()) continue;
      iov.push_back({const_cast<char*>(part.data()), part.size()});
      total += part.size();
    }
    KAAS_RETURN_IF_ERROR(CheckRange("write", path_, offset, total));
    // iov[first..] is what remains to be written; iov[first] may have been
    // advanced past its partially written prefix.
    size_t first = 0;
    uint64_t done = 0;
    while (first < iov.size()) {
      const int count =
          static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
      const ssize_t w =
          ::pwritev(fd_, &iov[first], count, static_cast<off_t>(offset + done));
      if (w < 0) {
        if (errno == EINTR) continue;
        return OsError(errno, absl::StrCat("write ", Quote(path_),
                                           " at offset ", offset + done));
      }
      if (w == 0) return NoProgressError(path_, offset + done);
      done += static_cast<uint64_t>(w);
      end_ = std::max(end_, offset + done);
      size_t unconsumed = static_cast<size_t>(w);
      while (unconsumed > 0) {
        iovec& head = iov[first];
        if (unconsumed >= head.iov_len) {
          unconsumed -= head.iov_len;
          ++first;
        } else {
          head.iov_base = static_cast<char*>(head.iov_base) + unconsumed;
          head.iov_len -= unconsumed;
          unconsumed = 0;
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status Append(absl::string_view data) override {
    return WriteAt(end_, data);
  }

  absl::Status Truncate(uint64_t size) override {
    if (fd_ < 0) return ClosedError("truncate", path_);
    KAAS_RETURN_IF_ERROR(CheckRange("truncate", path_, size, 0));
    int rc;
    do {
      rc = ::ftruncate(fd_, static_cast<off_t>(size));
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      return OsError(errno, absl::StrCat("truncate ", Quote(path_), " to ",
                                         size, " bytes"));
    }
    end_ = size;
    return absl::OkStatus();
  }

  absl::Status DataSync() override {
    if (fd_ < 0) return ClosedError("fdatasync", path_);
    int rc;
    do {
      rc = ::fdatasync(fd_);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0)
      return OsError(errno, absl::StrCat("fdatasync ", Quote(path_)));
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedError("fsync", path_);
    int rc;
    do {
      rc = ::fsync(fd_);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return OsError(errno, absl::StrCat("fsync ", Quote(path_)));
    return absl::OkStatus();
  }

  bool TryDirectIo() override {
    if (fd_ < 0 || !OnLocalBlockFilesystem(fd_)) return false;
    const int flags = ::fcntl(fd_, F_GETFL);
    return flags >= 0 && ::fcntl(fd_, F_SETFL, flags | O_DIRECT) == 0;
  }

  absl::Status TryLock() override {
    if (fd_ < 0) return ClosedError("lock", path_);
    return FlockExclusive(fd_, absl::StrCat("lock ", Quote(path_)));
  }

  void Unlock() override {
    if (fd_ >= 0) (void)::flock(fd_, LOCK_UN);
  }

  absl::Status Close() override {
    if (fd_ < 0) return ClosedError("close", path_);
    const int fd = fd_;
    fd_ = -1;
    return CloseFd(fd, path_);
  }

 private:
  const std::string path_;
  int fd_;  // -1 once closed.
  // Where Append writes: the size at open, grown by every write of this
  // handle that ended past it, and set by Truncate.
  uint64_t end_;
};

// kTruncate opens without O_TRUNC: the file is truncated only once it is
// known to be a regular file of its own (OpenRegular's checks).
int OpenFlags(OpenMode mode) {
  switch (mode) {
    case OpenMode::kMustExist:
      return O_RDWR;
    case OpenMode::kCreateIfMissing:
    case OpenMode::kTruncate:
      return O_RDWR | O_CREAT;
    case OpenMode::kCreateExclusive:
      return O_RDWR | O_CREAT | O_EXCL;
  }
  return O_RDWR;  // Unreachable: the switch covers every OpenMode.
}

class PosixFileLock final : public FileLock {
 public:
  PosixFileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  // Closing the descriptor releases the lock.
  ~PosixFileLock() override { (void)CloseFd(fd_, path_); }

  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const int fd_;
};

}  // namespace

FileSystem* PosixFileSystem::Default() {
  static PosixFileSystem* const instance = new PosixFileSystem();
  return instance;
}

absl::StatusOr<std::unique_ptr<ReadableFile>> PosixFileSystem::OpenForRead(
    const std::string& path) {
  KAAS_ASSIGN_OR_RETURN(const int fd,
                        OpenRegular(path, O_RDONLY, /*for_write=*/false,
                                    absl::StrCat("open ", Quote(path))));
  return std::make_unique<PosixReadableFile>(path, fd);
}

absl::StatusOr<std::unique_ptr<WritableFile>> PosixFileSystem::OpenForWrite(
    const std::string& path, OpenMode mode) {
  const std::string what = absl::StrCat("open ", Quote(path), " for write");
  KAAS_ASSIGN_OR_RETURN(const int fd, OpenRegular(path, OpenFlags(mode),
                                                  /*for_write=*/true, what));
  if (mode == OpenMode::kTruncate) {
    int rc;
    do {
      rc = ::ftruncate(fd, 0);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      const int truncate_errno = errno;
      (void)CloseFd(fd, path);
      return OsError(truncate_errno, absl::StrCat(what, ": truncate"));
    }
  }
  absl::StatusOr<uint64_t> size = FstatSize(fd, path);
  if (!size.ok()) {
    (void)CloseFd(fd, path);
    return size.status();
  }
  return std::make_unique<PosixWritableFile>(path, fd, *size);
}

absl::StatusOr<std::unique_ptr<FileLock>> PosixFileSystem::LockFile(
    const std::string& path) {
  const std::string what = absl::StrCat("lock ", Quote(path));
  // A lock on a file that is no longer at `path` (unlinked or replaced
  // between our open and our flock) locks nothing anyone else would look
  // at: check the name still leads to the locked file, and retry if not.
  for (int attempt = 0; attempt < 8; ++attempt) {
    KAAS_ASSIGN_OR_RETURN(const int fd, OpenRegular(path, O_RDWR | O_CREAT,
                                                    /*for_write=*/true, what));
    absl::Status locked = FlockExclusive(fd, what);
    if (!locked.ok()) {
      (void)CloseFd(fd, path);
      return locked;
    }
    struct stat held;
    struct stat named;
    if (::fstat(fd, &held) != 0) {
      const int fstat_errno = errno;
      (void)CloseFd(fd, path);
      return OsError(fstat_errno, absl::StrCat(what, ": fstat"));
    }
    if (::lstat(path.c_str(), &named) == 0 && named.st_dev == held.st_dev &&
        named.st_ino == held.st_ino) {
      return std::make_unique<PosixFileLock>(path, fd);
    }
    (void)CloseFd(fd, path);
  }
  return absl::UnavailableError(
      absl::StrCat(what, ": the file keeps being replaced while locked"));
}

absl::Status PosixFileSystem::SyncDir(const std::string& dir) {
  const int fd = OpenCloexec(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    return OsError(errno,
                   absl::StrCat("open directory ", Quote(dir), " for sync"));
  }
  int rc;
  do {
    rc = ::fsync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int fsync_errno = errno;
    (void)CloseFd(fd, dir);
    return OsError(fsync_errno, absl::StrCat("fsync directory ", Quote(dir)));
  }
  return CloseFd(fd, dir);
}

absl::Status PosixFileSystem::Rename(const std::string& from,
                                     const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return OsError(errno,
                   absl::StrCat("rename ", Quote(from), " to ", Quote(to)));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::Unlink(const std::string& path) {
  if (::unlink(path.c_str()) != 0) {
    return OsError(errno, absl::StrCat("unlink ", Quote(path)));
  }
  return absl::OkStatus();
}

absl::Status PosixFileSystem::RemoveDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) {
    return OsError(errno, absl::StrCat("remove directory ", Quote(dir)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PosixFileSystem::ListDir(
    const std::string& dir) {
  const std::string what = absl::StrCat("list directory ", Quote(dir));
  // open + fdopendir rather than opendir, to set O_CLOEXEC explicitly.
  const int fd = OpenCloexec(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return OsError(errno, what);
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    const int fdopendir_errno = errno;
    (void)CloseFd(fd, dir);
    return OsError(fdopendir_errno, what);
  }
  std::vector<std::string> names;
  int readdir_errno = 0;
  while (true) {
    errno = 0;  // readdir returns nullptr both at the end and on error.
    const dirent* entry = ::readdir(stream);
    if (entry == nullptr) {
      readdir_errno = errno;
      break;
    }
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(stream);  // Also closes `fd`; a read-only close loses nothing.
  if (readdir_errno != 0) return OsError(readdir_errno, what);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<FileInfo> PosixFileSystem::Stat(const std::string& path) {
  FileInfo info;
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return OsError(errno, absl::StrCat("stat ", Quote(path)));
  }
  if (S_ISLNK(st.st_mode)) {
    info.is_symlink = true;
    if (::stat(path.c_str(), &st) != 0) {
      return OsError(errno, absl::StrCat("stat ", Quote(path),
                                         " (target of a symbolic link)"));
    }
  }
  info.size = static_cast<uint64_t>(st.st_size);
  info.mtime = absl::TimeFromTimespec(st.st_mtim);
  info.is_directory = S_ISDIR(st.st_mode);
  info.is_regular = S_ISREG(st.st_mode);
  info.link_count = static_cast<uint64_t>(st.st_nlink);
  return info;
}

absl::StatusOr<std::vector<DirEntry>> PosixFileSystem::ListDirEntries(
    const std::string& dir) {
  const std::string what = absl::StrCat("list directory ", Quote(dir));
  const int fd = OpenCloexec(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return OsError(errno, what);
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    const int fdopendir_errno = errno;
    (void)CloseFd(fd, dir);
    return OsError(fdopendir_errno, what);
  }
  std::vector<DirEntry> entries;
  int list_errno = 0;
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(stream);
    if (entry == nullptr) {
      list_errno = errno;
      break;
    }
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    FileType type = FileType::kOther;
    switch (entry->d_type) {
      case DT_REG:
        type = FileType::kRegular;
        break;
      case DT_DIR:
        type = FileType::kDirectory;
        break;
      case DT_LNK:
        type = FileType::kSymlink;
        break;
      case DT_UNKNOWN: {
        // Some filesystems do not fill d_type: ask without following links.
        struct stat st;
        if (::fstatat(::dirfd(stream), entry->d_name, &st,
                      AT_SYMLINK_NOFOLLOW) != 0) {
          if (errno == ENOENT) continue;  // vanished meanwhile
          list_errno = errno;
          break;
        }
        type = TypeOf(st.st_mode);
        break;
      }
      default:
        break;
    }
    if (list_errno != 0) break;
    entries.push_back({std::string(name), type});
  }
  ::closedir(stream);
  if (list_errno != 0) return OsError(list_errno, what);
  std::sort(
      entries.begin(), entries.end(),
      [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

absl::Status PosixFileSystem::CreateDirs(const std::string& dir) {
  const std::string what = absl::StrCat("create directory ", Quote(dir));
  if (dir.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": empty path"));
  }
  // Fast path: the directory already exists.
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return absl::OkStatus();
  }

  // Every level of `dir`, shortest first: "/a/b//c/" -> "/a", "/a/b",
  // "/a/b//c".
  absl::string_view trimmed = dir;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.remove_suffix(1);
  std::vector<std::string> levels;
  for (size_t i = 1; i <= trimmed.size(); ++i) {
    if (i == trimmed.size() || (trimmed[i] == '/' && trimmed[i - 1] != '/')) {
      levels.emplace_back(trimmed.substr(0, i));
    }
  }

  for (const std::string& level : levels) {
    if (::mkdir(level.c_str(), kNewDirMode) == 0) continue;
    const int mkdir_errno = errno;
    if (mkdir_errno != EEXIST) {
      return OsError(mkdir_errno, absl::StrCat(what, ": mkdir ", Quote(level)));
    }
    // Existing already, or created concurrently: fine if it is a directory.
    if (::stat(level.c_str(), &st) != 0) {
      return OsError(errno, absl::StrCat(what, ": stat ", Quote(level)));
    }
    if (!S_ISDIR(st.st_mode)) {
      return OsError(ENOTDIR,
                     absl::StrCat(what, ": ", Quote(level), " exists"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<VolumeSpace> PosixFileSystem::GetVolumeSpace(
    const std::string& path) {
  struct statvfs vfs;
  int rc;
  do {
    rc = ::statvfs(path.c_str(), &vfs);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return OsError(errno, absl::StrCat("statvfs ", Quote(path)));
  VolumeSpace space;
  space.total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  space.free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  return space;
}

}  // namespace kaas::fs
