// File: storage/common/topic_name.h
//
// Kafka's rules for topic names, checked before a name becomes a directory:
// 1 to 249 characters from [a-zA-Z0-9._-], and neither "." nor "..". A name
// that breaks them could escape the data dir ("../x") or collide with the
// engine's own files, so every engine entry point validates it.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_COMMON_TOPIC_NAME_H_
#define KAAS_STORAGE_COMMON_TOPIC_NAME_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kaas {

inline constexpr size_t kMaxTopicNameLength = 249;

// OK, or kInvalidRequest naming the rule the name breaks.
absl::Status ValidateTopicName(absl::string_view topic);

// OK for partition >= 0, else kInvalidRequest.
absl::Status ValidatePartition(int32_t partition);

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_TOPIC_NAME_H_
