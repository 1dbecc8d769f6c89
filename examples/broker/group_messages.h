// File: examples/broker/group_messages.h
//
// The consumer-group APIs of Kafka's classic group protocol, as structs,
// with request decoders and response encoders for every NON-flexible
// version (the flexible ones need compact encodings and tagged fields and
// are not served):
//
//   API (key)              served   flexible from
//   OffsetCommit (8)       0-7      8
//   OffsetFetch (9)        0-5      6
//   FindCoordinator (10)   0-2      3
//   JoinGroup (11)         0-5      6
//   Heartbeat (12)         0-3      4
//   LeaveGroup (13)        0-3      4
//   SyncGroup (14)         0-3      4
//   DescribeGroups (15)    0-4      5
//   ListGroups (16)        0-2      3
//
// Field names and the versions each field exists in follow Kafka's
// published message specs (clients/src/main/resources/common/message/
// *.json). Decoders read the request body (after the header) and fail with
// kInvalidArgument on malformed bytes (wire.h's bounds checks; every array
// length is checked against the bytes left before anything is allocated).
// Decoded requests own their strings (the coordinator keeps them past the
// request frame). Encoders append the response body (after the header).
//
// The constants (API keys, version ranges, error codes) are here rather
// than in api_keys.h so that this library stands alone until the broker
// serves it.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_GROUP_MESSAGES_H_
#define KAAS_EXAMPLES_BROKER_GROUP_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/broker/wire.h"

namespace kaas::broker {

namespace group_api {
inline constexpr int16_t kOffsetCommit = 8;
inline constexpr int16_t kOffsetFetch = 9;
inline constexpr int16_t kFindCoordinator = 10;
inline constexpr int16_t kJoinGroup = 11;
inline constexpr int16_t kHeartbeat = 12;
inline constexpr int16_t kLeaveGroup = 13;
inline constexpr int16_t kSyncGroup = 14;
inline constexpr int16_t kDescribeGroups = 15;
inline constexpr int16_t kListGroups = 16;

// The highest served (non-flexible) version of each; every one starts at 0.
inline constexpr int16_t kOffsetCommitMax = 7;
inline constexpr int16_t kOffsetFetchMax = 5;
inline constexpr int16_t kFindCoordinatorMax = 2;
inline constexpr int16_t kJoinGroupMax = 5;
inline constexpr int16_t kHeartbeatMax = 3;
inline constexpr int16_t kLeaveGroupMax = 3;
inline constexpr int16_t kSyncGroupMax = 3;
inline constexpr int16_t kDescribeGroupsMax = 4;
inline constexpr int16_t kListGroupsMax = 2;
}  // namespace group_api

// Kafka error codes of the group APIs (Errors.java).
namespace group_error {
inline constexpr int16_t kNone = 0;
inline constexpr int16_t kUnknownServerError = -1;
inline constexpr int16_t kOffsetMetadataTooLarge = 12;
inline constexpr int16_t kCoordinatorLoadInProgress = 14;
inline constexpr int16_t kCoordinatorNotAvailable = 15;
inline constexpr int16_t kNotCoordinator = 16;
inline constexpr int16_t kIllegalGeneration = 22;
inline constexpr int16_t kInconsistentGroupProtocol = 23;
inline constexpr int16_t kInvalidGroupId = 24;
inline constexpr int16_t kUnknownMemberId = 25;
inline constexpr int16_t kInvalidSessionTimeout = 26;
inline constexpr int16_t kRebalanceInProgress = 27;
inline constexpr int16_t kUnsupportedVersion = 35;
inline constexpr int16_t kInvalidRequest = 42;
inline constexpr int16_t kMemberIdRequired = 79;
}  // namespace group_error

// ---- FindCoordinator (key 10), v0-2 ----------------------------------------

struct FindCoordinatorRequest {
  std::string key;
  int8_t key_type = 0;  // v1+: 0 group, 1 transaction
};
absl::StatusOr<FindCoordinatorRequest> DecodeFindCoordinatorRequest(
    WireReader& reader, int16_t version);

struct FindCoordinatorResponse {
  int16_t error_code = 0;
  std::optional<std::string> error_message;  // v1+
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
};
void EncodeFindCoordinatorResponse(const FindCoordinatorResponse& response,
                                   int16_t version, WireWriter& writer);

// ---- JoinGroup (key 11), v0-5 ----------------------------------------------

struct JoinGroupProtocol {
  std::string name;
  std::string metadata;
};
struct JoinGroupRequest {
  std::string group_id;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;  // v1+; v0: the session timeout
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v5+
  std::string protocol_type;
  std::vector<JoinGroupProtocol> protocols;
};
absl::StatusOr<JoinGroupRequest> DecodeJoinGroupRequest(WireReader& reader,
                                                        int16_t version);

struct JoinGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v5+
  std::string metadata;
};
struct JoinGroupResponse {
  int16_t error_code = 0;
  int32_t generation_id = -1;
  std::string protocol_name;
  std::string leader;
  std::string member_id;
  // Only the leader's response lists the members.
  std::vector<JoinGroupMember> members;
};
void EncodeJoinGroupResponse(const JoinGroupResponse& response, int16_t version,
                             WireWriter& writer);

// ---- SyncGroup (key 14), v0-3 ----------------------------------------------

struct SyncGroupAssignment {
  std::string member_id;
  std::string assignment;
};
struct SyncGroupRequest {
  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+
  std::vector<SyncGroupAssignment> assignments;
};
absl::StatusOr<SyncGroupRequest> DecodeSyncGroupRequest(WireReader& reader,
                                                        int16_t version);

struct SyncGroupResponse {
  int16_t error_code = 0;
  std::string assignment;
};
void EncodeSyncGroupResponse(const SyncGroupResponse& response, int16_t version,
                             WireWriter& writer);

// ---- Heartbeat (key 12), v0-3 ----------------------------------------------

struct HeartbeatRequest {
  std::string group_id;
  int32_t generation_id = 0;
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v3+
};
absl::StatusOr<HeartbeatRequest> DecodeHeartbeatRequest(WireReader& reader,
                                                        int16_t version);

struct HeartbeatResponse {
  int16_t error_code = 0;
};
void EncodeHeartbeatResponse(const HeartbeatResponse& response, int16_t version,
                             WireWriter& writer);

// ---- LeaveGroup (key 13), v0-3 ---------------------------------------------

struct LeaveGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
};
struct LeaveGroupRequest {
  std::string group_id;
  // v0-2 carry one member_id; v3+ an array (decoded into the same field).
  std::vector<LeaveGroupMember> members;
};
absl::StatusOr<LeaveGroupRequest> DecodeLeaveGroupRequest(WireReader& reader,
                                                          int16_t version);

struct LeaveGroupMemberResponse {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  int16_t error_code = 0;
};
struct LeaveGroupResponse {
  int16_t error_code = 0;
  std::vector<LeaveGroupMemberResponse> members;  // v3+
};
void EncodeLeaveGroupResponse(const LeaveGroupResponse& response,
                              int16_t version, WireWriter& writer);

// ---- OffsetCommit (key 8), v0-7 --------------------------------------------

struct OffsetCommitPartition {
  int32_t partition_index = 0;
  int64_t committed_offset = 0;
  int32_t committed_leader_epoch = -1;  // v6+
  int64_t commit_timestamp = -1;        // v1 only
  std::optional<std::string> committed_metadata;
};
struct OffsetCommitTopic {
  std::string name;
  std::vector<OffsetCommitPartition> partitions;
};
struct OffsetCommitRequest {
  std::string group_id;
  int32_t generation_id = -1;                    // v1+
  std::string member_id;                         // v1+
  std::optional<std::string> group_instance_id;  // v7+
  int64_t retention_time_ms = -1;                // v2-4
  std::vector<OffsetCommitTopic> topics;
};
absl::StatusOr<OffsetCommitRequest> DecodeOffsetCommitRequest(
    WireReader& reader, int16_t version);

struct OffsetCommitPartitionResponse {
  int32_t partition_index = 0;
  int16_t error_code = 0;
};
struct OffsetCommitTopicResponse {
  std::string name;
  std::vector<OffsetCommitPartitionResponse> partitions;
};
struct OffsetCommitResponse {
  std::vector<OffsetCommitTopicResponse> topics;
};
void EncodeOffsetCommitResponse(const OffsetCommitResponse& response,
                                int16_t version, WireWriter& writer);

// ---- OffsetFetch (key 9), v0-5 ---------------------------------------------

struct OffsetFetchTopic {
  std::string name;
  std::vector<int32_t> partition_indexes;
};
struct OffsetFetchRequest {
  std::string group_id;
  // nullopt (v2+ only): every committed offset of the group.
  std::optional<std::vector<OffsetFetchTopic>> topics;
};
absl::StatusOr<OffsetFetchRequest> DecodeOffsetFetchRequest(WireReader& reader,
                                                            int16_t version);

struct OffsetFetchPartitionResponse {
  int32_t partition_index = 0;
  int64_t committed_offset = -1;
  int32_t committed_leader_epoch = -1;  // v5+
  std::optional<std::string> metadata = std::string();
  int16_t error_code = 0;
};
struct OffsetFetchTopicResponse {
  std::string name;
  std::vector<OffsetFetchPartitionResponse> partitions;
};
struct OffsetFetchResponse {
  std::vector<OffsetFetchTopicResponse> topics;
  int16_t error_code = 0;  // v2+
};
void EncodeOffsetFetchResponse(const OffsetFetchResponse& response,
                               int16_t version, WireWriter& writer);

// ---- ListGroups (key 16), v0-2 ---------------------------------------------

// v0-2 requests have no fields.
absl::Status DecodeListGroupsRequest(WireReader& reader, int16_t version);

struct ListedGroup {
  std::string group_id;
  std::string protocol_type;
};
struct ListGroupsResponse {
  int16_t error_code = 0;
  std::vector<ListedGroup> groups;
};
void EncodeListGroupsResponse(const ListGroupsResponse& response,
                              int16_t version, WireWriter& writer);

// ---- DescribeGroups (key 15), v0-4 -----------------------------------------

struct DescribeGroupsRequest {
  std::vector<std::string> groups;
  bool include_authorized_operations = false;  // v3+
};
absl::StatusOr<DescribeGroupsRequest> DecodeDescribeGroupsRequest(
    WireReader& reader, int16_t version);

struct DescribedGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;  // v4+
  std::string client_id;
  std::string client_host;
  std::string member_metadata;
  std::string member_assignment;
};
struct DescribedGroup {
  int16_t error_code = 0;
  std::string group_id;
  std::string group_state;
  std::string protocol_type;
  std::string protocol_data;
  std::vector<DescribedGroupMember> members;
};
struct DescribeGroupsResponse {
  std::vector<DescribedGroup> groups;
};
// v3+ authorized_operations is sent as INT32_MIN (not requested / unknown).
void EncodeDescribeGroupsResponse(const DescribeGroupsResponse& response,
                                  int16_t version, WireWriter& writer);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_GROUP_MESSAGES_H_
