// File: base/storage_error.h
//
// The typed errors of the storage engine and how a broker maps them onto
// Kafka protocol error codes.
//
// Every error the engine returns is an absl::Status. Errors that a broker must
// tell apart carry a `StorageErrorCode` as a Status payload, so the broker
// maps them without parsing messages:
//
//   absl::StatusOr<AppendResult> r = engine.Append(...);
//   if (!r.ok()) {
//     response.error_code = KafkaErrorCode(GetStorageErrorCode(r.status()));
//   }
//
// A non-OK status without the payload (for example an I/O error from the
// filesystem seam) reads as kStorageError.
//
// Mapping to Kafka error codes (Produce / Fetch / other APIs):
//
//   StorageErrorCode          Kafka error                       retriable
//   ------------------------  --------------------------------  ---------
//   kNone                     0  NONE                           -
//   kOffsetOutOfRange         1  OFFSET_OUT_OF_RANGE            no
//   kCorruptMessage           2  CORRUPT_MESSAGE                yes*
//   kUnknownTopicOrPartition  3  UNKNOWN_TOPIC_OR_PARTITION     yes
//   kMigrating                5  LEADER_NOT_AVAILABLE           yes
//   kStaleTopicDir            5  LEADER_NOT_AVAILABLE           yes
//   kNotLeader                6  NOT_LEADER_OR_FOLLOWER         yes
//   kMessageTooLarge          10 MESSAGE_TOO_LARGE              no
//   kRecordListTooLarge       18 RECORD_LIST_TOO_LARGE          no
//   kInvalidConfig            40 INVALID_CONFIG                 no
//   kInvalidRequest           42 INVALID_REQUEST                no
//   kOutOfOrderSequence       45 OUT_OF_ORDER_SEQUENCE_NUMBER   no
//   kDuplicateSequence        46 DUPLICATE_SEQUENCE_NUMBER      no
//   kInvalidProducerEpoch     47 INVALID_PRODUCER_EPOCH         no
//   kStalled                  56 KAFKA_STORAGE_ERROR            yes
//   kStorageError             56 KAFKA_STORAGE_ERROR            yes
//   kLogDirNotFound           57 LOG_DIR_NOT_FOUND              no
//   kInvalidRecord            87 INVALID_RECORD                 no
//   (* Kafka clients retry CORRUPT_MESSAGE; the same bytes fail again.)
//
// kDuplicateSequence is never returned by Append: a recognised idempotent
// retry succeeds with the original offsets. DeleteRecords callers map every
// error except kOffsetOutOfRange to UNKNOWN_TOPIC_OR_PARTITION if they follow
// Kafka's DeleteRecords handler.
//
// Thread-safety: everything here is a pure function.

#ifndef KAAS_STORAGE_COMMON_STORAGE_ERROR_H_
#define KAAS_STORAGE_COMMON_STORAGE_ERROR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kaas {

enum class StorageErrorCode : int {
  kNone = 0,
  // The partition is not led by this engine, the caller's leader epoch is
  // older than the partition's, or leadership was given up while the request
  // was waiting.
  kNotLeader = 1,
  kUnknownTopicOrPartition = 2,
  // A read below the log start offset or past the high watermark, or a
  // delete_records target past the high watermark.
  kOffsetOutOfRange = 3,
  // Malformed batch bytes: framing, magic, CRC32C.
  kCorruptMessage = 4,
  // A well-framed batch whose fields are invalid (negative lastOffsetDelta,
  // record count mismatch, ...).
  kInvalidRecord = 5,
  kRecordListTooLarge = 6,
  kMessageTooLarge = 7,
  kOutOfOrderSequence = 8,
  kDuplicateSequence = 9,
  kInvalidProducerEpoch = 10,
  // Sticky: an fsync failed or exceeded the watchdog deadline. Cleared only
  // after a new fsync of the log succeeds.
  kStalled = 11,
  // Any other I/O failure.
  kStorageError = 12,
  // The partition is being moved between log dirs.
  kMigrating = 13,
  // The partition directory belongs to a previous incarnation of the topic.
  kStaleTopicDir = 14,
  kLogDirNotFound = 15,
  kInvalidConfig = 16,
  kInvalidRequest = 17,
};

// Builds an error status carrying `code` as payload. The canonical status
// code is derived from `code` (kNotLeader -> kFailedPrecondition,
// kOffsetOutOfRange -> kOutOfRange, kStalled -> kUnavailable, ...).
// `code` must not be kNone.
absl::Status StorageError(StorageErrorCode code, absl::string_view message);

// The storage error carried by `status`: kNone for OK, the payload if
// present, else kStorageError.
StorageErrorCode GetStorageErrorCode(const absl::Status& status);

// True if `status` carries `code`.
inline bool HasStorageErrorCode(const absl::Status& status,
                                StorageErrorCode code) {
  return GetStorageErrorCode(status) == code;
}

// `status` as the engine's API returns it: unchanged if OK or carrying a
// StorageErrorCode, else a kStorageError with its message (an I/O error of
// the filesystem seam, say). The engines' public methods return through it,
// so no error escapes untyped.
absl::Status EnsureStorageError(const absl::Status& status);
template <typename T>
absl::StatusOr<T> EnsureStorageError(absl::StatusOr<T> result) {
  if (result.ok()) return result;
  return EnsureStorageError(result.status());
}

// Kafka protocol error code and name (e.g. 6, "NOT_LEADER_OR_FOLLOWER").
int16_t KafkaErrorCode(StorageErrorCode code);
absl::string_view KafkaErrorName(StorageErrorCode code);

// Whether a Kafka client may retry the request unchanged.
bool IsRetriable(StorageErrorCode code);

// Short stable name of the enumerator ("kNotLeader" -> "NOT_LEADER").
absl::string_view StorageErrorCodeName(StorageErrorCode code);

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_STORAGE_ERROR_H_
