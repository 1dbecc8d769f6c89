// File: placement/static_placement.h
//
// StaticPlacement: a PlacementResolver held in memory and changed at runtime,
// for brokers without a cluster-side placement record (dev mode, topics
// seeded from the environment) and for tests.
//
//   StaticPlacement placement;
//   placement.Assign("orders", 0, "fast");
//   placement.LogDirOf("orders", 0);  // "fast"
//
// Thread-safety: thread-safe. Lookups share a reader lock; Assign/Unassign
// take it exclusively.

#ifndef KAAS_PLACEMENT_STATIC_PLACEMENT_H_
#define KAAS_PLACEMENT_STATIC_PLACEMENT_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "placement/placement_resolver.h"

namespace kaas::placement {

class StaticPlacement final : public PlacementResolver {
 public:
  StaticPlacement() = default;
  StaticPlacement(const StaticPlacement&) = delete;
  StaticPlacement& operator=(const StaticPlacement&) = delete;

  // Records that `topic`/`partition` lives in the log dir named `log_dir`,
  // replacing any earlier assignment. The name is not checked against the
  // broker's log dirs: like any resolver's answer, an unknown name resolves
  // to the data dir.
  void Assign(absl::string_view topic, int32_t partition,
              absl::string_view log_dir) ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets the assignment of `topic`/`partition`; a no-op if there is none.
  void Unassign(absl::string_view topic, int32_t partition)
      ABSL_LOCKS_EXCLUDED(mu_);

  std::optional<std::string> LogDirOf(absl::string_view topic,
                                      int32_t partition) const override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  // topic -> partition -> log dir name. A topic without assignments has no
  // entry.
  absl::flat_hash_map<std::string, absl::flat_hash_map<int32_t, std::string>>
      log_dirs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_STATIC_PLACEMENT_H_
