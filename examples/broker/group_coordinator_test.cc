// File: examples/broker/group_coordinator_test.cc
//
// The group state machine on a ManualClock (Tick() drives expiry; no
// sleeps), over the memory engine, and the durability of committed offsets
// over the disk engine across a restart.

#include "examples/broker/group_coordinator.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "examples/broker/group_messages.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/memory_engine.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

using JoinSlot = std::shared_ptr<std::optional<JoinGroupResponse>>;
using SyncSlot = std::shared_ptr<std::optional<SyncGroupResponse>>;

constexpr int32_t kSession = 10000;
constexpr int32_t kRebalance = 5000;

std::vector<JoinGroupProtocol> Protocols(std::vector<std::string> names) {
  std::vector<JoinGroupProtocol> out;
  for (std::string& n : names) out.push_back({n, "meta-" + n});
  return out;
}

class GroupCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(&memory_); }

  void Start(StorageEngine* engine, int64_t epoch = 1,
             absl::Duration initial_delay = absl::ZeroDuration()) {
    GroupCoordinatorOptions options;
    options.leader_epoch = epoch;
    options.initial_rebalance_delay = initial_delay;
    options.min_session_timeout_ms = 1000;
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<GroupCoordinator>> c =
        GroupCoordinator::Create(engine, options);
    ASSERT_OK(c.status());
    coordinator_ = *std::move(c);
  }

  JoinSlot Join(const std::string& member_id,
                std::vector<std::string> protocols = {"range"},
                int16_t version = 3, int32_t session_ms = kSession,
                const std::string& group = "g") {
    JoinGroupRequest request;
    request.group_id = group;
    request.session_timeout_ms = session_ms;
    request.rebalance_timeout_ms = kRebalance;
    request.member_id = member_id;
    request.protocol_type = "consumer";
    request.protocols = Protocols(std::move(protocols));
    auto slot = std::make_shared<std::optional<JoinGroupResponse>>();
    coordinator_->JoinGroup(request, version, "client", "/127.0.0.1",
                            [slot](JoinGroupResponse r) { *slot = r; });
    return slot;
  }

  SyncSlot Sync(const std::string& member_id, int32_t generation,
                std::vector<SyncGroupAssignment> assignments = {}) {
    SyncGroupRequest request;
    request.group_id = "g";
    request.generation_id = generation;
    request.member_id = member_id;
    request.assignments = std::move(assignments);
    auto slot = std::make_shared<std::optional<SyncGroupResponse>>();
    coordinator_->SyncGroup(request,
                            [slot](SyncGroupResponse r) { *slot = r; });
    return slot;
  }

  int16_t Heartbeat(const std::string& member_id, int32_t generation) {
    HeartbeatRequest request;
    request.group_id = "g";
    request.generation_id = generation;
    request.member_id = member_id;
    return coordinator_->Heartbeat(request).error_code;
  }

  std::string State() {
    DescribeGroupsRequest request;
    request.groups = {"g"};
    return coordinator_->DescribeGroups(request).groups.at(0).group_state;
  }

  // One member, joined and synced: its id; the generation in `*generation`.
  std::string JoinAlone(int32_t* generation) {
    JoinSlot a = Join("");
    EXPECT_TRUE(a->has_value());
    EXPECT_EQ((*a)->error_code, group_error::kNone);
    *generation = (*a)->generation_id;
    SyncSlot s =
        Sync((*a)->member_id, *generation, {{(*a)->member_id, "assign-a"}});
    EXPECT_TRUE(s->has_value());
    return (*a)->member_id;
  }

  // Two stable members (a leads); the generation in `*generation`.
  std::pair<std::string, std::string> JoinTwo(int32_t* generation) {
    int32_t first = 0;
    const std::string a = JoinAlone(&first);
    JoinSlot b = Join("");
    EXPECT_FALSE(b->has_value());  // waits for a to rejoin
    JoinSlot a2 = Join(a);
    EXPECT_TRUE(a2->has_value() && b->has_value());
    *generation = (*a2)->generation_id;
    const std::string b_id = (*b)->member_id;
    SyncSlot sb = Sync(b_id, *generation);
    SyncSlot sa = Sync(a, *generation, {{a, "assign-a"}, {b_id, "assign-b"}});
    EXPECT_TRUE(sa->has_value() && sb->has_value());
    return {a, b_id};
  }

  OffsetCommitResponse Commit(const std::string& group, int32_t generation,
                              const std::string& member,
                              const std::string& topic, int32_t partition,
                              int64_t offset, std::string metadata = "m") {
    OffsetCommitRequest request;
    request.group_id = group;
    request.generation_id = generation;
    request.member_id = member;
    OffsetCommitTopic& t = request.topics.emplace_back();
    t.name = topic;
    OffsetCommitPartition& p = t.partitions.emplace_back();
    p.partition_index = partition;
    p.committed_offset = offset;
    p.committed_leader_epoch = 3;
    p.committed_metadata = std::move(metadata);
    absl::Notification done;
    OffsetCommitResponse response;
    coordinator_->OffsetCommit(request, [&](OffsetCommitResponse r) {
      response = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();  // durability, on an engine thread
    return response;
  }

  OffsetFetchPartitionResponse Fetch(const std::string& group,
                                     const std::string& topic,
                                     int32_t partition) {
    OffsetFetchRequest request;
    request.group_id = group;
    request.topics.emplace().push_back({topic, {partition}});
    OffsetFetchResponse response = coordinator_->OffsetFetch(request);
    return response.topics.at(0).partitions.at(0);
  }

  ManualClock clock_;
  MemoryEngine memory_;
  std::unique_ptr<GroupCoordinator> coordinator_;
};

// Join (KIP-394 round trip), sync, heartbeat, describe.
TEST_F(GroupCoordinatorTest, SingleMemberJoinSyncHeartbeat) {
  JoinSlot first = Join("", {"range"}, /*version=*/5);
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->error_code, group_error::kMemberIdRequired);
  const std::string id = (*first)->member_id;
  EXPECT_EQ(id.rfind("client-", 0), 0u) << id;
  EXPECT_EQ(State(), "Empty");  // a pending id is no member yet

  JoinSlot joined = Join(id, {"range"}, 5);
  ASSERT_TRUE(joined->has_value());
  EXPECT_EQ((*joined)->error_code, group_error::kNone);
  EXPECT_EQ((*joined)->generation_id, 1);
  EXPECT_EQ((*joined)->leader, id);
  EXPECT_EQ((*joined)->protocol_name, "range");
  ASSERT_EQ((*joined)->members.size(), 1u);
  EXPECT_EQ((*joined)->members[0].metadata, "meta-range");
  EXPECT_EQ(State(), "CompletingRebalance");
  EXPECT_EQ(Heartbeat(id, 1), group_error::kRebalanceInProgress);

  SyncSlot synced = Sync(id, 1, {{id, "mine"}});
  ASSERT_TRUE(synced->has_value());
  EXPECT_EQ((*synced)->error_code, group_error::kNone);
  EXPECT_EQ((*synced)->assignment, "mine");
  EXPECT_EQ(State(), "Stable");
  EXPECT_EQ(Heartbeat(id, 1), group_error::kNone);
  EXPECT_EQ(Heartbeat(id, 0), group_error::kIllegalGeneration);
  EXPECT_EQ(Heartbeat("nobody", 1), group_error::kUnknownMemberId);

  // A follower-style rejoin with nothing changed gets the same generation.
  DescribeGroupsRequest describe;
  describe.groups = {"g", "other"};
  DescribeGroupsResponse d = coordinator_->DescribeGroups(describe);
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].protocol_data, "range");
  ASSERT_EQ(d.groups[0].members.size(), 1u);
  EXPECT_EQ(d.groups[0].members[0].member_assignment, "mine");
  EXPECT_EQ(d.groups[0].members[0].client_host, "/127.0.0.1");
  EXPECT_EQ(d.groups[1].group_state, "Dead");
  ListGroupsResponse listed = coordinator_->ListGroups();
  ASSERT_EQ(listed.groups.size(), 1u);
  EXPECT_EQ(listed.groups[0].group_id, "g");
  EXPECT_EQ(listed.groups[0].protocol_type, "consumer");
}

// group.initial.rebalance.delay.ms: the first rebalance of an Empty group
// waits (extended by each joiner) so that members starting together land in
// one generation; Tick() completes it.
TEST_F(GroupCoordinatorTest, InitialRebalanceDelay) {
  coordinator_.reset();
  Start(&memory_, 1, absl::Seconds(3));
  JoinSlot a = Join("");
  EXPECT_FALSE(a->has_value());
  EXPECT_EQ(coordinator_->NextDeadline(), clock_.Now() + absl::Seconds(3));
  clock_.Advance(absl::Seconds(2));
  JoinSlot b = Join("");  // pushes the deadline to now + 3 s
  clock_.Advance(absl::Seconds(2));
  coordinator_->Tick();
  EXPECT_FALSE(a->has_value());
  clock_.Advance(absl::Seconds(1));
  coordinator_->Tick();
  ASSERT_TRUE(a->has_value() && b->has_value());
  EXPECT_EQ((*a)->generation_id, 1);
  EXPECT_EQ((*b)->generation_id, 1);
  EXPECT_EQ((*a)->members.size(), 2u);
}

// Two members: the second join waits for the first to rejoin; the leader's
// SyncGroup answers the follower that was waiting.
TEST_F(GroupCoordinatorTest, TwoMembersLeaderAssigns) {
  int32_t g1 = 0;
  const std::string a = JoinAlone(&g1);
  JoinSlot b = Join("");
  EXPECT_FALSE(b->has_value());
  EXPECT_EQ(State(), "PreparingRebalance");
  EXPECT_EQ(Heartbeat(a, g1), group_error::kRebalanceInProgress);
  JoinSlot a2 = Join(a);
  ASSERT_TRUE(a2->has_value());
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*a2)->generation_id, g1 + 1);
  EXPECT_EQ((*b)->generation_id, g1 + 1);
  EXPECT_EQ((*a2)->leader, a);
  EXPECT_EQ((*b)->leader, a);
  EXPECT_EQ((*a2)->members.size(), 2u);
  EXPECT_TRUE((*b)->members.empty());  // only the leader gets the list
  const std::string b_id = (*b)->member_id;

  SyncSlot sb = Sync(b_id, g1 + 1);
  EXPECT_FALSE(sb->has_value());  // waits for the leader
  SyncSlot sa = Sync(a, g1 + 1, {{a, "A"}, {b_id, "B"}});
  ASSERT_TRUE(sa->has_value());
  ASSERT_TRUE(sb->has_value());
  EXPECT_EQ((*sa)->assignment, "A");
  EXPECT_EQ((*sb)->assignment, "B");
  EXPECT_EQ((*sb)->error_code, group_error::kNone);
  // A late sync in Stable gets the stored assignment.
  SyncSlot again = Sync(b_id, g1 + 1);
  ASSERT_TRUE(again->has_value());
  EXPECT_EQ((*again)->assignment, "B");
  EXPECT_EQ(Sync(b_id, g1)->value().error_code,
            group_error::kIllegalGeneration);
}

// A third member triggers a rebalance: REBALANCE_IN_PROGRESS on heartbeat,
// everyone rejoins, a new generation of three.
TEST_F(GroupCoordinatorTest, ThirdMemberTriggersRebalance) {
  int32_t gen = 0;
  auto [a, b] = JoinTwo(&gen);
  JoinSlot c = Join("");
  EXPECT_FALSE(c->has_value());
  EXPECT_EQ(Heartbeat(a, gen), group_error::kRebalanceInProgress);
  EXPECT_EQ(Heartbeat(b, gen), group_error::kRebalanceInProgress);
  JoinSlot b2 = Join(b);
  EXPECT_FALSE(b2->has_value());  // a has not rejoined yet
  JoinSlot a2 = Join(a);
  ASSERT_TRUE(a2->has_value() && b2->has_value() && c->has_value());
  EXPECT_EQ((*a2)->generation_id, gen + 1);
  EXPECT_EQ((*c)->generation_id, gen + 1);
  EXPECT_EQ((*a2)->members.size(), 3u);
  EXPECT_EQ(Heartbeat(a, gen), group_error::kIllegalGeneration);
  EXPECT_EQ(Heartbeat(a, gen + 1), group_error::kRebalanceInProgress);
}

// A member that stops heartbeating is expired by Tick() after its session
// timeout; the group rebalances without it.
TEST_F(GroupCoordinatorTest, SessionTimeoutExpiresMember) {
  int32_t gen = 0;
  auto [a, b] = JoinTwo(&gen);
  EXPECT_EQ(coordinator_->NextDeadline(),
            clock_.Now() + absl::Milliseconds(kSession));
  clock_.Advance(absl::Milliseconds(kSession / 2));
  EXPECT_EQ(Heartbeat(a, gen), group_error::kNone);
  coordinator_->Tick();
  EXPECT_EQ(State(), "Stable");
  clock_.Advance(absl::Milliseconds(kSession / 2));  // b's session is over
  coordinator_->Tick();
  EXPECT_EQ(State(), "PreparingRebalance");
  EXPECT_EQ(Heartbeat(b, gen), group_error::kUnknownMemberId);
  EXPECT_EQ(Heartbeat(a, gen), group_error::kRebalanceInProgress);
  JoinSlot a2 = Join(a);
  ASSERT_TRUE(a2->has_value());
  EXPECT_EQ((*a2)->generation_id, gen + 1);
  EXPECT_EQ((*a2)->members.size(), 1u);
}

// A member that does not rejoin within the rebalance timeout is dropped
// (it keeps heartbeating: the session alone would keep it).
TEST_F(GroupCoordinatorTest, RebalanceTimeoutDropsLateMember) {
  int32_t gen = 0;
  auto [a, b] = JoinTwo(&gen);
  JoinSlot c = Join("");
  JoinSlot a2 = Join(a);
  EXPECT_FALSE(a2->has_value());
  clock_.Advance(absl::Milliseconds(kRebalance - 1));
  EXPECT_EQ(Heartbeat(b, gen), group_error::kRebalanceInProgress);
  coordinator_->Tick();
  EXPECT_FALSE(a2->has_value());
  clock_.Advance(absl::Milliseconds(1));
  coordinator_->Tick();
  ASSERT_TRUE(a2->has_value() && c->has_value());
  EXPECT_EQ((*a2)->members.size(), 2u);
  EXPECT_EQ(Heartbeat(b, gen), group_error::kUnknownMemberId);
}

TEST_F(GroupCoordinatorTest, LeaveGroup) {
  int32_t gen = 0;
  auto [a, b] = JoinTwo(&gen);
  LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.members.push_back({b, std::nullopt});
  LeaveGroupResponse left = coordinator_->LeaveGroup(leave, /*version=*/0);
  EXPECT_EQ(left.error_code, group_error::kNone);
  EXPECT_EQ(State(), "PreparingRebalance");
  JoinSlot a2 = Join(a);
  ASSERT_TRUE(a2->has_value());
  EXPECT_EQ((*a2)->members.size(), 1u);

  // v3: per-member errors; the unknown one does not fail the others.
  leave.members = {{"nobody", std::nullopt}, {a, std::nullopt}};
  left = coordinator_->LeaveGroup(leave, /*version=*/3);
  EXPECT_EQ(left.error_code, group_error::kNone);
  ASSERT_EQ(left.members.size(), 2u);
  EXPECT_EQ(left.members[0].error_code, group_error::kUnknownMemberId);
  EXPECT_EQ(left.members[1].error_code, group_error::kNone);
  EXPECT_EQ(State(), "Empty");
  leave.members = {{a, std::nullopt}};
  EXPECT_EQ(coordinator_->LeaveGroup(leave, 1).error_code,
            group_error::kUnknownMemberId);
}

// A member leaving while the others wait in JoinGroup completes the join.
TEST_F(GroupCoordinatorTest, LeaveDuringRebalanceCompletesIt) {
  int32_t gen = 0;
  auto [a, b] = JoinTwo(&gen);
  JoinSlot a2 = Join(a, {"range", "sticky"});  // new metadata: rebalance
  EXPECT_FALSE(a2->has_value());
  LeaveGroupRequest leave;
  leave.group_id = "g";
  leave.members.push_back({b, std::nullopt});
  coordinator_->LeaveGroup(leave, 0);
  ASSERT_TRUE(a2->has_value());
  EXPECT_EQ((*a2)->generation_id, gen + 1);
}

TEST_F(GroupCoordinatorTest, MemberIdRequiredAndUnknownMember) {
  JoinSlot first = Join("", {"range"}, 4);
  ASSERT_EQ((*first)->error_code, group_error::kMemberIdRequired);
  EXPECT_EQ((*Join("made-up", {"range"}, 4))->error_code,
            group_error::kUnknownMemberId);
  // The pending id expires with its session if it never comes back.
  clock_.Advance(absl::Milliseconds(kSession));
  coordinator_->Tick();
  EXPECT_EQ((*Join((*first)->member_id, {"range"}, 4))->error_code,
            group_error::kUnknownMemberId);
  // Versions below 4 get an id and join at once.
  JoinSlot old = Join("", {"range"}, 3);
  EXPECT_EQ((*old)->error_code, group_error::kNone);
  EXPECT_FALSE((*old)->member_id.empty());
}

TEST_F(GroupCoordinatorTest, InconsistentProtocol) {
  int32_t gen = 0;
  JoinAlone(&gen);
  EXPECT_EQ((*Join("", {"roundrobin"}))->error_code,
            group_error::kInconsistentGroupProtocol);
  EXPECT_EQ((*Join("", {}))->error_code,
            group_error::kInconsistentGroupProtocol);
  EXPECT_EQ(State(), "Stable");
}

// The protocol everyone supports with the most first-choice votes wins.
TEST_F(GroupCoordinatorTest, ProtocolSelection) {
  JoinSlot a = Join("", {"range", "roundrobin"});
  const std::string a_id = (*a)->member_id;
  JoinSlot b = Join("", {"sticky", "roundrobin"});
  JoinSlot a2 = Join(a_id, {"range", "roundrobin"});
  ASSERT_TRUE(a2->has_value() && b->has_value());
  EXPECT_EQ((*a2)->protocol_name, "roundrobin");
  EXPECT_EQ((*b)->protocol_name, "roundrobin");
  EXPECT_EQ((*a2)->members[1].metadata, "meta-roundrobin");
}

TEST_F(GroupCoordinatorTest, InvalidRequestsAnsweredWithErrors) {
  JoinGroupRequest request;
  request.group_id = "g";
  request.session_timeout_ms = kSession;
  request.protocol_type = "consumer";
  request.protocols = Protocols({"range"});
  request.group_instance_id = "static-1";
  JoinSlot slot = std::make_shared<std::optional<JoinGroupResponse>>();
  coordinator_->JoinGroup(request, 5, "c", "h",
                          [slot](JoinGroupResponse r) { *slot = r; });
  EXPECT_EQ((*slot)->error_code, group_error::kUnsupportedVersion);
  EXPECT_EQ((*Join("", {"range"}, 3, /*session_ms=*/10))->error_code,
            group_error::kInvalidSessionTimeout);
}

TEST_F(GroupCoordinatorTest, ShutdownAnswersWaitingRequests) {
  int32_t gen = 0;
  JoinAlone(&gen);
  JoinSlot b = Join("");
  EXPECT_FALSE(b->has_value());
  coordinator_->Shutdown();
  ASSERT_TRUE(b->has_value());
  EXPECT_EQ((*b)->error_code, group_error::kNotCoordinator);
  EXPECT_EQ((*Join(""))->error_code, group_error::kNotCoordinator);
}

TEST_F(GroupCoordinatorTest, TransactionalOffsetsSkipTheMemberCheck) {
  int32_t generation = 0;
  JoinAlone(&generation);
  // A producer is no member: a plain commit of the stable group is refused.
  EXPECT_EQ(
      Commit("g", -1, "", "orders", 0, 5).topics[0].partitions[0].error_code,
      group_error::kUnknownMemberId);
  OffsetCommitRequest request;
  request.group_id = "g";
  request.topics.push_back({"orders", {{0, 7, -1, -1, std::nullopt}}});
  absl::Notification done;
  OffsetCommitResponse response;
  coordinator_->CommitTransactionalOffsets(request,
                                           [&](OffsetCommitResponse r) {
                                             response = std::move(r);
                                             done.Notify();
                                           });
  done.WaitForNotification();
  EXPECT_EQ(response.topics.at(0).partitions.at(0).error_code,
            group_error::kNone);
  EXPECT_EQ(Fetch("g", "orders", 0).committed_offset, 7);
}

TEST_F(GroupCoordinatorTest, OffsetCommitThenFetch) {
  // A consumer with no group membership (generation -1).
  OffsetCommitResponse r = Commit("solo", -1, "", "orders", 2, 42, "meta");
  ASSERT_EQ(r.topics.size(), 1u);
  EXPECT_EQ(r.topics[0].partitions[0].error_code, group_error::kNone);
  OffsetFetchPartitionResponse f = Fetch("solo", "orders", 2);
  EXPECT_EQ(f.committed_offset, 42);
  EXPECT_EQ(f.committed_leader_epoch, 3);
  EXPECT_EQ(f.metadata, "meta");
  EXPECT_EQ(f.error_code, group_error::kNone);
  EXPECT_EQ(Commit("solo", -1, "", "orders", 2, 50)
                .topics[0]
                .partitions[0]
                .error_code,
            group_error::kNone);
  EXPECT_EQ(Fetch("solo", "orders", 2).committed_offset, 50);

  // Unknown partition, topic, group: offset -1, no error.
  EXPECT_EQ(Fetch("solo", "orders", 3).committed_offset, -1);
  EXPECT_EQ(Fetch("solo", "other", 2).committed_offset, -1);
  OffsetFetchPartitionResponse none = Fetch("nobody", "orders", 2);
  EXPECT_EQ(none.committed_offset, -1);
  EXPECT_EQ(none.committed_leader_epoch, -1);
  EXPECT_EQ(none.error_code, group_error::kNone);

  // Null topics: everything the group committed.
  Commit("solo", -1, "", "alpha", 0, 7);
  OffsetFetchRequest all;
  all.group_id = "solo";
  OffsetFetchResponse everything = coordinator_->OffsetFetch(all);
  ASSERT_EQ(everything.topics.size(), 2u);
  EXPECT_EQ(everything.topics[0].name, "alpha");
  EXPECT_EQ(everything.topics[1].partitions[0].committed_offset, 50);

  // The group exists (Empty) once it has offsets.
  EXPECT_EQ(coordinator_->ListGroups().groups.size(), 1u);
}

TEST_F(GroupCoordinatorTest, OffsetCommitChecksMembership) {
  int32_t gen = 0;
  const std::string a = JoinAlone(&gen);
  EXPECT_EQ(Commit("g", gen, a, "t", 0, 5).topics[0].partitions[0].error_code,
            group_error::kNone);
  EXPECT_EQ(
      Commit("g", gen + 1, a, "t", 0, 6).topics[0].partitions[0].error_code,
      group_error::kIllegalGeneration);
  EXPECT_EQ(Commit("g", gen, "x", "t", 0, 6).topics[0].partitions[0].error_code,
            group_error::kUnknownMemberId);
  EXPECT_EQ(
      Commit("nogroup", 3, "x", "t", 0, 6).topics[0].partitions[0].error_code,
      group_error::kUnknownMemberId);
  EXPECT_EQ(Commit("g", gen, a, "t", 0, 6, std::string(5000, 'x'))
                .topics[0]
                .partitions[0]
                .error_code,
            group_error::kOffsetMetadataTooLarge);
  EXPECT_EQ(Fetch("g", "t", 0).committed_offset, 5);
}

// Commits survive a restart of the coordinator (and the engine) over the
// same data dir; the latest commit of a key wins.
TEST_F(GroupCoordinatorTest, CommitsSurviveRestartOnDisk) {
  fs::ScopedTempDir dir;
  {
    DiskEngine::Options options;
    options.data_dir = dir.path();
    options.format_log_dirs = true;  // a scratch dir that exists, empty
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(options);
    ASSERT_OK(engine.status());
    Start(engine->get(), /*epoch=*/1);
    Commit("g1", -1, "", "orders", 0, 10);
    Commit("g1", -1, "", "orders", 0, 11);
    Commit("g1", -1, "", "orders", 1, 20);
    Commit("g2", -1, "", "orders", 0, 30);
    coordinator_.reset();
  }
  DiskEngine::Options options;
  options.data_dir = dir.path();
  options.format_log_dirs = true;  // a scratch dir that exists, empty
  options.clock = &clock_;
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(options);
  ASSERT_OK(engine.status());
  Start(engine->get(), /*epoch=*/2);
  OffsetFetchPartitionResponse f = Fetch("g1", "orders", 0);
  EXPECT_EQ(f.committed_offset, 11);
  EXPECT_EQ(f.committed_leader_epoch, 3);
  EXPECT_EQ(f.metadata, "m");
  EXPECT_EQ(Fetch("g1", "orders", 1).committed_offset, 20);
  EXPECT_EQ(Fetch("g2", "orders", 0).committed_offset, 30);
  EXPECT_EQ(Fetch("g2", "orders", 1).committed_offset, -1);
  EXPECT_EQ(coordinator_->ListGroups().groups.size(), 2u);
  // And commits continue after recovery.
  Commit("g1", -1, "", "orders", 0, 12);
  EXPECT_EQ(Fetch("g1", "orders", 0).committed_offset, 12);
  coordinator_.reset();
}

TEST(FindCoordinatorAnswerTest, GroupsAndTransactionsHere) {
  FindCoordinatorRequest request;
  request.key = "g";
  FindCoordinatorResponse r = AnswerFindCoordinator(request, 7, "h", 9092);
  EXPECT_EQ(r.error_code, group_error::kNone);
  EXPECT_EQ(r.node_id, 7);
  EXPECT_EQ(r.host, "h");
  EXPECT_EQ(r.port, 9092);
  request.key_type = 1;
  r = AnswerFindCoordinator(request, 7, "h", 9092);
  EXPECT_EQ(r.error_code, group_error::kNone);
  EXPECT_EQ(r.node_id, 7);
  EXPECT_EQ(r.port, 9092);
  request.key_type = 5;
  EXPECT_EQ(AnswerFindCoordinator(request, 7, "h", 9092).error_code,
            group_error::kInvalidRequest);
  request.key_type = 0;
  request.key = "";
  EXPECT_EQ(AnswerFindCoordinator(request, 7, "h", 9092).error_code,
            group_error::kInvalidGroupId);
  request.key_type = 1;
  EXPECT_EQ(AnswerFindCoordinator(request, 7, "h", 9092).error_code,
            group_error::kInvalidRequest);
}

}  // namespace
}  // namespace kaas::broker
