// File: examples/broker/group_messages.cc
//
// Wire forms of the consumer-group APIs (group_messages.h).

#include "examples/broker/group_messages.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kaas::broker {
namespace {

// Kafka's "authorized operations not requested" (INT32_MIN).
constexpr int32_t kOperationsNotRequested = -2147483647 - 1;

absl::StatusOr<std::string> OwnedString(WireReader& reader,
                                        absl::string_view field) {
  KAAS_ASSIGN_OR_RETURN(absl::string_view s, reader.String(field));
  return std::string(s);
}

absl::StatusOr<std::optional<std::string>> OwnedNullableString(
    WireReader& reader, absl::string_view field) {
  KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> s,
                        reader.NullableString(field));
  if (!s.has_value()) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*s));
}

// BYTES (not nullable in these APIs: a null is malformed).
absl::StatusOr<std::string> OwnedBytes(WireReader& reader,
                                       absl::string_view field) {
  KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> b,
                        reader.NullableBytes(field));
  if (!b.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": null bytes"));
  }
  return std::string(*b);
}

absl::Status CheckVersion(int16_t version, int16_t max, absl::string_view api) {
  if (version < 0 || version > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(api, " version ", version, " is not served"));
  }
  return absl::OkStatus();
}

}  // namespace

// ---- FindCoordinator --------------------------------------------------------

absl::StatusOr<FindCoordinatorRequest> DecodeFindCoordinatorRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kFindCoordinatorMax, "FindCoordinator"));
  FindCoordinatorRequest request;
  KAAS_ASSIGN_OR_RETURN(request.key, OwnedString(reader, "key"));
  if (version >= 1) {
    KAAS_ASSIGN_OR_RETURN(request.key_type, reader.Int8("key_type"));
  }
  return request;
}

void EncodeFindCoordinatorResponse(const FindCoordinatorResponse& response,
                                   int16_t version, WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  if (version >= 1) writer.NullableString(response.error_message);
  writer.Int32(response.node_id);
  writer.String(response.host);
  writer.Int32(response.port);
}

// ---- JoinGroup --------------------------------------------------------------

absl::StatusOr<JoinGroupRequest> DecodeJoinGroupRequest(WireReader& reader,
                                                        int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kJoinGroupMax, "JoinGroup"));
  JoinGroupRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  KAAS_ASSIGN_OR_RETURN(request.session_timeout_ms,
                        reader.Int32("session_timeout_ms"));
  if (version >= 1) {
    KAAS_ASSIGN_OR_RETURN(request.rebalance_timeout_ms,
                          reader.Int32("rebalance_timeout_ms"));
  } else {
    // v0 has no rebalance timeout: Kafka uses the session timeout.
    request.rebalance_timeout_ms = request.session_timeout_ms;
  }
  KAAS_ASSIGN_OR_RETURN(request.member_id, OwnedString(reader, "member_id"));
  if (version >= 5) {
    KAAS_ASSIGN_OR_RETURN(request.group_instance_id,
                          OwnedNullableString(reader, "group_instance_id"));
  }
  KAAS_ASSIGN_OR_RETURN(request.protocol_type,
                        OwnedString(reader, "protocol_type"));
  // name (>= 2 bytes) + metadata (>= 4 bytes).
  KAAS_ASSIGN_OR_RETURN(int32_t count, reader.ArrayLength("protocols", 6));
  for (int32_t i = 0; i < count; ++i) {
    JoinGroupProtocol& protocol = request.protocols.emplace_back();
    KAAS_ASSIGN_OR_RETURN(protocol.name, OwnedString(reader, "protocol name"));
    KAAS_ASSIGN_OR_RETURN(protocol.metadata,
                          OwnedBytes(reader, "protocol metadata"));
  }
  return request;
}

void EncodeJoinGroupResponse(const JoinGroupResponse& response, int16_t version,
                             WireWriter& writer) {
  if (version >= 2) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  writer.Int32(response.generation_id);
  writer.String(response.protocol_name);
  writer.String(response.leader);
  writer.String(response.member_id);
  writer.ArrayLength(static_cast<int32_t>(response.members.size()));
  for (const JoinGroupMember& member : response.members) {
    writer.String(member.member_id);
    if (version >= 5) writer.NullableString(member.group_instance_id);
    writer.Bytes(member.metadata);
  }
}

// ---- SyncGroup --------------------------------------------------------------

absl::StatusOr<SyncGroupRequest> DecodeSyncGroupRequest(WireReader& reader,
                                                        int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kSyncGroupMax, "SyncGroup"));
  SyncGroupRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  KAAS_ASSIGN_OR_RETURN(request.generation_id, reader.Int32("generation_id"));
  KAAS_ASSIGN_OR_RETURN(request.member_id, OwnedString(reader, "member_id"));
  if (version >= 3) {
    KAAS_ASSIGN_OR_RETURN(request.group_instance_id,
                          OwnedNullableString(reader, "group_instance_id"));
  }
  KAAS_ASSIGN_OR_RETURN(int32_t count, reader.ArrayLength("assignments", 6));
  for (int32_t i = 0; i < count; ++i) {
    SyncGroupAssignment& assignment = request.assignments.emplace_back();
    KAAS_ASSIGN_OR_RETURN(assignment.member_id,
                          OwnedString(reader, "assignment member_id"));
    KAAS_ASSIGN_OR_RETURN(assignment.assignment,
                          OwnedBytes(reader, "assignment"));
  }
  return request;
}

void EncodeSyncGroupResponse(const SyncGroupResponse& response, int16_t version,
                             WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  writer.Bytes(response.assignment);
}

// ---- Heartbeat --------------------------------------------------------------

absl::StatusOr<HeartbeatRequest> DecodeHeartbeatRequest(WireReader& reader,
                                                        int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kHeartbeatMax, "Heartbeat"));
  HeartbeatRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  KAAS_ASSIGN_OR_RETURN(request.generation_id, reader.Int32("generation_id"));
  KAAS_ASSIGN_OR_RETURN(request.member_id, OwnedString(reader, "member_id"));
  if (version >= 3) {
    KAAS_ASSIGN_OR_RETURN(request.group_instance_id,
                          OwnedNullableString(reader, "group_instance_id"));
  }
  return request;
}

void EncodeHeartbeatResponse(const HeartbeatResponse& response, int16_t version,
                             WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
}

// ---- LeaveGroup -------------------------------------------------------------

absl::StatusOr<LeaveGroupRequest> DecodeLeaveGroupRequest(WireReader& reader,
                                                          int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kLeaveGroupMax, "LeaveGroup"));
  LeaveGroupRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  if (version <= 2) {
    LeaveGroupMember& member = request.members.emplace_back();
    KAAS_ASSIGN_OR_RETURN(member.member_id, OwnedString(reader, "member_id"));
    return request;
  }
  // member_id (>= 2 bytes) + group_instance_id (>= 2 bytes).
  KAAS_ASSIGN_OR_RETURN(int32_t count, reader.ArrayLength("members", 4));
  for (int32_t i = 0; i < count; ++i) {
    LeaveGroupMember& member = request.members.emplace_back();
    KAAS_ASSIGN_OR_RETURN(member.member_id, OwnedString(reader, "member_id"));
    KAAS_ASSIGN_OR_RETURN(member.group_instance_id,
                          OwnedNullableString(reader, "group_instance_id"));
  }
  return request;
}

void EncodeLeaveGroupResponse(const LeaveGroupResponse& response,
                              int16_t version, WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  if (version >= 3) {
    writer.ArrayLength(static_cast<int32_t>(response.members.size()));
    for (const LeaveGroupMemberResponse& member : response.members) {
      writer.String(member.member_id);
      writer.NullableString(member.group_instance_id);
      writer.Int16(member.error_code);
    }
  }
}

// ---- OffsetCommit -----------------------------------------------------------

absl::StatusOr<OffsetCommitRequest> DecodeOffsetCommitRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kOffsetCommitMax, "OffsetCommit"));
  OffsetCommitRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  if (version >= 1) {
    KAAS_ASSIGN_OR_RETURN(request.generation_id, reader.Int32("generation_id"));
    KAAS_ASSIGN_OR_RETURN(request.member_id, OwnedString(reader, "member_id"));
  }
  if (version >= 7) {
    KAAS_ASSIGN_OR_RETURN(request.group_instance_id,
                          OwnedNullableString(reader, "group_instance_id"));
  }
  if (version >= 2 && version <= 4) {
    KAAS_ASSIGN_OR_RETURN(request.retention_time_ms,
                          reader.Int64("retention_time_ms"));
  }
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  // partition_index, committed_offset, [leader epoch], [timestamp], metadata.
  const size_t min_partition =
      4 + 8 + (version >= 6 ? 4 : 0) + (version == 1 ? 8 : 0) + 2;
  for (int32_t t = 0; t < topics; ++t) {
    OffsetCommitTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(topic.name, OwnedString(reader, "topic name"));
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partitions", min_partition));
    for (int32_t p = 0; p < partitions; ++p) {
      OffsetCommitPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition_index,
                            reader.Int32("partition_index"));
      KAAS_ASSIGN_OR_RETURN(partition.committed_offset,
                            reader.Int64("committed_offset"));
      if (version >= 6) {
        KAAS_ASSIGN_OR_RETURN(partition.committed_leader_epoch,
                              reader.Int32("committed_leader_epoch"));
      }
      if (version == 1) {
        KAAS_ASSIGN_OR_RETURN(partition.commit_timestamp,
                              reader.Int64("commit_timestamp"));
      }
      KAAS_ASSIGN_OR_RETURN(partition.committed_metadata,
                            OwnedNullableString(reader, "committed_metadata"));
    }
  }
  return request;
}

void EncodeOffsetCommitResponse(const OffsetCommitResponse& response,
                                int16_t version, WireWriter& writer) {
  if (version >= 3) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const OffsetCommitTopicResponse& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const OffsetCommitPartitionResponse& partition : topic.partitions) {
      writer.Int32(partition.partition_index);
      writer.Int16(partition.error_code);
    }
  }
}

// ---- OffsetFetch ------------------------------------------------------------

absl::StatusOr<OffsetFetchRequest> DecodeOffsetFetchRequest(WireReader& reader,
                                                            int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kOffsetFetchMax, "OffsetFetch"));
  OffsetFetchRequest request;
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  KAAS_ASSIGN_OR_RETURN(
      int32_t topics,
      reader.ArrayLength("topics", 6, /*nullable=*/version >= 2));
  if (topics < 0) return request;  // null: every offset of the group
  request.topics.emplace();
  for (int32_t t = 0; t < topics; ++t) {
    OffsetFetchTopic& topic = request.topics->emplace_back();
    KAAS_ASSIGN_OR_RETURN(topic.name, OwnedString(reader, "topic name"));
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partition_indexes", 4));
    for (int32_t p = 0; p < partitions; ++p) {
      KAAS_ASSIGN_OR_RETURN(int32_t index, reader.Int32("partition_index"));
      topic.partition_indexes.push_back(index);
    }
  }
  return request;
}

void EncodeOffsetFetchResponse(const OffsetFetchResponse& response,
                               int16_t version, WireWriter& writer) {
  if (version >= 3) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const OffsetFetchTopicResponse& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const OffsetFetchPartitionResponse& partition : topic.partitions) {
      writer.Int32(partition.partition_index);
      writer.Int64(partition.committed_offset);
      if (version >= 5) writer.Int32(partition.committed_leader_epoch);
      writer.NullableString(partition.metadata);
      writer.Int16(partition.error_code);
    }
  }
  if (version >= 2) writer.Int16(response.error_code);
}

// ---- ListGroups -------------------------------------------------------------

absl::Status DecodeListGroupsRequest(WireReader& reader, int16_t version) {
  return CheckVersion(version, group_api::kListGroupsMax, "ListGroups");
}

void EncodeListGroupsResponse(const ListGroupsResponse& response,
                              int16_t version, WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  writer.ArrayLength(static_cast<int32_t>(response.groups.size()));
  for (const ListedGroup& group : response.groups) {
    writer.String(group.group_id);
    writer.String(group.protocol_type);
  }
}

// ---- DescribeGroups ---------------------------------------------------------

absl::StatusOr<DescribeGroupsRequest> DecodeDescribeGroupsRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, group_api::kDescribeGroupsMax, "DescribeGroups"));
  DescribeGroupsRequest request;
  KAAS_ASSIGN_OR_RETURN(int32_t count, reader.ArrayLength("groups", 2));
  for (int32_t i = 0; i < count; ++i) {
    KAAS_ASSIGN_OR_RETURN(std::string group, OwnedString(reader, "group"));
    request.groups.push_back(std::move(group));
  }
  if (version >= 3) {
    KAAS_ASSIGN_OR_RETURN(request.include_authorized_operations,
                          reader.Bool("include_authorized_operations"));
  }
  return request;
}

void EncodeDescribeGroupsResponse(const DescribeGroupsResponse& response,
                                  int16_t version, WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.groups.size()));
  for (const DescribedGroup& group : response.groups) {
    writer.Int16(group.error_code);
    writer.String(group.group_id);
    writer.String(group.group_state);
    writer.String(group.protocol_type);
    writer.String(group.protocol_data);
    writer.ArrayLength(static_cast<int32_t>(group.members.size()));
    for (const DescribedGroupMember& member : group.members) {
      writer.String(member.member_id);
      if (version >= 4) writer.NullableString(member.group_instance_id);
      writer.String(member.client_id);
      writer.String(member.client_host);
      writer.Bytes(member.member_metadata);
      writer.Bytes(member.member_assignment);
    }
    if (version >= 3) writer.Int32(kOperationsNotRequested);
  }
}

}  // namespace kaas::broker
