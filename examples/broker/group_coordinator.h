// File: examples/broker/group_coordinator.h
//
// The consumer group coordinator of kaas-broker: Kafka's classic group
// protocol (GroupCoordinator / GroupMetadata) for a single broker, which
// coordinates every group.
//
// Membership. Each group moves through Empty -> PreparingRebalance ->
// CompletingRebalance -> Stable (and back to PreparingRebalance when a
// member joins, leaves, changes its protocols or times out). A rebalance
// completes when every known member has rejoined, or when the largest
// rebalance timeout of the members passes (members that did not rejoin are
// removed); the first rebalance of an Empty group also waits
// `initial_rebalance_delay` (group.initial.rebalance.delay.ms) so that a
// fleet starting together lands in one generation. The coordinator picks the
// protocol every member supports, by the members' preference order, bumps
// the generation, and makes the first member to join the leader (kept while
// it stays); the leader's JoinGroup response lists the members with their
// metadata, and its SyncGroup distributes the assignments. Member ids are
// generated here (client_id + "-" + a random suffix); JoinGroup v4+ with an
// empty member id is answered MEMBER_ID_REQUIRED with the new id (KIP-394).
// Membership is in memory only: after a restart every consumer rejoins
// (UNKNOWN_MEMBER_ID) and the group rebalances, which Kafka clients handle;
// Kafka persists it, but nothing a consumer relies on is lost. Static
// membership (group.instance.id, KIP-345) is not supported: a request
// carrying one is answered UNSUPPORTED_VERSION (clients then fall back or
// fail loudly rather than being half-served).
//
// Committed offsets are durable: OffsetCommit appends one RecordBatch with a
// record per partition to the internal topic `__consumer_offsets`,
// partition 0, with acks=all, and answers once the batch is durable. The
// record layout is Kafka's own (OffsetCommitKey v1, OffsetCommitValue v3;
// group_coordinator.cc documents it), so tools that read Kafka's offsets
// topic read this one; a tombstone (null value) deletes the key. Create()
// recovers the latest commit per key by reading the topic from its log
// start (later records win). Offsets are never expired.
//
// Time. Session timeouts, rebalance timeouts and the initial delay are
// measured on the injected Clock; nothing happens on its own: the broker
// calls Tick() from a timer (an Asio steady_timer every 100 ms-1 s, or at
// NextDeadline()), and tests advance a ManualClock and call Tick().
//
// Threads. Every method may be called from any thread, concurrently; none
// blocks on another request (Create() and the destructor do blocking engine
// I/O). Callbacks are never run with the coordinator's lock held, so they
// may call back into it:
//   * JoinGroup / SyncGroup callbacks run on the thread of whichever call
//     completes the rebalance: the request's own call, another member's
//     JoinGroup / SyncGroup / LeaveGroup / Heartbeat, Tick(), or Shutdown();
//   * OffsetCommit callbacks run on the engine thread that settles the
//     append's durability (an I/O thread) or on the caller's thread.
// Each callback is called exactly once.
//
// Errors. Requests are answered with Kafka error codes (group_messages.h
// group_error) inside the responses; the methods themselves do not fail.
// After Shutdown(), JoinGroup / SyncGroup answer NOT_COORDINATOR and
// OffsetCommit COORDINATOR_NOT_AVAILABLE.

#ifndef KAAS_EXAMPLES_BROKER_GROUP_COORDINATOR_H_
#define KAAS_EXAMPLES_BROKER_GROUP_COORDINATOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "examples/broker/group_messages.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {

inline constexpr absl::string_view kConsumerOffsetsTopic = "__consumer_offsets";

struct GroupCoordinatorOptions {
  // The epoch `__consumer_offsets` is led and appended at (the broker's).
  int64_t leader_epoch = 1;
  // group.initial.rebalance.delay.ms.
  absl::Duration initial_rebalance_delay = absl::Milliseconds(3000);
  // group.min.session.timeout.ms / group.max.session.timeout.ms: a JoinGroup
  // outside them is answered INVALID_SESSION_TIMEOUT.
  int32_t min_session_timeout_ms = 6000;
  int32_t max_session_timeout_ms = 1800000;
  // offset.metadata.max.bytes: a longer commit metadata is answered
  // OFFSET_METADATA_TOO_LARGE.
  size_t max_metadata_bytes = 4096;
  // Not owned; must outlive the coordinator. Default: the real clock.
  Clock* clock = nullptr;
};

// FindCoordinator (0-2) on a single broker: this broker coordinates every
// group (key_type 0) and every transactional id (key_type 1,
// txn_coordinator.h); other key types are INVALID_REQUEST, as Kafka; an
// empty group id INVALID_GROUP_ID, an empty transactional id
// INVALID_REQUEST.
FindCoordinatorResponse AnswerFindCoordinator(
    const FindCoordinatorRequest& request, int32_t node_id,
    absl::string_view host, int32_t port);

class GroupCoordinator {
 public:
  using JoinCallback = absl::AnyInvocable<void(JoinGroupResponse) &&>;
  using SyncCallback = absl::AnyInvocable<void(SyncGroupResponse) &&>;
  using CommitCallback = absl::AnyInvocable<void(OffsetCommitResponse) &&>;

  // Creates `__consumer_offsets` partition 0 if needed, leads it at
  // options.leader_epoch (TakeOver) and recovers the committed offsets.
  // `engine` is not owned and must outlive the coordinator. Blocking.
  // Errors: the engine's (CreatePartition, TakeOver, Read), kDataLoss for a
  // record of the topic that does not decode.
  static absl::StatusOr<std::unique_ptr<GroupCoordinator>> Create(
      StorageEngine* engine, GroupCoordinatorOptions options);

  // Shutdown(), then waits for the commits in flight (their durability
  // callbacks point at the coordinator), so destroy it before the engine is
  // drained or destroyed. Does not relinquish the offsets partition (the
  // broker's engine Drain does).
  ~GroupCoordinator();

  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // JoinGroup of `version` (0-5). `client_id` (the request header's) and
  // `client_host` (the peer address) name the member in DescribeGroups and
  // in its generated id. `done` runs when the rebalance completes (or at
  // once for an error or MEMBER_ID_REQUIRED).
  void JoinGroup(const JoinGroupRequest& request, int16_t version,
                 absl::string_view client_id, absl::string_view client_host,
                 JoinCallback done);

  // SyncGroup (0-3): the leader's call stores the assignments and answers
  // every member waiting; a follower's waits for it (or answers at once in
  // Stable).
  void SyncGroup(const SyncGroupRequest& request, SyncCallback done);

  // Heartbeat (0-3): answered at once.
  HeartbeatResponse Heartbeat(const HeartbeatRequest& request);

  // LeaveGroup of `version` (0-3): every listed member leaves. v0-2 answer
  // the (one) member's error as the top-level error_code; v3 answers it per
  // member in `members`.
  LeaveGroupResponse LeaveGroup(const LeaveGroupRequest& request,
                                int16_t version);

  // OffsetCommit (0-7). `done` runs once the commit is durable (or failed).
  void OffsetCommit(const OffsetCommitRequest& request, CommitCallback done);

  // The offsets of a committed transaction (TxnOffsetCommit, handed over by
  // the transaction coordinator at EndTxn): as OffsetCommit but without the
  // generation and member checks, which do not apply to a producer (the
  // transaction coordinator validated its id and epoch instead).
  void CommitTransactionalOffsets(const OffsetCommitRequest& request,
                                  CommitCallback done);

  // OffsetFetch (0-5): what the last durable commits say; -1 for a
  // partition (or group) with none.
  OffsetFetchResponse OffsetFetch(const OffsetFetchRequest& request);

  ListGroupsResponse ListGroups();
  DescribeGroupsResponse DescribeGroups(const DescribeGroupsRequest& request);

  // Expires members whose session timed out and completes rebalances whose
  // delay or timeout passed, running the callbacks this completes on the
  // calling thread. Call it periodically (or at NextDeadline()).
  void Tick();

  // The earliest time Tick() has something to do; InfiniteFuture() if none.
  absl::Time NextDeadline();

  // Answers every waiting JoinGroup / SyncGroup with NOT_COORDINATOR and
  // refuses new ones. Commits in flight still complete. Idempotent.
  void Shutdown();

 private:
  class Impl;
  explicit GroupCoordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_GROUP_COORDINATOR_H_
