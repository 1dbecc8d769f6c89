// File: examples/broker/messages_produce_fetch.cc
//
// Produce and Fetch wire forms (messages.h).

#include "base/status_macros.h"
#include "examples/broker/messages.h"

namespace kaas::broker {

// ---- Produce
// -------------------------------------------------------------------

absl::StatusOr<ProduceRequest> DecodeProduceRequest(WireReader& reader,
                                                    int16_t version) {
  ProduceRequest request;
  KAAS_ASSIGN_OR_RETURN(request.transactional_id,
                        reader.NullableString("transactional_id"));
  KAAS_ASSIGN_OR_RETURN(request.acks, reader.Int16("acks"));
  KAAS_ASSIGN_OR_RETURN(request.timeout_ms, reader.Int32("timeout_ms"));
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topic_data", 6));
  for (int32_t t = 0; t < topics; ++t) {
    ProduceTopicData& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(topic.name, reader.String("topic"));
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partition_data", 8));
    for (int32_t p = 0; p < partitions; ++p) {
      ProducePartitionData& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition, reader.Int32("index"));
      KAAS_ASSIGN_OR_RETURN(partition.records, reader.NullableBytes("records"));
    }
  }
  return request;
}

void EncodeProduceResponse(const ProduceResponse& response, int16_t version,
                           WireWriter& writer) {
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const ProduceTopicResponse& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const ProducePartitionResponse& partition : topic.partitions) {
      writer.Int32(partition.partition);
      writer.Int16(partition.error_code);
      writer.Int64(partition.base_offset);
      writer.Int64(partition.log_append_time_ms);
      if (version >= 5) writer.Int64(partition.log_start_offset);
      if (version >= 8) {
        writer.ArrayLength(0);  // record_errors
        writer.NullableString(partition.error_message);
      }
    }
  }
  writer.Int32(0);  // throttle_time_ms
}

// ---- Fetch
// -----------------------------------------------------------------------

absl::StatusOr<FetchRequest> DecodeFetchRequest(WireReader& reader,
                                                int16_t version) {
  FetchRequest request;
  KAAS_ASSIGN_OR_RETURN(request.replica_id, reader.Int32("replica_id"));
  KAAS_ASSIGN_OR_RETURN(request.max_wait_ms, reader.Int32("max_wait_ms"));
  KAAS_ASSIGN_OR_RETURN(request.min_bytes, reader.Int32("min_bytes"));
  KAAS_ASSIGN_OR_RETURN(request.max_bytes, reader.Int32("max_bytes"));
  KAAS_ASSIGN_OR_RETURN(request.isolation_level,
                        reader.Int8("isolation_level"));
  if (version >= 7) {
    KAAS_ASSIGN_OR_RETURN(request.session_id, reader.Int32("session_id"));
    KAAS_ASSIGN_OR_RETURN(request.session_epoch, reader.Int32("session_epoch"));
  }
  const size_t partition_bytes =
      4 + 8 + 4 + (version >= 5 ? 8 : 0) + (version >= 9 ? 4 : 0);
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    FetchTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic"));
    topic.name = std::string(name);
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partitions", partition_bytes));
    for (int32_t p = 0; p < partitions; ++p) {
      FetchPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition, reader.Int32("partition"));
      if (version >= 9) {
        KAAS_ASSIGN_OR_RETURN(partition.current_leader_epoch,
                              reader.Int32("current_leader_epoch"));
      }
      KAAS_ASSIGN_OR_RETURN(partition.fetch_offset,
                            reader.Int64("fetch_offset"));
      if (version >= 5) {
        KAAS_RETURN_IF_ERROR(reader.Int64("log_start_offset").status());
      }
      KAAS_ASSIGN_OR_RETURN(partition.partition_max_bytes,
                            reader.Int32("partition_max_bytes"));
    }
  }
  if (version >= 7) {
    // Fetch sessions are not kept (session_id 0 in every response), so the
    // topics a client forgets are read and ignored.
    KAAS_ASSIGN_OR_RETURN(int32_t forgotten,
                          reader.ArrayLength("forgotten_topics_data", 6));
    for (int32_t t = 0; t < forgotten; ++t) {
      KAAS_RETURN_IF_ERROR(reader.String("topic").status());
      KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                            reader.ArrayLength("partitions", 4));
      for (int32_t p = 0; p < partitions; ++p) {
        KAAS_RETURN_IF_ERROR(reader.Int32("partition").status());
      }
    }
  }
  if (version >= 11) KAAS_RETURN_IF_ERROR(reader.String("rack_id").status());
  return request;
}

void EncodeFetchResponse(const FetchResponse& response, int16_t version,
                         WireWriter& writer) {
  writer.Int32(0);  // throttle_time_ms
  if (version >= 7) {
    writer.Int16(response.error_code);
    writer.Int32(response.session_id);
  }
  writer.ArrayLength(static_cast<int32_t>(response.topics.size()));
  for (const FetchTopicResponse& topic : response.topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
    for (const FetchPartitionResponse& partition : topic.partitions) {
      writer.Int32(partition.partition);
      writer.Int16(partition.error_code);
      writer.Int64(partition.high_watermark);
      writer.Int64(partition.last_stable_offset);
      if (version >= 5) writer.Int64(partition.log_start_offset);
      writer.ArrayLength(
          static_cast<int32_t>(partition.aborted_transactions.size()));
      for (const FetchAbortedTransaction& aborted :
           partition.aborted_transactions) {
        writer.Int64(aborted.producer_id);
        writer.Int64(aborted.first_offset);
      }
      if (version >= 11) writer.Int32(-1);  // preferred_read_replica
      writer.Records(partition.records);
    }
  }
}

}  // namespace kaas::broker
