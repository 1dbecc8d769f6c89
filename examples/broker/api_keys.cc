// File: examples/broker/api_keys.cc

#include "examples/broker/api_keys.h"

#include "examples/broker/group_messages.h"
#include "examples/broker/txn_messages.h"

namespace kaas::broker {
namespace {

constexpr ApiVersionRange kApis[] = {
    {kProduce, 3, 8},
    {kFetch, 4, 11},
    {kListOffsets, 1, 5},
    {kMetadata, 0, 8},
    {kApiVersions, 0, 3},
    {kCreateTopics, 0, 4},
    {kDeleteTopics, 0, 3},
    {kDeleteRecords, 0, 1},
    {kInitProducerId, 0, 1},
    {kOffsetForLeaderEpoch, 0, 3},
    // The consumer-group APIs (group_messages.h), each served from v0.
    {group_api::kOffsetCommit, 0, group_api::kOffsetCommitMax},
    {group_api::kOffsetFetch, 0, group_api::kOffsetFetchMax},
    {group_api::kFindCoordinator, 0, group_api::kFindCoordinatorMax},
    {group_api::kJoinGroup, 0, group_api::kJoinGroupMax},
    {group_api::kHeartbeat, 0, group_api::kHeartbeatMax},
    {group_api::kLeaveGroup, 0, group_api::kLeaveGroupMax},
    {group_api::kSyncGroup, 0, group_api::kSyncGroupMax},
    {group_api::kDescribeGroups, 0, group_api::kDescribeGroupsMax},
    {group_api::kListGroups, 0, group_api::kListGroupsMax},
    // The transaction APIs (txn_messages.h), each served from v0.
    {txn_api::kAddPartitionsToTxn, 0, txn_api::kAddPartitionsToTxnMax},
    {txn_api::kAddOffsetsToTxn, 0, txn_api::kAddOffsetsToTxnMax},
    {txn_api::kEndTxn, 0, txn_api::kEndTxnMax},
    {txn_api::kTxnOffsetCommit, 0, txn_api::kTxnOffsetCommitMax},
};

}  // namespace

absl::Span<const ApiVersionRange> SupportedApis() { return kApis; }

std::optional<ApiVersionRange> SupportedRange(int16_t api_key) {
  for (const ApiVersionRange& range : kApis) {
    if (range.api_key == api_key) return range;
  }
  return std::nullopt;
}

// The first flexible version of each API is its message spec's
// "flexibleVersions". Only ApiVersions is served at a flexible version.
bool IsFlexible(int16_t api_key, int16_t api_version) {
  switch (api_key) {
    case kProduce:
      return api_version >= 9;
    case kFetch:
      return api_version >= 12;
    case kListOffsets:
      return api_version >= 6;
    case kMetadata:
      return api_version >= 9;
    case kApiVersions:
      return api_version >= 3;
    case kCreateTopics:
      return api_version >= 5;
    case kDeleteTopics:
      return api_version >= 4;
    case kDeleteRecords:
    case kInitProducerId:
      return api_version >= 2;
    case kOffsetForLeaderEpoch:
      return api_version >= 4;
    case group_api::kOffsetCommit:
      return api_version >= 8;
    case group_api::kOffsetFetch:
    case group_api::kJoinGroup:
      return api_version >= 6;
    case group_api::kFindCoordinator:
    case group_api::kListGroups:
      return api_version >= 3;
    case group_api::kHeartbeat:
    case group_api::kLeaveGroup:
    case group_api::kSyncGroup:
      return api_version >= 4;
    case group_api::kDescribeGroups:
      return api_version >= 5;
    case txn_api::kAddPartitionsToTxn:
    case txn_api::kAddOffsetsToTxn:
    case txn_api::kEndTxn:
    case txn_api::kTxnOffsetCommit:
      return api_version >= 3;
    default:
      return false;
  }
}

}  // namespace kaas::broker
