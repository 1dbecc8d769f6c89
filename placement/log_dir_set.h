// File: placement/log_dir_set.h
//
// LogDirSet: a broker's log dirs (the data dir, named "default", plus the
// extra dirs) and the rules that decide which of them holds a partition.
//
// The rules are pure. The engine supplies what only the filesystem knows as a
// predicate, has_partition_data(root_path), which tells whether
// <root_path>/<topic>/<partition> holds the partition's data (the engine
// checks for its manifest):
//
//   const LogDirInfo& assigned = dirs.AssignedRoot(resolver.LogDirOf(t, p));
//   KAAS_ASSIGN_OR_RETURN(
//       LogDirSet::PartitionRoot root,
//       dirs.ResolvePartitionRoot(assigned, [&](const std::string& root) {
//         return fs.Exists(ManifestPath(root, t, p));
//       }));
//   if (root.deviates_from_placement()) LOG(WARNING) << ...;
//
// Thread-safety: immutable after Create; const methods are thread-safe.
// Pointers and references it returns point into the set and stay valid while
// it lives.

#ifndef KAAS_PLACEMENT_LOG_DIR_SET_H_
#define KAAS_PLACEMENT_LOG_DIR_SET_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "placement/log_dir_info.h"

namespace kaas::placement {

class LogDirSet {
 public:
  // How ResolvePartitionRoot chose.
  enum class RootChoice {
    // The assigned root holds the data: the normal case, also after a move
    // (a move copies the data before the placement record changes).
    kAssignedHasData,
    // The assigned root has no data but another root has. Where the data is
    // outranks the record: partitions are routinely opened before the
    // operator records their placement, so their data lands on the data dir,
    // and following a late record would open an empty log (gh #234). Only an
    // explicit move relocates data. The engine should log a warning.
    kDataElsewhere,
    // No root has data: a new partition, created on the assigned root.
    kNoDataAnywhere,
  };

  struct PartitionRoot {
    const LogDirInfo* dir;  // never null
    RootChoice choice;

    bool deviates_from_placement() const {
      return choice == RootChoice::kDataElsewhere;
    }
  };

  // The data dir at `data_dir_path` plus `extra_dirs` in declaration order.
  // Fails with InvalidArgument carrying StorageErrorCode::kInvalidConfig if
  // `data_dir_path` is empty, `extra_dirs` fails ValidateLogDirs, or an extra
  // dir has the data dir's path, lies inside it or contains it.
  static absl::StatusOr<LogDirSet> Create(std::string data_dir_path,
                                          std::vector<LogDirInfo> extra_dirs);

  // The data dir: name "default", default-eligible, never cordoned, no
  // labels.
  const LogDirInfo& DefaultDir() const { return dirs_.front(); }

  // Every log dir: the data dir first, then the extra dirs in declaration
  // order. Never empty.
  const std::vector<LogDirInfo>& All() const { return dirs_; }

  // The log dir named `name` ("default" is the data dir), or null.
  const LogDirInfo* Find(absl::string_view name) const;

  // The root that the placement record `log_dir_name` (a
  // PlacementResolver::LogDirOf answer) assigns. No answer, or a name this
  // broker does not have, means the data dir: an unknown name falls back
  // rather than failing, so a stale or foreign record can never make a
  // partition unopenable.
  const LogDirInfo& AssignedRoot(
      const std::optional<std::string>& log_dir_name) const;

  // Where the partition's data is, given its `assigned` root:
  //   1. `assigned`, if has_partition_data(assigned.path);
  //   2. else the first other root, in All() order, that has data
  //      (kDataElsewhere);
  //   3. else `assigned` (kNoDataAnywhere: the partition is new).
  // Asks the predicate at most once per root, in that order, and stops at the
  // first root with data. An error from the predicate is returned unchanged:
  // an unreadable root may hold the data, and guessing "no data" could open
  // an empty log, or a stale copy elsewhere, in its place. A caller that
  // prefers availability can map errors to false in its predicate.
  //
  // REQUIRES: `assigned` is one of this set's dirs (from AssignedRoot, Find,
  // DefaultDir or All).
  absl::StatusOr<PartitionRoot> ResolvePartitionRoot(
      const LogDirInfo& assigned,
      absl::FunctionRef<absl::StatusOr<bool>(const std::string& root_path)>
          has_partition_data) const;

  // The destination of an explicit move (AlterReplicaLogDirs, KIP-113) to the
  // log dir named `log_dir_name` ("default" is the data dir). Errors:
  //   * no such dir: StorageErrorCode::kLogDirNotFound (Kafka 57), naming it;
  //   * a cordoned dir (it takes no new partitions, moved ones included):
  //     StorageErrorCode::kInvalidRequest (Kafka 42). This holds even when
  //     the partition already lives there.
  absl::StatusOr<const LogDirInfo*> ResolveMoveTarget(
      absl::string_view log_dir_name) const;

 private:
  explicit LogDirSet(std::vector<LogDirInfo> dirs) : dirs_(std::move(dirs)) {}

  bool Owns(const LogDirInfo& dir) const;

  std::vector<LogDirInfo> dirs_;  // dirs_[0] is the data dir
};

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_LOG_DIR_SET_H_
