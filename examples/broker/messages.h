// File: examples/broker/messages.h
//
// The requests and responses of the served APIs (examples/broker/
// api_keys.h), as structs, with their decoders and encoders for every
// served version. Field names and the versions each field exists in follow
// Kafka's published message specs (clients/src/main/resources/common/
// message/*.json); fields of versions not served are left out.
//
// Decoders read the request body (after the header) and fail with
// kInvalidArgument on malformed bytes (wire.h's bounds checks); views in a
// decoded request point into the request frame. Encoders append the
// response body (after the header) to a frame.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_MESSAGES_H_
#define KAAS_EXAMPLES_BROKER_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/string_view.h"
#include "examples/broker/wire.h"
#include "storage/common/record_regions.h"

namespace kaas::broker {

// ---- ApiVersions (key 18), v0-3 --------------------------------------------

// The v3 request's client software name and version are read and ignored.
absl::Status DecodeApiVersionsRequest(WireReader& reader, int16_t version);

struct ApiVersionsResponse {
  int16_t error_code = 0;
};
// Lists SupportedApis(). Version 0 is the form for an unsupported version.
void EncodeApiVersionsResponse(const ApiVersionsResponse& response,
                               int16_t version, WireWriter& writer);

// ---- Metadata (key 3), v0-8 ------------------------------------------------

struct MetadataRequest {
  // nullopt: every topic (v0 sends an empty array for that).
  std::optional<std::vector<std::string>> topics;
  bool allow_auto_topic_creation = true;  // v4+
};
absl::StatusOr<MetadataRequest> DecodeMetadataRequest(WireReader& reader,
                                                      int16_t version);

struct MetadataPartition {
  int16_t error_code = 0;
  int32_t partition = 0;
  int32_t leader_id = 0;
  int32_t leader_epoch = -1;  // v7+
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
};
struct MetadataTopic {
  int16_t error_code = 0;
  std::string name;
  std::vector<MetadataPartition> partitions;
};
struct MetadataResponse {
  int32_t node_id = 0;
  std::string host;
  int32_t port = 0;
  std::string cluster_id;
  int32_t controller_id = 0;
  std::vector<MetadataTopic> topics;
};
void EncodeMetadataResponse(const MetadataResponse& response, int16_t version,
                            WireWriter& writer);

// ---- Produce (key 0), v3-8 -------------------------------------------------

struct ProducePartitionData {
  int32_t partition = 0;
  std::optional<absl::string_view> records;
};
struct ProduceTopicData {
  absl::string_view name;
  std::vector<ProducePartitionData> partitions;
};
struct ProduceRequest {
  std::optional<absl::string_view> transactional_id;
  int16_t acks = -1;
  int32_t timeout_ms = 0;
  std::vector<ProduceTopicData> topics;
};
absl::StatusOr<ProduceRequest> DecodeProduceRequest(WireReader& reader,
                                                    int16_t version);

struct ProducePartitionResponse {
  int32_t partition = 0;
  int16_t error_code = 0;
  int64_t base_offset = -1;
  int64_t log_append_time_ms = -1;
  int64_t log_start_offset = -1;             // v5+
  std::optional<std::string> error_message;  // v8+
};
struct ProduceTopicResponse {
  std::string name;
  std::vector<ProducePartitionResponse> partitions;
};
struct ProduceResponse {
  std::vector<ProduceTopicResponse> topics;
};
void EncodeProduceResponse(const ProduceResponse& response, int16_t version,
                           WireWriter& writer);

// ---- Fetch (key 1), v4-11 --------------------------------------------------

struct FetchPartition {
  int32_t partition = 0;
  int32_t current_leader_epoch = -1;  // v9+
  int64_t fetch_offset = 0;
  int32_t partition_max_bytes = 0;
};
struct FetchTopic {
  std::string name;
  std::vector<FetchPartition> partitions;
};
struct FetchRequest {
  int32_t replica_id = -1;
  int32_t max_wait_ms = 0;
  int32_t min_bytes = 0;
  int32_t max_bytes = 0x7fffffff;
  int8_t isolation_level = 0;  // 0 read_uncommitted, 1 read_committed
  int32_t session_id = 0;      // v7+
  int32_t session_epoch = -1;  // v7+
  std::vector<FetchTopic> topics;
};
absl::StatusOr<FetchRequest> DecodeFetchRequest(WireReader& reader,
                                                int16_t version);

struct FetchAbortedTransaction {
  int64_t producer_id = 0;
  int64_t first_offset = 0;
};
struct FetchPartitionResponse {
  int32_t partition = 0;
  int16_t error_code = 0;
  int64_t high_watermark = -1;
  int64_t last_stable_offset = -1;
  int64_t log_start_offset = -1;  // v5+
  std::vector<FetchAbortedTransaction> aborted_transactions;
  // The fetched batches, written to the socket by sendfile (WireWriter::
  // Records).
  RecordRegions records;
};
struct FetchTopicResponse {
  std::string name;
  std::vector<FetchPartitionResponse> partitions;
};
struct FetchResponse {
  int16_t error_code = 0;  // v7+
  int32_t session_id = 0;  // v7+
  std::vector<FetchTopicResponse> topics;
};
void EncodeFetchResponse(const FetchResponse& response, int16_t version,
                         WireWriter& writer);

// ---- ListOffsets (key 2), v1-5 ---------------------------------------------

struct ListOffsetsPartition {
  int32_t partition = 0;
  int32_t current_leader_epoch = -1;  // v4+
  int64_t timestamp = 0;  // -1 latest, -2 earliest, else a timestamp
};
struct ListOffsetsTopic {
  std::string name;
  std::vector<ListOffsetsPartition> partitions;
};
struct ListOffsetsRequest {
  int32_t replica_id = -1;
  int8_t isolation_level = 0;  // v2+
  std::vector<ListOffsetsTopic> topics;
};
absl::StatusOr<ListOffsetsRequest> DecodeListOffsetsRequest(WireReader& reader,
                                                            int16_t version);

struct ListOffsetsPartitionResponse {
  int32_t partition = 0;
  int16_t error_code = 0;
  int64_t timestamp = -1;
  int64_t offset = -1;
  int32_t leader_epoch = -1;  // v4+
};
struct ListOffsetsTopicResponse {
  std::string name;
  std::vector<ListOffsetsPartitionResponse> partitions;
};
struct ListOffsetsResponse {
  std::vector<ListOffsetsTopicResponse> topics;
};
void EncodeListOffsetsResponse(const ListOffsetsResponse& response,
                               int16_t version, WireWriter& writer);

// ---- CreateTopics (key 19), v0-4 -------------------------------------------

struct CreatableTopic {
  std::string name;
  int32_t num_partitions = -1;      // -1 (v4+): num.partitions
  int16_t replication_factor = -1;  // -1 (v4+): the default (1)
  // Explicit assignments: partition index -> broker ids.
  std::vector<std::pair<int32_t, std::vector<int32_t>>> assignments;
  std::vector<std::pair<std::string, std::optional<std::string>>> configs;
};
struct CreateTopicsRequest {
  std::vector<CreatableTopic> topics;
  int32_t timeout_ms = 0;
  bool validate_only = false;  // v1+
};
absl::StatusOr<CreateTopicsRequest> DecodeCreateTopicsRequest(
    WireReader& reader, int16_t version);

struct TopicResult {
  std::string name;
  int16_t error_code = 0;
  std::optional<std::string> error_message;  // CreateTopics v1+
};
struct CreateTopicsResponse {
  std::vector<TopicResult> topics;
};
void EncodeCreateTopicsResponse(const CreateTopicsResponse& response,
                                int16_t version, WireWriter& writer);

// ---- DeleteTopics (key 20), v0-3 -------------------------------------------

struct DeleteTopicsRequest {
  std::vector<std::string> topics;
  int32_t timeout_ms = 0;
};
absl::StatusOr<DeleteTopicsRequest> DecodeDeleteTopicsRequest(
    WireReader& reader, int16_t version);

struct DeleteTopicsResponse {
  std::vector<TopicResult> topics;  // error_message is not sent
};
void EncodeDeleteTopicsResponse(const DeleteTopicsResponse& response,
                                int16_t version, WireWriter& writer);

// ---- DeleteRecords (key 21), v0-1 ------------------------------------------

struct DeleteRecordsPartition {
  int32_t partition = 0;
  int64_t offset = 0;  // -1: the high watermark
};
struct DeleteRecordsTopic {
  std::string name;
  std::vector<DeleteRecordsPartition> partitions;
};
struct DeleteRecordsRequest {
  std::vector<DeleteRecordsTopic> topics;
  int32_t timeout_ms = 0;
};
absl::StatusOr<DeleteRecordsRequest> DecodeDeleteRecordsRequest(
    WireReader& reader, int16_t version);

struct DeleteRecordsPartitionResult {
  int32_t partition = 0;
  int64_t low_watermark = -1;
  int16_t error_code = 0;
};
struct DeleteRecordsTopicResult {
  std::string name;
  std::vector<DeleteRecordsPartitionResult> partitions;
};
struct DeleteRecordsResponse {
  std::vector<DeleteRecordsTopicResult> topics;
};
void EncodeDeleteRecordsResponse(const DeleteRecordsResponse& response,
                                 int16_t version, WireWriter& writer);

// ---- InitProducerId (key 22), v0-1 -----------------------------------------

struct InitProducerIdRequest {
  std::optional<std::string> transactional_id;
  int32_t transaction_timeout_ms = 0;
};
absl::StatusOr<InitProducerIdRequest> DecodeInitProducerIdRequest(
    WireReader& reader, int16_t version);

struct InitProducerIdResponse {
  int16_t error_code = 0;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};
void EncodeInitProducerIdResponse(const InitProducerIdResponse& response,
                                  int16_t version, WireWriter& writer);

// ---- OffsetForLeaderEpoch (key 23), v0-3 -----------------------------------

struct EpochRequestPartition {
  int32_t partition = 0;
  int32_t current_leader_epoch = -1;  // v2+
  int32_t leader_epoch = 0;
};
struct EpochRequestTopic {
  std::string name;
  std::vector<EpochRequestPartition> partitions;
};
struct OffsetForLeaderEpochRequest {
  int32_t replica_id = -1;  // v3+
  std::vector<EpochRequestTopic> topics;
};
absl::StatusOr<OffsetForLeaderEpochRequest> DecodeOffsetForLeaderEpochRequest(
    WireReader& reader, int16_t version);

struct EpochEndPartition {
  int16_t error_code = 0;
  int32_t partition = 0;
  int32_t leader_epoch = -1;  // v1+
  int64_t end_offset = -1;
};
struct EpochEndTopic {
  std::string name;
  std::vector<EpochEndPartition> partitions;
};
struct OffsetForLeaderEpochResponse {
  std::vector<EpochEndTopic> topics;
};
void EncodeOffsetForLeaderEpochResponse(
    const OffsetForLeaderEpochResponse& response, int16_t version,
    WireWriter& writer);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_MESSAGES_H_
