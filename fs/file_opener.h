// File: fs/file_opener.h
//
// The capability to open files. FileSystem keeps OpenForRead, OpenForWrite
// and LockFile private (fs/file_system.h); FileOpener is the one way to call
// them, and its target //fs:file_opener is visible only to the owners of
// files (//bazel:file_openers, the table in docs/ARCHITECTURE.md):
//
//   * //storage/segment: segment logs and indexes;
//   * //storage/metadata: metadata files and the partition lock;
//   * //storage/engine/small_files: the engine's topic JSON, move marker and
//     partition copies;
//   * //tools, //bench, //testing and //fs itself.
//
// Everyone else holding a FileSystem may only use directory operations. The
// file helpers that open files (fs/file_util.h) and the forwarding wrapper
// (fs/file_system_wrapper.h) are part of the same target.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<fs::ReadableFile> file,
//                    fs::FileOpener::OpenForRead(fs, path));
//
// Thread-safety: as the FileSystem's.

#ifndef KAAS_FS_FILE_OPENER_H_
#define KAAS_FS_FILE_OPENER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "fs/file_system.h"

namespace kaas::fs {

class FileOpener {
 public:
  FileOpener() = delete;

  static absl::StatusOr<std::unique_ptr<ReadableFile>> OpenForRead(
      FileSystem& fs, const std::string& path) {
    return fs.OpenForRead(path);
  }

  static absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      FileSystem& fs, const std::string& path, OpenMode mode) {
    return fs.OpenForWrite(path, mode);
  }

  static absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      FileSystem& fs, const std::string& path) {
    return fs.LockFile(path);
  }
};

}  // namespace kaas::fs

#endif  // KAAS_FS_FILE_OPENER_H_
