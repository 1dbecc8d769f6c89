// File: examples/broker/topic_configs.cc

#include "examples/broker/topic_configs.h"

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace kaas::broker {
namespace {

// Where a Kafka key's value goes in the overrides.
struct KeySetter {
  absl::string_view key;
  absl::Status (*set)(absl::string_view key, absl::string_view value,
                      TopicConfigOverrides& overrides);
};

absl::StatusOr<int64_t> ParseInteger(absl::string_view key,
                                     absl::string_view value) {
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": \"", value, "\" is not an integer"));
  }
  return parsed;
}

// A setter for an integer key stored in `field`.
template <std::optional<int64_t> TopicConfigOverrides::*field>
absl::Status SetInteger(absl::string_view key, absl::string_view value,
                        TopicConfigOverrides& overrides) {
  KAAS_ASSIGN_OR_RETURN(int64_t parsed, ParseInteger(key, value));
  overrides.*field = parsed;
  return absl::OkStatus();
}

absl::Status SetDirtyRatio(absl::string_view key, absl::string_view value,
                           TopicConfigOverrides& overrides) {
  double parsed = 0;
  if (!absl::SimpleAtod(value, &parsed)) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": \"", value, "\" is not a number"));
  }
  overrides.min_cleanable_dirty_ratio = parsed;
  return absl::OkStatus();
}

absl::Status SetCleanupPolicy(absl::string_view, absl::string_view value,
                              TopicConfigOverrides& overrides) {
  // The engine validates the policy ("delete", "compact" or both).
  overrides.cleanup_policy = std::string(value);
  return absl::OkStatus();
}

using O = TopicConfigOverrides;
constexpr KeySetter kSetters[] = {
    {"cleanup.policy", &SetCleanupPolicy},
    {"delete.retention.ms", &SetInteger<&O::delete_retention_ms>},
    {"flush.messages", &SetInteger<&O::flush_messages>},
    {"max.compaction.lag.ms", &SetInteger<&O::max_compaction_lag_ms>},
    {"max.message.bytes", &SetInteger<&O::max_message_bytes>},
    {"min.cleanable.dirty.ratio", &SetDirtyRatio},
    {"min.compaction.lag.ms", &SetInteger<&O::min_compaction_lag_ms>},
    {"retention.bytes", &SetInteger<&O::retention_bytes>},
    {"retention.ms", &SetInteger<&O::retention_ms>},
    {"segment.bytes", &SetInteger<&O::segment_bytes>},
    {"segment.ms", &SetInteger<&O::segment_ms>},
};

const KeySetter* FindSetter(absl::string_view key) {
  for (const KeySetter& setter : kSetters) {
    if (setter.key == key) return &setter;
  }
  return nullptr;
}

std::string ServedKeys() {
  return absl::StrJoin(kSetters, ", ",
                       [](std::string* out, const KeySetter& setter) {
                         absl::StrAppend(out, setter.key);
                       });
}

}  // namespace

absl::StatusOr<TopicConfigOverrides> TopicConfigFromKafka(
    const std::vector<KafkaTopicConfig>& configs) {
  TopicConfigOverrides overrides;
  absl::flat_hash_set<std::string> seen;
  for (const auto& [key, value] : configs) {
    const KeySetter* setter = FindSetter(key);
    if (setter == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(key,
                       " is not a topic config this broker serves (it "
                       "serves: ",
                       ServedKeys(), ")"));
    }
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat(key, " is given twice"));
    }
    if (!value.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat(key, ": a null value is not a setting"));
    }
    KAAS_RETURN_IF_ERROR(setter->set(key, *value, overrides));
  }
  return overrides;
}

}  // namespace kaas::broker
