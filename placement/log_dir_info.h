// File: placement/log_dir_info.h
//
// LogDirInfo, the description of one log dir (a volume root that holds
// partition directories), and the rules every list of log dirs must follow.
//
// A broker has one data dir (the log dir named "default") and zero or more
// extra log dirs declared by the operator (env KAAS_LOG_DIRS, parsed by
// placement/log_dirs_json.h). Each extra dir has a name that placement records
// refer to (KafkaTopic.status.volumeAssignments: "0": "fast") and the path of
// its root.
//
// Name rule: a log dir name is a DNS label (RFC 1123, as Kubernetes uses for
// object names): 1 to 63 characters of lower-case ASCII letters, digits and
// '-', starting and ending with a letter or a digit, i.e.
// [a-z0-9]([-a-z0-9]*[a-z0-9])?. Names end up in Kubernetes resources, in
// paths (/vols/<name>) and in metric labels; the rule keeps them valid in all
// three. "default" is reserved for the data dir.
//
// Thread-safety: LogDirInfo is a plain value (thread-compatible); the free
// functions are pure and thread-safe.

#ifndef KAAS_PLACEMENT_LOG_DIR_INFO_H_
#define KAAS_PLACEMENT_LOG_DIR_INFO_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kaas::placement {

// The name of the data dir. No extra log dir may use it.
inline constexpr absl::string_view kDefaultLogDirName = "default";

// The longest valid log dir name (a DNS label).
inline constexpr size_t kMaxLogDirNameLength = 63;

struct LogDirInfo {
  // Unique among the broker's log dirs; see the name rule above.
  std::string name;
  // Absolute path of the dir's root; partitions live in <path>/<topic>/<p>.
  std::string path;
  // Whether the operator may place new partitions here when a topic names
  // neither volumes nor a volume selector.
  bool default_eligible = true;
  // A cordoned dir keeps serving the partitions it holds but receives no new
  // placements and no moves.
  bool cordoned = false;
  // Free-form labels matched by a topic's volume selector. Ordered, so that
  // printing and serialization are deterministic.
  std::map<std::string, std::string> labels;

  friend bool operator==(const LogDirInfo& a, const LogDirInfo& b) {
    return a.name == b.name && a.path == b.path &&
           a.default_eligible == b.default_eligible &&
           a.cordoned == b.cordoned && a.labels == b.labels;
  }
  friend bool operator!=(const LogDirInfo& a, const LogDirInfo& b) {
    return !(a == b);
  }
};

// For logs and test failure messages, e.g.
// {name: "fast", path: "/vols/fast", default_eligible: true, cordoned: false,
//  labels: {tier: "ssd"}}.
std::ostream& operator<<(std::ostream& os, const LogDirInfo& dir);

// True if `name` follows the name rule above. "default" follows it (it is
// reserved, not malformed).
bool IsValidLogDirName(absl::string_view name);

// True if `a` and `b` name the same directory lexically: equal after
// collapsing repeated '/' and dropping a trailing '/'. Symbolic links, "." and
// ".." are not resolved (this library never touches the filesystem).
bool LogDirPathsEqual(absl::string_view a, absl::string_view b);

// True if `a` and `b` name the same directory or one lies inside the other,
// compared lexically as LogDirPathsEqual does: "/data" and "/data/fast"
// overlap, "/data" and "/data2" do not.
bool LogDirPathsOverlap(absl::string_view a, absl::string_view b);

// Checks a list of extra log dirs (the data dir is not part of it):
//   * every name follows the name rule and is not "default";
//   * names are unique;
//   * every path is absolute (starts with '/') and has no NUL character;
//   * paths are unique (compared with LogDirPathsEqual) and none lies inside
//     another (LogDirPathsOverlap): a nested log dir would be listed as a
//     topic dir of its parent.
// Returns the first violation as an InvalidArgument status carrying
// StorageErrorCode::kInvalidConfig, whose message names the entry index, the
// field and the value, e.g.
//   log dirs entry 2: name "Fast_1" must match [a-z0-9]([-a-z0-9]*[a-z0-9])?
//   (lower-case letters, digits and '-', at most 63 characters)
absl::Status ValidateLogDirs(const std::vector<LogDirInfo>& dirs);

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_LOG_DIR_INFO_H_
