// File: examples/broker/broker_impl.h
//
// Internal to the broker (broker.h): the class behind Broker, shared by
// broker.cc (dispatch, sessions, topics, Metadata), broker_data.cc
// (Produce, Fetch, ListOffsets), broker_admin.cc (CreateTopics,
// DeleteTopics, DeleteRecords, InitProducerId, OffsetForLeaderEpoch),
// broker_groups.cc (consumer groups) and broker_txn.cc (transactions).
//
// Threads: every handler runs on the handler pool (pool_), one request of a
// session at a time; completions (durability, timers) run on engine I/O
// threads or the pool. Shared state is guarded by mu_ (topics_,
// fetch_waiters_, stopping_) or by each pending request's own mutex.

#ifndef KAAS_EXAMPLES_BROKER_BROKER_IMPL_H_
#define KAAS_EXAMPLES_BROKER_BROKER_IMPL_H_

#include <algorithm>
#include <asio.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "examples/broker/broker.h"
#include "examples/broker/group_coordinator.h"
#include "examples/broker/messages.h"
#include "examples/broker/producer_ids.h"
#include "examples/broker/request_header.h"
#include "examples/broker/txn_coordinator.h"
#include "examples/broker/wire.h"
#include "storage/common/api_types.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {
namespace broker_internal {

// Kafka's error code for an engine status (0 for OK).
int16_t ErrorCodeOf(const absl::Status& status);
Isolation IsolationOf(int8_t isolation_level);
// A whole response frame: header for `header` at `version`, then `body`.
ResponseFrame Frame(const RequestHeader& header, int16_t version,
                    absl::FunctionRef<void(WireWriter&)> body);

}  // namespace broker_internal

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
      if (group_ticker_ != nullptr) group_ticker_->cancel();
    }
    if (groups_ != nullptr) groups_->Shutdown();
    WakeAllFetches();
    pool_.join();
    txns_.reset();    // before groups_, to which it hands offsets
    groups_.reset();  // waits for commits in flight (none: the pool is idle)
  }

  // Leads `existing`, then starts the group and transaction coordinators
  // and their ticker.
  absl::Status StartAll(const std::vector<TopicPartition>& existing);
  absl::Status Start(const std::vector<TopicPartition>& existing);

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

    void Reply(absl::StatusOr<std::optional<ResponseFrame>> response) {
      std::move(respond)(std::move(response));
    }
  };
  using RequestPtr = std::shared_ptr<Request>;

  void Dispatch(const RequestPtr& request);

  // ---- Topics
  // ----------------------------------------------------------------

  // The partition count of `topic`, creating it if allowed; 0 if unknown.
  // Sets *error to the Kafka error for a topic that cannot be served.
  int32_t PartitionsOf(const std::string& topic, bool may_create,
                       int16_t* error);

  // Creates `topic` with `partitions` partitions and leads them; returns
  // the partition count (the existing one if it exists: see *error).
  // `overrides`, when set, become the topic's config first (an explicit
  // CreateTopics sets them, `{}` included, so a recreated topic never
  // inherits its predecessor's; auto-creation leaves the config as it is).
  // *message, if not null, gets the reason of a refused config. Creation is
  // serialised, outside the map's lock: it syncs directories.
  int32_t CreateTopic(const std::string& topic, int32_t partitions,
                      const std::optional<TopicConfigOverrides>& overrides,
                      int16_t* error, std::string* message = nullptr);

  // Kafka's error for a partition of a topic, or none.
  int16_t PartitionError(const std::string& topic, int32_t partition,
                         bool may_create);

  // ---- Consumer groups (broker_groups.cc) --------------------------------

  // Creates the coordinator (recovering __consumer_offsets). StartAll
  // starts the ticker (ScheduleGroupTick) once both coordinators exist.
  absl::Status StartGroups();
  void ScheduleGroupTick() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Handles a consumer-group API; false if `api_key` is not one.
  bool HandleGroupApi(const RequestPtr& request, WireReader& reader,
                      absl::Status* status);

  // ---- Transactions (broker_txn.cc) ----------------------------------------

  // Creates the transaction coordinator (recovering __transaction_state and
  // finishing interrupted transactions). After StartGroups: it hands
  // committed offsets to groups_. Its Tick runs from the group ticker.
  absl::Status StartTxns();
  // Handles a transaction API; false if `api_key` is not one.
  bool HandleTxnApi(const RequestPtr& request, WireReader& reader,
                    absl::Status* status);

  // ---- Metadata
  // ----------------------------------------------------------------

  absl::Status HandleMetadata(const RequestPtr& request, WireReader& reader);

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

  absl::Status HandleProduce(const RequestPtr& request, WireReader& reader);

  // The partitions not durable yet when timeout_ms passed.
  static void MarkTimedOut(PendingProduce& pending);

  void AnswerProduce(const std::shared_ptr<PendingProduce>& pending);

  // ---- Fetch
  // ----------------------------------------------------------------------

  struct PendingFetch {
    RequestPtr request;
    FetchRequest fetch;
    absl::Mutex mu;
    std::unique_ptr<asio::steady_timer> timer ABSL_GUARDED_BY(mu);
    bool answered ABSL_GUARDED_BY(mu) = false;
  };

  absl::Status HandleFetch(const RequestPtr& request, WireReader& reader);

  // Reads every partition of the request, at most max_bytes in all (the
  // first batch whole).
  FetchResponse ReadFetch(const FetchRequest& fetch, int64_t* bytes,
                          bool* errors);

  void FillOffsets(const TopicPartition& tp, FetchPartitionResponse* out);

  void AnswerFetch(const std::shared_ptr<PendingFetch>& pending,
                   const FetchResponse& response);

  bool Answered(const std::shared_ptr<PendingFetch>& pending);

  // Whether the broker is being destroyed (waiting fetches answer at once).
  bool Stopping();

  // Appends to `tp` became durable (visible): wake the fetches waiting on
  // it, which read again on the pool.
  void NotifyAppended(const TopicPartition& tp);

  // Registers the fetch with its partitions' waiters, then reads: an append
  // that became durable before the registration woke nobody, so the read
  // comes after it. Answers if there is enough to answer now; otherwise the
  // next durable append to one of its partitions (or its timer) does.
  void WaitForAppends(const std::shared_ptr<PendingFetch>& pending);

  void WakeAllFetches();

  // ---- ListOffsets
  // --------------------------------------------------------------

  absl::Status HandleListOffsets(const RequestPtr& request, WireReader& reader);

  // ---- CreateTopics, DeleteTopics -------------------------------------------

  absl::Status HandleCreateTopics(const RequestPtr& request,
                                  WireReader& reader);

  bool AssignmentsValid(const CreatableTopic& topic, int32_t partitions);

  absl::Status HandleDeleteTopics(const RequestPtr& request,
                                  WireReader& reader);

  // ---- DeleteRecords
  // ----------------------------------------------------------

  absl::Status HandleDeleteRecords(const RequestPtr& request,
                                   WireReader& reader);

  // ---- InitProducerId
  // -----------------------------------------------------------

  absl::Status HandleInitProducerId(const RequestPtr& request,
                                    WireReader& reader);

  // ---- OffsetForLeaderEpoch
  // -------------------------------------------------------

  absl::Status HandleOffsetForLeaderEpoch(const RequestPtr& request,
                                          WireReader& reader);

  StorageEngine& engine_;
  const BrokerConfig config_;
  ProducerIdAllocator producer_ids_;
  std::unique_ptr<GroupCoordinator> groups_;  // set by Start
  std::unique_ptr<TxnCoordinator> txns_;      // set by Start, after groups_
  asio::thread_pool pool_;
  absl::Mutex create_mu_;
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(create_mu_);
  absl::flat_hash_map<std::string, int32_t> topics_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<TopicPartition,
                      std::vector<std::shared_ptr<PendingFetch>>>
      fetch_waiters_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Drives the coordinator's timeouts (GroupCoordinator::Tick).
  std::unique_ptr<asio::steady_timer> group_ticker_ ABSL_GUARDED_BY(mu_);
};

// A connection's queue of requests, handled one at a time on the pool. Holds
// no Asio object, so a connection may outlive the broker.
class Broker::Session {
 public:
  absl::Mutex mu;
  std::deque<std::shared_ptr<Impl::Request>> queue ABSL_GUARDED_BY(mu);
  bool running ABSL_GUARDED_BY(mu) = false;  // a pool thread drains queue
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_BROKER_IMPL_H_
