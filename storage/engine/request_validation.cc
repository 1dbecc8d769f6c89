#include "storage/engine/request_validation.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "storage/common/topic_name.h"

namespace kaas {

absl::Status ValidateTopicPartition(const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicName(tp.topic));
  return ValidatePartition(tp.partition);
}

absl::Status ValidateLeaderEpoch(int64_t leader_epoch) {
  if (leader_epoch < 0 || leader_epoch > kMaxLeaderEpoch) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        absl::StrCat("leader epoch ", leader_epoch,
                                     " is out of range [0, 2^31): Kafka "
                                     "leader epochs are int32"));
  }
  return absl::OkStatus();
}

absl::Status ValidateProducerFence(int64_t producer_id,
                                   int16_t producer_epoch) {
  if (producer_id < 0 || producer_epoch < 0) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        absl::StrCat("cannot fence producer ", producer_id,
                                     " at epoch ", producer_epoch));
  }
  return absl::OkStatus();
}

}  // namespace kaas
