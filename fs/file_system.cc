// File: fs/file_system.cc
//
// Default implementations of the non-pure virtual methods of the filesystem
// seam (fs/file_system.h).

#include "fs/file_system.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

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

absl::StatusOr<size_t> ReadableFile::SendTo(uint64_t offset, size_t n,
                                            int out_fd) const {
  // One chunk at a time: what a non-blocking out_fd refuses is not lost, the
  // caller resumes at offset + the count returned.
  constexpr size_t kChunkBytes = 64 * 1024;
  std::string chunk;
  size_t sent = 0;
  while (sent < n) {
    chunk.resize(std::min(kChunkBytes, n - sent));
    absl::StatusOr<size_t> got = ReadAt(offset + sent, chunk.size(), &chunk[0]);
    if (!got.ok()) return got.status();
    if (*got == 0) break;  // end of file
    size_t written = 0;
    while (written < *got) {
      const ssize_t w = ::write(out_fd, chunk.data() + written, *got - written);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return sent + written;
      }
      if (w < 0) {
        return absl::ErrnoToStatus(
            errno, absl::StrCat("send \"", path(), "\" at offset ",
                                offset + sent + written));
      }
      written += static_cast<size_t>(w);
    }
    sent += written;
    if (*got < chunk.size()) break;  // end of file
  }
  return sent;
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
