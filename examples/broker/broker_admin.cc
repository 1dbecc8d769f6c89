// File: examples/broker/broker_admin.cc
//
// Broker: CreateTopics, DeleteTopics, DeleteRecords, InitProducerId and
// OffsetForLeaderEpoch (broker_impl.h).

#include <algorithm>
#include <asio.hpp>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/broker_impl.h"
#include "examples/broker/messages.h"
#include "examples/broker/topic_configs.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"
#include "storage/engine/topic_config.h"

namespace kaas::broker {

using broker_internal::ErrorCodeOf;
using broker_internal::Frame;
using broker_internal::IsolationOf;

absl::Status Broker::Impl::HandleCreateTopics(const RequestPtr& request,
                                              WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(CreateTopicsRequest create,
                        DecodeCreateTopicsRequest(reader, version));
  CreateTopicsResponse response;
  for (const CreatableTopic& topic : create.topics) {
    TopicResult& result = response.topics.emplace_back();
    result.name = topic.name;
    auto refuse = [&](int16_t code, std::string message) {
      result.error_code = code;
      result.error_message = std::move(message);
    };
    int32_t partitions =
        topic.num_partitions == -1
            ? (topic.assignments.empty()
                   ? config_.num_partitions
                   : static_cast<int32_t>(topic.assignments.size()))
            : topic.num_partitions;
    if (!ValidateTopicName(topic.name).ok()) {
      refuse(kErrorInvalidTopic, "invalid topic name");
    } else if (partitions < 1 || partitions > 100000) {
      refuse(kErrorInvalidPartitions, "partitions must be in 1..100000");
    } else if (topic.replication_factor != -1 &&
               topic.replication_factor != 1) {
      refuse(kErrorInvalidReplicationFactor,
             "a single broker: the replication factor is 1");
    } else if (!AssignmentsValid(topic, partitions)) {
      refuse(kErrorInvalidReplicaAssignment,
             "every partition must be assigned to this broker only");
    } else if (absl::StatusOr<TopicConfigOverrides> overrides =
                   TopicConfigFromKafka(topic.configs);
               !overrides.ok()) {
      refuse(kErrorInvalidConfig, std::string(overrides.status().message()));
    } else if (absl::Status valid = ValidateTopicConfig(topic.name, *overrides);
               !valid.ok()) {
      refuse(kErrorInvalidConfig, std::string(valid.message()));
    } else if (create.validate_only) {
      absl::MutexLock lock(&mu_);
      if (topics_.contains(topic.name)) {
        refuse(kErrorTopicAlreadyExists, "the topic exists");
      }
    } else {
      std::string message;
      CreateTopic(topic.name, partitions, *overrides, &result.error_code,
                  &message);
      if (result.error_code == kErrorTopicAlreadyExists) {
        result.error_message = "the topic exists";
      } else if (!message.empty()) {
        result.error_message = std::move(message);
      }
    }
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeCreateTopicsResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

bool Broker::Impl::AssignmentsValid(const CreatableTopic& topic,
                                    int32_t partitions) {
  if (topic.assignments.empty()) return true;
  if (static_cast<int32_t>(topic.assignments.size()) != partitions) {
    return false;
  }
  std::vector<bool> seen(partitions, false);
  for (const auto& [partition, brokers] : topic.assignments) {
    if (partition < 0 || partition >= partitions || seen[partition] ||
        brokers != std::vector<int32_t>{config_.node_id}) {
      return false;
    }
    seen[partition] = true;
  }
  return true;
}

absl::Status Broker::Impl::HandleDeleteTopics(const RequestPtr& request,
                                              WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(DeleteTopicsRequest del,
                        DecodeDeleteTopicsRequest(reader, version));
  DeleteTopicsResponse response;
  for (const std::string& name : del.topics) {
    TopicResult& result = response.topics.emplace_back();
    result.name = name;
    absl::MutexLock create_lock(&create_mu_);
    int32_t partitions = 0;
    {
      absl::MutexLock lock(&mu_);
      auto it = topics_.find(name);
      if (it == topics_.end()) {
        result.error_code = kErrorUnknownTopicOrPartition;
        continue;
      }
      partitions = it->second;
      // Gone from Metadata at once; requests in flight get errors.
      topics_.erase(it);
    }
    for (int32_t p = 0; p < partitions; ++p) {
      absl::Status status = engine_.DeletePartition({name, p});
      if (!status.ok()) {
        LOG(ERROR) << "deleting " << name << "-" << p << ": " << status;
        result.error_code = ErrorCodeOf(status);
      }
    }
    // The topic's settings go with it: a topic auto-created later under
    // the same name starts from the broker's defaults.
    absl::Status status = engine_.SetTopicConfig(name, TopicConfigOverrides());
    if (!status.ok()) {
      LOG(ERROR) << "clearing the config of " << name << ": " << status;
      result.error_code = ErrorCodeOf(status);
    }
    LOG(INFO) << "deleted topic " << name;
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeDeleteTopicsResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

absl::Status Broker::Impl::HandleDeleteRecords(const RequestPtr& request,
                                               WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(DeleteRecordsRequest del,
                        DecodeDeleteRecordsRequest(reader, version));
  DeleteRecordsResponse response;
  for (const DeleteRecordsTopic& topic : del.topics) {
    DeleteRecordsTopicResult& out_topic = response.topics.emplace_back();
    out_topic.name = topic.name;
    for (const DeleteRecordsPartition& partition : topic.partitions) {
      DeleteRecordsPartitionResult& out = out_topic.partitions.emplace_back();
      out.partition = partition.partition;
      out.error_code = PartitionError(topic.name, partition.partition,
                                      /*may_create=*/false);
      if (out.error_code != kErrorNone) continue;
      // Durable before it returns (the engine syncs the new log start).
      absl::StatusOr<int64_t> low = engine_.DeleteRecords(
          {topic.name, partition.partition}, partition.offset);
      if (low.ok()) {
        out.low_watermark = *low;
      } else {
        out.error_code = ErrorCodeOf(low.status());
      }
    }
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeDeleteRecordsResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

absl::Status Broker::Impl::HandleInitProducerId(const RequestPtr& request,
                                                WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(InitProducerIdRequest init,
                        DecodeInitProducerIdRequest(reader, version));
  InitProducerIdResponse response;
  if (init.transactional_id.has_value()) {
    response = txns_->InitProducerId(init);
  } else if (absl::StatusOr<int64_t> id = producer_ids_.Next(); id.ok()) {
    response.producer_id = *id;
    response.producer_epoch = 0;
  } else {
    LOG(ERROR) << "allocating a producer id: " << id.status();
    response.error_code = kErrorUnknownServerError;
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeInitProducerIdResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

absl::Status Broker::Impl::HandleOffsetForLeaderEpoch(const RequestPtr& request,
                                                      WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(OffsetForLeaderEpochRequest epochs,
                        DecodeOffsetForLeaderEpochRequest(reader, version));
  OffsetForLeaderEpochResponse response;
  for (const EpochRequestTopic& topic : epochs.topics) {
    EpochEndTopic& out_topic = response.topics.emplace_back();
    out_topic.name = topic.name;
    for (const EpochRequestPartition& partition : topic.partitions) {
      EpochEndPartition& out = out_topic.partitions.emplace_back();
      out.partition = partition.partition;
      out.error_code = PartitionError(topic.name, partition.partition,
                                      /*may_create=*/false);
      if (out.error_code != kErrorNone) continue;
      // KIP-320: a client that knows another leader epoch than ours.
      if (partition.current_leader_epoch >= 0 &&
          partition.current_leader_epoch != config_.leader_epoch) {
        out.error_code = partition.current_leader_epoch < config_.leader_epoch
                             ? kErrorFencedLeaderEpoch
                             : kErrorUnknownLeaderEpoch;
        continue;
      }
      absl::StatusOr<EpochEndOffset> end = engine_.OffsetForLeaderEpoch(
          {topic.name, partition.partition}, partition.leader_epoch);
      if (!end.ok()) {
        out.error_code = ErrorCodeOf(end.status());
        continue;
      }
      out.leader_epoch = static_cast<int32_t>(end->leader_epoch);
      out.end_offset = end->end_offset;
    }
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeOffsetForLeaderEpochResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

}  // namespace kaas::broker
