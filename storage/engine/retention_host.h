// File: storage/engine/retention_host.h
//
// The narrow interface the retention cleaner (//cleaner) works through, so
// that it never reaches into partition internals: which partitions this
// engine leads, their effective config and segments, and the two actions
// retention takes (roll a quiet segment by age, advance the log start
// through the same durable path as DeleteRecords). DiskEngine implements it.
//
// Thread-safety: implementations are thread-safe.

#ifndef KAAS_STORAGE_ENGINE_RETENTION_HOST_H_
#define KAAS_STORAGE_ENGINE_RETENTION_HOST_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"

namespace kaas {

// Why retention removed segments.
enum class RetentionReason { kTime, kSize };

// What retention needs to know of one led partition.
struct RetentionView {
  PartitionConfig config;  // effective: engine default + topic overrides
  // Oldest first, with max_timestamp filled (-1 for a segment whose
  // batches carry no timestamp); the last one is the active segment (never
  // removed).
  std::vector<SegmentSummary> segments;
  int64_t log_start_offset = 0;
  // Retention never moves the log start past what consumers can read.
  int64_t high_watermark = 0;
};

class RetentionHost {
 public:
  virtual ~RetentionHost() = default;

  // The partitions this engine leads (only the leader deletes).
  virtual std::vector<TopicPartition> LedPartitions() = 0;

  // Re-reads the topic's config file and applies default + overrides to the
  // led partition (a removed override reverts to the default).
  virtual absl::Status ReloadTopicConfig(const TopicPartition& tp) = 0;

  // Errors: kNotLeader.
  virtual absl::StatusOr<RetentionView> DescribeForRetention(
      const TopicPartition& tp) = 0;

  // Rolls the active segment if it is older than segment.ms.
  virtual absl::StatusOr<bool> RollIfAged(const TopicPartition& tp) = 0;

  // Advances the log start offset to `target` (persisted before any file is
  // deleted) and records what was reclaimed for `reason` in the stats.
  virtual absl::StatusOr<LogStartAdvance> AdvanceLogStartForRetention(
      const TopicPartition& tp, int64_t target, RetentionReason reason) = 0;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_RETENTION_HOST_H_
