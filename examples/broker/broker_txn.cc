// File: examples/broker/broker_txn.cc
//
// Broker: the transaction APIs (AddPartitionsToTxn, AddOffsetsToTxn,
// EndTxn, TxnOffsetCommit, and InitProducerId with a transactional id),
// answered by the TxnCoordinator (txn_coordinator.h), which runs on the
// handler pool: its calls block on engine appends, never on the event loop.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "base/status_macros.h"
#include "examples/broker/broker_impl.h"
#include "examples/broker/group_coordinator.h"
#include "examples/broker/group_messages.h"
#include "examples/broker/txn_coordinator.h"
#include "examples/broker/txn_messages.h"

namespace kaas::broker {

using broker_internal::Frame;

absl::Status Broker::Impl::StartTxns() {
  TxnCoordinatorOptions options;
  options.leader_epoch = config_.leader_epoch;
  options.partition_error = [this](const std::string& topic,
                                   int32_t partition) {
    return PartitionError(topic, partition, /*may_create=*/false);
  };
  options.commit_offsets =
      [this](const std::string& group,
             const std::vector<TxnOffsetCommitTopic>& topics) -> absl::Status {
    OffsetCommitRequest request;
    request.group_id = group;
    for (const TxnOffsetCommitTopic& topic : topics) {
      OffsetCommitTopic& out = request.topics.emplace_back();
      out.name = topic.name;
      for (const TxnOffsetCommitPartition& p : topic.partitions) {
        OffsetCommitPartition& partition = out.partitions.emplace_back();
        partition.partition_index = p.partition_index;
        partition.committed_offset = p.committed_offset;
        partition.committed_leader_epoch = p.committed_leader_epoch;
        partition.committed_metadata = p.committed_metadata;
      }
    }
    // The callback runs on an engine I/O thread once durable; this is a
    // handler thread, which may wait for it.
    absl::Notification done;
    int16_t error = group_error::kNone;
    groups_->CommitTransactionalOffsets(
        request, [&](OffsetCommitResponse response) {
          for (const OffsetCommitTopicResponse& t : response.topics) {
            for (const OffsetCommitPartitionResponse& p : t.partitions) {
              if (p.error_code != group_error::kNone) error = p.error_code;
            }
          }
          done.Notify();
        });
    done.WaitForNotification();
    if (error != group_error::kNone) {
      return absl::UnavailableError(absl::StrCat("committing offsets of group ",
                                                 group, ": error ", error));
    }
    return absl::OkStatus();
  };
  KAAS_ASSIGN_OR_RETURN(txns_, TxnCoordinator::Create(&engine_, &producer_ids_,
                                                      std::move(options)));
  absl::MutexLock lock(&mu_);
  topics_[std::string(kTransactionStateTopic)] =
      std::max(topics_[std::string(kTransactionStateTopic)], 1);
  return absl::OkStatus();
}

bool Broker::Impl::HandleTxnApi(const RequestPtr& request, WireReader& reader,
                                absl::Status* status) {
  const RequestHeader& header = request->header;
  const int16_t version = header.api_version;
  auto reply = [request, version](const auto& response, auto encode) {
    request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
      encode(response, version, writer);
    }));
  };
  switch (header.api_key) {
    case txn_api::kAddPartitionsToTxn: {
      absl::StatusOr<AddPartitionsToTxnRequest> add =
          DecodeAddPartitionsToTxnRequest(reader, version);
      if (!add.ok()) break;
      reply(txns_->AddPartitionsToTxn(*add), EncodeAddPartitionsToTxnResponse);
      return true;
    }
    case txn_api::kAddOffsetsToTxn: {
      absl::StatusOr<AddOffsetsToTxnRequest> add =
          DecodeAddOffsetsToTxnRequest(reader, version);
      if (!add.ok()) break;
      reply(txns_->AddOffsetsToTxn(*add), EncodeAddOffsetsToTxnResponse);
      return true;
    }
    case txn_api::kEndTxn: {
      absl::StatusOr<EndTxnRequest> end = DecodeEndTxnRequest(reader, version);
      if (!end.ok()) break;
      reply(txns_->EndTxn(*end), EncodeEndTxnResponse);
      return true;
    }
    case txn_api::kTxnOffsetCommit: {
      absl::StatusOr<TxnOffsetCommitRequest> commit =
          DecodeTxnOffsetCommitRequest(reader, version);
      if (!commit.ok()) break;
      reply(txns_->TxnOffsetCommit(*commit), EncodeTxnOffsetCommitResponse);
      return true;
    }
    default:
      return false;
  }
  *status = absl::InvalidArgumentError(
      absl::StrCat("malformed request of API ", header.api_key));
  return true;
}

}  // namespace kaas::broker
