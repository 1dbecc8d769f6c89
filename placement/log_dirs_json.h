// File: placement/log_dirs_json.h
//
// The JSON form of a broker's extra log dirs (env KAAS_LOG_DIRS, shared by
// the broker, its init container and the operator):
//
//   [{"name": "fast", "path": "/vols/fast", "defaultEligible": false,
//     "cordoned": false, "labels": {"tier": "ssd"}},
//    {"name": "bulk", "path": "/vols/bulk"}]
//
// `name` and `path` are required; `defaultEligible` defaults to true,
// `cordoned` to false and `labels` to {}. Declaration order is significant:
// it is the order of LogDirSet::All() and of the data-location search
// (placement/log_dir_set.h). The data dir is not listed; it is always the
// log dir "default".
//
// Deliberate differences from the original engine's parser:
//   * an unknown key is an error that names it (the original ignored it), so
//     that an operator's typo such as "cordonned": true cannot silently leave
//     a volume in service;
//   * entries are validated (ValidateLogDirs in placement/log_dir_info.h):
//     the name rule, unique names and paths, absolute paths. The original
//     only rejected the reserved name "default".
//
// The text is read through protobuf's proto3 JSON mapping of
// kaas.placement.LogDir (placement/log_dirs.proto), so its rules apply:
// strings must be UTF-8, a key may not appear twice in an object, `null`
// means "absent", and the proto field names ("default_eligible") are
// accepted as well as the camelCase keys. Value types are strict: booleans
// are true or false, names, paths and label values are strings. The protobuf
// 3.21 parser accepts some text that is not JSON (trailing commas, single
// quotes, unquoted keys); do not rely on that.
//
// Thread-safety: pure functions, thread-safe.

#ifndef KAAS_PLACEMENT_LOG_DIRS_JSON_H_
#define KAAS_PLACEMENT_LOG_DIRS_JSON_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/log_dir_info.h"

namespace kaas::placement {

// Parses the JSON list above. Empty or whitespace-only input is the empty
// list (the classic single-volume layout).
//
// Errors are InvalidArgument statuses carrying StorageErrorCode::
// kInvalidConfig; the message starts with "log dirs: " for the document as a
// whole (not JSON, not an array) or "log dirs entry <i>: " for an entry (not
// an object, unknown key, wrong value type, ValidateLogDirs violation), e.g.
//   log dirs entry 1: unknown field "cordonned" (known fields: name, ...)
absl::StatusOr<std::vector<LogDirInfo>> ParseLogDirsJson(
    absl::string_view json);

// The JSON form of `dirs`, compact and deterministic (keys in the order
// above, labels sorted by key, `labels` omitted when empty; both booleans
// always written). ParseLogDirsJson(LogDirsToJson(d)) == d for every `d` that
// passes ValidateLogDirs.
//
// REQUIRES: every string in `dirs` is valid UTF-8 (always true for the output
// of ParseLogDirsJson). JSON cannot carry other bytes; protobuf logs an error
// and drops them.
std::string LogDirsToJson(const std::vector<LogDirInfo>& dirs);

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_LOG_DIRS_JSON_H_
