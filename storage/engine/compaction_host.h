// File: storage/engine/compaction_host.h
//
// The narrow interface the log cleaner (//cleaner: cleaner/log_cleaner.h)
// compacts partitions through (cleanup.policy=compact), so that it never
// reaches into partition internals: which partitions this engine leads,
// what each would compact (to choose the dirtiest), and one pass.
// DiskEngine implements it (the memory engine does not compact).
//
// Thread-safety: implementations are thread-safe; passes of different
// partitions run concurrently, passes of one partition are serialised.

#ifndef KAAS_STORAGE_ENGINE_COMPACTION_HOST_H_
#define KAAS_STORAGE_ENGINE_COMPACTION_HOST_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/common/api_types.h"

namespace kaas {

class CompactionHost {
 public:
  virtual ~CompactionHost() = default;

  // The partitions this engine has taken over.
  virtual std::vector<TopicPartition> LedPartitions() = 0;

  // Re-reads the topic's config file and applies default + overrides.
  virtual absl::Status ReloadTopicConfig(const TopicPartition& tp) = 0;

  // What a pass would work on (storage/common/api_types.h CompactionView).
  // Errors: kNotLeader. Blocking (may read segment time indexes).
  virtual absl::StatusOr<CompactionView> DescribeCompaction(
      const TopicPartition& tp, int64_t now_ms) = 0;

  // One pass (the partition layer's Compact: its errors; a pass that ends
  // early because the partition is closing or moving reports
  // complete = false). Blocking.
  virtual absl::StatusOr<CompactionReport> Compact(
      const TopicPartition& tp, const CompactionRequest& request) = 0;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_COMPACTION_HOST_H_
