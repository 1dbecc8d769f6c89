// File: examples/broker/topic_configs.h
//
// CreateTopics' topic configs (Kafka's names and string values) as the
// engine's topic overrides (storage/engine/topic_config.h), which the engine
// keeps in the topic's `.config.json`.
//
// Served keys: retention.ms, retention.bytes, segment.bytes, segment.ms,
// cleanup.policy, min.compaction.lag.ms, max.compaction.lag.ms,
// min.cleanable.dirty.ratio, delete.retention.ms, flush.messages,
// max.message.bytes. Any other key, a null or unparsable value, or a key
// given twice is refused (a Kafka client asking for a setting the broker
// would ignore must learn it), as is a value out of the engine's range.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_TOPIC_CONFIGS_H_
#define KAAS_EXAMPLES_BROKER_TOPIC_CONFIGS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/engine/topic_config.h"

namespace kaas::broker {

// One CreateTopics config entry: a Kafka key and its value (null allowed by
// the protocol, refused here).
using KafkaTopicConfig = std::pair<std::string, std::optional<std::string>>;

// The overrides `configs` ask for. Errors: kInvalidArgument whose message
// names the key and says what is wrong, e.g.
//   `retention.ms: "1d" is not an integer`,
//   `compression.type is not a topic config this broker serves (it serves:
//   cleanup.policy, ...)`.
absl::StatusOr<TopicConfigOverrides> TopicConfigFromKafka(
    const std::vector<KafkaTopicConfig>& configs);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_TOPIC_CONFIGS_H_
