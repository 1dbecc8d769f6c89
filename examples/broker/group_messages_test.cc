// File: examples/broker/group_messages_test.cc
//
// Each group API's request decoded and response encoded in its lowest and
// highest served versions (bytes built field by field from the published
// specs), every truncation of a request rejected, hostile array lengths
// rejected before allocation, unserved versions refused.

#include "examples/broker/group_messages.h"

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "examples/broker/wire.h"
#include "gtest/gtest.h"

namespace kaas::broker {
namespace {

template <typename Decode>
void ExpectEveryTruncationFails(const std::string& bytes, Decode decode) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    WireReader reader(absl::string_view(bytes).substr(0, n));
    EXPECT_FALSE(decode(reader).ok()) << "prefix of " << n << " bytes";
  }
}

// ---- FindCoordinator ----

TEST(FindCoordinatorTest, V0AndV2) {
  std::string v0;
  WireWriter(&v0).String("grp");
  WireReader r0(v0);
  auto d0 = DecodeFindCoordinatorRequest(r0, 0);
  ASSERT_TRUE(d0.ok());
  EXPECT_EQ(d0->key, "grp");
  EXPECT_EQ(d0->key_type, 0);

  std::string v2;
  WireWriter w(&v2);
  w.String("txn");
  w.Int8(1);
  WireReader r2(v2);
  auto d2 = DecodeFindCoordinatorRequest(r2, 2);
  ASSERT_TRUE(d2.ok());
  EXPECT_EQ(d2->key_type, 1);
  ExpectEveryTruncationFails(
      v2, [](WireReader& r) { return DecodeFindCoordinatorRequest(r, 2); });

  FindCoordinatorResponse response;
  response.node_id = 1;
  response.host = "h";
  response.port = 9092;
  std::string out0, want0;
  WireWriter ow0(&out0);
  EncodeFindCoordinatorResponse(response, 0, ow0);
  WireWriter ww0(&want0);
  ww0.Int16(0);
  ww0.Int32(1);
  ww0.String("h");
  ww0.Int32(9092);
  EXPECT_EQ(out0, want0);
  std::string out2, want2;
  WireWriter ow2(&out2);
  EncodeFindCoordinatorResponse(response, 2, ow2);
  WireWriter ww2(&want2);
  ww2.Int32(0);  // throttle
  ww2.Int16(0);
  ww2.NullableString(std::nullopt);
  ww2.Int32(1);
  ww2.String("h");
  ww2.Int32(9092);
  EXPECT_EQ(out2, want2);
}

// ---- JoinGroup ----

std::string JoinBytes(int16_t version, int32_t protocols = 1) {
  std::string bytes;
  WireWriter w(&bytes);
  w.String("g");
  w.Int32(10000);
  if (version >= 1) w.Int32(30000);
  w.String("m1");
  if (version >= 5) w.NullableString(std::nullopt);
  w.String("consumer");
  w.ArrayLength(protocols);
  for (int32_t i = 0; i < protocols && i < 1; ++i) {
    w.String("range");
    w.Bytes("meta");
  }
  return bytes;
}

TEST(JoinGroupTest, RequestV0AndV5) {
  for (int16_t version : {0, 5}) {
    const std::string bytes = JoinBytes(version);
    WireReader reader(bytes);
    auto d = DecodeJoinGroupRequest(reader, version);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->group_id, "g");
    EXPECT_EQ(d->session_timeout_ms, 10000);
    EXPECT_EQ(d->rebalance_timeout_ms, version == 0 ? 10000 : 30000);
    EXPECT_EQ(d->member_id, "m1");
    EXPECT_FALSE(d->group_instance_id.has_value());
    EXPECT_EQ(d->protocol_type, "consumer");
    ASSERT_EQ(d->protocols.size(), 1u);
    EXPECT_EQ(d->protocols[0].name, "range");
    EXPECT_EQ(d->protocols[0].metadata, "meta");
    EXPECT_EQ(reader.remaining(), 0u);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeJoinGroupRequest(r, version);
    });
  }
}

TEST(JoinGroupTest, HostileArrayLengthAndNullMetadataRejected) {
  const std::string bytes = JoinBytes(5, /*protocols=*/0x7fffffff);
  WireReader reader(bytes);
  EXPECT_FALSE(DecodeJoinGroupRequest(reader, 5).ok());

  std::string null_metadata;
  WireWriter w(&null_metadata);
  w.String("g");
  w.Int32(10000);
  w.Int32(30000);
  w.String("");
  w.String("consumer");
  w.ArrayLength(1);
  w.String("range");
  w.NullBytes();
  WireReader r2(null_metadata);
  EXPECT_FALSE(DecodeJoinGroupRequest(r2, 1).ok());
}

TEST(JoinGroupTest, UnservedVersionRefused) {
  const std::string bytes = JoinBytes(5);
  WireReader reader(bytes);
  EXPECT_FALSE(DecodeJoinGroupRequest(reader, 6).ok());  // flexible
}

TEST(JoinGroupTest, ResponseV0AndV5) {
  JoinGroupResponse response;
  response.generation_id = 3;
  response.protocol_name = "range";
  response.leader = "a";
  response.member_id = "a";
  response.members.push_back({"a", std::nullopt, "md"});
  for (int16_t version : {0, 5}) {
    std::string out, want;
    WireWriter ow(&out);
    EncodeJoinGroupResponse(response, version, ow);
    WireWriter w(&want);
    if (version >= 2) w.Int32(0);
    w.Int16(0);
    w.Int32(3);
    w.String("range");
    w.String("a");
    w.String("a");
    w.ArrayLength(1);
    w.String("a");
    if (version >= 5) w.NullableString(std::nullopt);
    w.Bytes("md");
    EXPECT_EQ(out, want) << "v" << version;
  }
}

// ---- SyncGroup ----

TEST(SyncGroupTest, V0AndV3) {
  for (int16_t version : {0, 3}) {
    std::string bytes;
    WireWriter w(&bytes);
    w.String("g");
    w.Int32(4);
    w.String("a");
    if (version >= 3) w.NullableString(std::nullopt);
    w.ArrayLength(2);
    w.String("a");
    w.Bytes("A");
    w.String("b");
    w.Bytes("");
    WireReader reader(bytes);
    auto d = DecodeSyncGroupRequest(reader, version);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_EQ(d->generation_id, 4);
    ASSERT_EQ(d->assignments.size(), 2u);
    EXPECT_EQ(d->assignments[0].assignment, "A");
    EXPECT_EQ(d->assignments[1].member_id, "b");
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeSyncGroupRequest(r, version);
    });

    SyncGroupResponse response;
    response.assignment = "xyz";
    std::string out, want;
    WireWriter ow(&out);
    EncodeSyncGroupResponse(response, version, ow);
    WireWriter ww(&want);
    if (version >= 1) ww.Int32(0);
    ww.Int16(0);
    ww.Bytes("xyz");
    EXPECT_EQ(out, want);
  }
}

// ---- Heartbeat ----

TEST(HeartbeatTest, V0AndV3) {
  for (int16_t version : {0, 3}) {
    std::string bytes;
    WireWriter w(&bytes);
    w.String("g");
    w.Int32(7);
    w.String("a");
    if (version >= 3) w.NullableString(std::string("inst"));
    WireReader reader(bytes);
    auto d = DecodeHeartbeatRequest(reader, version);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->generation_id, 7);
    EXPECT_EQ(d->group_instance_id.has_value(), version >= 3);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeHeartbeatRequest(r, version);
    });
    HeartbeatResponse response;
    response.error_code = 27;
    std::string out, want;
    WireWriter ow(&out);
    EncodeHeartbeatResponse(response, version, ow);
    WireWriter ww(&want);
    if (version >= 1) ww.Int32(0);
    ww.Int16(27);
    EXPECT_EQ(out, want);
  }
  WireReader empty("");
  EXPECT_FALSE(DecodeHeartbeatRequest(empty, 4).ok());
}

// ---- LeaveGroup ----

TEST(LeaveGroupTest, V0AndV3) {
  std::string v0;
  WireWriter w0(&v0);
  w0.String("g");
  w0.String("a");
  WireReader r0(v0);
  auto d0 = DecodeLeaveGroupRequest(r0, 0);
  ASSERT_TRUE(d0.ok());
  ASSERT_EQ(d0->members.size(), 1u);
  EXPECT_EQ(d0->members[0].member_id, "a");

  std::string v3;
  WireWriter w3(&v3);
  w3.String("g");
  w3.ArrayLength(2);
  w3.String("a");
  w3.NullableString(std::nullopt);
  w3.String("b");
  w3.NullableString(std::string("i"));
  WireReader r3(v3);
  auto d3 = DecodeLeaveGroupRequest(r3, 3);
  ASSERT_TRUE(d3.ok());
  ASSERT_EQ(d3->members.size(), 2u);
  EXPECT_EQ(*d3->members[1].group_instance_id, "i");
  ExpectEveryTruncationFails(
      v3, [](WireReader& r) { return DecodeLeaveGroupRequest(r, 3); });

  LeaveGroupResponse response;
  response.members.push_back({"a", std::nullopt, 25});
  std::string out0, out3, want0, want3;
  WireWriter o0(&out0), o3(&out3);
  EncodeLeaveGroupResponse(response, 0, o0);
  EncodeLeaveGroupResponse(response, 3, o3);
  WireWriter x0(&want0);
  x0.Int16(0);
  WireWriter x3(&want3);
  x3.Int32(0);
  x3.Int16(0);
  x3.ArrayLength(1);
  x3.String("a");
  x3.NullableString(std::nullopt);
  x3.Int16(25);
  EXPECT_EQ(out0, want0);
  EXPECT_EQ(out3, want3);
}

// ---- OffsetCommit ----

std::string CommitBytes(int16_t version) {
  std::string bytes;
  WireWriter w(&bytes);
  w.String("g");
  if (version >= 1) {
    w.Int32(5);
    w.String("m");
  }
  if (version >= 7) w.NullableString(std::nullopt);
  if (version >= 2 && version <= 4) w.Int64(-1);
  w.ArrayLength(1);
  w.String("t");
  w.ArrayLength(1);
  w.Int32(2);
  w.Int64(100);
  if (version >= 6) w.Int32(9);
  if (version == 1) w.Int64(1234);
  w.NullableString(std::string("meta"));
  return bytes;
}

TEST(OffsetCommitTest, RequestEveryVersion) {
  for (int16_t version = 0; version <= 7; ++version) {
    const std::string bytes = CommitBytes(version);
    WireReader reader(bytes);
    auto d = DecodeOffsetCommitRequest(reader, version);
    ASSERT_TRUE(d.ok()) << "v" << version << ": " << d.status();
    EXPECT_EQ(reader.remaining(), 0u) << "v" << version;
    EXPECT_EQ(d->generation_id, version >= 1 ? 5 : -1);
    ASSERT_EQ(d->topics.size(), 1u);
    const OffsetCommitPartition& p = d->topics[0].partitions.at(0);
    EXPECT_EQ(p.partition_index, 2);
    EXPECT_EQ(p.committed_offset, 100);
    EXPECT_EQ(p.committed_leader_epoch, version >= 6 ? 9 : -1);
    EXPECT_EQ(p.commit_timestamp, version == 1 ? 1234 : -1);
    EXPECT_EQ(*p.committed_metadata, "meta");
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeOffsetCommitRequest(r, version);
    });
  }
}

TEST(OffsetCommitTest, ResponseV0AndV7) {
  OffsetCommitResponse response;
  response.topics.push_back({"t", {{2, 0}, {3, 22}}});
  for (int16_t version : {0, 7}) {
    std::string out, want;
    WireWriter ow(&out);
    EncodeOffsetCommitResponse(response, version, ow);
    WireWriter w(&want);
    if (version >= 3) w.Int32(0);
    w.ArrayLength(1);
    w.String("t");
    w.ArrayLength(2);
    w.Int32(2);
    w.Int16(0);
    w.Int32(3);
    w.Int16(22);
    EXPECT_EQ(out, want);
  }
}

// ---- OffsetFetch ----

TEST(OffsetFetchTest, RequestV0V5AndNullTopics) {
  for (int16_t version : {0, 5}) {
    std::string bytes;
    WireWriter w(&bytes);
    w.String("g");
    w.ArrayLength(1);
    w.String("t");
    w.ArrayLength(2);
    w.Int32(0);
    w.Int32(4);
    WireReader reader(bytes);
    auto d = DecodeOffsetFetchRequest(reader, version);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE(d->topics.has_value());
    EXPECT_EQ((*d->topics)[0].partition_indexes, (std::vector<int32_t>{0, 4}));
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeOffsetFetchRequest(r, version);
    });
  }
  std::string null_topics;
  WireWriter w(&null_topics);
  w.String("g");
  w.ArrayLength(-1);
  WireReader r5(null_topics);
  auto d5 = DecodeOffsetFetchRequest(r5, 5);
  ASSERT_TRUE(d5.ok());
  EXPECT_FALSE(d5->topics.has_value());
  WireReader r1(null_topics);
  EXPECT_FALSE(DecodeOffsetFetchRequest(r1, 1).ok());  // null from v2 only
}

TEST(OffsetFetchTest, ResponseV0AndV5) {
  OffsetFetchResponse response;
  OffsetFetchPartitionResponse p;
  p.partition_index = 1;
  p.committed_offset = 77;
  p.committed_leader_epoch = 4;
  p.metadata = "md";
  response.topics.push_back({"t", {p}});
  for (int16_t version : {0, 5}) {
    std::string out, want;
    WireWriter ow(&out);
    EncodeOffsetFetchResponse(response, version, ow);
    WireWriter w(&want);
    if (version >= 3) w.Int32(0);
    w.ArrayLength(1);
    w.String("t");
    w.ArrayLength(1);
    w.Int32(1);
    w.Int64(77);
    if (version >= 5) w.Int32(4);
    w.NullableString(std::string("md"));
    w.Int16(0);
    if (version >= 2) w.Int16(0);
    EXPECT_EQ(out, want);
  }
}

// ---- ListGroups ----

TEST(ListGroupsTest, V0AndV2) {
  WireReader reader("");
  EXPECT_TRUE(DecodeListGroupsRequest(reader, 0).ok());
  EXPECT_TRUE(DecodeListGroupsRequest(reader, 2).ok());
  EXPECT_FALSE(DecodeListGroupsRequest(reader, 3).ok());
  ListGroupsResponse response;
  response.groups.push_back({"g", "consumer"});
  for (int16_t version : {0, 2}) {
    std::string out, want;
    WireWriter ow(&out);
    EncodeListGroupsResponse(response, version, ow);
    WireWriter w(&want);
    if (version >= 1) w.Int32(0);
    w.Int16(0);
    w.ArrayLength(1);
    w.String("g");
    w.String("consumer");
    EXPECT_EQ(out, want);
  }
}

// ---- DescribeGroups ----

TEST(DescribeGroupsTest, V0AndV4) {
  for (int16_t version : {0, 4}) {
    std::string bytes;
    WireWriter w(&bytes);
    w.ArrayLength(2);
    w.String("g1");
    w.String("g2");
    if (version >= 3) w.Bool(true);
    WireReader reader(bytes);
    auto d = DecodeDescribeGroupsRequest(reader, version);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ(d->groups, (std::vector<std::string>{"g1", "g2"}));
    EXPECT_EQ(d->include_authorized_operations, version >= 3);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeDescribeGroupsRequest(r, version);
    });

    DescribeGroupsResponse response;
    DescribedGroup group;
    group.group_id = "g1";
    group.group_state = "Stable";
    group.protocol_type = "consumer";
    group.protocol_data = "range";
    group.members.push_back({"m", std::nullopt, "c", "h", "md", "as"});
    response.groups.push_back(group);
    std::string out, want;
    WireWriter ow(&out);
    EncodeDescribeGroupsResponse(response, version, ow);
    WireWriter x(&want);
    if (version >= 1) x.Int32(0);
    x.ArrayLength(1);
    x.Int16(0);
    x.String("g1");
    x.String("Stable");
    x.String("consumer");
    x.String("range");
    x.ArrayLength(1);
    x.String("m");
    if (version >= 4) x.NullableString(std::nullopt);
    x.String("c");
    x.String("h");
    x.Bytes("md");
    x.Bytes("as");
    if (version >= 3) x.Int32(-2147483647 - 1);
    EXPECT_EQ(out, want);
  }
  std::string hostile;
  WireWriter(&hostile).ArrayLength(1000000);
  WireReader reader(hostile);
  EXPECT_FALSE(DecodeDescribeGroupsRequest(reader, 0).ok());
}

}  // namespace
}  // namespace kaas::broker
