// File: tools/read_only_file_system.h
//
// A FileSystem (fs/file_system.h) that forwards reads to another one and
// refuses every change: `kaaslog verify`, `dump` and `read` look at a data dir
// only through it, so they cannot modify what they inspect even by mistake
// (a refused call fails with kFailedPrecondition naming the operation and the
// path, and is counted).
//
// Thread-safety: thread-safe if the wrapped filesystem is.

#ifndef KAAS_TOOLS_READ_ONLY_FILE_SYSTEM_H_
#define KAAS_TOOLS_READ_ONLY_FILE_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "fs/file_system_wrapper.h"

namespace kaas::tools {

class ReadOnlyFileSystem final : public fs::FileSystemWrapper {
 public:
  // `base` is not owned and must outlive this object.
  explicit ReadOnlyFileSystem(fs::FileSystem* base)
      : fs::FileSystemWrapper(base) {}

  // Refused (kFailedPrecondition), as are OpenForWrite and LockFile;
  // everything else is forwarded.
  absl::Status SyncDir(const std::string& dir) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Unlink(const std::string& path) override;
  absl::Status RemoveDir(const std::string& dir) override;
  absl::Status CreateDirs(const std::string& dir) override;

  // How many changes were refused.
  int64_t refused() const { return refused_.load(); }

 private:
  absl::StatusOr<std::unique_ptr<fs::WritableFile>> OpenForWrite(
      const std::string& path, fs::OpenMode mode) override;
  absl::StatusOr<std::unique_ptr<fs::FileLock>> LockFile(
      const std::string& path) override;

  absl::Status Refuse(absl::string_view operation, const std::string& path);

  std::atomic<int64_t> refused_{0};
};

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_READ_ONLY_FILE_SYSTEM_H_
