// File: storage/engine/request_validation.h
//
// The argument checks every StorageEngine entry point makes before it looks
// anything up or touches a file, shared by the disk and memory engines so
// that both reject exactly the same inputs with the same messages.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_ENGINE_REQUEST_VALIDATION_H_
#define KAAS_STORAGE_ENGINE_REQUEST_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "storage/common/api_types.h"

namespace kaas {

// OK, or kInvalidRequest naming the rule the topic name (storage/common/
// topic_name.h) or the partition number (>= 0) breaks.
absl::Status ValidateTopicPartition(const TopicPartition& tp);

// OK for a leader epoch in [0, kMaxLeaderEpoch] (Kafka's int32), else
// kInvalidRequest naming it.
absl::Status ValidateLeaderEpoch(int64_t leader_epoch);

// OK for a producer id >= 0 and a producer epoch >= 0 (FenceProducerEpoch),
// else kInvalidRequest naming them.
absl::Status ValidateProducerFence(int64_t producer_id, int16_t producer_epoch);

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_REQUEST_VALIDATION_H_
