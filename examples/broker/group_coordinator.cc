// File: examples/broker/group_coordinator.cc
//
// The group state machine and the durable offset store (group_coordinator.h).
//
// Record layout of `__consumer_offsets` (Kafka's, so its tools read it):
//   key   = int16 version (1; 0 accepted on read), STRING group,
//           STRING topic, INT32 partition                (OffsetCommitKey)
//   value = int16 version (3), INT64 offset, INT32 leader_epoch,
//           STRING metadata, INT64 commit_timestamp_ms   (OffsetCommitValue)
//           or null: a tombstone, the key's commit is deleted.
// STRING is an int16 length then the bytes, big-endian integers throughout.
// Keys of other versions (2: Kafka's group metadata) are skipped on read.
//
// Locking: one mutex guards every group and the offset cache. Callbacks are
// collected while it is held (Completions) and run after it is released.

#include "examples/broker/group_coordinator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "base/status_future.h"
#include "base/status_macros.h"
#include "examples/broker/internal_batches.h"
#include "examples/broker/internal_topic_replay.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"

namespace kaas::broker {
namespace {

constexpr int16_t kOffsetKeyVersion = 1;
constexpr int16_t kOffsetValueVersion = 3;
// Bytes read from the offsets topic per Read during recovery.

enum class GroupState {
  kEmpty,
  kPreparingRebalance,
  kCompletingRebalance,
  kStable,
  kDead,
};

absl::string_view StateName(GroupState state) {
  switch (state) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "CompletingRebalance";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "Dead";
}

struct Member {
  std::string id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::vector<JoinGroupProtocol> protocols;
  absl::Time last_heartbeat;
  std::string assignment;
  // Set while the member waits for the rebalance (JoinGroup) or for the
  // leader's assignment (SyncGroup); such a member is kept alive (Kafka's
  // shouldKeepAlive) since it cannot heartbeat meanwhile.
  GroupCoordinator::JoinCallback join_done;
  GroupCoordinator::SyncCallback sync_done;

  bool Supports(absl::string_view protocol) const {
    for (const JoinGroupProtocol& p : protocols) {
      if (p.name == protocol) return true;
    }
    return false;
  }
  const std::string* Metadata(absl::string_view protocol) const {
    for (const JoinGroupProtocol& p : protocols) {
      if (p.name == protocol) return &p.metadata;
    }
    return nullptr;
  }
};

struct Group {
  std::string id;
  GroupState state = GroupState::kEmpty;
  int32_t generation = 0;
  std::string protocol_type;
  std::string protocol;
  std::string leader;
  // In join order: the first is the leader when a new one must be chosen.
  std::vector<Member> members;
  // Ids handed out with MEMBER_ID_REQUIRED, until they join or expire.
  absl::flat_hash_map<std::string, absl::Time> pending_members;
  // PreparingRebalance: when the rebalance completes without the members
  // that did not rejoin.
  absl::Time rebalance_deadline = absl::InfiniteFuture();
  // The first rebalance of an Empty group waits for more joiners until
  // initial_delay_deadline (never past initial_delay_limit).
  bool in_initial_delay = false;
  absl::Time initial_delay_deadline = absl::InfinitePast();
  absl::Time initial_delay_limit = absl::InfinitePast();

  Member* Find(absl::string_view member_id) {
    for (Member& m : members) {
      if (m.id == member_id) return &m;
    }
    return nullptr;
  }
};

struct Committed {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = -1;
  // Where the commit is in the offsets topic: a later one wins.
  int64_t log_offset = -1;
};

using OffsetKey = std::pair<std::string, int32_t>;  // topic, partition

// Callbacks to run once the lock is released.
class Completions {
 public:
  void Add(absl::AnyInvocable<void() &&> f) {
    pending_.push_back(std::move(f));
  }
  void Join(GroupCoordinator::JoinCallback& done, JoinGroupResponse response) {
    if (!done) return;
    Add([done = std::move(done), response = std::move(response)]() mutable {
      std::move(done)(std::move(response));
    });
    done = nullptr;
  }
  void Sync(GroupCoordinator::SyncCallback& done, SyncGroupResponse response) {
    if (!done) return;
    Add([done = std::move(done), response = std::move(response)]() mutable {
      std::move(done)(std::move(response));
    });
    done = nullptr;
  }
  void Run() {
    for (auto& f : pending_) std::move(f)();
    pending_.clear();
  }

 private:
  std::vector<absl::AnyInvocable<void() &&>> pending_;
};

JoinGroupResponse JoinError(int16_t error, std::string member_id = "") {
  JoinGroupResponse response;
  response.error_code = error;
  response.member_id = std::move(member_id);
  return response;
}

SyncGroupResponse SyncError(int16_t error) {
  SyncGroupResponse response;
  response.error_code = error;
  return response;
}

void PutString(absl::string_view s, WireWriter& writer) { writer.String(s); }

std::string EncodeOffsetKey(absl::string_view group, absl::string_view topic,
                            int32_t partition) {
  std::string out;
  WireWriter writer(&out);
  writer.Int16(kOffsetKeyVersion);
  PutString(group, writer);
  PutString(topic, writer);
  writer.Int32(partition);
  return out;
}

std::string EncodeOffsetValue(const Committed& c) {
  std::string out;
  WireWriter writer(&out);
  writer.Int16(kOffsetValueVersion);
  writer.Int64(c.offset);
  writer.Int32(c.leader_epoch);
  PutString(c.metadata, writer);
  writer.Int64(c.commit_timestamp);
  return out;
}

struct DecodedKey {
  std::string group;
  std::string topic;
  int32_t partition = 0;
};

// nullopt: a key of another kind (skipped).
absl::StatusOr<std::optional<DecodedKey>> DecodeOffsetKey(
    absl::string_view bytes) {
  WireReader reader(bytes);
  KAAS_ASSIGN_OR_RETURN(int16_t version, reader.Int16("key version"));
  if (version != 0 && version != 1) return std::optional<DecodedKey>();
  DecodedKey key;
  KAAS_ASSIGN_OR_RETURN(absl::string_view group, reader.String("group"));
  KAAS_ASSIGN_OR_RETURN(absl::string_view topic, reader.String("topic"));
  KAAS_ASSIGN_OR_RETURN(key.partition, reader.Int32("partition"));
  key.group = std::string(group);
  key.topic = std::string(topic);
  return std::optional<DecodedKey>(std::move(key));
}

absl::StatusOr<Committed> DecodeOffsetValue(absl::string_view bytes) {
  WireReader reader(bytes);
  KAAS_ASSIGN_OR_RETURN(int16_t version, reader.Int16("value version"));
  Committed c;
  KAAS_ASSIGN_OR_RETURN(c.offset, reader.Int64("offset"));
  // Kafka's value versions: 0 {offset, metadata, timestamp}, 1 {offset,
  // metadata, commit ts, expire ts}, 2 {offset, metadata, commit ts},
  // 3 {offset, leader epoch, metadata, commit ts}. This coordinator writes
  // 3 only; the others are read for Kafka-written data's sake.
  if (version >= 3) {
    KAAS_ASSIGN_OR_RETURN(c.leader_epoch, reader.Int32("leader_epoch"));
  }
  KAAS_ASSIGN_OR_RETURN(absl::string_view metadata, reader.String("metadata"));
  c.metadata = std::string(metadata);
  KAAS_ASSIGN_OR_RETURN(c.commit_timestamp, reader.Int64("commit_timestamp"));
  return c;
}

TopicPartition OffsetsPartition() {
  return TopicPartition{std::string(kConsumerOffsetsTopic), 0};
}

}  // namespace

class GroupCoordinator::Impl {
 public:
  Impl(StorageEngine* engine, GroupCoordinatorOptions options)
      : engine_(engine),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {}

  ~Impl() {
    Shutdown();
    // Durability callbacks of commits in flight point at this object.
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* in_flight) { return *in_flight == 0; }, &commits_in_flight_));
  }

  absl::Status Recover();

  void JoinGroup(const JoinGroupRequest& request, int16_t version,
                 absl::string_view client_id, absl::string_view client_host,
                 JoinCallback done);
  void SyncGroup(const SyncGroupRequest& request, SyncCallback done);
  HeartbeatResponse Heartbeat(const HeartbeatRequest& request);
  LeaveGroupResponse LeaveGroup(const LeaveGroupRequest& request,
                                int16_t version);
  // `check_membership` false: a transaction's offsets (the transaction
  // coordinator validated the producer instead).
  void OffsetCommit(const OffsetCommitRequest& request, bool check_membership,
                    CommitCallback done);
  OffsetFetchResponse OffsetFetch(const OffsetFetchRequest& request);
  ListGroupsResponse ListGroups();
  DescribeGroupsResponse DescribeGroups(const DescribeGroupsRequest& request);
  void Tick();
  absl::Time NextDeadline();
  void Shutdown();

 private:
  // What one OffsetCommit appended, for its durability callback.
  struct PendingCommit {
    std::string group;
    std::vector<std::pair<OffsetKey, Committed>> entries;
    OffsetCommitResponse response;
    // Indexes into response.topics[t].partitions[p] of each entry.
    std::vector<std::pair<size_t, size_t>> slots;
    CommitCallback done;
  };

  void FinishCommit(PendingCommit commit, absl::StatusOr<int64_t> base_offset);

  void ApplyRecord(const DecodedKey& key, std::optional<Committed> value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::string NewMemberId(absl::string_view client_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddMember(Group& group, Member member, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PrepareRebalance(Group& group, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MaybeCompleteJoin(Group& group, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CompleteJoin(Group& group, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveMember(Group& group, absl::string_view member_id, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  JoinGroupResponse CurrentGeneration(const Group& group,
                                      const Member& member) const;
  void ExpireMembers(Group& group, absl::Time now, Completions& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SupportsProtocols(const Group& group, absl::string_view exclude_member,
                         const JoinGroupRequest& request) const;

  StorageEngine* const engine_;
  const GroupCoordinatorOptions options_;
  Clock* const clock_;

  absl::Mutex mu_;
  std::map<std::string, Group> groups_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::map<OffsetKey, Committed>> offsets_
      ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int commits_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  absl::BitGen random_ ABSL_GUARDED_BY(mu_);
};

// ---- Recovery ---------------------------------------------------------------

absl::Status GroupCoordinator::Impl::Recover() {
  const TopicPartition tp = OffsetsPartition();
  KAAS_RETURN_IF_ERROR(engine_->CreatePartition(tp));
  KAAS_RETURN_IF_ERROR(engine_->TakeOver(tp, options_.leader_epoch).status());
  absl::MutexLock lock(&mu_);
  return ReplayInternalTopic(
      *engine_, tp, "offsets topic",
      [this](int64_t offset, absl::string_view key_bytes,
             std::optional<absl::string_view> value_bytes) -> absl::Status {
        mu_.AssertHeld();  // the replay runs under the lock taken above
        KAAS_ASSIGN_OR_RETURN(std::optional<DecodedKey> key,
                              DecodeOffsetKey(key_bytes));
        if (!key.has_value()) return absl::OkStatus();
        std::optional<Committed> value;
        if (value_bytes.has_value()) {
          KAAS_ASSIGN_OR_RETURN(value, DecodeOffsetValue(*value_bytes));
          value->log_offset = offset;
        }
        ApplyRecord(*key, std::move(value));
        return absl::OkStatus();
      });
}

void GroupCoordinator::Impl::ApplyRecord(const DecodedKey& key,
                                         std::optional<Committed> value) {
  if (!value.has_value()) {
    auto it = offsets_.find(key.group);
    if (it != offsets_.end()) it->second.erase({key.topic, key.partition});
    return;
  }
  // A group with offsets exists (Empty) as in Kafka, so ListGroups shows it.
  Group& group = groups_[key.group];
  group.id = key.group;
  offsets_[key.group][{key.topic, key.partition}] = *std::move(value);
}

// ---- Membership helpers -----------------------------------------------------

std::string GroupCoordinator::Impl::NewMemberId(absl::string_view client_id) {
  const uint64_t hi = absl::Uniform<uint64_t>(random_);
  const uint64_t lo = absl::Uniform<uint64_t>(random_);
  return absl::StrFormat("%s-%08x-%04x-%04x-%04x-%012x", client_id, hi >> 32,
                         (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48,
                         lo & 0xffffffffffffULL);
}

bool GroupCoordinator::Impl::SupportsProtocols(
    const Group& group, absl::string_view exclude_member,
    const JoinGroupRequest& request) const {
  if (request.protocol_type.empty() || request.protocols.empty()) return false;
  bool others = false;
  for (const Member& m : group.members) {
    if (m.id != exclude_member) others = true;
  }
  if (!others) return true;
  if (request.protocol_type != group.protocol_type) return false;
  for (const JoinGroupProtocol& p : request.protocols) {
    bool everyone = true;
    for (const Member& m : group.members) {
      if (m.id != exclude_member && !m.Supports(p.name)) everyone = false;
    }
    if (everyone) return true;
  }
  return false;
}

void GroupCoordinator::Impl::AddMember(Group& group, Member member,
                                       Completions& out) {
  if (group.leader.empty()) group.leader = member.id;
  group.members.push_back(std::move(member));
  const absl::Time now = clock_->Now();
  if (group.state == GroupState::kPreparingRebalance &&
      group.in_initial_delay) {
    // Another joiner during the initial delay: wait a delay more, bounded.
    group.initial_delay_deadline = std::min(
        now + options_.initial_rebalance_delay, group.initial_delay_limit);
  }
  if (group.state != GroupState::kPreparingRebalance) {
    PrepareRebalance(group, out);
  } else {
    group.rebalance_deadline = std::max(
        group.rebalance_deadline,
        now + absl::Milliseconds(group.members.back().rebalance_timeout_ms));
  }
  MaybeCompleteJoin(group, out);
}

void GroupCoordinator::Impl::PrepareRebalance(Group& group, Completions& out) {
  if (group.state == GroupState::kCompletingRebalance) {
    // The assignment being made is for a membership that changed.
    for (Member& m : group.members) {
      out.Sync(m.sync_done, SyncError(group_error::kRebalanceInProgress));
    }
  }
  const absl::Time now = clock_->Now();
  int32_t rebalance_timeout_ms = 0;
  for (const Member& m : group.members) {
    rebalance_timeout_ms =
        std::max(rebalance_timeout_ms, m.rebalance_timeout_ms);
  }
  if (group.state == GroupState::kEmpty) {
    group.in_initial_delay = true;
    group.initial_delay_deadline = now + options_.initial_rebalance_delay;
    group.initial_delay_limit = now + absl::Milliseconds(rebalance_timeout_ms);
  }
  group.state = GroupState::kPreparingRebalance;
  group.rebalance_deadline = now + absl::Milliseconds(rebalance_timeout_ms);
}

void GroupCoordinator::Impl::MaybeCompleteJoin(Group& group, Completions& out) {
  if (group.state != GroupState::kPreparingRebalance) return;
  const absl::Time now = clock_->Now();
  if (group.in_initial_delay && now < group.initial_delay_deadline) return;
  bool all_joined = group.pending_members.empty();
  for (const Member& m : group.members) {
    if (!m.join_done) all_joined = false;
  }
  if (!all_joined) {
    if (now < group.rebalance_deadline) return;
    // The rebalance timed out: who did not rejoin is out.
    std::vector<std::string> late;
    for (const Member& m : group.members) {
      if (!m.join_done) late.push_back(m.id);
    }
    for (const std::string& id : late) RemoveMember(group, id, out);
    group.pending_members.clear();
  }
  CompleteJoin(group, out);
}

JoinGroupResponse GroupCoordinator::Impl::CurrentGeneration(
    const Group& group, const Member& member) const {
  JoinGroupResponse response;
  response.generation_id = group.generation;
  response.protocol_name = group.protocol;
  response.leader = group.leader;
  response.member_id = member.id;
  if (member.id == group.leader) {
    for (const Member& m : group.members) {
      JoinGroupMember& listed = response.members.emplace_back();
      listed.member_id = m.id;
      const std::string* metadata = m.Metadata(group.protocol);
      if (metadata != nullptr) listed.metadata = *metadata;
    }
  }
  return response;
}

void GroupCoordinator::Impl::CompleteJoin(Group& group, Completions& out) {
  group.in_initial_delay = false;
  group.rebalance_deadline = absl::InfiniteFuture();
  ++group.generation;
  if (group.members.empty()) {
    group.state = GroupState::kEmpty;
    group.protocol.clear();
    group.leader.clear();
    return;
  }
  // Kafka's selectProtocol: among the protocols every member supports, each
  // member votes for its most preferred; most votes wins (ties: the
  // leader's preference order).
  if (group.Find(group.leader) == nullptr) group.leader = group.members[0].id;
  const Member& leader = *group.Find(group.leader);
  std::vector<std::string> candidates;
  for (const JoinGroupProtocol& p : leader.protocols) {
    bool everyone = true;
    for (const Member& m : group.members) everyone &= m.Supports(p.name);
    if (everyone) candidates.push_back(p.name);
  }
  std::string chosen;
  int best_votes = -1;
  for (const std::string& candidate : candidates) {
    int votes = 0;
    for (const Member& m : group.members) {
      for (const JoinGroupProtocol& p : m.protocols) {
        if (std::find(candidates.begin(), candidates.end(), p.name) !=
            candidates.end()) {
          if (p.name == candidate) ++votes;
          break;
        }
      }
    }
    if (votes > best_votes) {
      best_votes = votes;
      chosen = candidate;
    }
  }
  // Joins were admitted only with a protocol all members support, so there
  // is a candidate.
  group.protocol = chosen;
  group.state = GroupState::kCompletingRebalance;
  const absl::Time now = clock_->Now();
  for (Member& m : group.members) {
    m.assignment.clear();
    m.last_heartbeat = now;
    out.Join(m.join_done, CurrentGeneration(group, m));
  }
}

void GroupCoordinator::Impl::RemoveMember(Group& group,
                                          absl::string_view member_id,
                                          Completions& out) {
  auto it = std::find_if(group.members.begin(), group.members.end(),
                         [&](const Member& m) { return m.id == member_id; });
  if (it == group.members.end()) return;
  out.Join(it->join_done, JoinError(group_error::kUnknownMemberId));
  out.Sync(it->sync_done, SyncError(group_error::kUnknownMemberId));
  group.members.erase(it);
  if (group.leader == member_id) {
    group.leader.clear();
    // Prefer a member already rejoined, as Kafka does.
    for (const Member& m : group.members) {
      if (m.join_done) {
        group.leader = m.id;
        break;
      }
    }
    if (group.leader.empty() && !group.members.empty()) {
      group.leader = group.members[0].id;
    }
  }
  switch (group.state) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      PrepareRebalance(group, out);
      break;
    default:
      break;
  }
}

void GroupCoordinator::Impl::ExpireMembers(Group& group, absl::Time now,
                                           Completions& out) {
  for (auto it = group.pending_members.begin();
       it != group.pending_members.end();) {
    if (it->second <= now) {
      group.pending_members.erase(it++);
    } else {
      ++it;
    }
  }
  std::vector<std::string> expired;
  for (const Member& m : group.members) {
    if (m.join_done || m.sync_done) continue;
    if (m.last_heartbeat + absl::Milliseconds(m.session_timeout_ms) <= now) {
      expired.push_back(m.id);
    }
  }
  for (const std::string& id : expired) RemoveMember(group, id, out);
  MaybeCompleteJoin(group, out);
}

// ---- Requests ---------------------------------------------------------------

void GroupCoordinator::Impl::JoinGroup(const JoinGroupRequest& request,
                                       int16_t version,
                                       absl::string_view client_id,
                                       absl::string_view client_host,
                                       JoinCallback done) {
  Completions out;
  {
    absl::MutexLock lock(&mu_);
    int16_t error = group_error::kNone;
    if (shut_down_) {
      error = group_error::kNotCoordinator;
    } else if (request.group_instance_id.has_value()) {
      error = group_error::kUnsupportedVersion;  // static membership
    } else if (request.group_id.empty()) {
      error = group_error::kInvalidGroupId;
    } else if (request.session_timeout_ms < options_.min_session_timeout_ms ||
               request.session_timeout_ms > options_.max_session_timeout_ms) {
      error = group_error::kInvalidSessionTimeout;
    }
    auto found = groups_.find(request.group_id);
    if (error == group_error::kNone && found == groups_.end() &&
        !request.member_id.empty()) {
      error = group_error::kUnknownMemberId;
    }
    if (error != group_error::kNone) {
      out.Join(done, JoinError(error, request.member_id));
    } else {
      Group& group = groups_[request.group_id];
      group.id = request.group_id;
      const absl::Time now = clock_->Now();
      Member* existing = group.Find(request.member_id);
      const bool pending = group.pending_members.contains(request.member_id);
      if (!request.member_id.empty() && existing == nullptr && !pending) {
        out.Join(done,
                 JoinError(group_error::kUnknownMemberId, request.member_id));
      } else if (!SupportsProtocols(group, request.member_id, request)) {
        out.Join(done, JoinError(group_error::kInconsistentGroupProtocol,
                                 request.member_id));
      } else if (request.member_id.empty() && version >= 4) {
        // KIP-394: the client must come back with this id, so that a
        // client that never does leaves no member behind.
        const std::string id = NewMemberId(client_id);
        group.pending_members[id] =
            now + absl::Milliseconds(request.session_timeout_ms);
        out.Join(done, JoinError(group_error::kMemberIdRequired, id));
      } else if (existing == nullptr) {
        Member member;
        member.id = request.member_id.empty() ? NewMemberId(client_id)
                                              : request.member_id;
        group.pending_members.erase(member.id);
        member.client_id = std::string(client_id);
        member.client_host = std::string(client_host);
        member.session_timeout_ms = request.session_timeout_ms;
        member.rebalance_timeout_ms = request.rebalance_timeout_ms;
        member.protocols = request.protocols;
        member.last_heartbeat = now;
        member.join_done = std::move(done);
        if (group.members.empty()) group.protocol_type = request.protocol_type;
        AddMember(group, std::move(member), out);
      } else {
        Member& member = *existing;
        member.session_timeout_ms = request.session_timeout_ms;
        member.rebalance_timeout_ms = request.rebalance_timeout_ms;
        member.last_heartbeat = now;
        const bool same_protocols = [&] {
          if (member.protocols.size() != request.protocols.size()) return false;
          for (size_t i = 0; i < member.protocols.size(); ++i) {
            if (member.protocols[i].name != request.protocols[i].name ||
                member.protocols[i].metadata != request.protocols[i].metadata) {
              return false;
            }
          }
          return true;
        }();
        switch (group.state) {
          case GroupState::kPreparingRebalance:
            // A second JoinGroup while the first waits: the newer wins.
            out.Join(member.join_done,
                     JoinError(group_error::kRebalanceInProgress, member.id));
            member.protocols = request.protocols;
            member.join_done = std::move(done);
            MaybeCompleteJoin(group, out);
            break;
          case GroupState::kCompletingRebalance:
          case GroupState::kStable:
            if (same_protocols &&
                (group.state == GroupState::kCompletingRebalance ||
                 member.id != group.leader)) {
              // Nothing changed: the response it missed.
              out.Join(done, CurrentGeneration(group, member));
            } else {
              member.protocols = request.protocols;
              member.join_done = std::move(done);
              PrepareRebalance(group, out);
              MaybeCompleteJoin(group, out);
            }
            break;
          case GroupState::kEmpty:
          case GroupState::kDead:
            out.Join(done, JoinError(group_error::kUnknownMemberId,
                                     request.member_id));
            break;
        }
      }
    }
  }
  out.Run();
}

void GroupCoordinator::Impl::SyncGroup(const SyncGroupRequest& request,
                                       SyncCallback done) {
  Completions out;
  {
    absl::MutexLock lock(&mu_);
    auto found = groups_.find(request.group_id);
    Member* member = found == groups_.end()
                         ? nullptr
                         : found->second.Find(request.member_id);
    if (shut_down_) {
      out.Sync(done, SyncError(group_error::kNotCoordinator));
    } else if (request.group_instance_id.has_value()) {
      out.Sync(done, SyncError(group_error::kUnsupportedVersion));
    } else if (member == nullptr) {
      out.Sync(done, SyncError(group_error::kUnknownMemberId));
    } else if (request.generation_id != found->second.generation) {
      out.Sync(done, SyncError(group_error::kIllegalGeneration));
    } else {
      Group& group = found->second;
      member->last_heartbeat = clock_->Now();
      switch (group.state) {
        case GroupState::kPreparingRebalance:
          out.Sync(done, SyncError(group_error::kRebalanceInProgress));
          break;
        case GroupState::kStable: {
          SyncGroupResponse response;
          response.assignment = member->assignment;
          out.Sync(done, std::move(response));
          break;
        }
        case GroupState::kCompletingRebalance:
          out.Sync(member->sync_done,
                   SyncError(group_error::kRebalanceInProgress));
          member->sync_done = std::move(done);
          if (member->id == group.leader) {
            for (Member& m : group.members) m.assignment.clear();
            for (const SyncGroupAssignment& a : request.assignments) {
              Member* assigned = group.Find(a.member_id);
              if (assigned != nullptr) assigned->assignment = a.assignment;
            }
            group.state = GroupState::kStable;
            const absl::Time now = clock_->Now();
            for (Member& m : group.members) {
              if (!m.sync_done) continue;
              m.last_heartbeat = now;
              SyncGroupResponse response;
              response.assignment = m.assignment;
              out.Sync(m.sync_done, std::move(response));
            }
          }
          break;
        case GroupState::kEmpty:
        case GroupState::kDead:
          out.Sync(done, SyncError(group_error::kUnknownMemberId));
          break;
      }
    }
  }
  out.Run();
}

HeartbeatResponse GroupCoordinator::Impl::Heartbeat(
    const HeartbeatRequest& request) {
  HeartbeatResponse response;
  absl::MutexLock lock(&mu_);
  auto found = groups_.find(request.group_id);
  Member* member =
      found == groups_.end() ? nullptr : found->second.Find(request.member_id);
  if (shut_down_) {
    response.error_code = group_error::kNotCoordinator;
  } else if (request.group_instance_id.has_value()) {
    response.error_code = group_error::kUnsupportedVersion;
  } else if (member == nullptr) {
    response.error_code = group_error::kUnknownMemberId;
  } else if (request.generation_id != found->second.generation) {
    response.error_code = group_error::kIllegalGeneration;
  } else {
    member->last_heartbeat = clock_->Now();
    switch (found->second.state) {
      case GroupState::kPreparingRebalance:
      case GroupState::kCompletingRebalance:
        response.error_code = group_error::kRebalanceInProgress;
        break;
      case GroupState::kStable:
        break;
      case GroupState::kEmpty:
      case GroupState::kDead:
        response.error_code = group_error::kUnknownMemberId;
        break;
    }
  }
  return response;
}

LeaveGroupResponse GroupCoordinator::Impl::LeaveGroup(
    const LeaveGroupRequest& request, int16_t version) {
  LeaveGroupResponse response;
  Completions out;
  {
    absl::MutexLock lock(&mu_);
    auto found = groups_.find(request.group_id);
    for (const LeaveGroupMember& leaving : request.members) {
      LeaveGroupMemberResponse& answer = response.members.emplace_back();
      answer.member_id = leaving.member_id;
      answer.group_instance_id = leaving.group_instance_id;
      if (shut_down_) {
        answer.error_code = group_error::kNotCoordinator;
      } else if (leaving.group_instance_id.has_value()) {
        answer.error_code = group_error::kUnsupportedVersion;
      } else if (found == groups_.end() ||
                 found->second.Find(leaving.member_id) == nullptr) {
        answer.error_code = group_error::kUnknownMemberId;
      } else {
        RemoveMember(found->second, leaving.member_id, out);
        MaybeCompleteJoin(found->second, out);
      }
    }
    if (version <= 2 && !response.members.empty()) {
      response.error_code = response.members[0].error_code;
    }
  }
  out.Run();
  return response;
}

void GroupCoordinator::Impl::OffsetCommit(const OffsetCommitRequest& request,
                                          bool check_membership,
                                          CommitCallback done) {
  PendingCommit commit;
  commit.group = request.group_id;
  commit.done = std::move(done);
  std::vector<std::pair<std::string, std::optional<std::string>>> records;
  int64_t now_ms = 0;
  {
    absl::MutexLock lock(&mu_);
    now_ms = clock_->NowMillis();
    int16_t error = group_error::kNone;
    auto found = groups_.find(request.group_id);
    if (shut_down_) {
      error = group_error::kCoordinatorNotAvailable;
    } else if (request.group_instance_id.has_value()) {
      error = group_error::kUnsupportedVersion;
    } else if (request.group_id.empty()) {
      error = group_error::kInvalidGroupId;
    } else if (!check_membership) {
      groups_[request.group_id].id = request.group_id;
    } else if (found == groups_.end() ||
               found->second.state == GroupState::kEmpty) {
      // A consumer that assigns itself partitions commits with generation
      // -1 and no member; such commits make the (Empty) group exist.
      if (request.generation_id >= 0) {
        error = group_error::kUnknownMemberId;
      } else {
        groups_[request.group_id].id = request.group_id;
      }
    } else {
      Group& group = found->second;
      Member* member = group.Find(request.member_id);
      if (group.state == GroupState::kCompletingRebalance) {
        error = group_error::kRebalanceInProgress;
      } else if (member == nullptr) {
        error = group_error::kUnknownMemberId;
      } else if (request.generation_id != group.generation) {
        error = group_error::kIllegalGeneration;
      } else {
        member->last_heartbeat = clock_->Now();
      }
    }
    for (const OffsetCommitTopic& topic : request.topics) {
      OffsetCommitTopicResponse& topic_response =
          commit.response.topics.emplace_back();
      topic_response.name = topic.name;
      for (const OffsetCommitPartition& partition : topic.partitions) {
        OffsetCommitPartitionResponse& answer =
            topic_response.partitions.emplace_back();
        answer.partition_index = partition.partition_index;
        answer.error_code = error;
        if (error != group_error::kNone) continue;
        const std::string metadata =
            partition.committed_metadata.value_or(std::string());
        if (metadata.size() > options_.max_metadata_bytes) {
          answer.error_code = group_error::kOffsetMetadataTooLarge;
          continue;
        }
        Committed c;
        c.offset = partition.committed_offset;
        c.leader_epoch = partition.committed_leader_epoch;
        c.metadata = metadata;
        c.commit_timestamp = partition.commit_timestamp >= 0
                                 ? partition.commit_timestamp
                                 : now_ms;
        records.emplace_back(EncodeOffsetKey(request.group_id, topic.name,
                                             partition.partition_index),
                             EncodeOffsetValue(c));
        commit.entries.emplace_back(
            OffsetKey{topic.name, partition.partition_index}, std::move(c));
        commit.slots.emplace_back(commit.response.topics.size() - 1,
                                  topic_response.partitions.size() - 1);
      }
    }
    if (!records.empty()) ++commits_in_flight_;
  }
  if (records.empty()) {
    std::move(commit.done)(std::move(commit.response));
    return;
  }
  // Neither the append nor the durability callback (which may run inline)
  // runs under mu_: the callback takes it.
  absl::StatusOr<AppendResult> appended =
      engine_->Append(OffsetsPartition(), options_.leader_epoch, Acks::kAll,
                      BuildRecordBatch(records, now_ms));
  if (!appended.ok()) {
    FinishCommit(std::move(commit), appended.status());
    return;
  }
  const int64_t base_offset = appended->base_offset;
  auto shared = std::make_shared<PendingCommit>(std::move(commit));
  appended->durable.Then([this, shared, base_offset](const absl::Status& s) {
    if (s.ok()) {
      FinishCommit(std::move(*shared), base_offset);
    } else {
      FinishCommit(std::move(*shared), s);
    }
  });
}

void GroupCoordinator::Impl::FinishCommit(PendingCommit commit,
                                          absl::StatusOr<int64_t> base_offset) {
  {
    absl::MutexLock lock(&mu_);
    --commits_in_flight_;
    if (base_offset.ok()) {
      std::map<OffsetKey, Committed>& group_offsets = offsets_[commit.group];
      for (size_t i = 0; i < commit.entries.size(); ++i) {
        Committed& c = commit.entries[i].second;
        c.log_offset = *base_offset + static_cast<int64_t>(i);
        Committed& slot = group_offsets[commit.entries[i].first];
        // Commits racing to one key settle in log order, whatever the
        // order their callbacks run in.
        if (c.log_offset > slot.log_offset) slot = std::move(c);
      }
    }
  }
  if (!base_offset.ok()) {
    // Retriable for the client: it finds the coordinator again and retries.
    for (const auto& [t, p] : commit.slots) {
      commit.response.topics[t].partitions[p].error_code =
          group_error::kCoordinatorNotAvailable;
    }
  }
  std::move(commit.done)(std::move(commit.response));
}

OffsetFetchResponse GroupCoordinator::Impl::OffsetFetch(
    const OffsetFetchRequest& request) {
  OffsetFetchResponse response;
  absl::MutexLock lock(&mu_);
  auto found = offsets_.find(request.group_id);
  auto fill = [](OffsetFetchPartitionResponse& answer, const Committed* c) {
    if (c == nullptr) return;  // the defaults: offset -1, metadata ""
    answer.committed_offset = c->offset;
    answer.committed_leader_epoch = c->leader_epoch;
    answer.metadata = c->metadata;
  };
  if (!request.topics.has_value()) {
    if (found == offsets_.end()) return response;
    for (const auto& [key, committed] : found->second) {
      if (response.topics.empty() || response.topics.back().name != key.first) {
        response.topics.emplace_back().name = key.first;
      }
      OffsetFetchPartitionResponse& answer =
          response.topics.back().partitions.emplace_back();
      answer.partition_index = key.second;
      fill(answer, &committed);
    }
    return response;
  }
  for (const OffsetFetchTopic& topic : *request.topics) {
    OffsetFetchTopicResponse& topic_response = response.topics.emplace_back();
    topic_response.name = topic.name;
    for (int32_t partition : topic.partition_indexes) {
      OffsetFetchPartitionResponse& answer =
          topic_response.partitions.emplace_back();
      answer.partition_index = partition;
      const Committed* c = nullptr;
      if (found != offsets_.end()) {
        auto it = found->second.find({topic.name, partition});
        if (it != found->second.end()) c = &it->second;
      }
      fill(answer, c);
    }
  }
  return response;
}

ListGroupsResponse GroupCoordinator::Impl::ListGroups() {
  ListGroupsResponse response;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, group] : groups_) {
    ListedGroup& listed = response.groups.emplace_back();
    listed.group_id = id;
    listed.protocol_type = group.protocol_type;
  }
  return response;
}

DescribeGroupsResponse GroupCoordinator::Impl::DescribeGroups(
    const DescribeGroupsRequest& request) {
  DescribeGroupsResponse response;
  absl::MutexLock lock(&mu_);
  for (const std::string& id : request.groups) {
    DescribedGroup& described = response.groups.emplace_back();
    described.group_id = id;
    auto found = groups_.find(id);
    if (found == groups_.end()) {
      // Kafka describes an unknown group as Dead, without an error.
      described.group_state = std::string(StateName(GroupState::kDead));
      continue;
    }
    const Group& group = found->second;
    described.group_state = std::string(StateName(group.state));
    described.protocol_type = group.protocol_type;
    const bool stable = group.state == GroupState::kStable;
    // As Kafka: the protocol, metadata and assignments only once Stable.
    if (stable) described.protocol_data = group.protocol;
    for (const Member& m : group.members) {
      DescribedGroupMember& dm = described.members.emplace_back();
      dm.member_id = m.id;
      dm.client_id = m.client_id;
      dm.client_host = m.client_host;
      if (stable) {
        const std::string* metadata = m.Metadata(group.protocol);
        if (metadata != nullptr) dm.member_metadata = *metadata;
        dm.member_assignment = m.assignment;
      }
    }
  }
  return response;
}

void GroupCoordinator::Impl::Tick() {
  Completions out;
  {
    absl::MutexLock lock(&mu_);
    const absl::Time now = clock_->Now();
    for (auto& [id, group] : groups_) ExpireMembers(group, now, out);
  }
  out.Run();
}

absl::Time GroupCoordinator::Impl::NextDeadline() {
  absl::MutexLock lock(&mu_);
  absl::Time next = absl::InfiniteFuture();
  for (const auto& [id, group] : groups_) {
    for (const auto& [member_id, expiry] : group.pending_members) {
      next = std::min(next, expiry);
    }
    for (const Member& m : group.members) {
      if (m.join_done || m.sync_done) continue;
      next = std::min(
          next, m.last_heartbeat + absl::Milliseconds(m.session_timeout_ms));
    }
    if (group.state == GroupState::kPreparingRebalance) {
      next = std::min(next, group.rebalance_deadline);
      if (group.in_initial_delay) {
        next = std::min(next, group.initial_delay_deadline);
      }
    }
  }
  return next;
}

void GroupCoordinator::Impl::Shutdown() {
  Completions out;
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (auto& [id, group] : groups_) {
      for (Member& m : group.members) {
        out.Join(m.join_done, JoinError(group_error::kNotCoordinator, m.id));
        out.Sync(m.sync_done, SyncError(group_error::kNotCoordinator));
      }
    }
  }
  out.Run();
}

// ---- GroupCoordinator -------------------------------------------------------

FindCoordinatorResponse AnswerFindCoordinator(
    const FindCoordinatorRequest& request, int32_t node_id,
    absl::string_view host, int32_t port) {
  FindCoordinatorResponse response;
  if (request.key_type != 0 && request.key_type != 1) {
    response.error_code = group_error::kInvalidRequest;
    response.error_message = "unknown coordinator key type";
  } else if (request.key.empty()) {
    response.error_code = request.key_type == 0 ? group_error::kInvalidGroupId
                                                : group_error::kInvalidRequest;
  } else {
    response.node_id = node_id;
    response.host = std::string(host);
    response.port = port;
  }
  return response;
}

absl::StatusOr<std::unique_ptr<GroupCoordinator>> GroupCoordinator::Create(
    StorageEngine* engine, GroupCoordinatorOptions options) {
  auto impl = std::make_unique<Impl>(engine, std::move(options));
  KAAS_RETURN_IF_ERROR(impl->Recover());
  return std::unique_ptr<GroupCoordinator>(
      new GroupCoordinator(std::move(impl)));
}

GroupCoordinator::GroupCoordinator(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

GroupCoordinator::~GroupCoordinator() = default;

void GroupCoordinator::JoinGroup(const JoinGroupRequest& request,
                                 int16_t version, absl::string_view client_id,
                                 absl::string_view client_host,
                                 JoinCallback done) {
  impl_->JoinGroup(request, version, client_id, client_host, std::move(done));
}

void GroupCoordinator::SyncGroup(const SyncGroupRequest& request,
                                 SyncCallback done) {
  impl_->SyncGroup(request, std::move(done));
}

HeartbeatResponse GroupCoordinator::Heartbeat(const HeartbeatRequest& request) {
  return impl_->Heartbeat(request);
}

LeaveGroupResponse GroupCoordinator::LeaveGroup(
    const LeaveGroupRequest& request, int16_t version) {
  return impl_->LeaveGroup(request, version);
}

void GroupCoordinator::OffsetCommit(const OffsetCommitRequest& request,
                                    CommitCallback done) {
  impl_->OffsetCommit(request, /*check_membership=*/true, std::move(done));
}

void GroupCoordinator::CommitTransactionalOffsets(
    const OffsetCommitRequest& request, CommitCallback done) {
  impl_->OffsetCommit(request, /*check_membership=*/false, std::move(done));
}

OffsetFetchResponse GroupCoordinator::OffsetFetch(
    const OffsetFetchRequest& request) {
  return impl_->OffsetFetch(request);
}

ListGroupsResponse GroupCoordinator::ListGroups() {
  return impl_->ListGroups();
}

DescribeGroupsResponse GroupCoordinator::DescribeGroups(
    const DescribeGroupsRequest& request) {
  return impl_->DescribeGroups(request);
}

void GroupCoordinator::Tick() { impl_->Tick(); }

absl::Time GroupCoordinator::NextDeadline() { return impl_->NextDeadline(); }

void GroupCoordinator::Shutdown() { impl_->Shutdown(); }

}  // namespace kaas::broker
