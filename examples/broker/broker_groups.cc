// File: examples/broker/broker_groups.cc
//
// Broker: the consumer-group APIs, answered by the GroupCoordinator
// (group_coordinator.h), and its ticker (broker_impl.h).

#include <asio.hpp>
#include <chrono>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "examples/broker/broker_impl.h"
#include "examples/broker/group_coordinator.h"
#include "examples/broker/group_messages.h"

namespace kaas::broker {
namespace {

// How often the coordinator's session and rebalance timeouts are checked.
constexpr std::chrono::milliseconds kGroupTick(200);

}  // namespace

using broker_internal::Frame;

absl::Status Broker::Impl::StartGroups() {
  GroupCoordinatorOptions options;
  options.leader_epoch = config_.leader_epoch;
  options.initial_rebalance_delay =
      absl::Milliseconds(config_.group_initial_rebalance_delay_ms);
  KAAS_ASSIGN_OR_RETURN(groups_,
                        GroupCoordinator::Create(&engine_, std::move(options)));
  absl::MutexLock lock(&mu_);
  // The coordinator created (or found) its topic: serve it like any other.
  topics_[std::string(kConsumerOffsetsTopic)] =
      std::max(topics_[std::string(kConsumerOffsetsTopic)], 1);
  return absl::OkStatus();
}

void Broker::Impl::ScheduleGroupTick() {
  if (stopping_) return;
  group_ticker_ = std::make_unique<asio::steady_timer>(pool_, kGroupTick);
  group_ticker_->async_wait([this](const asio::error_code& error) {
    if (error) return;  // cancelled: the broker is stopping
    groups_->Tick();
    // Transaction timeouts too (blocking appends: this is a pool thread).
    if (txns_ != nullptr) txns_->Tick();
    absl::MutexLock lock(&mu_);
    ScheduleGroupTick();
  });
}

bool Broker::Impl::HandleGroupApi(const RequestPtr& request, WireReader& reader,
                                  absl::Status* status) {
  const RequestHeader& header = request->header;
  const int16_t version = header.api_version;
  // Encodes `response` with `encode` and replies.
  auto reply = [request, version](const auto& response, auto encode) {
    request->Reply(Frame(request->header, version, [&](WireWriter& writer) {
      encode(response, version, writer);
    }));
  };
  switch (header.api_key) {
    case group_api::kFindCoordinator: {
      absl::StatusOr<FindCoordinatorRequest> find =
          DecodeFindCoordinatorRequest(reader, version);
      if (!find.ok()) break;
      reply(
          AnswerFindCoordinator(*find, config_.node_id, config_.advertised_host,
                                config_.advertised_port),
          EncodeFindCoordinatorResponse);
      return true;
    }
    case group_api::kJoinGroup: {
      absl::StatusOr<JoinGroupRequest> join =
          DecodeJoinGroupRequest(reader, version);
      if (!join.ok()) break;
      groups_->JoinGroup(*join, version, header.client_id.value_or(""),
                         "/127.0.0.1", [reply](JoinGroupResponse response) {
                           reply(response, EncodeJoinGroupResponse);
                         });
      return true;
    }
    case group_api::kSyncGroup: {
      absl::StatusOr<SyncGroupRequest> sync =
          DecodeSyncGroupRequest(reader, version);
      if (!sync.ok()) break;
      groups_->SyncGroup(*sync, [reply](SyncGroupResponse response) {
        reply(response, EncodeSyncGroupResponse);
      });
      return true;
    }
    case group_api::kHeartbeat: {
      absl::StatusOr<HeartbeatRequest> beat =
          DecodeHeartbeatRequest(reader, version);
      if (!beat.ok()) break;
      reply(groups_->Heartbeat(*beat), EncodeHeartbeatResponse);
      return true;
    }
    case group_api::kLeaveGroup: {
      absl::StatusOr<LeaveGroupRequest> leave =
          DecodeLeaveGroupRequest(reader, version);
      if (!leave.ok()) break;
      reply(groups_->LeaveGroup(*leave, version), EncodeLeaveGroupResponse);
      return true;
    }
    case group_api::kOffsetCommit: {
      absl::StatusOr<OffsetCommitRequest> commit =
          DecodeOffsetCommitRequest(reader, version);
      if (!commit.ok()) break;
      groups_->OffsetCommit(*commit, [reply](OffsetCommitResponse response) {
        reply(response, EncodeOffsetCommitResponse);
      });
      return true;
    }
    case group_api::kOffsetFetch: {
      absl::StatusOr<OffsetFetchRequest> fetch =
          DecodeOffsetFetchRequest(reader, version);
      if (!fetch.ok()) break;
      reply(groups_->OffsetFetch(*fetch), EncodeOffsetFetchResponse);
      return true;
    }
    case group_api::kListGroups: {
      if (!DecodeListGroupsRequest(reader, version).ok()) break;
      reply(groups_->ListGroups(), EncodeListGroupsResponse);
      return true;
    }
    case group_api::kDescribeGroups: {
      absl::StatusOr<DescribeGroupsRequest> describe =
          DecodeDescribeGroupsRequest(reader, version);
      if (!describe.ok()) break;
      reply(groups_->DescribeGroups(*describe), EncodeDescribeGroupsResponse);
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
