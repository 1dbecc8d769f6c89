#include "storage/common/partition_config.h"

#include "absl/strings/str_format.h"
#include "base/storage_error.h"

namespace kaas {

absl::Status PartitionConfig::Validate() const {
  auto invalid = [](const std::string& message) {
    return StorageError(StorageErrorCode::kInvalidConfig, message);
  };
  if (segment_bytes < 1024 || segment_bytes > kMaxSegmentBytes) {
    return invalid(
        absl::StrFormat("segment.bytes %d is out of range [1024, %d]",
                        segment_bytes, kMaxSegmentBytes));
  }
  if (segment_ms.has_value() && *segment_ms <= absl::ZeroDuration()) {
    return invalid(absl::StrFormat("segment.ms %s must be positive",
                                   absl::FormatDuration(*segment_ms)));
  }
  if (index_interval_bytes < 1) {
    return invalid("index.interval.bytes must be at least 1");
  }
  if (fsync_max_latency < absl::ZeroDuration()) {
    return invalid("fsync max latency must not be negative");
  }
  if (checkpoint_interval_bytes < 1) {
    return invalid("checkpoint interval must be at least 1 byte");
  }
  if (producer_id_expiration_ms < 0) {
    return invalid(
        absl::StrFormat("producer.id.expiration.ms %d must not be negative",
                        producer_id_expiration_ms));
  }
  if (retention_ms.has_value() && *retention_ms < absl::ZeroDuration()) {
    return invalid("retention.ms must not be negative (use -1 for forever)");
  }
  if (min_compaction_lag_ms < 0 || max_compaction_lag_ms < 1 ||
      delete_retention_ms < 0) {
    return invalid(absl::StrFormat(
        "min.compaction.lag.ms %d, max.compaction.lag.ms %d, "
        "delete.retention.ms %d: out of range (>= 0, >= 1, >= 0)",
        min_compaction_lag_ms, max_compaction_lag_ms, delete_retention_ms));
  }
  if (!(min_cleanable_dirty_ratio >= 0 && min_cleanable_dirty_ratio <= 1)) {
    return invalid(
        absl::StrFormat("min.cleanable.dirty.ratio %g is not between 0 and 1",
                        min_cleanable_dirty_ratio));
  }
  return absl::OkStatus();
}

bool operator==(const PartitionConfig& a, const PartitionConfig& b) {
  return a.segment_bytes == b.segment_bytes && a.segment_ms == b.segment_ms &&
         a.index_interval_bytes == b.index_interval_bytes &&
         a.flush_interval_messages == b.flush_interval_messages &&
         a.fsync_max_latency == b.fsync_max_latency &&
         a.checkpoint_interval_bytes == b.checkpoint_interval_bytes &&
         a.producer_id_expiration_ms == b.producer_id_expiration_ms &&
         a.max_message_bytes == b.max_message_bytes &&
         a.retention_ms == b.retention_ms &&
         a.retention_bytes == b.retention_bytes &&
         a.cleanup_delete == b.cleanup_delete &&
         a.cleanup_compact == b.cleanup_compact &&
         a.min_compaction_lag_ms == b.min_compaction_lag_ms &&
         a.max_compaction_lag_ms == b.max_compaction_lag_ms &&
         a.min_cleanable_dirty_ratio == b.min_cleanable_dirty_ratio &&
         a.delete_retention_ms == b.delete_retention_ms &&
         a.validate_records == b.validate_records &&
         a.broker_managed_high_watermark == b.broker_managed_high_watermark;
}

}  // namespace kaas
