// File: storage/engine/log_dir_identity.cc

#include "storage/engine/log_dir_identity.h"

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/engine/small_files/small_files.h"

namespace kaas {
namespace {

constexpr absl::string_view kVersionKey = "version";
constexpr absl::string_view kDirectoryIdKey = "directory.id";
constexpr absl::string_view kClusterIdKey = "cluster.id";
// A marker is a few dozen bytes; anything far larger is not one.
constexpr uint64_t kMaxMarkerBytes = 4096;

absl::Status Invalid(absl::string_view file_name, absl::string_view what) {
  return StorageError(StorageErrorCode::kInvalidConfig,
                      absl::StrCat(file_name, ": ", what));
}

bool IsDirectoryId(absl::string_view id) {
  if (id.size() != 22) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '-' && c != '_') return false;
  }
  return true;
}

std::string NewDirectoryId() {
  absl::BitGen random;
  std::string bytes(16, '\0');
  for (char& byte : bytes) {
    byte = static_cast<char>(absl::Uniform<uint32_t>(random, 0, 256));
  }
  std::string id;
  absl::WebSafeBase64Escape(bytes, &id);  // 22 characters, no padding
  return id;
}

}  // namespace

absl::StatusOr<LogDirIdentity> ParseLogDirMarker(absl::string_view text,
                                                 absl::string_view file_name) {
  LogDirIdentity identity;
  absl::flat_hash_set<std::string> seen;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> kv =
        absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.size() != 2) {
      return Invalid(file_name, absl::StrCat("not key=value: \"",
                                             absl::CEscape(line), "\""));
    }
    const std::string key(absl::StripAsciiWhitespace(kv[0]));
    const absl::string_view value = absl::StripAsciiWhitespace(kv[1]);
    if (!seen.insert(key).second) {
      return Invalid(file_name, absl::StrCat(key, " is given twice"));
    }
    if (key == kVersionKey) {
      if (value != "1") {
        return Invalid(file_name,
                       absl::StrCat("version ", value,
                                    " is not one this engine knows (1)"));
      }
    } else if (key == kDirectoryIdKey) {
      if (!IsDirectoryId(value)) {
        return Invalid(file_name,
                       absl::StrCat("directory.id \"", absl::CEscape(value),
                                    "\" is not 22 characters of URL-safe "
                                    "base64"));
      }
      identity.directory_id = std::string(value);
    } else if (key == kClusterIdKey) {
      identity.cluster_id = std::string(value);
    } else {
      return Invalid(file_name,
                     absl::StrCat("unknown key \"", absl::CEscape(key), "\""));
    }
  }
  if (!seen.contains(kVersionKey) || identity.directory_id.empty()) {
    return Invalid(file_name, "version and directory.id are required");
  }
  return identity;
}

std::string LogDirMarkerText(const LogDirIdentity& identity) {
  std::string text = absl::StrCat(
      "# kaas-storage log dir identity: written once, when the dir is "
      "formatted\n",
      kVersionKey, "=1\n", kDirectoryIdKey, "=", identity.directory_id, "\n");
  if (!identity.cluster_id.empty()) {
    absl::StrAppend(&text, kClusterIdKey, "=", identity.cluster_id, "\n");
  }
  return text;
}

absl::StatusOr<std::optional<LogDirIdentity>> ReadLogDirIdentity(
    fs::FileSystem& fs, const std::string& path) {
  const std::string marker = fs::JoinPath(path, kLogDirMarkerFileName);
  absl::StatusOr<std::optional<std::string>> text =
      small_files::ReadSmallFile(fs, marker, kMaxMarkerBytes);
  if (!text.ok()) {
    return StorageError(
        absl::IsOutOfRange(text.status()) ? StorageErrorCode::kInvalidConfig
                                          : StorageErrorCode::kStorageError,
        absl::StrCat("cannot read ", marker, ": ", text.status().message()));
  }
  if (!text->has_value()) return std::nullopt;
  return ParseLogDirMarker(**text, marker);
}

absl::StatusOr<LogDirIdentity> EnsureLogDirIdentity(
    fs::FileSystem& fs, absl::string_view name, const std::string& path,
    absl::string_view cluster_id, FormatPolicy policy) {
  KAAS_ASSIGN_OR_RETURN(bool existed, fs.Exists(path));
  if (existed) {
    KAAS_ASSIGN_OR_RETURN(fs::FileInfo info, fs.Stat(path));
    if (!info.is_directory) {
      return StorageError(
          StorageErrorCode::kInvalidConfig,
          absl::StrCat("log dir ", name, " (", path, ") is not a directory"));
    }
    KAAS_ASSIGN_OR_RETURN(std::optional<LogDirIdentity> identity,
                          ReadLogDirIdentity(fs, path));
    if (identity.has_value()) {
      if (!cluster_id.empty() && !identity->cluster_id.empty() &&
          identity->cluster_id != cluster_id) {
        return StorageError(
            StorageErrorCode::kInvalidConfig,
            absl::StrCat("log dir ", name, " (", path,
                         ") belongs to cluster \"", identity->cluster_id,
                         "\", not to this engine's \"", cluster_id,
                         "\": refusing to serve it"));
      }
      return *identity;
    }
    KAAS_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(path));
    if (entries.empty() && policy != FormatPolicy::kAlways) {
      return StorageError(
          StorageErrorCode::kInvalidConfig,
          absl::StrCat(
              "log dir ", name, " (", path, ") is empty and has no ",
              kLogDirMarkerFileName,
              ": it is not a formatted log dir, and a volume that is not "
              "mounted looks just like this. If it is the volume you mean, "
              "format it (DiskEngine::Options::format_log_dirs; kaas-broker "
              "--format.log.dirs=true)"));
    }
    if (!entries.empty()) {
      LOG(WARNING) << "log dir " << name << " (" << path
                   << ") holds data but no " << kLogDirMarkerFileName
                   << " (written before markers): formatting it";
    }
  }
  KAAS_RETURN_IF_ERROR(fs::CreateDirsDurably(fs, path));
  LogDirIdentity identity{NewDirectoryId(), std::string(cluster_id)};
  KAAS_RETURN_IF_ERROR(
      small_files::WriteSmallFile(fs, fs::JoinPath(path, kLogDirMarkerFileName),
                                  LogDirMarkerText(identity)));
  // Two engines formatting one shared dir at once: the last rename wins,
  // and both then serve what the dir says.
  KAAS_ASSIGN_OR_RETURN(std::optional<LogDirIdentity> written,
                        ReadLogDirIdentity(fs, path));
  if (!written.has_value()) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat(path, ": the marker just written is gone"));
  }
  LOG(INFO) << "formatted log dir " << name << " (" << path
            << "): directory.id " << written->directory_id;
  return *written;
}

}  // namespace kaas
