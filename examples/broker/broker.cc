// File: examples/broker/broker.cc

#include "examples/broker/broker.h"

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <deque>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/messages.h"
#include "examples/broker/producer_ids.h"
#include "examples/broker/request_header.h"
#include "examples/broker/wire.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"

namespace kaas::broker {
namespace {

int16_t ErrorCodeOf(const absl::Status& status) {
  if (status.ok()) return kErrorNone;
  return KafkaErrorCode(GetStorageErrorCode(status));
}

Isolation IsolationOf(int8_t isolation_level) {
  return isolation_level == 1 ? Isolation::kReadCommitted
                              : Isolation::kReadUncommitted;
}

std::string Frame(const RequestHeader& header, int16_t version,
                  absl::FunctionRef<void(WireWriter&)> body) {
  std::string frame;
  WireWriter writer(&frame);
  RequestHeader response_header = header;
  response_header.api_version = version;
  StartResponse(response_header, writer);
  body(writer);
  FinishResponse(frame);
  return frame;
}

}  // namespace

class Broker::Impl {
 public:
  Impl(StorageEngine* engine, BrokerConfig config)
      : engine_(*engine),
        config_(std::move(config)),
        producer_ids_(config_.state_dir),
        pool_(std::max(1, config_.handler_threads)) {}

  ~Impl() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    WakeAllFetches();
    pool_.join();
  }

  absl::Status Start(const std::vector<TopicPartition>& existing) {
    absl::MutexLock lock(&mu_);
    for (const TopicPartition& tp : existing) {
      KAAS_RETURN_IF_ERROR(engine_.TakeOver(tp, config_.leader_epoch).status());
      int32_t& count = topics_[tp.topic];
      count = std::max(count, tp.partition + 1);
    }
    return absl::OkStatus();
  }

  void Handle(const std::shared_ptr<Session>& session, absl::string_view frame,
              Responder respond);

 private:
  friend class Broker::Session;  // it queues Requests

  void DrainSession(Session& session);

  struct Request {
    explicit Request(std::string frame) : frame(std::move(frame)) {}
    std::string frame;
    RequestHeader header;
    Responder respond;

    void Reply(absl::StatusOr<std::optional<std::string>> response) {
      std::move(respond)(std::move(response));
    }
  };
  using RequestPtr = std::shared_ptr<Request>;

  void Dispatch(const RequestPtr& request) {
    WireReader reader(request->frame);
    absl::StatusOr<RequestHeader> header = ReadRequestHeader(reader);
    if (!header.ok()) return request->Reply(header.status());
    request->header = *header;
    const std::optional<ApiVersionRange> range =
        SupportedRange(header->api_key);
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
        status = absl::InternalError("served API without a handler");
    }
    if (!status.ok()) request->Reply(status);
  }

  // ---- Topics
  // ----------------------------------------------------------------

  // The partition count of `topic`, creating it if allowed; 0 if unknown.
  // Sets *error to the Kafka error for a topic that cannot be served.
  int32_t PartitionsOf(const std::string& topic, bool may_create,
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
        CreateTopic(topic, config_.num_partitions, error);
    if (*error == kErrorTopicAlreadyExists) *error = kErrorNone;
    return partitions;
  }

  // Creates `topic` with `partitions` partitions and leads them; returns
  // the partition count (the existing one if it exists: see *error).
  // Creation is serialised, outside the map's lock: it syncs directories.
  int32_t CreateTopic(const std::string& topic, int32_t partitions,
                      int16_t* error) {
    absl::MutexLock create_lock(&create_mu_);
    {
      absl::MutexLock lock(&mu_);
      auto it = topics_.find(topic);
      if (it != topics_.end()) {
        *error = kErrorTopicAlreadyExists;
        return it->second;
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

  // Kafka's error for a partition of a topic, or none.
  int16_t PartitionError(const std::string& topic, int32_t partition,
                         bool may_create) {
    int16_t error = kErrorNone;
    const int32_t partitions = PartitionsOf(topic, may_create, &error);
    if (error != kErrorNone) return error;
    if (partition < 0 || partition >= partitions) {
      return kErrorUnknownTopicOrPartition;
    }
    return kErrorNone;
  }

  // ---- Metadata
  // ----------------------------------------------------------------

  absl::Status HandleMetadata(const RequestPtr& request, WireReader& reader) {
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

  // ---- Produce
  // -------------------------------------------------------------------

  // A Produce response being put together while appends become durable.
  struct PendingProduce {
    absl::Mutex mu;
    ProduceResponse response ABSL_GUARDED_BY(mu);
    // Partitions (topic index, partition index) not yet durable.
    std::set<std::pair<size_t, size_t>> waiting ABSL_GUARDED_BY(mu);
    bool answered ABSL_GUARDED_BY(mu) = false;
    RequestPtr request;
    std::unique_ptr<asio::steady_timer> timeout ABSL_GUARDED_BY(mu);
  };

  absl::Status HandleProduce(const RequestPtr& request, WireReader& reader) {
    const int16_t version = request->header.api_version;
    KAAS_ASSIGN_OR_RETURN(ProduceRequest produce,
                          DecodeProduceRequest(reader, version));
    const bool acks_valid =
        produce.acks == -1 || produce.acks == 0 || produce.acks == 1;
    const Acks acks = produce.acks == -1  ? Acks::kAll
                      : produce.acks == 1 ? Acks::kLeader
                                          : Acks::kNone;
    auto pending = std::make_shared<PendingProduce>();
    pending->request = request;
    std::vector<std::pair<std::pair<size_t, size_t>, StatusFuture>> durable;
    {
      absl::MutexLock lock(&pending->mu);
      for (const ProduceTopicData& topic_data : produce.topics) {
        ProduceTopicResponse& topic = pending->response.topics.emplace_back();
        topic.name = std::string(topic_data.name);
        for (const ProducePartitionData& data : topic_data.partitions) {
          ProducePartitionResponse& partition = topic.partitions.emplace_back();
          partition.partition = data.partition;
          if (!acks_valid) {
            partition.error_code = kErrorInvalidRequiredAcks;
            continue;
          }
          partition.error_code =
              PartitionError(topic.name, data.partition, /*may_create=*/true);
          if (partition.error_code != kErrorNone) continue;
          if (!data.records.has_value()) {
            partition.error_code = kErrorInvalidRequest;
            continue;
          }
          const TopicPartition tp{topic.name, data.partition};
          absl::StatusOr<AppendResult> result =
              engine_.Append(tp, config_.leader_epoch, acks, *data.records);
          if (!result.ok()) {
            partition.error_code = ErrorCodeOf(result.status());
            partition.error_message = std::string(result.status().message());
            continue;
          }
          partition.base_offset = result->base_offset;
          partition.log_start_offset = result->log_start_offset;
          if (acks == Acks::kAll) {
            const std::pair<size_t, size_t> where = {
                pending->response.topics.size() - 1,
                topic.partitions.size() - 1};
            pending->waiting.insert(where);
            durable.push_back({where, result->durable});
          }
        }
      }
    }
    if (produce.acks == 0) {
      request->Reply(std::optional<std::string>());
      return absl::OkStatus();
    }
    if (durable.empty()) {
      AnswerProduce(pending);
      return absl::OkStatus();
    }
    {
      absl::MutexLock lock(&pending->mu);
      pending->timeout = std::make_unique<asio::steady_timer>(
          pool_, std::chrono::milliseconds(std::max(0, produce.timeout_ms)));
      pending->timeout->async_wait([this, pending](const asio::error_code& e) {
        if (e) return;  // cancelled: answered already
        MarkTimedOut(*pending);
        AnswerProduce(pending);
      });
    }
    for (auto& [where, future] : durable) {
      future.Then([this, pending, where = where](const absl::Status& status) {
        bool last = false;
        std::optional<TopicPartition> appended;
        {
          absl::MutexLock lock(&pending->mu);
          ProduceTopicResponse& topic = pending->response.topics[where.first];
          ProducePartitionResponse& partition = topic.partitions[where.second];
          if (!status.ok()) {
            partition.error_code = ErrorCodeOf(status);
            partition.error_message = std::string(status.message());
          } else {
            appended = TopicPartition{topic.name, partition.partition};
          }
          pending->waiting.erase(where);
          last = pending->waiting.empty();
        }
        if (appended.has_value()) NotifyAppended(*appended);
        if (last) AnswerProduce(pending);
      });
    }
    return absl::OkStatus();
  }

  // The partitions not durable yet when timeout_ms passed.
  static void MarkTimedOut(PendingProduce& pending) {
    absl::MutexLock lock(&pending.mu);
    for (const auto& [t, p] : pending.waiting) {
      pending.response.topics[t].partitions[p].error_code =
          kErrorRequestTimedOut;
    }
  }

  void AnswerProduce(const std::shared_ptr<PendingProduce>& pending) {
    std::string frame;
    {
      absl::MutexLock lock(&pending->mu);
      if (pending->answered) return;
      pending->answered = true;
      if (pending->timeout != nullptr) pending->timeout->cancel();
      // Encoded here rather than in a Frame() lambda, which thread-safety
      // analysis cannot see holding the lock.
      WireWriter writer(&frame);
      StartResponse(pending->request->header, writer);
      EncodeProduceResponse(pending->response,
                            pending->request->header.api_version, writer);
      FinishResponse(frame);
    }
    pending->request->Reply(std::move(frame));
  }

  // ---- Fetch
  // ----------------------------------------------------------------------

  struct PendingFetch {
    RequestPtr request;
    FetchRequest fetch;
    absl::Mutex mu;
    std::unique_ptr<asio::steady_timer> timer ABSL_GUARDED_BY(mu);
    bool answered ABSL_GUARDED_BY(mu) = false;
  };

  absl::Status HandleFetch(const RequestPtr& request, WireReader& reader) {
    auto pending = std::make_shared<PendingFetch>();
    pending->request = request;
    KAAS_ASSIGN_OR_RETURN(
        pending->fetch,
        DecodeFetchRequest(reader, request->header.api_version));
    int64_t bytes = 0;
    bool errors = false;
    FetchResponse response = ReadFetch(pending->fetch, &bytes, &errors);
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      stopping = stopping_;
    }
    if (bytes >= std::max(1, pending->fetch.min_bytes) || errors ||
        pending->fetch.max_wait_ms <= 0 || stopping) {
      AnswerFetch(pending, response);
      return absl::OkStatus();
    }
    // Wait for an append to one of the partitions, or max_wait_ms.
    {
      absl::MutexLock lock(&pending->mu);
      pending->timer = std::make_unique<asio::steady_timer>(
          pool_, std::chrono::milliseconds(std::min(
                     pending->fetch.max_wait_ms, config_.max_fetch_wait_ms)));
      pending->timer->async_wait([this, pending](const asio::error_code&) {
        int64_t bytes = 0;
        bool errors = false;
        AnswerFetch(pending, ReadFetch(pending->fetch, &bytes, &errors));
      });
    }
    WaitForAppends(pending);
    return absl::OkStatus();
  }

  // Reads every partition of the request, at most max_bytes in all (the
  // first batch whole).
  FetchResponse ReadFetch(const FetchRequest& fetch, int64_t* bytes,
                          bool* errors) {
    FetchResponse response;
    int64_t budget = fetch.max_bytes;
    for (const FetchTopic& topic : fetch.topics) {
      FetchTopicResponse& out_topic = response.topics.emplace_back();
      out_topic.name = topic.name;
      for (const FetchPartition& partition : topic.partitions) {
        FetchPartitionResponse& out = out_topic.partitions.emplace_back();
        out.partition = partition.partition;
        out.error_code = PartitionError(topic.name, partition.partition,
                                        /*may_create=*/false);
        if (out.error_code != kErrorNone) {
          *errors = true;
          continue;
        }
        const TopicPartition tp{topic.name, partition.partition};
        const int64_t max_bytes = std::min<int64_t>(
            partition.partition_max_bytes,
            *bytes == 0 ? partition.partition_max_bytes : budget);
        if (max_bytes <= 0) {
          FillOffsets(tp, &out);
          continue;
        }
        absl::StatusOr<ReadResult> read = engine_.Read(
            tp, partition.fetch_offset, static_cast<size_t>(max_bytes),
            IsolationOf(fetch.isolation_level));
        if (!read.ok()) {
          out.error_code = ErrorCodeOf(read.status());
          FillOffsets(tp, &out);
          *errors = true;
          continue;
        }
        out.high_watermark = read->high_watermark;
        out.last_stable_offset = read->last_stable_offset;
        out.log_start_offset = read->log_start_offset;
        for (const AbortedTransaction& aborted : read->aborted_transactions) {
          out.aborted_transactions.push_back(
              {aborted.producer_id, aborted.first_offset});
        }
        out.records = std::move(read->records);
        *bytes += static_cast<int64_t>(out.records.size());
        budget -= static_cast<int64_t>(out.records.size());
      }
    }
    return response;
  }

  void FillOffsets(const TopicPartition& tp, FetchPartitionResponse* out) {
    if (absl::StatusOr<int64_t> hw = engine_.HighWatermark(tp); hw.ok()) {
      out->high_watermark = *hw;
    }
    if (absl::StatusOr<int64_t> lso = engine_.LastStableOffset(tp); lso.ok()) {
      out->last_stable_offset = *lso;
    }
    if (absl::StatusOr<int64_t> start = engine_.LogStartOffset(tp);
        start.ok()) {
      out->log_start_offset = *start;
    }
  }

  void AnswerFetch(const std::shared_ptr<PendingFetch>& pending,
                   const FetchResponse& response) {
    {
      absl::MutexLock lock(&pending->mu);
      if (pending->answered) return;
      pending->answered = true;
      if (pending->timer != nullptr) pending->timer->cancel();
    }
    const int16_t version = pending->request->header.api_version;
    pending->request->Reply(
        Frame(pending->request->header, version, [&](WireWriter& writer) {
          EncodeFetchResponse(response, version, writer);
        }));
  }

  bool Answered(const std::shared_ptr<PendingFetch>& pending) {
    absl::MutexLock lock(&pending->mu);
    return pending->answered;
  }

  // Appends to `tp` became durable (visible): wake the fetches waiting on
  // it, which read again on the pool.
  void NotifyAppended(const TopicPartition& tp) {
    std::vector<std::shared_ptr<PendingFetch>> woken;
    {
      absl::MutexLock lock(&mu_);
      auto it = fetch_waiters_.find(tp);
      if (it == fetch_waiters_.end()) return;
      woken = std::move(it->second);
      fetch_waiters_.erase(it);
    }
    for (std::shared_ptr<PendingFetch>& pending : woken) {
      if (Answered(pending)) continue;
      asio::post(pool_, [this, pending] { WaitForAppends(pending); });
    }
  }

  // Registers the fetch with its partitions' waiters, then reads: an append
  // that became durable before the registration woke nobody, so the read
  // comes after it. Answers if there is enough to answer now; otherwise the
  // next durable append to one of its partitions (or its timer) does.
  void WaitForAppends(const std::shared_ptr<PendingFetch>& pending) {
    {
      absl::MutexLock lock(&mu_);
      for (const FetchTopic& topic : pending->fetch.topics) {
        for (const FetchPartition& partition : topic.partitions) {
          fetch_waiters_[TopicPartition{topic.name, partition.partition}]
              .push_back(pending);
        }
      }
    }
    int64_t bytes = 0;
    bool errors = false;
    FetchResponse response = ReadFetch(pending->fetch, &bytes, &errors);
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      stopping = stopping_;
    }
    if (bytes >= std::max(1, pending->fetch.min_bytes) || errors || stopping) {
      AnswerFetch(pending, response);
    }
  }

  void WakeAllFetches() {
    absl::flat_hash_map<TopicPartition,
                        std::vector<std::shared_ptr<PendingFetch>>>
        waiters;
    {
      absl::MutexLock lock(&mu_);
      waiters.swap(fetch_waiters_);
    }
    // A cancelled timer runs its handler, which answers with what is there.
    for (auto& [tp, pendings] : waiters) {
      for (std::shared_ptr<PendingFetch>& pending : pendings) {
        absl::MutexLock lock(&pending->mu);
        if (pending->timer != nullptr) pending->timer->cancel();
      }
    }
  }

  // ---- ListOffsets
  // --------------------------------------------------------------

  absl::Status HandleListOffsets(const RequestPtr& request,
                                 WireReader& reader) {
    const int16_t version = request->header.api_version;
    KAAS_ASSIGN_OR_RETURN(ListOffsetsRequest list,
                          DecodeListOffsetsRequest(reader, version));
    ListOffsetsResponse response;
    for (const ListOffsetsTopic& topic : list.topics) {
      ListOffsetsTopicResponse& out_topic = response.topics.emplace_back();
      out_topic.name = topic.name;
      for (const ListOffsetsPartition& partition : topic.partitions) {
        ListOffsetsPartitionResponse& out = out_topic.partitions.emplace_back();
        out.partition = partition.partition;
        out.error_code = PartitionError(topic.name, partition.partition,
                                        /*may_create=*/false);
        if (out.error_code != kErrorNone) continue;
        absl::StatusOr<OffsetAndTimestamp> found = engine_.OffsetForTimestamp(
            TopicPartition{topic.name, partition.partition},
            partition.timestamp, IsolationOf(list.isolation_level));
        if (!found.ok()) {
          out.error_code = ErrorCodeOf(found.status());
          continue;
        }
        out.offset = found->offset;
        out.timestamp = found->timestamp;
      }
    }
    request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
      EncodeListOffsetsResponse(response, version, writer);
    }));
    return absl::OkStatus();
  }

  // ---- CreateTopics, DeleteTopics -------------------------------------------

  absl::Status HandleCreateTopics(const RequestPtr& request,
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
      } else if (!topic.configs.empty()) {
        refuse(kErrorInvalidConfig, "topic configs are not served yet");
      } else if (create.validate_only) {
        absl::MutexLock lock(&mu_);
        if (topics_.contains(topic.name)) {
          refuse(kErrorTopicAlreadyExists, "the topic exists");
        }
      } else {
        CreateTopic(topic.name, partitions, &result.error_code);
        if (result.error_code == kErrorTopicAlreadyExists) {
          result.error_message = "the topic exists";
        }
      }
    }
    request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
      EncodeCreateTopicsResponse(response, version, writer);
    }));
    return absl::OkStatus();
  }

  bool AssignmentsValid(const CreatableTopic& topic, int32_t partitions) {
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

  absl::Status HandleDeleteTopics(const RequestPtr& request,
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
      LOG(INFO) << "deleted topic " << name;
    }
    request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
      EncodeDeleteTopicsResponse(response, version, writer);
    }));
    return absl::OkStatus();
  }

  // ---- DeleteRecords
  // ----------------------------------------------------------

  absl::Status HandleDeleteRecords(const RequestPtr& request,
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

  // ---- InitProducerId
  // -----------------------------------------------------------

  absl::Status HandleInitProducerId(const RequestPtr& request,
                                    WireReader& reader) {
    const int16_t version = request->header.api_version;
    KAAS_ASSIGN_OR_RETURN(InitProducerIdRequest init,
                          DecodeInitProducerIdRequest(reader, version));
    InitProducerIdResponse response;
    if (init.transactional_id.has_value()) {
      // No transaction coordinator yet.
      response.error_code = kErrorCoordinatorNotAvailable;
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

  // ---- OffsetForLeaderEpoch
  // -------------------------------------------------------

  absl::Status HandleOffsetForLeaderEpoch(const RequestPtr& request,
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

  StorageEngine& engine_;
  const BrokerConfig config_;
  ProducerIdAllocator producer_ids_;
  asio::thread_pool pool_;
  absl::Mutex create_mu_;
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(create_mu_);
  absl::flat_hash_map<std::string, int32_t> topics_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<TopicPartition,
                      std::vector<std::shared_ptr<PendingFetch>>>
      fetch_waiters_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

// A connection's queue of requests, handled one at a time on the pool. Holds
// no Asio object, so a connection may outlive the broker.
class Broker::Session {
 public:
  absl::Mutex mu;
  std::deque<std::shared_ptr<Impl::Request>> queue ABSL_GUARDED_BY(mu);
  bool running ABSL_GUARDED_BY(mu) = false;  // a pool thread drains queue
};

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
  KAAS_RETURN_IF_ERROR(impl->Start(existing));
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
