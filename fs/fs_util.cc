// File: fs/fs_util.cc

#include "fs/fs_util.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "fs/file_system.h"

namespace kaas::fs {
namespace {

constexpr absl::string_view kTempSuffix = ".tmp";
constexpr size_t kTempHexDigits = 16;

std::string Quote(absl::string_view path) {
  return absl::StrCat("\"", path, "\"");
}

// `path` without its trailing slashes ("/" stays "/").
absl::string_view StripTrailingSlashes(absl::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return path;
}

bool IsLowerHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Removes the file, symbolic link or directory tree at `path`; a missing
// `path` is fine.
absl::Status RemoveEntry(FileSystem& fs, const std::string& path) {
  absl::StatusOr<FileInfo> info = fs.Stat(path);
  if (!info.ok()) {
    if (!absl::IsNotFound(info.status())) return info.status();
    // Missing, or a dangling symbolic link (Stat follows links): unlink
    // whatever name is there.
    absl::Status unlinked = fs.Unlink(path);
    if (absl::IsNotFound(unlinked)) return absl::OkStatus();
    return unlinked;
  }
  if (info->is_symlink || !info->is_directory) return fs.Unlink(path);
  KAAS_ASSIGN_OR_RETURN(const std::vector<std::string> names, fs.ListDir(path));
  for (const std::string& name : names) {
    KAAS_RETURN_IF_ERROR(RemoveEntry(fs, JoinPath(path, name)));
  }
  return fs.RemoveDir(path);
}

}  // namespace

namespace fs_util_internal {

std::string JoinPathImpl(std::initializer_list<absl::string_view> parts) {
  std::string result;
  for (absl::string_view part : parts) {
    if (part.empty()) continue;
    if (result.empty()) {
      result.assign(part.data(), part.size());
      continue;
    }
    while (!result.empty() && result.back() == '/') result.pop_back();
    while (!part.empty() && part.front() == '/') part.remove_prefix(1);
    absl::StrAppend(&result, "/", part);
  }
  return result;
}

}  // namespace fs_util_internal

std::string Dirname(absl::string_view path) {
  if (path.empty()) return ".";
  path = StripTrailingSlashes(path);
  const size_t last_slash = path.rfind('/');
  if (last_slash == absl::string_view::npos) return ".";
  absl::string_view parent = StripTrailingSlashes(path.substr(0, last_slash));
  if (parent.empty()) return "/";
  return std::string(parent);
}

std::string Basename(absl::string_view path) {
  if (path.empty()) return ".";
  path = StripTrailingSlashes(path);
  if (path == "/") return "/";
  const size_t last_slash = path.rfind('/');
  if (last_slash == absl::string_view::npos) return std::string(path);
  return std::string(path.substr(last_slash + 1));
}

absl::Status WithContext(const absl::Status& status,
                         absl::string_view context) {
  if (status.ok()) return status;
  absl::Status annotated(status.code(),
                         absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload(
      [&annotated](absl::string_view type_url, const absl::Cord& payload) {
        annotated.SetPayload(type_url, payload);
      });
  return annotated;
}

std::string NewAtomicTempFileName(absl::string_view path) {
  absl::BitGen random;
  return absl::StrCat(
      path, ".", absl::Hex(absl::Uniform<uint64_t>(random), absl::kZeroPad16),
      kTempSuffix);
}

bool IsAtomicTempFileName(absl::string_view name) {
  // "<at least one char>.<16 hex>.tmp"
  if (name.size() < 1 + 1 + kTempHexDigits + kTempSuffix.size()) return false;
  if (name.substr(name.size() - kTempSuffix.size()) != kTempSuffix) {
    return false;
  }
  name.remove_suffix(kTempSuffix.size());
  for (char c : name.substr(name.size() - kTempHexDigits)) {
    if (!IsLowerHexDigit(c)) return false;
  }
  name.remove_suffix(kTempHexDigits);
  return name.back() == '.';
}

absl::Status CreateDirsDurably(FileSystem& fs, const std::string& dir) {
  const std::string context =
      absl::StrCat("create directories ", Quote(dir), " durably");
  // The levels that do not exist yet, deepest first.
  std::vector<std::string> missing;
  for (std::string level = dir;;) {
    absl::StatusOr<bool> exists = fs.Exists(level);
    if (!exists.ok()) return WithContext(exists.status(), context);
    if (*exists) break;
    std::string parent = Dirname(level);
    missing.push_back(std::move(level));
    if (parent == missing.back()) break;  // "/" or "." cannot go higher.
    level = std::move(parent);
  }
  // Also rejects an existing `dir` that is not a directory.
  KAAS_RETURN_IF_ERROR(WithContext(fs.CreateDirs(dir), context));
  for (auto level = missing.rbegin(); level != missing.rend(); ++level) {
    KAAS_RETURN_IF_ERROR(WithContext(fs.SyncDir(Dirname(*level)), context));
  }
  return absl::OkStatus();
}

absl::Status RemoveTree(FileSystem& fs, const std::string& dir) {
  const std::string context = absl::StrCat("remove tree ", Quote(dir));
  KAAS_RETURN_IF_ERROR(WithContext(RemoveEntry(fs, dir), context));
  // Also when `dir` was already missing: a previous, interrupted RemoveTree
  // may have removed it without syncing the parent. A missing parent means
  // there is nothing left to make durable.
  absl::Status synced = fs.SyncDir(Dirname(dir));
  if (absl::IsNotFound(synced)) return absl::OkStatus();
  return WithContext(synced, context);
}

}  // namespace kaas::fs
