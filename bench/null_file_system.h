// File: bench/null_file_system.h
//
// A filesystem for micro-benchmarks of the engine's CPU cost: the append
// path without the I/O. Everything lives in memory:
//   * segment logs (names ending in ".log") are sinks: writes only advance
//     the file's size and discard the bytes, reads return zeros, so a
//     benchmark can append gigabytes without holding them;
//   * every other file (metadata, indexes: small) keeps its bytes, because
//     the engine reads back what it wrote (the manifest at take-over);
//   * syncs (DataSync, Sync, SyncDir) do nothing and always succeed;
//   * directories form an in-memory namespace ("/" always exists).
// A partition reopened on it recovers an empty log (its .log holds zeros),
// so only a first open is meaningful.
//
//   bench::NullFileSystem null_fs;
//   DiskEngine::Options options;
//   options.data_dir = "/null/engine";
//   options.fs = &null_fs;
//
// Thread-safety: thread-safe, following the contract of fs/file_system.h.

#ifndef KAAS_BENCH_NULL_FILE_SYSTEM_H_
#define KAAS_BENCH_NULL_FILE_SYSTEM_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "fs/file_system.h"

namespace kaas::bench {

class NullFileSystem final : public fs::FileSystem {
 public:
  NullFileSystem() = default;
  NullFileSystem(const NullFileSystem&) = delete;
  NullFileSystem& operator=(const NullFileSystem&) = delete;

  absl::Status SyncDir(const std::string& dir) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Unlink(const std::string& path) override;
  absl::Status RemoveDir(const std::string& dir) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override;
  absl::StatusOr<fs::FileInfo> Stat(const std::string& path) override;
  absl::Status CreateDirs(const std::string& dir) override;
  // 1 TiB total, all of it free.
  absl::StatusOr<fs::VolumeSpace> GetVolumeSpace(
      const std::string& path) override;

  // The contents of a file and its size; shared by its open handles.
  struct FileData;

 private:
  // Opening is private, as in fs::FileSystem (fs/file_opener.h).
  absl::StatusOr<std::unique_ptr<fs::ReadableFile>> OpenForRead(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<fs::WritableFile>> OpenForWrite(
      const std::string& path, fs::OpenMode mode) override;
  // An in-memory lock table (one holder per path).
  absl::StatusOr<std::unique_ptr<fs::FileLock>> LockFile(
      const std::string& path) override;

  class Lock;

  struct Node {
    bool is_directory = false;
    std::shared_ptr<FileData> file;  // null for directories
  };

  // REQUIRES: `path` normalised (no trailing '/').
  absl::Status CheckParentDirLocked(const std::string& path) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Normalised absolute paths ("/a/b"); "/" is implicit.
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> locked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::bench

#endif  // KAAS_BENCH_NULL_FILE_SYSTEM_H_
