// File: examples/broker/txn_messages.h
//
// The transaction APIs (KIP-98) as structs, with request decoders and
// response encoders for every NON-flexible version, as the rest of the
// broker serves:
//
//   API (key)                served   flexible from
//   AddPartitionsToTxn (24)  0-2      3
//   AddOffsetsToTxn (25)     0-2      3
//   EndTxn (26)              0-2      3
//   TxnOffsetCommit (28)     0-2      3
//
// InitProducerId (22, v0-1, with transactional_id and
// transaction_timeout_ms) is in messages.h and FindCoordinator (key_type 1)
// in group_messages.h. Field names and versions follow Kafka's message
// specs (clients/src/main/resources/common/message/*.json); in these
// versions every response starts with throttle_time_ms.
//
// Decoders read the request body (after the header) and fail with
// kInvalidArgument on malformed or truncated bytes or an unserved version;
// array lengths are checked against the bytes left (wire.h) before
// anything is allocated. Decoded requests own their strings.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_TXN_MESSAGES_H_
#define KAAS_EXAMPLES_BROKER_TXN_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/broker/wire.h"

namespace kaas::broker {

namespace txn_api {
inline constexpr int16_t kAddPartitionsToTxn = 24;
inline constexpr int16_t kAddOffsetsToTxn = 25;
inline constexpr int16_t kEndTxn = 26;
inline constexpr int16_t kTxnOffsetCommit = 28;

// The highest served (non-flexible) version of each; every one starts at 0.
inline constexpr int16_t kAddPartitionsToTxnMax = 2;
inline constexpr int16_t kAddOffsetsToTxnMax = 2;
inline constexpr int16_t kEndTxnMax = 2;
inline constexpr int16_t kTxnOffsetCommitMax = 2;
}  // namespace txn_api

// Kafka error codes of the transaction APIs (Errors.java).
namespace txn_error {
inline constexpr int16_t kNone = 0;
inline constexpr int16_t kUnknownServerError = -1;
inline constexpr int16_t kUnknownTopicOrPartition = 3;
inline constexpr int16_t kCoordinatorNotAvailable = 15;
inline constexpr int16_t kNotCoordinator = 16;
inline constexpr int16_t kInvalidGroupId = 24;
inline constexpr int16_t kInvalidRequest = 42;
inline constexpr int16_t kInvalidProducerEpoch = 47;
inline constexpr int16_t kInvalidTxnState = 48;
inline constexpr int16_t kInvalidProducerIdMapping = 49;
inline constexpr int16_t kInvalidTransactionTimeout = 50;
inline constexpr int16_t kConcurrentTransactions = 51;
inline constexpr int16_t kOperationNotAttempted = 55;
}  // namespace txn_error

// ---- AddPartitionsToTxn (key 24), v0-2 -------------------------------------

struct TxnTopic {
  std::string name;
  std::vector<int32_t> partitions;
};
struct AddPartitionsToTxnRequest {
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::vector<TxnTopic> topics;
};
absl::StatusOr<AddPartitionsToTxnRequest> DecodeAddPartitionsToTxnRequest(
    WireReader& reader, int16_t version);

struct TxnPartitionResult {
  int32_t partition_index = 0;
  int16_t error_code = 0;
};
struct TxnTopicResult {
  std::string name;
  std::vector<TxnPartitionResult> results;
};
struct AddPartitionsToTxnResponse {
  std::vector<TxnTopicResult> results;
};
void EncodeAddPartitionsToTxnResponse(
    const AddPartitionsToTxnResponse& response, int16_t version,
    WireWriter& writer);

// ---- AddOffsetsToTxn (key 25), v0-2 ----------------------------------------

struct AddOffsetsToTxnRequest {
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::string group_id;
};
absl::StatusOr<AddOffsetsToTxnRequest> DecodeAddOffsetsToTxnRequest(
    WireReader& reader, int16_t version);

// The response of AddOffsetsToTxn and EndTxn (both {throttle, error}).
struct TxnErrorResponse {
  int16_t error_code = 0;
};
void EncodeAddOffsetsToTxnResponse(const TxnErrorResponse& response,
                                   int16_t version, WireWriter& writer);

// ---- EndTxn (key 26), v0-2 -------------------------------------------------

struct EndTxnRequest {
  std::string transactional_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  bool committed = false;  // true: commit, false: abort
};
absl::StatusOr<EndTxnRequest> DecodeEndTxnRequest(WireReader& reader,
                                                  int16_t version);
void EncodeEndTxnResponse(const TxnErrorResponse& response, int16_t version,
                          WireWriter& writer);

// ---- TxnOffsetCommit (key 28), v0-2 ----------------------------------------

struct TxnOffsetCommitPartition {
  int32_t partition_index = 0;
  int64_t committed_offset = 0;
  int32_t committed_leader_epoch = -1;  // v2+
  std::optional<std::string> committed_metadata;
};
struct TxnOffsetCommitTopic {
  std::string name;
  std::vector<TxnOffsetCommitPartition> partitions;
};
struct TxnOffsetCommitRequest {
  std::string transactional_id;
  std::string group_id;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  std::vector<TxnOffsetCommitTopic> topics;
};
absl::StatusOr<TxnOffsetCommitRequest> DecodeTxnOffsetCommitRequest(
    WireReader& reader, int16_t version);

struct TxnOffsetCommitResponse {
  std::vector<TxnTopicResult> topics;
};
void EncodeTxnOffsetCommitResponse(const TxnOffsetCommitResponse& response,
                                   int16_t version, WireWriter& writer);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_TXN_MESSAGES_H_
