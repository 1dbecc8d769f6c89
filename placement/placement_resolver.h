// File: placement/placement_resolver.h
//
// PlacementResolver: the placement record, i.e. which log dir the cluster
// says a partition lives in.
//
// The record belongs to the cluster: in production the operator writes
// KafkaTopic.status.volumeAssignments and the broker's topic registry
// implements this interface; StaticPlacement (placement/static_placement.h)
// is an in-memory implementation. The storage engine asks at every
// partition open and for DescribeLogDirs, and never caches the answer, so a
// changed record takes effect at the next open.
//
// The answer is advisory. The engine maps it through LogDirSet
// (placement/log_dir_set.h): no answer, or a name this broker does not have,
// means the data dir; and data found on disk outranks the record.

#ifndef KAAS_PLACEMENT_PLACEMENT_RESOLVER_H_
#define KAAS_PLACEMENT_PLACEMENT_RESOLVER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace kaas::placement {

class PlacementResolver {
 public:
  virtual ~PlacementResolver() = default;

  // The name of the log dir assigned to `topic`/`partition`, or nullopt if
  // the record has no entry for it.
  //
  // Thread-safety: implementations must be thread-safe. The engine calls this
  // concurrently from many threads, on partition-open paths that may hold
  // engine locks, so an implementation must answer from local state (no
  // network round trip, no long blocking) and must not call back into the
  // storage engine.
  virtual std::optional<std::string> LogDirOf(absl::string_view topic,
                                              int32_t partition) const = 0;
};

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_PLACEMENT_RESOLVER_H_
