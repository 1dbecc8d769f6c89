// File: examples/broker/api_keys.h
//
// The Kafka APIs this broker serves and the versions of each it advertises
// in ApiVersions: exactly what it decodes and encodes, no more. Minimums are
// as low as the encoders go, because clients differ in how they pick a
// version (one takes min(its max, ours) without looking at our minimum).
//
// Thread-safety: constants and pure functions.

#ifndef KAAS_EXAMPLES_BROKER_API_KEYS_H_
#define KAAS_EXAMPLES_BROKER_API_KEYS_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"

namespace kaas::broker {

enum ApiKey : int16_t {
  kProduce = 0,
  kFetch = 1,
  kListOffsets = 2,
  kMetadata = 3,
  kApiVersions = 18,
  kCreateTopics = 19,
  kDeleteTopics = 20,
  kDeleteRecords = 21,
  kInitProducerId = 22,
  kOffsetForLeaderEpoch = 23,
};

struct ApiVersionRange {
  int16_t api_key;
  int16_t min_version;
  int16_t max_version;
};

// Every served API, by key.
absl::Span<const ApiVersionRange> SupportedApis();

// The served range of `api_key`; nullopt if the API is not served.
std::optional<ApiVersionRange> SupportedRange(int16_t api_key);

// Whether requests of this API and version use the flexible encoding
// (compact strings and arrays, tagged fields; request header v2).
bool IsFlexible(int16_t api_key, int16_t api_version);

// Kafka error codes the broker itself answers with (the engine's come from
// KafkaErrorCode in base/storage_error.h).
inline constexpr int16_t kErrorNone = 0;
inline constexpr int16_t kErrorUnknownServerError = -1;
inline constexpr int16_t kErrorUnknownTopicOrPartition = 3;
inline constexpr int16_t kErrorRequestTimedOut = 7;
inline constexpr int16_t kErrorCoordinatorNotAvailable = 15;
inline constexpr int16_t kErrorInvalidTopic = 17;
inline constexpr int16_t kErrorInvalidRequiredAcks = 21;
inline constexpr int16_t kErrorUnsupportedVersion = 35;
inline constexpr int16_t kErrorTopicAlreadyExists = 36;
inline constexpr int16_t kErrorInvalidPartitions = 37;
inline constexpr int16_t kErrorInvalidReplicationFactor = 38;
inline constexpr int16_t kErrorInvalidReplicaAssignment = 39;
inline constexpr int16_t kErrorInvalidConfig = 40;
inline constexpr int16_t kErrorInvalidRequest = 42;
inline constexpr int16_t kErrorFencedLeaderEpoch = 74;
inline constexpr int16_t kErrorUnknownLeaderEpoch = 76;

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_API_KEYS_H_
