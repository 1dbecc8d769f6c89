// File: examples/broker/txn_messages.cc
//
// Wire forms of the transaction APIs (txn_messages.h).

#include "examples/broker/txn_messages.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kaas::broker {
namespace {

absl::StatusOr<std::string> OwnedString(WireReader& reader,
                                        absl::string_view field) {
  KAAS_ASSIGN_OR_RETURN(absl::string_view s, reader.String(field));
  return std::string(s);
}

absl::Status CheckVersion(int16_t version, int16_t max, absl::string_view api) {
  if (version < 0 || version > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(api, " version ", version, " is not served"));
  }
  return absl::OkStatus();
}

// The {transactional_id, producer_id, producer_epoch} prefix most of these
// requests share.
template <typename Request>
absl::Status DecodeProducer(WireReader& reader, Request& request) {
  KAAS_ASSIGN_OR_RETURN(request.transactional_id,
                        OwnedString(reader, "transactional_id"));
  KAAS_ASSIGN_OR_RETURN(request.producer_id, reader.Int64("producer_id"));
  KAAS_ASSIGN_OR_RETURN(request.producer_epoch, reader.Int16("producer_epoch"));
  return absl::OkStatus();
}

void EncodeTopicResults(const std::vector<TxnTopicResult>& topics,
                        WireWriter& writer) {
  writer.ArrayLength(static_cast<int32_t>(topics.size()));
  for (const TxnTopicResult& topic : topics) {
    writer.String(topic.name);
    writer.ArrayLength(static_cast<int32_t>(topic.results.size()));
    for (const TxnPartitionResult& result : topic.results) {
      writer.Int32(result.partition_index);
      writer.Int16(result.error_code);
    }
  }
}

}  // namespace

// ---- AddPartitionsToTxn ----------------------------------------------------

absl::StatusOr<AddPartitionsToTxnRequest> DecodeAddPartitionsToTxnRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(CheckVersion(version, txn_api::kAddPartitionsToTxnMax,
                                    "AddPartitionsToTxn"));
  AddPartitionsToTxnRequest request;
  KAAS_RETURN_IF_ERROR(DecodeProducer(reader, request));
  // name (>= 2 bytes) + partitions array length (4).
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    TxnTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(topic.name, OwnedString(reader, "topic name"));
    KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                          reader.ArrayLength("partitions", 4));
    for (int32_t p = 0; p < partitions; ++p) {
      KAAS_ASSIGN_OR_RETURN(int32_t partition, reader.Int32("partition"));
      topic.partitions.push_back(partition);
    }
  }
  return request;
}

void EncodeAddPartitionsToTxnResponse(
    const AddPartitionsToTxnResponse& response, int16_t version,
    WireWriter& writer) {
  (void)version;    // v0-2 have the same layout
  writer.Int32(0);  // throttle_time_ms
  EncodeTopicResults(response.results, writer);
}

// ---- AddOffsetsToTxn -------------------------------------------------------

absl::StatusOr<AddOffsetsToTxnRequest> DecodeAddOffsetsToTxnRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, txn_api::kAddOffsetsToTxnMax, "AddOffsetsToTxn"));
  AddOffsetsToTxnRequest request;
  KAAS_RETURN_IF_ERROR(DecodeProducer(reader, request));
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  return request;
}

void EncodeAddOffsetsToTxnResponse(const TxnErrorResponse& response,
                                   int16_t version, WireWriter& writer) {
  (void)version;
  writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
}

// ---- EndTxn ----------------------------------------------------------------

absl::StatusOr<EndTxnRequest> DecodeEndTxnRequest(WireReader& reader,
                                                  int16_t version) {
  KAAS_RETURN_IF_ERROR(CheckVersion(version, txn_api::kEndTxnMax, "EndTxn"));
  EndTxnRequest request;
  KAAS_RETURN_IF_ERROR(DecodeProducer(reader, request));
  KAAS_ASSIGN_OR_RETURN(request.committed, reader.Bool("committed"));
  return request;
}

void EncodeEndTxnResponse(const TxnErrorResponse& response, int16_t version,
                          WireWriter& writer) {
  (void)version;
  writer.Int32(0);  // throttle_time_ms
  writer.Int16(response.error_code);
}

// ---- TxnOffsetCommit -------------------------------------------------------

absl::StatusOr<TxnOffsetCommitRequest> DecodeTxnOffsetCommitRequest(
    WireReader& reader, int16_t version) {
  KAAS_RETURN_IF_ERROR(
      CheckVersion(version, txn_api::kTxnOffsetCommitMax, "TxnOffsetCommit"));
  TxnOffsetCommitRequest request;
  KAAS_ASSIGN_OR_RETURN(request.transactional_id,
                        OwnedString(reader, "transactional_id"));
  KAAS_ASSIGN_OR_RETURN(request.group_id, OwnedString(reader, "group_id"));
  KAAS_ASSIGN_OR_RETURN(request.producer_id, reader.Int64("producer_id"));
  KAAS_ASSIGN_OR_RETURN(request.producer_epoch, reader.Int16("producer_epoch"));
  KAAS_ASSIGN_OR_RETURN(int32_t topics, reader.ArrayLength("topics", 6));
  for (int32_t t = 0; t < topics; ++t) {
    TxnOffsetCommitTopic& topic = request.topics.emplace_back();
    KAAS_ASSIGN_OR_RETURN(topic.name, OwnedString(reader, "topic name"));
    // partition (4) + offset (8) + metadata (>= 2), + leader epoch (4) v2+.
    KAAS_ASSIGN_OR_RETURN(
        int32_t partitions,
        reader.ArrayLength("partitions", version >= 2 ? 18 : 14));
    for (int32_t p = 0; p < partitions; ++p) {
      TxnOffsetCommitPartition& partition = topic.partitions.emplace_back();
      KAAS_ASSIGN_OR_RETURN(partition.partition_index,
                            reader.Int32("partition_index"));
      KAAS_ASSIGN_OR_RETURN(partition.committed_offset,
                            reader.Int64("committed_offset"));
      if (version >= 2) {
        KAAS_ASSIGN_OR_RETURN(partition.committed_leader_epoch,
                              reader.Int32("committed_leader_epoch"));
      }
      KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> metadata,
                            reader.NullableString("committed_metadata"));
      if (metadata.has_value()) {
        partition.committed_metadata = std::string(*metadata);
      }
    }
  }
  return request;
}

void EncodeTxnOffsetCommitResponse(const TxnOffsetCommitResponse& response,
                                   int16_t version, WireWriter& writer) {
  (void)version;
  writer.Int32(0);  // throttle_time_ms
  EncodeTopicResults(response.topics, writer);
}

}  // namespace kaas::broker
