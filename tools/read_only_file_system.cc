// File: tools/read_only_file_system.cc

#include "tools/read_only_file_system.h"

#include "absl/strings/str_cat.h"

namespace kaas::tools {

absl::StatusOr<std::unique_ptr<fs::WritableFile>>
ReadOnlyFileSystem::OpenForWrite(const std::string& path, fs::OpenMode mode) {
  return Refuse("open for writing", path);
}

absl::Status ReadOnlyFileSystem::SyncDir(const std::string& dir) {
  return Refuse("sync directory", dir);
}

absl::Status ReadOnlyFileSystem::Rename(const std::string& from,
                                        const std::string& to) {
  return Refuse("rename", absl::StrCat(from, " to ", to));
}

absl::Status ReadOnlyFileSystem::Unlink(const std::string& path) {
  return Refuse("unlink", path);
}

absl::Status ReadOnlyFileSystem::RemoveDir(const std::string& dir) {
  return Refuse("remove directory", dir);
}

absl::Status ReadOnlyFileSystem::CreateDirs(const std::string& dir) {
  return Refuse("create directory", dir);
}

absl::StatusOr<std::unique_ptr<fs::FileLock>> ReadOnlyFileSystem::LockFile(
    const std::string& path) {
  return Refuse("lock (creating it)", path);
}

absl::Status ReadOnlyFileSystem::Refuse(absl::string_view operation,
                                        const std::string& path) {
  refused_.fetch_add(1);
  return absl::FailedPreconditionError(
      absl::StrCat("read-only filesystem: refused to ", operation, " ", path));
}

}  // namespace kaas::tools
