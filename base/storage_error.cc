#include "base/storage_error.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/types/optional.h"

namespace kaas {
namespace {

constexpr absl::string_view kPayloadUrl = "type.kaas/kaas.StorageErrorCode";

struct ErrorInfo {
  absl::StatusCode canonical;
  int16_t kafka_code;
  absl::string_view kafka_name;
  bool retriable;
  absl::string_view name;
};

ErrorInfo Info(StorageErrorCode code) {
  using C = absl::StatusCode;
  switch (code) {
    case StorageErrorCode::kNone:
      return {C::kOk, 0, "NONE", false, "NONE"};
    case StorageErrorCode::kNotLeader:
      return {C::kFailedPrecondition, 6, "NOT_LEADER_OR_FOLLOWER", true,
              "NOT_LEADER"};
    case StorageErrorCode::kUnknownTopicOrPartition:
      return {C::kNotFound, 3, "UNKNOWN_TOPIC_OR_PARTITION", true,
              "UNKNOWN_TOPIC_OR_PARTITION"};
    case StorageErrorCode::kOffsetOutOfRange:
      return {C::kOutOfRange, 1, "OFFSET_OUT_OF_RANGE", false,
              "OFFSET_OUT_OF_RANGE"};
    case StorageErrorCode::kCorruptMessage:
      return {C::kInvalidArgument, 2, "CORRUPT_MESSAGE", true,
              "CORRUPT_MESSAGE"};
    case StorageErrorCode::kInvalidRecord:
      return {C::kInvalidArgument, 87, "INVALID_RECORD", false,
              "INVALID_RECORD"};
    case StorageErrorCode::kRecordListTooLarge:
      return {C::kInvalidArgument, 18, "RECORD_LIST_TOO_LARGE", false,
              "RECORD_LIST_TOO_LARGE"};
    case StorageErrorCode::kMessageTooLarge:
      return {C::kInvalidArgument, 10, "MESSAGE_TOO_LARGE", false,
              "MESSAGE_TOO_LARGE"};
    case StorageErrorCode::kOutOfOrderSequence:
      return {C::kFailedPrecondition, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER", false,
              "OUT_OF_ORDER_SEQUENCE"};
    case StorageErrorCode::kDuplicateSequence:
      return {C::kAlreadyExists, 46, "DUPLICATE_SEQUENCE_NUMBER", false,
              "DUPLICATE_SEQUENCE"};
    case StorageErrorCode::kInvalidProducerEpoch:
      return {C::kFailedPrecondition, 47, "INVALID_PRODUCER_EPOCH", false,
              "INVALID_PRODUCER_EPOCH"};
    case StorageErrorCode::kStalled:
      return {C::kUnavailable, 56, "KAFKA_STORAGE_ERROR", true, "STALLED"};
    case StorageErrorCode::kStorageError:
      return {C::kInternal, 56, "KAFKA_STORAGE_ERROR", true, "STORAGE_ERROR"};
    case StorageErrorCode::kMigrating:
      return {C::kUnavailable, 5, "LEADER_NOT_AVAILABLE", true, "MIGRATING"};
    case StorageErrorCode::kStaleTopicDir:
      return {C::kUnavailable, 5, "LEADER_NOT_AVAILABLE", true,
              "STALE_TOPIC_DIR"};
    case StorageErrorCode::kLogDirNotFound:
      return {C::kNotFound, 57, "LOG_DIR_NOT_FOUND", false,
              "LOG_DIR_NOT_FOUND"};
    case StorageErrorCode::kInvalidConfig:
      return {C::kInvalidArgument, 40, "INVALID_CONFIG", false,
              "INVALID_CONFIG"};
    case StorageErrorCode::kInvalidRequest:
      return {C::kInvalidArgument, 42, "INVALID_REQUEST", false,
              "INVALID_REQUEST"};
  }
  return {C::kInternal, -1, "UNKNOWN_SERVER_ERROR", false, "UNKNOWN"};
}

}  // namespace

absl::Status StorageError(StorageErrorCode code, absl::string_view message) {
  ErrorInfo info = Info(code);
  absl::StatusCode canonical = info.canonical == absl::StatusCode::kOk
                                   ? absl::StatusCode::kInternal
                                   : info.canonical;
  absl::Status status(canonical, message);
  status.SetPayload(kPayloadUrl,
                    absl::Cord(std::to_string(static_cast<int>(code))));
  return status;
}

absl::Status EnsureStorageError(const absl::Status& status) {
  if (status.ok() || status.GetPayload(kPayloadUrl).has_value()) {
    return status;
  }
  return StorageError(StorageErrorCode::kStorageError, status.message());
}

StorageErrorCode GetStorageErrorCode(const absl::Status& status) {
  if (status.ok()) return StorageErrorCode::kNone;
  absl::optional<absl::Cord> payload = status.GetPayload(kPayloadUrl);
  int value = 0;
  if (payload.has_value() && absl::SimpleAtoi(std::string(*payload), &value) &&
      value > static_cast<int>(StorageErrorCode::kNone) &&
      value <= static_cast<int>(StorageErrorCode::kInvalidRequest)) {
    return static_cast<StorageErrorCode>(value);
  }
  return StorageErrorCode::kStorageError;
}

int16_t KafkaErrorCode(StorageErrorCode code) { return Info(code).kafka_code; }

absl::string_view KafkaErrorName(StorageErrorCode code) {
  return Info(code).kafka_name;
}

bool IsRetriable(StorageErrorCode code) { return Info(code).retriable; }

absl::string_view StorageErrorCodeName(StorageErrorCode code) {
  return Info(code).name;
}

}  // namespace kaas
