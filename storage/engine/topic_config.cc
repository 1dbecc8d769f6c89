// File: storage/engine/topic_config.cc

#include "storage/engine/topic_config.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "storage/engine/topic_config.pb.h"
#include "storage/engine/topic_json.h"

namespace kaas {

namespace {

namespace pb = google::protobuf;

constexpr int64_t kNoMinimum = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoMaximum = std::numeric_limits<int64_t>::max();

// The accepted range of each integer key, with Kafka's meaning of the
// boundaries.
struct IntegerRule {
  absl::string_view key;
  std::optional<int64_t> TopicConfigOverrides::*member;
  int64_t min;
  int64_t max;
};

constexpr IntegerRule kIntegerRules[] = {
    // -1 keeps segments forever; 0 deletes every closed segment at once
    // (Kafka retention.ms = 0).
    {"retentionMs", &TopicConfigOverrides::retention_ms, -1, kNoMaximum},
    // -1: no size limit.
    {"retentionBytes", &TopicConfigOverrides::retention_bytes, -1, kNoMaximum},
    // Kafka's segment.bytes minimum; the maximum is what 32-bit index
    // positions can address.
    {"segmentBytes", &TopicConfigOverrides::segment_bytes, 1024,
     static_cast<int64_t>(kMaxSegmentBytes)},
    // Any value: <= 0 disables age-based rolls (ApplyTopicConfig).
    {"segmentMs", &TopicConfigOverrides::segment_ms, kNoMinimum, kNoMaximum},
    {"minCompactionLagMs", &TopicConfigOverrides::min_compaction_lag_ms, 0,
     kNoMaximum},
    // Kafka's minimum: a lag of 0 would make every partition due at once.
    {"maxCompactionLagMs", &TopicConfigOverrides::max_compaction_lag_ms, 1,
     kNoMaximum},
    {"deleteRetentionMs", &TopicConfigOverrides::delete_retention_ms, 0,
     kNoMaximum},
    // Any value, as PartitionConfig::flush_interval_messages says (<= 0:
    // sync only at roll and close).
    {"flushMessages", &TopicConfigOverrides::flush_messages, kNoMinimum,
     kNoMaximum},
    // A zero or negative batch limit would reject every append.
    {"maxMessageBytes", &TopicConfigOverrides::max_message_bytes, 1,
     kNoMaximum},
};

// Kafka's cleanup.policy values, spelled exactly so (it is a list; both
// orders of the pair mean the same).
constexpr absl::string_view kCleanupPolicies[] = {
    "delete", "compact", "compact,delete", "delete,compact"};

absl::Status CheckIntegerRule(const IntegerRule& rule, int64_t value,
                              absl::string_view file_name) {
  if (value < rule.min) {
    return TopicFileError(file_name,
                          absl::StrCat("field ", rule.key, ": ", value,
                                       " is below the minimum ", rule.min));
  }
  if (value > rule.max) {
    return TopicFileError(file_name,
                          absl::StrCat("field ", rule.key, ": ", value,
                                       " is above the maximum ", rule.max));
  }
  return absl::OkStatus();
}

absl::Status CheckCleanupPolicy(absl::string_view policy,
                                absl::string_view file_name) {
  for (absl::string_view valid : kCleanupPolicies) {
    if (policy == valid) return absl::OkStatus();
  }
  return TopicFileError(
      file_name,
      absl::StrCat("field cleanupPolicy: ", QuoteForMessage(policy),
                   " is not one of ",
                   absl::StrJoin(kCleanupPolicies, ", ",
                                 [](std::string* out, absl::string_view v) {
                                   out->append(QuoteForMessage(v));
                                 })));
}

absl::Status Validate(const TopicConfigOverrides& overrides,
                      absl::string_view file_name) {
  for (const IntegerRule& rule : kIntegerRules) {
    const std::optional<int64_t>& value = overrides.*rule.member;
    if (value.has_value()) {
      KAAS_RETURN_IF_ERROR(CheckIntegerRule(rule, *value, file_name));
    }
  }
  if (overrides.cleanup_policy.has_value()) {
    KAAS_RETURN_IF_ERROR(
        CheckCleanupPolicy(*overrides.cleanup_policy, file_name));
  }
  // Written so that NaN fails too.
  if (overrides.min_cleanable_dirty_ratio.has_value() &&
      !(*overrides.min_cleanable_dirty_ratio >= 0 &&
        *overrides.min_cleanable_dirty_ratio <= 1)) {
    return TopicFileError(file_name,
                          absl::StrCat("field minCleanableDirtyRatio: ",
                                       *overrides.min_cleanable_dirty_ratio,
                                       " is not between 0 and 1"));
  }
  return absl::OkStatus();
}

template <typename T>
std::optional<T> OptionalIf(bool has, T value) {
  return has ? std::optional<T>(std::move(value)) : std::nullopt;
}

TopicConfigOverrides FromProto(const engine::TopicConfigFile& file) {
  TopicConfigOverrides overrides;
  overrides.retention_ms =
      OptionalIf(file.has_retention_ms(), file.retention_ms());
  overrides.retention_bytes =
      OptionalIf(file.has_retention_bytes(), file.retention_bytes());
  overrides.segment_bytes =
      OptionalIf(file.has_segment_bytes(), file.segment_bytes());
  overrides.segment_ms = OptionalIf(file.has_segment_ms(), file.segment_ms());
  overrides.cleanup_policy =
      OptionalIf(file.has_cleanup_policy(), file.cleanup_policy());
  overrides.min_compaction_lag_ms = OptionalIf(file.has_min_compaction_lag_ms(),
                                               file.min_compaction_lag_ms());
  overrides.max_compaction_lag_ms = OptionalIf(file.has_max_compaction_lag_ms(),
                                               file.max_compaction_lag_ms());
  overrides.min_cleanable_dirty_ratio = OptionalIf(
      file.has_min_cleanable_dirty_ratio(), file.min_cleanable_dirty_ratio());
  overrides.delete_retention_ms =
      OptionalIf(file.has_delete_retention_ms(), file.delete_retention_ms());
  overrides.flush_messages =
      OptionalIf(file.has_flush_messages(), file.flush_messages());
  overrides.max_message_bytes =
      OptionalIf(file.has_max_message_bytes(), file.max_message_bytes());
  overrides.validate_records =
      OptionalIf(file.has_validate_records(), file.validate_records());
  return overrides;
}

engine::TopicConfigFile ToProto(const TopicConfigOverrides& overrides) {
  engine::TopicConfigFile file;
  if (overrides.retention_ms) file.set_retention_ms(*overrides.retention_ms);
  if (overrides.retention_bytes) {
    file.set_retention_bytes(*overrides.retention_bytes);
  }
  if (overrides.segment_bytes) file.set_segment_bytes(*overrides.segment_bytes);
  if (overrides.segment_ms) file.set_segment_ms(*overrides.segment_ms);
  if (overrides.cleanup_policy) {
    file.set_cleanup_policy(*overrides.cleanup_policy);
  }
  if (overrides.min_compaction_lag_ms) {
    file.set_min_compaction_lag_ms(*overrides.min_compaction_lag_ms);
  }
  if (overrides.delete_retention_ms) {
    file.set_delete_retention_ms(*overrides.delete_retention_ms);
  }
  if (overrides.flush_messages) {
    file.set_flush_messages(*overrides.flush_messages);
  }
  if (overrides.max_message_bytes) {
    file.set_max_message_bytes(*overrides.max_message_bytes);
  }
  if (overrides.validate_records) {
    file.set_validate_records(*overrides.validate_records);
  }
  if (overrides.max_compaction_lag_ms) {
    file.set_max_compaction_lag_ms(*overrides.max_compaction_lag_ms);
  }
  if (overrides.min_cleanable_dirty_ratio) {
    file.set_min_cleanable_dirty_ratio(*overrides.min_cleanable_dirty_ratio);
  }
  return file;
}

}  // namespace

bool operator==(const TopicConfigOverrides& a, const TopicConfigOverrides& b) {
  auto fields = [](const TopicConfigOverrides& o) {
    return std::tie(o.retention_ms, o.retention_bytes, o.segment_bytes,
                    o.segment_ms, o.cleanup_policy, o.min_compaction_lag_ms,
                    o.delete_retention_ms, o.flush_messages,
                    o.max_message_bytes, o.validate_records,
                    o.max_compaction_lag_ms, o.min_cleanable_dirty_ratio);
  };
  return fields(a) == fields(b);
}

absl::StatusOr<TopicConfigOverrides> ParseTopicConfigJson(
    absl::string_view json, absl::string_view file_name) {
  engine::TopicConfigFile file;
  KAAS_RETURN_IF_ERROR(ParseTopicJsonFile(json, file_name, file));
  TopicConfigOverrides overrides = FromProto(file);
  KAAS_RETURN_IF_ERROR(Validate(overrides, file_name));
  return overrides;
}

std::string TopicConfigToJson(const TopicConfigOverrides& overrides) {
  // Written by hand rather than by protobuf's printer, which quotes 64-bit
  // integers ("retentionMs":"86400000"): operators write and read plain
  // numbers. Walking the schema keeps its declaration order and JSON names.
  const engine::TopicConfigFile file = ToProto(overrides);
  const pb::Descriptor& schema = *file.GetDescriptor();
  const pb::Reflection& reflection = *file.GetReflection();
  std::string json = "{";
  for (int i = 0; i < schema.field_count(); ++i) {
    const pb::FieldDescriptor& field = *schema.field(i);
    if (!reflection.HasField(file, &field)) continue;
    if (json.size() > 1) json += ',';
    absl::StrAppend(&json, JsonStringLiteral(field.json_name()), ":");
    if (field.cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
      json += JsonStringLiteral(reflection.GetString(file, &field));
    } else if (field.cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
      json += reflection.GetBool(file, &field) ? "true" : "false";
    } else if (field.cpp_type() == pb::FieldDescriptor::CPPTYPE_DOUBLE) {
      absl::StrAppend(&json, reflection.GetDouble(file, &field));
    } else {
      absl::StrAppend(&json, reflection.GetInt64(file, &field));
    }
  }
  json += '}';
  return json;
}

PartitionConfig ApplyTopicConfig(const PartitionConfig& engine_default,
                                 const TopicConfigOverrides& overrides) {
  // Always the engine default, never a partition's current config, as the
  // base: a key removed from the file then reverts (D-17).
  PartitionConfig config = engine_default;
  // Kafka -1 ("forever", "unlimited") is nullopt in PartitionConfig.
  if (overrides.retention_ms.has_value()) {
    config.retention_ms =
        *overrides.retention_ms < 0
            ? std::nullopt
            : std::optional(absl::Milliseconds(*overrides.retention_ms));
  }
  if (overrides.retention_bytes.has_value()) {
    config.retention_bytes =
        *overrides.retention_bytes < 0
            ? std::nullopt
            : std::optional(static_cast<uint64_t>(*overrides.retention_bytes));
  }
  if (overrides.segment_bytes.has_value()) {
    config.segment_bytes = static_cast<uint64_t>(*overrides.segment_bytes);
  }
  // segment.ms <= 0 disables age-based rolls.
  if (overrides.segment_ms.has_value()) {
    config.segment_ms =
        *overrides.segment_ms <= 0
            ? std::nullopt
            : std::optional(absl::Milliseconds(*overrides.segment_ms));
  }
  if (overrides.cleanup_policy.has_value()) {
    config.cleanup_delete =
        absl::StrContains(*overrides.cleanup_policy, "delete");
    config.cleanup_compact =
        absl::StrContains(*overrides.cleanup_policy, "compact");
  }
  if (overrides.min_compaction_lag_ms.has_value()) {
    config.min_compaction_lag_ms = *overrides.min_compaction_lag_ms;
  }
  if (overrides.max_compaction_lag_ms.has_value()) {
    config.max_compaction_lag_ms = *overrides.max_compaction_lag_ms;
  }
  if (overrides.min_cleanable_dirty_ratio.has_value()) {
    config.min_cleanable_dirty_ratio = *overrides.min_cleanable_dirty_ratio;
  }
  if (overrides.delete_retention_ms.has_value()) {
    config.delete_retention_ms = *overrides.delete_retention_ms;
  }
  if (overrides.flush_messages.has_value()) {
    config.flush_interval_messages = *overrides.flush_messages;
  }
  if (overrides.max_message_bytes.has_value()) {
    config.max_message_bytes =
        static_cast<uint64_t>(*overrides.max_message_bytes);
  }
  if (overrides.validate_records.has_value()) {
    config.validate_records = *overrides.validate_records;
  }
  return config;
}

absl::Status ValidateTopicConfig(absl::string_view topic,
                                 const TopicConfigOverrides& overrides) {
  return ParseTopicConfigJson(TopicConfigToJson(overrides),
                              absl::StrCat(topic, "/", kTopicConfigFileName))
      .status();
}

absl::StatusOr<std::optional<TopicConfigOverrides>> ReadTopicConfig(
    fs::FileSystem& fs, const std::string& topic_dir) {
  const std::string path = fs::JoinPath(topic_dir, kTopicConfigFileName);
  KAAS_ASSIGN_OR_RETURN(std::optional<std::string> json,
                        ReadTopicFile(fs, path));
  if (!json.has_value()) return std::nullopt;
  KAAS_ASSIGN_OR_RETURN(TopicConfigOverrides overrides,
                        ParseTopicConfigJson(*json, path));
  return overrides;
}

}  // namespace kaas
