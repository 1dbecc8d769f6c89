// File: examples/broker/txn_coordinator.h
//
// The transaction coordinator of kaas-broker (KIP-98) for a single broker,
// which coordinates every transactional.id.
//
// Producers. InitProducerId with a transactional.id maps it to a producer
// id (from the broker's ProducerIdAllocator, so never one handed out
// before) and an epoch. Re-initialising the same id bumps the epoch (a new
// producer id once the epoch is exhausted) and fences the old epoch in the
// engine (FenceProducerEpoch), so a zombie's produce fails with
// INVALID_PRODUCER_EPOCH; a transaction the old producer left ongoing is
// aborted first.
//
// Transactions. AddPartitionsToTxn and AddOffsetsToTxn start (Ongoing) and
// grow a transaction; TxnOffsetCommit stages a group's offsets in memory;
// EndTxn commits or aborts: the state goes PrepareCommit/PrepareAbort
// (durable), the staged offsets are handed to `commit_offsets` (commit
// only), a COMMIT or ABORT marker (internal_batches.h) is appended with
// acks=all to every partition of the transaction, and the state goes
// CompleteCommit/CompleteAbort (durable) before EndTxn is answered. A
// transaction Ongoing for longer than its transaction_timeout_ms is aborted
// by Tick() with a bumped epoch, which fences the producer (as Kafka does).
//
// Durability. Every state change is appended (acks=all, waited for) to the
// internal topic `__transaction_state`, partition 0, before it is acted on
// or answered, in Kafka's TransactionLogKey v0 / TransactionLogValue v0
// layout (txn_coordinator.cc; a PrepareCommit with staged offsets writes a
// value v1, v0 followed by the offsets). Create() replays the topic (the
// latest record per id wins) and finishes what a crash interrupted: Ongoing
// and PrepareAbort transactions are aborted (Ongoing ones with a bumped
// epoch), PrepareCommit ones are committed, their offsets handed over. A
// crash while Ongoing loses the staged offsets with the transaction, which
// is aborted.
//
// Errors. Requests are answered with Kafka error codes (txn_messages.h
// txn_error) in the responses: INVALID_PRODUCER_ID_MAPPING (unknown id or
// wrong producer id), INVALID_PRODUCER_EPOCH (an older or newer epoch: the
// producer was fenced), CONCURRENT_TRANSACTIONS (another request of the id
// is writing state; retriable), INVALID_TXN_STATE, UNKNOWN_TOPIC_OR_PARTITION
// (per partition; the others OPERATION_NOT_ATTEMPTED),
// INVALID_TRANSACTION_TIMEOUT, COORDINATOR_NOT_AVAILABLE (an engine write
// failed; retriable, the state stays where it was made durable and a retry
// or Tick() finishes it).
//
// Threads. Every method may be called from any thread, concurrently.
// InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, Tick and
// Create block on engine appends (call them from a handler thread, never an
// event loop or an engine I/O thread). Requests for one transactional.id
// never overlap a state write: a second one meanwhile gets
// CONCURRENT_TRANSACTIONS. The callbacks in the options are called without
// the coordinator's lock held.

#ifndef KAAS_EXAMPLES_BROKER_TXN_COORDINATOR_H_
#define KAAS_EXAMPLES_BROKER_TXN_COORDINATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/clock.h"
#include "examples/broker/messages.h"
#include "examples/broker/producer_ids.h"
#include "examples/broker/txn_messages.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {

inline constexpr absl::string_view kTransactionStateTopic =
    "__transaction_state";

struct TxnCoordinatorOptions {
  // The epoch `__transaction_state` and the data partitions are led at (the
  // broker's); also the markers' coordinator epoch.
  int64_t leader_epoch = 1;
  // transaction.max.timeout.ms: a longer transaction_timeout_ms is answered
  // INVALID_TRANSACTION_TIMEOUT.
  int32_t max_transaction_timeout_ms = 900000;
  // Not owned; must outlive the coordinator. Default: the real clock.
  Clock* clock = nullptr;
  // Kafka's error for a data partition that cannot join a transaction
  // (UNKNOWN_TOPIC_OR_PARTITION), 0 if it can. Also consulted before a
  // marker is written: a partition deleted since is skipped. Default: every
  // partition can.
  std::function<int16_t(const std::string& topic, int32_t partition)>
      partition_error;
  // Commits a committed transaction's offsets of `group`, durably (blocking).
  // Default: none are kept.
  std::function<absl::Status(const std::string& group,
                             const std::vector<TxnOffsetCommitTopic>& topics)>
      commit_offsets;
};

class TxnCoordinator {
 public:
  // Creates `__transaction_state` partition 0 if needed, leads it
  // (TakeOver), replays it and finishes the interrupted transactions (their
  // data partitions must be led already). `engine` and `producer_ids` are
  // not owned and must outlive the coordinator. Blocking. Errors: the
  // engine's, kDataLoss for a record of the topic that does not decode.
  static absl::StatusOr<std::unique_ptr<TxnCoordinator>> Create(
      StorageEngine* engine, ProducerIdAllocator* producer_ids,
      TxnCoordinatorOptions options);

  ~TxnCoordinator();
  TxnCoordinator(const TxnCoordinator&) = delete;
  TxnCoordinator& operator=(const TxnCoordinator&) = delete;

  // InitProducerId with a transactional_id. REQUIRES:
  // request.transactional_id has a value.
  InitProducerIdResponse InitProducerId(const InitProducerIdRequest& request);
  AddPartitionsToTxnResponse AddPartitionsToTxn(
      const AddPartitionsToTxnRequest& request);
  TxnErrorResponse AddOffsetsToTxn(const AddOffsetsToTxnRequest& request);
  // Stages offsets (in memory) until EndTxn; answered at once.
  TxnOffsetCommitResponse TxnOffsetCommit(
      const TxnOffsetCommitRequest& request);
  TxnErrorResponse EndTxn(const EndTxnRequest& request);

  // Aborts the transactions that timed out and finishes those an engine
  // error left half done. Call it periodically.
  void Tick();

 private:
  class Impl;
  explicit TxnCoordinator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_TXN_COORDINATOR_H_
