// File: fs/file_system.cc
//
// Default implementations of the non-pure virtual methods of the filesystem
// seam (fs/file_system.h).

#include "fs/file_system.h"

#include "absl/status/status.h"

namespace kaas::fs {

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

}  // namespace kaas::fs
