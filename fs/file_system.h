// File: fs/file_system.h
//
// The filesystem seam. Every file operation of the engine goes through a
// `FileSystem`: segment logs and indexes, metadata files, directory listing and
// durability (directory fsync), volume capacity and the tree copy used to move
// a partition between log dirs. Production uses `PosixFileSystem`
// (fs/posix_file_system.h); tests wrap it in the fault-injecting filesystem of
// //testing, which can fail any operation and simulate power loss.
//
// Errors are absl::Status values whose message names the operation, the path
// and (for OS errors) the errno text; the status code follows
// absl::ErrnoToStatusCode (ENOENT -> kNotFound, EEXIST -> kAlreadyExists,
// ENOSPC -> kResourceExhausted, ENOTDIR/EISDIR/ENOTEMPTY ->
// kFailedPrecondition, ...) except that EIO is kInternal (absl: kUnknown).
//
// Durability contract (what the fault-injecting filesystem simulates):
//   * bytes written to a file are durable once a later DataSync()/Sync() of
//     that file has returned OK;
//   * creating, renaming or unlinking a directory entry (and CreateDirs) is
//     durable once a later SyncDir() of the parent directory has returned OK.
// A failed DataSync()/Sync() leaves the durability of the written bytes
// unknown; callers must not retry it and assume success.
//
// What the seam refuses (every implementation, so that no caller has to
// remember): OpenForRead, OpenForWrite and LockFile never follow a symbolic
// link in the last component of the path and never open anything but a
// regular file. A link, a FIFO, a device or a socket there fails at once with
// kPermissionDenied naming it (a FIFO is never waited on), and OpenForWrite
// also refuses a regular file with more than one hard link (it could be
// shared with a file outside the data dir). Directories named by the caller
// (a log dir and its parents) may be symbolic links: only the engine's own
// entries are checked.
//
// Thread-safety: FileSystem implementations are safe for concurrent use.
// ReadableFile::ReadAt may be called concurrently from many threads. A
// WritableFile has a single writer (WriteAt/Append/Truncate are externally
// synchronised), but DataSync()/Sync()/ReadAt may run concurrently with that
// writer (the group committer syncs while appenders write).

#ifndef KAAS_FS_FILE_SYSTEM_H_
#define KAAS_FS_FILE_SYSTEM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace kaas::fs {

// The alignment of direct I/O (WritableFile::TryDirectIo): the largest
// logical block size of the devices the engine runs on.
inline constexpr size_t kDirectIoAlignment = 4096;

// A file open for positional reads.
class ReadableFile {
 public:
  virtual ~ReadableFile() = default;

  // Reads up to `n` bytes at `offset` into `dst`. Returns the number of bytes
  // read, which is less than `n` only when end-of-file was reached.
  virtual absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                        char* dst) const = 0;

  // Current size of the file in bytes.
  virtual absl::StatusOr<uint64_t> Size() const = 0;

  // Writes up to `n` bytes of the file from `offset` to `out_fd` (a socket or
  // a pipe), without copying them through user space where the
  // implementation can (POSIX: sendfile(2)). Returns the number of bytes
  // sent, which is less than `n` only when end-of-file was reached or when
  // `out_fd` is non-blocking and would block (possibly 0). An error of either
  // side fails, naming the path (a closed peer: EPIPE, so the caller must
  // ignore SIGPIPE). The default reads through ReadAt and write(2)s.
  // Thread-safe like ReadAt.
  virtual absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                        int out_fd) const;

  // A hint that bytes [offset, offset + n) will be read soon, so that the
  // kernel reads what is not cached in large requests instead of page by
  // page (POSIX: posix_fadvise WILLNEED, which does not wait for the
  // reads). Best effort: no error, no effect on what reads return. The
  // default does nothing. Thread-safe like ReadAt.
  virtual void Prefetch(uint64_t offset, size_t n) const {}

  // The path the file was opened with.
  virtual const std::string& path() const = 0;
};

// A file open for reading and writing.
class WritableFile : public ReadableFile {
 public:
  // Writes all of `data` at `offset` (short writes are retried internally).
  virtual absl::Status WriteAt(uint64_t offset, absl::string_view data) = 0;

  // Writes the concatenation of `parts` at `offset` (one pwritev where the
  // implementation can). The default calls WriteAt once per part.
  virtual absl::Status WriteAtV(uint64_t offset,
                                absl::Span<const absl::string_view> parts);

  // Writes `data` at the current end of the file (as known to this handle:
  // its size at open plus what it wrote since). Not atomic against other
  // writers of the same file; the engine has one writer per file.
  virtual absl::Status Append(absl::string_view data) = 0;

  // Sets the file size to `size` (shrinks or zero-extends).
  virtual absl::Status Truncate(uint64_t size) = 0;

  // fdatasync(2): makes the written bytes (and the size) durable.
  virtual absl::Status DataSync() = 0;

  // fsync(2): DataSync plus all metadata.
  virtual absl::Status Sync() = 0;

  // Makes this handle's writes bypass the page cache (POSIX: O_DIRECT) if
  // the file lies on a local block-device filesystem that allows it (ext4,
  // xfs, btrfs, f2fs), and says whether it did. Network and FUSE filesystems
  // (NFS, CephFS), tmpfs and anything unknown answer false and change
  // nothing: their page caches are part of their coherence story. After
  // true, every ReadAt, WriteAt and WriteAtV through this handle must use
  // offsets, part lengths and buffer addresses that are multiples of
  // kDirectIoAlignment (kInvalidArgument otherwise, as the kernel's EINVAL).
  // Durability is unchanged: written bytes (and the size) are durable after
  // a DataSync. Bytes the handle wrote before stay coherent (the kernel
  // writes back cached pages of a range before a direct write to it).
  virtual bool TryDirectIo() { return false; }

  // Takes an exclusive advisory lock on the file through this handle without
  // waiting (flock(2), like FileSystem::LockFile): kUnavailable if another
  // handle, in this process or another, holds one. Released by Unlock() or
  // when this handle's descriptor closes. A writer locks the file it appends
  // to, so a second writer of the same file is refused even if the
  // partition's lock file was removed behind the first one's back.
  virtual absl::Status TryLock() = 0;

  // Releases the lock of TryLock, if held; the handle stays open (readers
  // may share it). Idempotent.
  virtual void Unlock() = 0;

  // Closes the handle, reporting close(2) errors. Any later call fails with
  // kFailedPrecondition. The destructor closes an open handle silently.
  // REQUIRES: no other call on this handle is in flight.
  virtual absl::Status Close() = 0;
};

// How OpenForWrite treats an existing or missing file.
enum class OpenMode {
  kMustExist,        // missing -> kNotFound
  kCreateIfMissing,  // O_CREAT
  kCreateExclusive,  // O_CREAT|O_EXCL: existing -> kAlreadyExists
  kTruncate,         // O_CREAT|O_TRUNC
};

// What Stat() reports. Stat follows symbolic links: size, mtime,
// is_directory and is_regular describe the link's target.
struct FileInfo {
  uint64_t size = 0;
  absl::Time mtime;
  bool is_directory = false;
  // A regular file (not a directory, FIFO, device or socket).
  bool is_regular = false;
  // True if the path itself is a symbolic link. Tree walks (CopyTree,
  // RemoveTree in fs/fs_util.h) use it so that they never follow a link out
  // of the tree.
  bool is_symlink = false;
  // Hard links to the file (st_nlink). OpenForWrite refuses more than one.
  uint64_t link_count = 1;
};

// The type of a directory entry itself (a symbolic link is kSymlink, whatever
// it points to).
enum class FileType { kRegular, kDirectory, kSymlink, kOther };

absl::string_view FileTypeName(FileType type);

struct DirEntry {
  std::string name;
  FileType type = FileType::kOther;
};

// An exclusive advisory lock on a file (flock(2): enforced between processes,
// and between lock objects of one process; on CephFS and NFSv4 also between
// machines). Released when the object is destroyed, or when the process dies.
class FileLock {
 public:
  virtual ~FileLock() = default;
  virtual const std::string& path() const = 0;
};

struct VolumeSpace {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;  // available to this (unprivileged) process
};

// Everyone holding a FileSystem may list, create and remove directories,
// rename and unlink entries, Stat and sync directories. Opening a file (and
// creating a lock file) is private: only fs::FileOpener (fs/file_opener.h)
// may do it, and that target is visible only to the owners of files (the
// segment and metadata layers, the engine's small-file unit, tools, bench
// and testing; docs/ARCHITECTURE.md lists them). So the partition layer, the
// cleaner and placement cannot open a file even by mistake: the dependency
// fails with "is not visible", and a clang build with layering_check refuses
// the include.
class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // fsync of a directory: makes its entries (creates, renames, unlinks)
  // durable.
  virtual absl::Status SyncDir(const std::string& dir) = 0;

  // rename(2): atomically replaces `to` if it exists. Both paths must be on
  // the same volume.
  virtual absl::Status Rename(const std::string& from,
                              const std::string& to) = 0;

  // Removes a file (not a directory). Missing -> kNotFound.
  virtual absl::Status Unlink(const std::string& path) = 0;

  // Removes an empty directory. Missing -> kNotFound.
  virtual absl::Status RemoveDir(const std::string& dir) = 0;

  // Names (not paths) of the entries of `dir`, sorted, without "." and "..".
  virtual absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) = 0;

  // ListDir with the type of each entry (symbolic links not followed). The
  // default implementation Stats each entry; one that vanished meanwhile is
  // left out.
  virtual absl::StatusOr<std::vector<DirEntry>> ListDirEntries(
      const std::string& dir);

  // Size, mtime and type of `path`, following symbolic links (a dangling
  // link is kNotFound).
  virtual absl::StatusOr<FileInfo> Stat(const std::string& path) = 0;

  // mkdir -p. Existing directories are fine. Does not sync the parents; call
  // SyncDir on each created level's parent when durability matters (see
  // CreateDirsDurably in fs/fs_util.h).
  virtual absl::Status CreateDirs(const std::string& dir) = 0;

  // True if `path` exists (file or directory); errors other than "missing"
  // are returned.
  virtual absl::StatusOr<bool> Exists(const std::string& path);

  // Total and free bytes of the volume holding `path` (statvfs).
  virtual absl::StatusOr<VolumeSpace> GetVolumeSpace(
      const std::string& path) = 0;

 private:
  friend class FileOpener;
  friend class FileSystemWrapper;

  // A read handle on the regular file `path` (see "What the seam refuses").
  virtual absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      const std::string& path) = 0;

  // A read-write handle on the regular file `path`, created, truncated or
  // required to exist as `mode` says.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& path, OpenMode mode) = 0;

  // Creates `path` if missing (an empty regular file; the directory entry is
  // not synced: a lock file need not survive a crash) and takes an exclusive
  // lock on it without waiting. kUnavailable if another holder has it.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path) = 0;
};

}  // namespace kaas::fs

#endif  // KAAS_FS_FILE_SYSTEM_H_
