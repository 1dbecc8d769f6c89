#include "placement/log_dir_set.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "placement/error_messages.h"

namespace kaas::placement {

absl::StatusOr<LogDirSet> LogDirSet::Create(
    std::string data_dir_path, std::vector<LogDirInfo> extra_dirs) {
  if (data_dir_path.empty()) {
    return LogDirsConfigError("the data dir path is empty");
  }
  KAAS_RETURN_IF_ERROR(ValidateLogDirs(extra_dirs));
  for (size_t i = 0; i < extra_dirs.size(); ++i) {
    if (LogDirPathsEqual(extra_dirs[i].path, data_dir_path)) {
      return LogDirsEntryError(
          i, absl::StrCat("path ", Quote(extra_dirs[i].path),
                          " is the data dir (", Quote(data_dir_path), ")"));
    }
    if (LogDirPathsOverlap(extra_dirs[i].path, data_dir_path)) {
      return LogDirsEntryError(
          i, absl::StrCat("path ", Quote(extra_dirs[i].path),
                          " and the data dir (", Quote(data_dir_path),
                          ") lie inside one another; log dirs must not nest"));
    }
  }

  std::vector<LogDirInfo> dirs;
  dirs.reserve(1 + extra_dirs.size());
  LogDirInfo& data_dir = dirs.emplace_back();
  data_dir.name = std::string(kDefaultLogDirName);
  data_dir.path = std::move(data_dir_path);
  for (LogDirInfo& dir : extra_dirs) dirs.push_back(std::move(dir));
  return LogDirSet(std::move(dirs));
}

const LogDirInfo* LogDirSet::Find(absl::string_view name) const {
  for (const LogDirInfo& dir : dirs_) {
    if (dir.name == name) return &dir;
  }
  return nullptr;
}

const LogDirInfo& LogDirSet::AssignedRoot(
    const std::optional<std::string>& log_dir_name) const {
  if (!log_dir_name.has_value()) return DefaultDir();
  const LogDirInfo* dir = Find(*log_dir_name);
  return dir != nullptr ? *dir : DefaultDir();
}

absl::StatusOr<LogDirSet::PartitionRoot> LogDirSet::ResolvePartitionRoot(
    const LogDirInfo& assigned,
    absl::FunctionRef<absl::StatusOr<bool>(const std::string& root_path)>
        has_partition_data) const {
  CHECK(Owns(assigned)) << "ResolvePartitionRoot: " << assigned
                        << " is not a dir of this LogDirSet";
  KAAS_ASSIGN_OR_RETURN(const bool assigned_has_data,
                        has_partition_data(assigned.path));
  if (assigned_has_data) {
    return PartitionRoot{&assigned, RootChoice::kAssignedHasData};
  }
  for (const LogDirInfo& dir : dirs_) {
    if (&dir == &assigned) continue;
    KAAS_ASSIGN_OR_RETURN(const bool has_data, has_partition_data(dir.path));
    if (has_data) return PartitionRoot{&dir, RootChoice::kDataElsewhere};
  }
  return PartitionRoot{&assigned, RootChoice::kNoDataAnywhere};
}

absl::StatusOr<const LogDirInfo*> LogDirSet::ResolveMoveTarget(
    absl::string_view log_dir_name) const {
  const LogDirInfo* dir = Find(log_dir_name);
  if (dir == nullptr) {
    std::vector<absl::string_view> names;
    for (const LogDirInfo& known : dirs_) names.push_back(known.name);
    return StorageError(
        StorageErrorCode::kLogDirNotFound,
        absl::StrCat("unknown log dir ", Quote(log_dir_name),
                     " (this broker has: ", absl::StrJoin(names, ", "), ")"));
  }
  if (dir->cordoned) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        absl::StrCat("log dir ", Quote(log_dir_name),
                                     " is cordoned: it takes no new "
                                     "partitions, moved ones included"));
  }
  return dir;
}

bool LogDirSet::Owns(const LogDirInfo& dir) const {
  for (const LogDirInfo& own : dirs_) {
    if (&own == &dir) return true;
  }
  return false;
}

}  // namespace kaas::placement
