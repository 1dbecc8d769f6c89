// File: fs/file_system_wrapper.h
//
// A FileSystem that forwards every call to another one (LevelDB's EnvWrapper,
// RocksDB's FileSystemWrapper): a wrapper that changes a few operations
// derives from it and overrides only those. Exists() is not forwarded: it
// comes from the wrapper's own Stat(), so a wrapper that changes Stat changes
// Exists too.
//
//   class CountingFileSystem final : public fs::FileSystemWrapper {
//    public:
//     using FileSystemWrapper::FileSystemWrapper;
//     absl::Status SyncDir(const std::string& dir) override {
//       ++dir_syncs_;
//       return FileSystemWrapper::SyncDir(dir);
//     }
//   };
//
// It can open files, so it lives in //fs:file_opener, visible only to the
// owners of files.
//
// Thread-safety: as thread-safe as the target.

#ifndef KAAS_FS_FILE_SYSTEM_WRAPPER_H_
#define KAAS_FS_FILE_SYSTEM_WRAPPER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fs/file_system.h"

namespace kaas::fs {

class FileSystemWrapper : public FileSystem {
 public:
  // `target` is not owned and must outlive this object.
  explicit FileSystemWrapper(FileSystem* target) : target_(target) {}

  FileSystem* target() const { return target_; }

  absl::Status SyncDir(const std::string& dir) override {
    return target_->SyncDir(dir);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    return target_->Rename(from, to);
  }
  absl::Status Unlink(const std::string& path) override {
    return target_->Unlink(path);
  }
  absl::Status RemoveDir(const std::string& dir) override {
    return target_->RemoveDir(dir);
  }
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override {
    return target_->ListDir(dir);
  }
  absl::StatusOr<std::vector<DirEntry>> ListDirEntries(
      const std::string& dir) override {
    return target_->ListDirEntries(dir);
  }
  absl::StatusOr<FileInfo> Stat(const std::string& path) override {
    return target_->Stat(path);
  }
  absl::Status CreateDirs(const std::string& dir) override {
    return target_->CreateDirs(dir);
  }
  absl::StatusOr<VolumeSpace> GetVolumeSpace(const std::string& path) override {
    return target_->GetVolumeSpace(path);
  }

 protected:
  // The opening capability (fs/file_system.h): a wrapper may change it and
  // forward here; only the owners of files reach it, through FileOpener.
  absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      const std::string& path) override {
    return target_->OpenForRead(path);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& path, OpenMode mode) override {
    return target_->OpenForWrite(path, mode);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& path) override {
    return target_->LockFile(path);
  }

 private:
  FileSystem* const target_;
};

}  // namespace kaas::fs

#endif  // KAAS_FS_FILE_SYSTEM_WRAPPER_H_
