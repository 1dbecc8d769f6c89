#include "placement/log_dir_info.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "placement/error_messages.h"
#include "re2/re2.h"

namespace kaas::placement {
namespace {

constexpr absl::string_view kNamePattern = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

// The lexical identity of a path: repeated '/' collapsed, trailing '/'
// dropped (except for the root itself).
std::string PathKey(absl::string_view path) {
  std::string key;
  key.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !key.empty() && key.back() == '/') continue;
    key.push_back(c);
  }
  if (key.size() > 1 && key.back() == '/') key.pop_back();
  return key;
}

// Whether `inner` lies strictly inside `outer`, both PathKeys.
bool IsInside(absl::string_view inner, absl::string_view outer) {
  if (inner.size() <= outer.size() || !absl::StartsWith(inner, outer)) {
    return false;
  }
  return outer == "/" || inner[outer.size()] == '/';
}

absl::Status ValidateName(size_t index, absl::string_view name) {
  if (name == kDefaultLogDirName) {
    return LogDirsEntryError(
        index,
        absl::StrCat("name ", Quote(name), " is reserved for the data dir"));
  }
  if (!IsValidLogDirName(name)) {
    return LogDirsEntryError(
        index, absl::StrCat("name ", Quote(name), " must match ", kNamePattern,
                            " (lower-case letters, digits and '-', at most ",
                            kMaxLogDirNameLength, " characters)"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePath(size_t index, absl::string_view path) {
  if (path.empty() || path.front() != '/') {
    return LogDirsEntryError(
        index, absl::StrCat("path ", Quote(path),
                            " must be absolute (start with '/')"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return LogDirsEntryError(index,
                             absl::StrCat("path ", Quote(path),
                                          " must not contain a NUL character"));
  }
  return absl::OkStatus();
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const LogDirInfo& dir) {
  os << "{name: " << Quote(dir.name) << ", path: " << Quote(dir.path)
     << ", default_eligible: " << (dir.default_eligible ? "true" : "false")
     << ", cordoned: " << (dir.cordoned ? "true" : "false") << ", labels: {";
  const char* separator = "";
  for (const auto& [key, value] : dir.labels) {
    os << separator << Quote(key) << ": " << Quote(value);
    separator = ", ";
  }
  return os << "}}";
}

bool IsValidLogDirName(absl::string_view name) {
  static const RE2* const kName =
      new RE2(re2::StringPiece(kNamePattern.data(), kNamePattern.size()));
  return name.size() <= kMaxLogDirNameLength &&
         RE2::FullMatch(re2::StringPiece(name.data(), name.size()), *kName);
}

bool LogDirPathsEqual(absl::string_view a, absl::string_view b) {
  return PathKey(a) == PathKey(b);
}

bool LogDirPathsOverlap(absl::string_view a, absl::string_view b) {
  const std::string key_a = PathKey(a);
  const std::string key_b = PathKey(b);
  return key_a == key_b || IsInside(key_a, key_b) || IsInside(key_b, key_a);
}

absl::Status ValidateLogDirs(const std::vector<LogDirInfo>& dirs) {
  // First index of each name and of each path key, for duplicate reports.
  absl::flat_hash_map<absl::string_view, size_t> index_of_name;
  absl::flat_hash_map<std::string, size_t> index_of_path;
  for (size_t i = 0; i < dirs.size(); ++i) {
    const LogDirInfo& dir = dirs[i];
    KAAS_RETURN_IF_ERROR(ValidateName(i, dir.name));
    if (auto [it, inserted] = index_of_name.emplace(dir.name, i); !inserted) {
      return LogDirsEntryError(
          i, absl::StrCat("name ", Quote(dir.name),
                          " is already used by entry ", it->second));
    }
    KAAS_RETURN_IF_ERROR(ValidatePath(i, dir.path));
    if (auto [it, inserted] = index_of_path.emplace(PathKey(dir.path), i);
        !inserted) {
      return LogDirsEntryError(
          i,
          absl::StrCat("path ", Quote(dir.path), " is already used by entry ",
                       it->second, " (", Quote(dirs[it->second].path), ")"));
    }
    // A log dir inside another would show up there as a topic dir, and both
    // would claim the partitions below it.
    for (size_t j = 0; j < i; ++j) {
      if (LogDirPathsOverlap(dir.path, dirs[j].path)) {
        return LogDirsEntryError(
            i, absl::StrCat("path ", Quote(dir.path), " and the path of entry ",
                            j, " (", Quote(dirs[j].path),
                            ") lie inside one another; log dirs must not "
                            "nest"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace kaas::placement
