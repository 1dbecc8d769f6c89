// File: storage/engine/small_files/small_files.cc

#include "storage/engine/small_files/small_files.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "fs/file_util.h"

namespace kaas::small_files {

absl::StatusOr<std::optional<std::string>> ReadSmallFile(
    fs::FileSystem& fs, const std::string& path, uint64_t max_bytes) {
  absl::StatusOr<std::string> content =
      fs::ReadFileToString(fs, path, max_bytes);
  if (absl::IsNotFound(content.status())) return std::nullopt;
  if (!content.ok()) return content.status();
  return *std::move(content);
}

absl::Status WriteSmallFile(fs::FileSystem& fs, const std::string& path,
                            absl::string_view contents) {
  return fs::AtomicReplaceFile(fs, path, contents);
}

absl::Status CopyPartitionDir(fs::FileSystem& fs, const std::string& from,
                              const std::string& to) {
  return fs::CopyTree(fs, from, to);
}

}  // namespace kaas::small_files
