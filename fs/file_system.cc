// File: fs/file_system.cc
//
// Default implementations of the non-pure virtual methods of the filesystem
// seam (fs/file_system.h).

#include "fs/file_system.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace kaas::fs {

absl::string_view FileTypeName(FileType type) {
  switch (type) {
    case FileType::kRegular:
      return "regular file";
    case FileType::kDirectory:
      return "directory";
    case FileType::kSymlink:
      return "symbolic link";
    case FileType::kOther:
      return "special file (FIFO, device or socket)";
  }
  return "unknown";
}

absl::Status WritableFile::WriteAtV(uint64_t offset,
                                    absl::Span<const absl::string_view> parts) {
  for (absl::string_view part : parts) {
    if (part.empty()) continue;
    absl::Status status = WriteAt(offset, part);
    if (!status.ok()) return status;
    offset += part.size();
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FileSystem::Exists(const std::string& path) {
  absl::StatusOr<FileInfo> info = Stat(path);
  if (info.ok()) return true;
  if (absl::IsNotFound(info.status())) return false;
  return info.status();
}

absl::StatusOr<std::vector<DirEntry>> FileSystem::ListDirEntries(
    const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> names = ListDir(dir);
  if (!names.ok()) return names.status();
  std::vector<DirEntry> entries;
  entries.reserve(names->size());
  for (std::string& name : *names) {
    std::string path = dir;
    if (path.empty() || path.back() != '/') path += '/';
    path += name;
    absl::StatusOr<FileInfo> info = Stat(path);
    if (absl::IsNotFound(info.status())) continue;  // vanished meanwhile
    if (!info.ok()) return info.status();
    FileType type = info->is_symlink     ? FileType::kSymlink
                    : info->is_directory ? FileType::kDirectory
                    : info->is_regular   ? FileType::kRegular
                                         : FileType::kOther;
    entries.push_back({std::move(name), type});
  }
  return entries;
}

}  // namespace kaas::fs
