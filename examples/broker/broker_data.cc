// File: examples/broker/broker_data.cc
//
// Broker: Produce, Fetch and ListOffsets (broker_impl.h).

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
#include "glog/logging.h"

namespace kaas::broker {

using broker_internal::ErrorCodeOf;
using broker_internal::Frame;
using broker_internal::IsolationOf;

absl::Status Broker::Impl::HandleProduce(const RequestPtr& request,
                                         WireReader& reader) {
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
              pending->response.topics.size() - 1, topic.partitions.size() - 1};
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

void Broker::Impl::MarkTimedOut(PendingProduce& pending) {
  absl::MutexLock lock(&pending.mu);
  for (const auto& [t, p] : pending.waiting) {
    pending.response.topics[t].partitions[p].error_code = kErrorRequestTimedOut;
  }
}

void Broker::Impl::AnswerProduce(
    const std::shared_ptr<PendingProduce>& pending) {
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

absl::Status Broker::Impl::HandleFetch(const RequestPtr& request,
                                       WireReader& reader) {
  auto pending = std::make_shared<PendingFetch>();
  pending->request = request;
  KAAS_ASSIGN_OR_RETURN(
      pending->fetch, DecodeFetchRequest(reader, request->header.api_version));
  int64_t bytes = 0;
  bool errors = false;
  FetchResponse response = ReadFetch(pending->fetch, &bytes, &errors);
  const bool stopping = Stopping();
  if (bytes >= std::max(1, pending->fetch.min_bytes) || errors ||
      pending->fetch.max_wait_ms <= 0 || stopping) {
    AnswerFetch(pending, response);
    return absl::OkStatus();
  }
  // Wait for an append to one of the partitions, or max_wait_ms.
  {
    absl::MutexLock lock(&pending->mu);
    pending->timer = std::make_unique<asio::steady_timer>(
        pool_, std::chrono::milliseconds(std::min(pending->fetch.max_wait_ms,
                                                  config_.max_fetch_wait_ms)));
    pending->timer->async_wait([this, pending](const asio::error_code&) {
      int64_t bytes = 0;
      bool errors = false;
      AnswerFetch(pending, ReadFetch(pending->fetch, &bytes, &errors));
    });
  }
  WaitForAppends(pending);
  return absl::OkStatus();
}

FetchResponse Broker::Impl::ReadFetch(const FetchRequest& fetch, int64_t* bytes,
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
      // Regions, not bytes: the server sends them from the segment files.
      absl::StatusOr<RegionReadResult> read = engine_.ReadRegions(
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

void Broker::Impl::FillOffsets(const TopicPartition& tp,
                               FetchPartitionResponse* out) {
  if (absl::StatusOr<int64_t> hw = engine_.HighWatermark(tp); hw.ok()) {
    out->high_watermark = *hw;
  }
  if (absl::StatusOr<int64_t> lso = engine_.LastStableOffset(tp); lso.ok()) {
    out->last_stable_offset = *lso;
  }
  if (absl::StatusOr<int64_t> start = engine_.LogStartOffset(tp); start.ok()) {
    out->log_start_offset = *start;
  }
}

void Broker::Impl::AnswerFetch(const std::shared_ptr<PendingFetch>& pending,
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

bool Broker::Impl::Stopping() {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

bool Broker::Impl::Answered(const std::shared_ptr<PendingFetch>& pending) {
  absl::MutexLock lock(&pending->mu);
  return pending->answered;
}

void Broker::Impl::NotifyAppended(const TopicPartition& tp) {
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

void Broker::Impl::WaitForAppends(
    const std::shared_ptr<PendingFetch>& pending) {
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
  const bool stopping = Stopping();
  if (bytes >= std::max(1, pending->fetch.min_bytes) || errors || stopping) {
    AnswerFetch(pending, response);
  }
}

void Broker::Impl::WakeAllFetches() {
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

absl::Status Broker::Impl::HandleListOffsets(const RequestPtr& request,
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
          TopicPartition{topic.name, partition.partition}, partition.timestamp,
          IsolationOf(list.isolation_level));
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

}  // namespace kaas::broker
