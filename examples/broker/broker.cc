// File: examples/broker/broker.cc
//
// Broker: request dispatch, sessions, topics and Metadata (broker_impl.h).

#include "examples/broker/broker.h"

#include <algorithm>
#include <asio.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/broker_impl.h"
#include "examples/broker/messages.h"
#include "examples/broker/request_header.h"
#include "examples/broker/wire.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"

namespace kaas::broker {
namespace broker_internal {

int16_t ErrorCodeOf(const absl::Status& status) {
  if (status.ok()) return kErrorNone;
  return KafkaErrorCode(GetStorageErrorCode(status));
}

Isolation IsolationOf(int8_t isolation_level) {
  return isolation_level == 1 ? Isolation::kReadCommitted
                              : Isolation::kReadUncommitted;
}

ResponseFrame Frame(const RequestHeader& header, int16_t version,
                    absl::FunctionRef<void(WireWriter&)> body) {
  ResponseFrame frame;
  WireWriter writer(&frame.bytes, &frame.splices);
  RequestHeader response_header = header;
  response_header.api_version = version;
  StartResponse(response_header, writer);
  body(writer);
  FinishResponse(frame);
  return frame;
}

}  // namespace broker_internal

using broker_internal::ErrorCodeOf;
using broker_internal::Frame;

absl::Status Broker::Impl::Start(const std::vector<TopicPartition>& existing) {
  absl::MutexLock lock(&mu_);
  for (const TopicPartition& tp : existing) {
    KAAS_RETURN_IF_ERROR(engine_.TakeOver(tp, config_.leader_epoch).status());
    int32_t& count = topics_[tp.topic];
    count = std::max(count, tp.partition + 1);
  }
  return absl::OkStatus();
}

absl::Status Broker::Impl::StartAll(
    const std::vector<TopicPartition>& existing) {
  KAAS_RETURN_IF_ERROR(Start(existing));
  KAAS_RETURN_IF_ERROR(StartGroups());
  KAAS_RETURN_IF_ERROR(StartTxns());
  // Ticks only once both coordinators are set: the ticker reads them.
  absl::MutexLock lock(&mu_);
  ScheduleGroupTick();
  return absl::OkStatus();
}

void Broker::Impl::Dispatch(const RequestPtr& request) {
  WireReader reader(request->frame);
  absl::StatusOr<RequestHeader> header = ReadRequestHeader(reader);
  if (!header.ok()) return request->Reply(header.status());
  request->header = *header;
  const std::optional<ApiVersionRange> range = SupportedRange(header->api_key);
  if (header->api_key == kApiVersions &&
      (header->api_version < range->min_version ||
       header->api_version > range->max_version)) {
    // Answered in v0 form, so that any client can read it and pick.
    return request->Reply(Frame(*header, 0, [](WireWriter& writer) {
      EncodeApiVersionsResponse({kErrorUnsupportedVersion}, 0, writer);
    }));
  }
  if (!range.has_value() || header->api_version < range->min_version ||
      header->api_version > range->max_version) {
    return request->Reply(absl::InvalidArgumentError(
        absl::StrCat("unsupported API ", header->api_key, " version ",
                     header->api_version)));
  }
  const int16_t version = header->api_version;
  absl::Status status;
  switch (header->api_key) {
    case kApiVersions:
      status = DecodeApiVersionsRequest(reader, version);
      if (status.ok()) {
        request->Reply(Frame(*header, version, [&](WireWriter& writer) {
          EncodeApiVersionsResponse({kErrorNone}, version, writer);
        }));
      }
      break;
    case kMetadata:
      status = HandleMetadata(request, reader);
      break;
    case kProduce:
      status = HandleProduce(request, reader);
      break;
    case kFetch:
      status = HandleFetch(request, reader);
      break;
    case kListOffsets:
      status = HandleListOffsets(request, reader);
      break;
    case kCreateTopics:
      status = HandleCreateTopics(request, reader);
      break;
    case kDeleteTopics:
      status = HandleDeleteTopics(request, reader);
      break;
    case kDeleteRecords:
      status = HandleDeleteRecords(request, reader);
      break;
    case kInitProducerId:
      status = HandleInitProducerId(request, reader);
      break;
    case kOffsetForLeaderEpoch:
      status = HandleOffsetForLeaderEpoch(request, reader);
      break;
    default:
      if (!HandleGroupApi(request, reader, &status) &&
          !HandleTxnApi(request, reader, &status)) {
        status = absl::InternalError("served API without a handler");
      }
  }
  if (!status.ok()) request->Reply(status);
}

int32_t Broker::Impl::PartitionsOf(const std::string& topic, bool may_create,
                                   int16_t* error) {
  *error = kErrorNone;
  {
    absl::MutexLock lock(&mu_);
    auto it = topics_.find(topic);
    if (it != topics_.end()) return it->second;
  }
  if (!ValidateTopicName(topic).ok()) {
    *error = kErrorInvalidTopic;
    return 0;
  }
  if (!may_create || !config_.auto_create_topics) {
    *error = kErrorUnknownTopicOrPartition;
    return 0;
  }
  const int32_t partitions =
      CreateTopic(topic, config_.num_partitions, std::nullopt, error);
  if (*error == kErrorTopicAlreadyExists) *error = kErrorNone;
  return partitions;
}

int32_t Broker::Impl::CreateTopic(
    const std::string& topic, int32_t partitions,
    const std::optional<TopicConfigOverrides>& overrides, int16_t* error,
    std::string* message) {
  absl::MutexLock create_lock(&create_mu_);
  {
    absl::MutexLock lock(&mu_);
    auto it = topics_.find(topic);
    if (it != topics_.end()) {
      *error = kErrorTopicAlreadyExists;
      return it->second;
    }
  }
  if (overrides.has_value()) {
    absl::Status status = engine_.SetTopicConfig(topic, *overrides);
    if (!status.ok()) {
      LOG(ERROR) << "creating " << topic << ": " << status;
      *error = ErrorCodeOf(status);
      if (message != nullptr) *message = std::string(status.message());
      return 0;
    }
  }
  for (int32_t p = 0; p < partitions; ++p) {
    const TopicPartition tp{topic, p};
    absl::Status status = engine_.CreatePartition(tp);
    if (status.ok()) {
      status = engine_.TakeOver(tp, config_.leader_epoch).status();
    }
    if (!status.ok()) {
      LOG(ERROR) << "creating " << topic << ": " << status;
      *error = ErrorCodeOf(status);
      return 0;
    }
  }
  LOG(INFO) << "created topic " << topic << " with " << partitions
            << " partitions";
  absl::MutexLock lock(&mu_);
  topics_[topic] = partitions;
  return partitions;
}

int16_t Broker::Impl::PartitionError(const std::string& topic,
                                     int32_t partition, bool may_create) {
  int16_t error = kErrorNone;
  const int32_t partitions = PartitionsOf(topic, may_create, &error);
  if (error != kErrorNone) return error;
  if (partition < 0 || partition >= partitions) {
    return kErrorUnknownTopicOrPartition;
  }
  return kErrorNone;
}

absl::Status Broker::Impl::HandleMetadata(const RequestPtr& request,
                                          WireReader& reader) {
  const int16_t version = request->header.api_version;
  KAAS_ASSIGN_OR_RETURN(MetadataRequest metadata,
                        DecodeMetadataRequest(reader, version));
  std::vector<std::string> names;
  if (metadata.topics.has_value()) {
    names = *metadata.topics;
  } else {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, count] : topics_) names.push_back(name);
    std::sort(names.begin(), names.end());
  }
  MetadataResponse response;
  response.node_id = config_.node_id;
  response.host = config_.advertised_host;
  response.port = config_.advertised_port;
  response.cluster_id = config_.cluster_id;
  response.controller_id = config_.node_id;
  for (const std::string& name : names) {
    MetadataTopic& topic = response.topics.emplace_back();
    topic.name = name;
    const int32_t partitions = PartitionsOf(
        name, metadata.allow_auto_topic_creation, &topic.error_code);
    for (int32_t p = 0; p < partitions; ++p) {
      MetadataPartition& partition = topic.partitions.emplace_back();
      partition.partition = p;
      partition.leader_id = config_.node_id;
      partition.leader_epoch = static_cast<int32_t>(config_.leader_epoch);
      partition.replicas = {config_.node_id};
      partition.isr = {config_.node_id};
    }
  }
  request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
    EncodeMetadataResponse(response, version, writer);
  }));
  return absl::OkStatus();
}

void Broker::Impl::Handle(const std::shared_ptr<Session>& session,
                          absl::string_view frame, Responder respond) {
  auto request = std::make_shared<Request>(std::string(frame));
  request->respond = std::move(respond);
  {
    absl::MutexLock lock(&session->mu);
    session->queue.push_back(std::move(request));
    if (session->running) return;
    session->running = true;
  }
  asio::post(pool_, [this, session] { DrainSession(*session); });
}

void Broker::Impl::DrainSession(Session& session) {
  while (true) {
    std::shared_ptr<Request> request;
    {
      absl::MutexLock lock(&session.mu);
      if (session.queue.empty()) {
        session.running = false;
        return;
      }
      request = std::move(session.queue.front());
      session.queue.pop_front();
    }
    Dispatch(request);
  }
}

Broker::Broker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Broker::~Broker() = default;

absl::StatusOr<std::unique_ptr<Broker>> Broker::Create(
    StorageEngine* engine, BrokerConfig config,
    const std::vector<TopicPartition>& existing) {
  auto impl = std::make_unique<Impl>(engine, std::move(config));
  KAAS_RETURN_IF_ERROR(impl->StartAll(existing));
  return std::unique_ptr<Broker>(new Broker(std::move(impl)));
}

std::shared_ptr<Broker::Session> Broker::NewSession() {
  return std::make_shared<Session>();
}

void Broker::Handle(const std::shared_ptr<Session>& session,
                    absl::string_view frame, Responder respond) {
  impl_->Handle(session, frame, std::move(respond));
}

}  // namespace kaas::broker
