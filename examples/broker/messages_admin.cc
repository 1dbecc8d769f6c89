// File: examples/broker/messages_admin.cc
//
// CreateTopics, DeleteTopics, DeleteRecords, InitProducerId and
// OffsetForLeaderEpoch wire forms (messages.h).

#include "base/status_macros.h"
#include "examples/broker/messages.h"

namespace kaas::broker {

// ---- CreateTopics
// ---------------------------------------------------------------

absl::StatusOr<CreateTopicsRequest> DecodeCreateTopicsRequest(
    WireReader& reader, int16_t version) {
  CreateTopicsRequest request;
  // name (2) + num_partitions (4) + replication_factor (2) + two arrays (8).
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 16));
  for (int32_t t = 0; t < topics; ++t) {
    CreatableTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("name"));
    topic.name = std::string(name);
    KAAS_ASSIGN_OR_RETURN(topic.num_partitions, reader.Int32("num_partitions"));
    KAAS_ASSIGN_OR_RETURN(topic.replication_factor,
                          reader.Int16("replication_factor"));
    KAAS_ASSIGN_OR_RETURN(int32_t assignments,
                          reader.ArrayLength("assignments", 8));
    for (int32_t a = 0; a < assignments; ++a) {
      auto& [partition, brokers] = topic.assignments.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition, reader.Int32("partition_index"));
      KAAS_ASSIGN_OR_RETURN(int32_t ids, reader.ArrayLength("broker_ids", 4));
      for (int32_t i = 0; i < ids; ++i) {
        KAAS_ASSIGN_OR_RETURN(int32_t id, reader.Int32("broker_id"));
        brokers.push_back(id);
      }
    }
    KAAS_ASSIGN_OR_RETURN(int32_t configs, reader.ArrayLength("configs", 4));
    for (int32_t c = 0; c < configs; ++c) {
      auto& [config_name, value] = topic.configs.emplace_back();
      KAAS_ASSIGN_OR_RETURN(absl::string_view n, reader.String("config name"));
      config_name = std::string(n);
      KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> v,
                            reader.NullableString("config value"));
      if (v.has_value()) value = std::string(*v);
    }
  }
  KAAS_ASSIGN_OR_RETURN(request.timeout_ms, reader.Int32("timeout_ms"));
  if (version >= 1) {
    KAAS_ASSIGN_OR_RETURN(request.validate_only, reader.Bool("validate_only"));
  }
  return request;
}

void EncodeCreateTopicsResponse(const CreateTopicsResponse& response,
                                int16_t version, WireWriter& writer) {
  if (version >= 2) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const TopicResult& topic : response.topics) {
    writer.String(topic.name);
    writer.Int16(topic.error_code);
    if (version >= 1) writer.NullableString(topic.error_message);
  }
}

// ---- DeleteTopics
// ---------------------------------------------------------------

absl::StatusOr<DeleteTopicsRequest> DecodeDeleteTopicsRequest(
    WireReader& reader, int16_t version) {
  DeleteTopicsRequest request;
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topic_names", 2));
  for (int32_t t = 0; t < topics; ++t) {
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic_name"));
    request.topics.emplace_back(name);
  }
  KAAS_ASSIGN_OR_RETURN(request.timeout_ms, reader.Int32("timeout_ms"));
  return request;
}

void EncodeDeleteTopicsResponse(const DeleteTopicsResponse& response,
                                int16_t version, WireWriter& writer) {
  if (version >= 1) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const TopicResult& topic : response.topics) {
    writer.String(topic.name);
    writer.Int16(topic.error_code);
  }
}

// ---- DeleteRecords
// -------------------------------------------------------------

absl::StatusOr<DeleteRecordsRequest> DecodeDeleteRecordsRequest(
    WireReader& reader, int16_t version) {
  DeleteRecordsRequest request;
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    DeleteRecordsTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("name"));
    topic.name = std::string(name);
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partitions", 12));
    for (int32_t p = 0; p < partitions; ++p) {
      DeleteRecordsPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition,
                            reader.Int32("partition_index"));
      KAAS_ASSIGN_OR_RETURN(partition.offset, reader.Int64("offset"));
    }
  }
  KAAS_ASSIGN_OR_RETURN(request.timeout_ms, reader.Int32("timeout_ms"));
  return request;
}

void EncodeDeleteRecordsResponse(const DeleteRecordsResponse& response,
                                 int16_t version, WireWriter& writer) {
  writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const DeleteRecordsTopicResult& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const DeleteRecordsPartitionResult& partition : topic.partitions) {
      writer.Int32(partition.partition);
      writer.Int64(partition.low_watermark);
      writer.Int16(partition.error_code);
    }
  }
}

// ---- InitProducerId
// ------------------------------------------------------------

absl::StatusOr<InitProducerIdRequest> DecodeInitProducerIdRequest(
    WireReader& reader, int16_t version) {
  InitProducerIdRequest request;
  KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> id,
                        reader.NullableString("transactional_id"));
  if (id.has_value()) request.transactional_id = std::string(*id);
  KAAS_ASSIGN_OR_RETURN(request.transaction_timeout_ms,
                        reader.Int32("transaction_timeout_ms"));
  return request;
}

void EncodeInitProducerIdResponse(const InitProducerIdResponse& response,
                                  int16_t version, WireWriter& writer) {
  writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
  writer.Int64(response.producer_id);
  writer.Int16(response.producer_epoch);
}

// ---- OffsetForLeaderEpoch
// ------------------------------------------------------

absl::StatusOr<OffsetForLeaderEpochRequest> DecodeOffsetForLeaderEpochRequest(
    WireReader& reader, int16_t version) {
  OffsetForLeaderEpochRequest request;
  if (version >= 3) {
    KAAS_ASSIGN_OR_RETURN(request.replica_id, reader.Int32("replica_id"));
  }
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    EpochRequestTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic"));
    topic.name = std::string(name);
    KAAS_ASSIGN_OR_RETURN(
        int32_t partitions,
        reader.ArrayLength("partitions", version >= 2 ? 12 : 8));
    for (int32_t p = 0; p < partitions; ++p) {
      EpochRequestPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition, reader.Int32("partition"));
      if (version >= 2) {
        KAAS_ASSIGN_OR_RETURN(partition.current_leader_epoch,
                              reader.Int32("current_leader_epoch"));
      }
      KAAS_ASSIGN_OR_RETURN(partition.leader_epoch,
                            reader.Int32("leader_epoch"));
    }
  }
  return request;
}

void EncodeOffsetForLeaderEpochResponse(
    const OffsetForLeaderEpochResponse& response, int16_t version,
    WireWriter& writer) {
  if (version >= 2) writer.Int32(0);  // throttle_time_ms
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const EpochEndTopic& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const EpochEndPartition& partition : topic.partitions) {
      writer.Int16(partition.error_code);
      writer.Int32(partition.partition);
      if (version >= 1) writer.Int32(partition.leader_epoch);
      writer.Int64(partition.end_offset);
    }
  }
}

}  // namespace kaas::broker
