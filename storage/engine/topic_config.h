// File: storage/engine/topic_config.h
//
// Per-topic configuration overrides, read from `<root>/<topic>/.config.json`
// (written by an operator, or by StorageEngine::SetTopicConfig), e.g.
//
//   {"retentionMs": 86400000, "segmentBytes": 268435456,
//    "cleanupPolicy": "compact,delete"}
//
// The file is parsed through protobuf's JSON mapping into one schema
// (storage/engine/topic_config.proto); an unknown key or an invalid value is
// an error naming the file and the field (a typo in an operator's config is
// never silently ignored). Keys (all optional; Kafka config in brackets):
//
//   retentionMs        int64  [retention.ms]  -1 keeps forever
//   retentionBytes     int64  [retention.bytes]  -1 unlimited
//   segmentBytes       int64  [segment.bytes]  1024 .. 2^31-1
//   segmentMs          int64  [segment.ms]  > 0; <= 0 disables age rolls
//   cleanupPolicy      string [cleanup.policy]  "delete", "compact",
//                              "compact,delete" (either order)
//   minCompactionLagMs int64  [min.compaction.lag.ms]  >= 0
//   maxCompactionLagMs int64  [max.compaction.lag.ms]  >= 1
//   minCleanableDirtyRatio double [min.cleanable.dirty.ratio]  0 .. 1
//   deleteRetentionMs  int64  [delete.retention.ms]  >= 0
//   flushMessages      int64  [flush.messages]  as PartitionConfig says
//   maxMessageBytes    int64  [max.message.bytes]  > 0
//   validateRecords    bool   (no Kafka key)  decode every record on append
//
// The effective config of a partition is ALWAYS the engine default overlaid
// with the file's overrides (never the partition's current config), so a
// removed override reverts to the default at the next reload (D-17).
//
// Thread-safety: pure functions (ReadTopicConfig reads through the given
// filesystem).

#ifndef KAAS_STORAGE_ENGINE_TOPIC_CONFIG_H_
#define KAAS_STORAGE_ENGINE_TOPIC_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "storage/common/partition_config.h"

namespace kaas {

inline constexpr absl::string_view kTopicConfigFileName = ".config.json";

struct TopicConfigOverrides {
  std::optional<int64_t> retention_ms;
  std::optional<int64_t> retention_bytes;
  std::optional<int64_t> segment_bytes;
  std::optional<int64_t> segment_ms;
  std::optional<std::string> cleanup_policy;
  std::optional<int64_t> min_compaction_lag_ms;
  std::optional<int64_t> max_compaction_lag_ms;
  std::optional<double> min_cleanable_dirty_ratio;
  std::optional<int64_t> delete_retention_ms;
  std::optional<int64_t> flush_messages;
  std::optional<int64_t> max_message_bytes;
  std::optional<bool> validate_records;

  friend bool operator==(const TopicConfigOverrides& a,
                         const TopicConfigOverrides& b);
};

// Parses and validates `json`. Errors are kInvalidArgument statuses carrying
// StorageErrorCode::kInvalidConfig whose message starts with `file_name` and
// names the field, e.g.
//   ".../orders/.config.json: field retentionMs: -5 is below the minimum -1".
absl::StatusOr<TopicConfigOverrides> ParseTopicConfigJson(
    absl::string_view json, absl::string_view file_name);

// The canonical JSON of `overrides` (only set keys, camelCase).
std::string TopicConfigToJson(const TopicConfigOverrides& overrides);

// OK if `overrides` is what ParseTopicConfigJson accepts (its canonical
// JSON parses back), else its error, naming `<topic>/.config.json` and the
// field: what an engine checks before writing a topic's config.
absl::Status ValidateTopicConfig(absl::string_view topic,
                                 const TopicConfigOverrides& overrides);

// `engine_default` overlaid with `overrides` (as ParseTopicConfigJson
// validates them): retentionMs / retentionBytes -1 become nullopt (keep
// forever), segmentMs <= 0 becomes nullopt (no age rolls), cleanupPolicy sets
// cleanup_delete and cleanup_compact to whether it contains "delete" and
// "compact", flushMessages sets flush_interval_messages, validateRecords
// validate_records, and the compaction keys their PartitionConfig fields.
PartitionConfig ApplyTopicConfig(const PartitionConfig& engine_default,
                                 const TopicConfigOverrides& overrides);

// Reads `<topic_dir>/.config.json`: nullopt when absent; errors as
// ParseTopicConfigJson (or kStorageError for I/O).
absl::StatusOr<std::optional<TopicConfigOverrides>> ReadTopicConfig(
    fs::FileSystem& fs, const std::string& topic_dir);

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_TOPIC_CONFIG_H_
