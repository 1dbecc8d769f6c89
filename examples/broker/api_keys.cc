// File: examples/broker/api_keys.cc

#include "examples/broker/api_keys.h"

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
    // The consumer-group APIs (group_messages.h): OffsetCommit,
    // OffsetFetch, FindCoordinator, JoinGroup, Heartbeat, LeaveGroup,
    // SyncGroup, DescribeGroups, ListGroups.
    {8, 0, 7},
    {9, 0, 5},
    {10, 0, 2},
    {11, 0, 5},
    {12, 0, 3},
    {13, 0, 3},
    {14, 0, 3},
    {15, 0, 4},
    {16, 0, 2},
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
    case 8:  // OffsetCommit
      return api_version >= 8;
    case 9:   // OffsetFetch
    case 11:  // JoinGroup
      return api_version >= 6;
    case 10:  // FindCoordinator
    case 16:  // ListGroups
      return api_version >= 3;
    case 12:  // Heartbeat
    case 13:  // LeaveGroup
    case 14:  // SyncGroup
      return api_version >= 4;
    case 15:  // DescribeGroups
      return api_version >= 5;
    default:
      return false;
  }
}

}  // namespace kaas::broker
