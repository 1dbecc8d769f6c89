// File: examples/broker/messages_simple.cc
//
// ApiVersions, Metadata and ListOffsets wire forms (messages.h).

#include "base/status_macros.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/messages.h"

namespace kaas::broker {
namespace {

// Kafka's "authorized operations not requested" (INT32_MIN).
constexpr int32_t kOperationsNotRequested = -2147483647 - 1;

void Int32Array(const std::vector<int32_t>& values, WireWriter& writer) {
  writer.ArrayLength(static_cast<int32_t>(values.size()));
  for (int32_t v : values) writer.Int32(v);
}

}  // namespace

// ---- ApiVersions
// -------------------------------------------------------------

absl::Status DecodeApiVersionsRequest(WireReader& reader, int16_t version) {
  if (version < 3) return absl::OkStatus();
  KAAS_RETURN_IF_ERROR(
      reader.CompactNullableString("client_software_name").status());
  KAAS_RETURN_IF_ERROR(
      reader.CompactNullableString("client_software_version").status());
  return reader.SkipTaggedFields("ApiVersions tags");
}

void EncodeApiVersionsResponse(const ApiVersionsResponse& response,
                               int16_t version, WireWriter& writer) {
  const bool flexible = version >= 3;
  writer.Int16(response.error_code);
  const auto apis = SupportedApis();
  if (flexible) {
    writer.CompactArrayLength(static_cast<int32_t>(apis.size()));
  } else {
    writer.ArrayLength(static_cast<int32_t>(apis.size()));
  }
  for (const ApiVersionRange& api : apis) {
    writer.Int16(api.api_key);
    writer.Int16(api.min_version);
    writer.Int16(api.max_version);
    if (flexible) writer.EmptyTaggedFields();
  }
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  if (flexible) writer.EmptyTaggedFields();
}

// ---- Metadata
// ------------------------------------------------------------------

absl::StatusOr<MetadataRequest> DecodeMetadataRequest(WireReader& reader,
                                                      int16_t version) {
  MetadataRequest request;
  KAAS_ASSIGN_OR_RETURN(int32_t count,
                        reader.ArrayLength("topics", /*min_element_bytes=*/2,
                                           /*nullable=*/version >= 1));
  if (count >= 0 && !(version == 0 && count == 0)) {
    request.topics.emplace();
    for (int32_t i = 0; i < count; ++i) {
      KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic"));
      request.topics->emplace_back(name);
    }
  }
  if (version >= 4) {
    KAAS_ASSIGN_OR_RETURN(request.allow_auto_topic_creation,
                          reader.Bool("allow_auto_topic_creation"));
  }
  if (version >= 8) {
    KAAS_RETURN_IF_ERROR(
        reader.Bool("include_cluster_authorized_operations").status());
    KAAS_RETURN_IF_ERROR(
        reader.Bool("include_topic_authorized_operations").status());
  }
  return request;
}

void EncodeMetadataResponse(const MetadataResponse& response, int16_t version,
                            WireWriter& writer) {
  if (version >= 3) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(1);              // brokers: this one
  writer.Int32(response.node_id);
  writer.String(response.host);
  writer.Int32(response.port);
  if (version >= 1) writer.NullableString(std::nullopt);  // rack
  if (version >= 2) writer.NullableString(response.cluster_id);
  if (version >= 1) writer.Int32(response.controller_id);
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const MetadataTopic& topic : response.topics) {
    writer.Int16(topic.error_code);
    writer.String(topic.name);
    if (version >= 1) writer.Bool(false);  // is_internal
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const MetadataPartition& partition : topic.partitions) {
      writer.Int16(partition.error_code);
      writer.Int32(partition.partition);
      writer.Int32(partition.leader_id);
      if (version >= 7) writer.Int32(partition.leader_epoch);
      Int32Array(partition.replicas, writer);
      Int32Array(partition.isr, writer);
      if (version >= 5) Int32Array({}, writer);  // offline_replicas
    }
    if (version >= 8) writer.Int32(kOperationsNotRequested);
  }
  if (version >= 8) writer.Int32(kOperationsNotRequested);
}

// ---- ListOffsets
// ---------------------------------------------------------------

absl::StatusOr<ListOffsetsRequest> DecodeListOffsetsRequest(WireReader& reader,
                                                            int16_t version) {
  ListOffsetsRequest request;
  KAAS_ASSIGN_OR_RETURN(request.replica_id, reader.Int32("replica_id"));
  if (version >= 2) {
    KAAS_ASSIGN_OR_RETURN(request.isolation_level,
                          reader.Int8("isolation_level"));
  }
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    ListOffsetsTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic"));
    topic.name = std::string(name);
    KAAS_ASSIGN_OR_RETURN(
        int32_t partitions,
        reader.ArrayLength("partitions", version >= 4 ? 16 : 12));
    for (int32_t p = 0; p < partitions; ++p) {
      ListOffsetsPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition,
                            reader.Int32("partition_index"));
      if (version >= 4) {
        KAAS_ASSIGN_OR_RETURN(partition.current_leader_epoch,
                              reader.Int32("current_leader_epoch"));
      }
      KAAS_ASSIGN_OR_RETURN(partition.timestamp, reader.Int64("timestamp"));
    }
  }
  return request;
}

void EncodeListOffsetsResponse(const ListOffsetsResponse& response,
                               int16_t version, WireWriter& writer) {
  if (version >= 2) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const ListOffsetsTopicResponse& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const ListOffsetsPartitionResponse& partition : topic.partitions) {
      writer.Int32(partition.partition);
      writer.Int16(partition.error_code);
      writer.Int64(partition.timestamp);
      writer.Int64(partition.offset);
      if (version >= 4) writer.Int32(partition.leader_epoch);
    }
  }
}

}  // namespace kaas::broker
