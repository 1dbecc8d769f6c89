// File: examples/broker/txn_coordinator.cc
//
// The transaction state machine and its durable log (txn_coordinator.h).
//
// Record layout of `__transaction_state` (Kafka's, so its tools read it):
//   key   = int16 version (0), STRING transactional_id   (TransactionLogKey)
//   value = int16 version (0), INT64 producer_id, INT16 producer_epoch,
//           INT32 transaction_timeout_ms, INT8 transaction_status,
//           ARRAY of {STRING topic, ARRAY of INT32 partition},
//           INT64 last_update_timestamp_ms, INT64 start_timestamp_ms
//                                                       (TransactionLogValue)
//           or null: the id was removed.
// Status numbers are Kafka's (TransactionState): Empty 0, Ongoing 1,
// PrepareCommit 2, PrepareAbort 3, CompleteCommit 4, CompleteAbort 5.
//
// Locking: mu_ guards the map. A request that writes state marks its entry
// `busy`, copies it, releases mu_ for the engine I/O, and stores each state
// once it is durable; the in-memory state is therefore never ahead of the
// log.

#include "examples/broker/txn_coordinator.h"

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "examples/broker/internal_batches.h"
#include "examples/broker/internal_topic_replay.h"
#include "examples/broker/wire.h"
#include "glog/logging.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"

namespace kaas::broker {
namespace {

// Bytes per read while replaying the topic.

enum class TxnStatus : int8_t {
  kEmpty = 0,
  kOngoing = 1,
  kPrepareCommit = 2,
  kPrepareAbort = 3,
  kCompleteCommit = 4,
  kCompleteAbort = 5,
};

// The state of one transactional.id.
struct Txn {
  // Durable (in the log):
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t timeout_ms = 60000;
  TxnStatus status = TxnStatus::kEmpty;
  std::set<TopicPartition> partitions;
  int64_t start_ms = -1;  // when it became Ongoing
  // Staged offsets per group, in arrival order (later ones win): in memory
  // while Ongoing, durable with PrepareCommit (so that a recovery that
  // completes the commit hands them over too).
  std::map<std::string, std::vector<TxnOffsetCommitTopic>> offsets;
  // In memory only:
  std::set<std::string> groups;
  bool busy = false;  // a request is writing this id's state
};

std::string EncodeKey(absl::string_view id) {
  std::string out;
  WireWriter writer(&out);
  writer.Int16(0);
  writer.String(id);
  return out;
}

// Version 0 is Kafka's TransactionLogValue v0; version 1, written for a
// PrepareCommit with staged offsets, appends them (per group: the topics
// with partition, offset, leader epoch and metadata, as TxnOffsetCommit
// carried them).
std::string EncodeValue(const Txn& txn, int64_t now_ms) {
  const bool with_offsets =
      txn.status == TxnStatus::kPrepareCommit && !txn.offsets.empty();
  std::string out;
  WireWriter writer(&out);
  writer.Int16(with_offsets ? 1 : 0);
  writer.Int64(txn.producer_id);
  writer.Int16(txn.producer_epoch);
  writer.Int32(txn.timeout_ms);
  writer.Int8(static_cast<int8_t>(txn.status));
  std::map<std::string, std::vector<int32_t>> by_topic;
  for (const TopicPartition& tp : txn.partitions) {
    by_topic[tp.topic].push_back(tp.partition);
  }
  writer.ArrayLength(static_cast<int32_t>(by_topic.size()));
  for (const auto& [topic, partitions] : by_topic) {
    writer.String(topic);
    writer.ArrayLength(static_cast<int32_t>(partitions.size()));
    for (int32_t p : partitions) writer.Int32(p);
  }
  writer.Int64(now_ms);
  writer.Int64(txn.start_ms);
  if (!with_offsets) return out;
  writer.ArrayLength(static_cast<int32_t>(txn.offsets.size()));
  for (const auto& [group, topics] : txn.offsets) {
    writer.String(group);
    writer.ArrayLength(static_cast<int32_t>(topics.size()));
    for (const TxnOffsetCommitTopic& topic : topics) {
      writer.String(topic.name);
      writer.ArrayLength(static_cast<int32_t>(topic.partitions.size()));
      for (const TxnOffsetCommitPartition& p : topic.partitions) {
        writer.Int32(p.partition_index);
        writer.Int64(p.committed_offset);
        writer.Int32(p.committed_leader_epoch);
        writer.NullableString(p.committed_metadata);
      }
    }
  }
  return out;
}

absl::StatusOr<std::string> DecodeKey(absl::string_view bytes) {
  WireReader reader(bytes);
  KAAS_ASSIGN_OR_RETURN(int16_t version, reader.Int16("key version"));
  if (version != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown key version ", version));
  }
  KAAS_ASSIGN_OR_RETURN(absl::string_view id,
                        reader.String("transactional_id"));
  return std::string(id);
}

absl::StatusOr<Txn> DecodeValue(absl::string_view bytes) {
  WireReader reader(bytes);
  Txn txn;
  KAAS_ASSIGN_OR_RETURN(int16_t version, reader.Int16("value version"));
  if (version != 0 && version != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown value version ", version));
  }
  KAAS_ASSIGN_OR_RETURN(txn.producer_id, reader.Int64("producer_id"));
  KAAS_ASSIGN_OR_RETURN(txn.producer_epoch, reader.Int16("producer_epoch"));
  KAAS_ASSIGN_OR_RETURN(txn.timeout_ms, reader.Int32("timeout_ms"));
  KAAS_ASSIGN_OR_RETURN(int8_t status, reader.Int8("status"));
  if (status < 0 || status > static_cast<int8_t>(TxnStatus::kCompleteAbort)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown status ", status));
  }
  txn.status = static_cast<TxnStatus>(status);
  KAAS_ASSIGN_OR_RETURN(int32_t topics,
                        reader.ArrayLength("partitions", 6, /*nullable=*/true));
  for (int32_t t = 0; t < topics; ++t) {
    KAAS_ASSIGN_OR_RETURN(absl::string_view topic, reader.String("topic"));
    KAAS_ASSIGN_OR_RETURN(int32_t count,
                          reader.ArrayLength("partition_ids", 4));
    for (int32_t p = 0; p < count; ++p) {
      KAAS_ASSIGN_OR_RETURN(int32_t partition, reader.Int32("partition"));
      txn.partitions.insert(TopicPartition{std::string(topic), partition});
    }
  }
  KAAS_RETURN_IF_ERROR(reader.Int64("last_update_timestamp_ms").status());
  KAAS_ASSIGN_OR_RETURN(txn.start_ms, reader.Int64("start_timestamp_ms"));
  if (version == 0) return txn;
  KAAS_ASSIGN_OR_RETURN(int32_t groups, reader.ArrayLength("offsets", 6));
  for (int32_t g = 0; g < groups; ++g) {
    KAAS_ASSIGN_OR_RETURN(absl::string_view group, reader.String("group"));
    std::vector<TxnOffsetCommitTopic>& topics = txn.offsets[std::string(group)];
    KAAS_ASSIGN_OR_RETURN(int32_t count, reader.ArrayLength("topics", 6));
    for (int32_t t = 0; t < count; ++t) {
      TxnOffsetCommitTopic& topic = topics.emplace_back();
      KAAS_ASSIGN_OR_RETURN(absl::string_view name, reader.String("topic"));
      topic.name = std::string(name);
      KAAS_ASSIGN_OR_RETURN(int32_t partitions,
                            reader.ArrayLength("partitions", 18));
      for (int32_t i = 0; i < partitions; ++i) {
        TxnOffsetCommitPartition& p = topic.partitions.emplace_back();
        KAAS_ASSIGN_OR_RETURN(p.partition_index, reader.Int32("partition"));
        KAAS_ASSIGN_OR_RETURN(p.committed_offset, reader.Int64("offset"));
        KAAS_ASSIGN_OR_RETURN(p.committed_leader_epoch,
                              reader.Int32("leader_epoch"));
        KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> metadata,
                              reader.NullableString("metadata"));
        if (metadata.has_value()) p.committed_metadata = std::string(*metadata);
      }
    }
  }
  return txn;
}

TopicPartition StatePartition() {
  return TopicPartition{std::string(kTransactionStateTopic), 0};
}

bool Preparing(TxnStatus status) {
  return status == TxnStatus::kPrepareCommit ||
         status == TxnStatus::kPrepareAbort;
}

}  // namespace

class TxnCoordinator::Impl {
 public:
  Impl(StorageEngine* engine, ProducerIdAllocator* producer_ids,
       TxnCoordinatorOptions options)
      : engine_(*engine),
        producer_ids_(*producer_ids),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {}

  absl::Status Recover();

  InitProducerIdResponse InitProducerId(const InitProducerIdRequest& request);
  AddPartitionsToTxnResponse AddPartitionsToTxn(
      const AddPartitionsToTxnRequest& request);
  TxnErrorResponse AddOffsetsToTxn(const AddOffsetsToTxnRequest& request);
  TxnOffsetCommitResponse TxnOffsetCommit(
      const TxnOffsetCommitRequest& request);
  TxnErrorResponse EndTxn(const EndTxnRequest& request);
  void Tick();

 private:
  // The error for a request of `id` by producer {producer_id, epoch}, or
  // kNone with *txn set.
  int16_t CheckProducer(const std::string& id, int64_t producer_id,
                        int16_t epoch, Txn** txn)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Makes `next` durable for `id`, then the in-memory state (keeping the
  // entry busy and its in-memory fields).
  absl::Status Persist(const std::string& id, const Txn& next);

  // Ends `next`'s transaction (REQUIRES: next is the busy entry's copy):
  // bumps and fences the epoch first if `bump_epoch`, then Prepare*,
  // offsets (commit), markers, Complete*. On success `next` is the final
  // state.
  absl::Status EndTransaction(const std::string& id, Txn& next, bool commit,
                              bool bump_epoch);

  // Clears the busy mark of `id`.
  void Release(const std::string& id);

  int16_t PartitionError(const std::string& topic, int32_t partition) const {
    return options_.partition_error ? options_.partition_error(topic, partition)
                                    : txn_error::kNone;
  }

  StorageEngine& engine_;
  ProducerIdAllocator& producer_ids_;
  const TxnCoordinatorOptions options_;
  Clock* const clock_;

  absl::Mutex mu_;
  std::map<std::string, Txn> txns_ ABSL_GUARDED_BY(mu_);
};

// ---- Recovery ---------------------------------------------------------------

absl::Status TxnCoordinator::Impl::Recover() {
  const TopicPartition tp = StatePartition();
  KAAS_RETURN_IF_ERROR(engine_.CreatePartition(tp));
  KAAS_RETURN_IF_ERROR(engine_.TakeOver(tp, options_.leader_epoch).status());
  std::map<std::string, Txn> recovered;
  KAAS_RETURN_IF_ERROR(ReplayInternalTopic(
      engine_, tp, "transaction state topic",
      [&recovered](int64_t, absl::string_view key,
                   std::optional<absl::string_view> value) -> absl::Status {
        KAAS_ASSIGN_OR_RETURN(std::string id, DecodeKey(key));
        if (!value.has_value()) {
          recovered.erase(id);
          return absl::OkStatus();
        }
        KAAS_ASSIGN_OR_RETURN(Txn txn, DecodeValue(*value));
        recovered[id] = std::move(txn);
        return absl::OkStatus();
      }));
  std::vector<std::string> unfinished;
  {
    absl::MutexLock lock(&mu_);
    txns_ = std::move(recovered);
    for (auto& [id, txn] : txns_) {
      if (txn.status == TxnStatus::kOngoing || Preparing(txn.status)) {
        txn.busy = true;
        unfinished.push_back(id);
      }
    }
  }
  // The producers of interrupted transactions may still be running: an
  // Ongoing one is aborted with a bumped epoch, which fences them, as a
  // timeout would have.
  for (const std::string& id : unfinished) {
    Txn next;
    {
      absl::MutexLock lock(&mu_);
      next = txns_[id];
    }
    const bool commit = next.status == TxnStatus::kPrepareCommit;
    const bool bump = next.status == TxnStatus::kOngoing;
    absl::Status ended = EndTransaction(id, next, commit, bump);
    if (!ended.ok()) {
      // Tick() tries again.
      LOG(ERROR) << "recovering transaction " << id << ": " << ended;
    }
    Release(id);
  }
  return absl::OkStatus();
}

// ---- Helpers ----------------------------------------------------------------

int16_t TxnCoordinator::Impl::CheckProducer(const std::string& id,
                                            int64_t producer_id, int16_t epoch,
                                            Txn** txn) {
  auto found = txns_.find(id);
  // producer_id < 0: an id whose first InitProducerId failed.
  if (found == txns_.end() || found->second.producer_id < 0 ||
      found->second.producer_id != producer_id) {
    return txn_error::kInvalidProducerIdMapping;
  }
  if (found->second.producer_epoch != epoch) {
    return txn_error::kInvalidProducerEpoch;
  }
  if (found->second.busy) return txn_error::kConcurrentTransactions;
  *txn = &found->second;
  return txn_error::kNone;
}

absl::Status TxnCoordinator::Impl::Persist(const std::string& id,
                                           const Txn& next) {
  const int64_t now_ms = clock_->NowMillis();
  std::vector<std::pair<std::string, std::optional<std::string>>> records;
  records.emplace_back(EncodeKey(id), EncodeValue(next, now_ms));
  KAAS_RETURN_IF_ERROR(engine_
                           .AppendAndWait(StatePartition(),
                                          options_.leader_epoch, Acks::kAll,
                                          BuildRecordBatch(records, now_ms))
                           .status());
  absl::MutexLock lock(&mu_);
  Txn& txn = txns_[id];
  txn.producer_id = next.producer_id;
  txn.producer_epoch = next.producer_epoch;
  txn.timeout_ms = next.timeout_ms;
  txn.status = next.status;
  txn.partitions = next.partitions;
  txn.start_ms = next.start_ms;
  txn.groups = next.groups;
  txn.offsets = next.offsets;
  return absl::OkStatus();
}

void TxnCoordinator::Impl::Release(const std::string& id) {
  absl::MutexLock lock(&mu_);
  txns_[id].busy = false;
}

absl::Status TxnCoordinator::Impl::EndTransaction(const std::string& id,
                                                  Txn& next, bool commit,
                                                  bool bump_epoch) {
  if (bump_epoch && next.producer_epoch < std::numeric_limits<int16_t>::max()) {
    // Fenced before anything else: from here the old epoch cannot add data
    // to the transaction being ended.
    ++next.producer_epoch;
    KAAS_RETURN_IF_ERROR(
        engine_.FenceProducerEpoch(next.producer_id, next.producer_epoch));
  }
  next.status = commit ? TxnStatus::kPrepareCommit : TxnStatus::kPrepareAbort;
  KAAS_RETURN_IF_ERROR(Persist(id, next));
  if (commit && options_.commit_offsets) {
    for (const auto& [group, topics] : next.offsets) {
      KAAS_RETURN_IF_ERROR(options_.commit_offsets(group, topics));
    }
  }
  const int64_t now_ms = clock_->NowMillis();
  const std::string marker = BuildControlBatch(
      commit ? ControlType::kCommit : ControlType::kAbort, next.producer_id,
      next.producer_epoch, static_cast<int32_t>(options_.leader_epoch), now_ms);
  for (const TopicPartition& tp : next.partitions) {
    if (PartitionError(tp.topic, tp.partition) != txn_error::kNone) {
      continue;  // deleted since it joined: nothing left to mark
    }
    absl::StatusOr<AppendResult> appended =
        engine_.AppendAndWait(tp, options_.leader_epoch, Acks::kAll, marker);
    if (!appended.ok()) {
      return absl::Status(appended.status().code(),
                          absl::StrCat("marker on ", tp.ToString(), ": ",
                                       appended.status().message()));
    }
  }
  next.status = commit ? TxnStatus::kCompleteCommit : TxnStatus::kCompleteAbort;
  next.partitions.clear();
  next.groups.clear();
  next.offsets.clear();
  next.start_ms = -1;
  return Persist(id, next);
}

// ---- Requests ---------------------------------------------------------------

InitProducerIdResponse TxnCoordinator::Impl::InitProducerId(
    const InitProducerIdRequest& request) {
  InitProducerIdResponse response;
  const std::string& id = *request.transactional_id;
  if (id.empty()) {
    response.error_code = txn_error::kInvalidRequest;
    return response;
  }
  if (request.transaction_timeout_ms <= 0 ||
      request.transaction_timeout_ms > options_.max_transaction_timeout_ms) {
    response.error_code = txn_error::kInvalidTransactionTimeout;
    return response;
  }
  Txn next;
  {
    absl::MutexLock lock(&mu_);
    Txn& txn = txns_[id];
    if (txn.busy) {
      response.error_code = txn_error::kConcurrentTransactions;
      return response;
    }
    txn.busy = true;
    next = txn;
  }
  absl::Status status = absl::OkStatus();
  if (next.producer_id >= 0 &&
      (next.status == TxnStatus::kOngoing || Preparing(next.status))) {
    // The previous producer's transaction: committed only if it had asked
    // to (PrepareCommit), aborted otherwise.
    const bool commit = next.status == TxnStatus::kPrepareCommit;
    status = EndTransaction(id, next, commit,
                            /*bump_epoch=*/next.status == TxnStatus::kOngoing);
  }
  if (status.ok()) {
    // Epochs run to 32766 so that the bump of a timed-out transaction
    // (EndTransaction) still has room; then a new producer id.
    if (next.producer_id < 0 ||
        next.producer_epoch >= std::numeric_limits<int16_t>::max() - 1) {
      absl::StatusOr<int64_t> pid = producer_ids_.Next();
      if (pid.ok()) {
        next.producer_id = *pid;
        next.producer_epoch = 0;
      } else {
        status = pid.status();
      }
    } else {
      ++next.producer_epoch;
      status =
          engine_.FenceProducerEpoch(next.producer_id, next.producer_epoch);
    }
  }
  if (status.ok()) {
    next.timeout_ms = request.transaction_timeout_ms;
    next.status = TxnStatus::kEmpty;
    next.partitions.clear();
    next.groups.clear();
    next.offsets.clear();
    next.start_ms = -1;
    status = Persist(id, next);
  }
  Release(id);
  if (!status.ok()) {
    LOG(ERROR) << "InitProducerId of " << id << ": " << status;
    response.error_code = txn_error::kCoordinatorNotAvailable;
    return response;
  }
  response.producer_id = next.producer_id;
  response.producer_epoch = next.producer_epoch;
  return response;
}

AddPartitionsToTxnResponse TxnCoordinator::Impl::AddPartitionsToTxn(
    const AddPartitionsToTxnRequest& request) {
  AddPartitionsToTxnResponse response;
  // Partition errors first, without mu_ (the check takes the broker's).
  bool any_unknown = false;
  for (const TxnTopic& topic : request.topics) {
    TxnTopicResult& result = response.results.emplace_back();
    result.name = topic.name;
    for (int32_t p : topic.partitions) {
      const int16_t error = PartitionError(topic.name, p);
      if (error != txn_error::kNone) any_unknown = true;
      result.results.push_back({p, error});
    }
  }
  auto answer_all = [&response](int16_t error) {
    for (TxnTopicResult& topic : response.results) {
      for (TxnPartitionResult& r : topic.results) r.error_code = error;
    }
    return response;
  };
  if (any_unknown) {
    for (TxnTopicResult& topic : response.results) {
      for (TxnPartitionResult& r : topic.results) {
        if (r.error_code == txn_error::kNone) {
          r.error_code = txn_error::kOperationNotAttempted;
        }
      }
    }
    return response;
  }
  Txn next;
  {
    absl::MutexLock lock(&mu_);
    Txn* txn = nullptr;
    const int16_t error =
        CheckProducer(request.transactional_id, request.producer_id,
                      request.producer_epoch, &txn);
    if (error != txn_error::kNone) return answer_all(error);
    if (Preparing(txn->status)) {
      return answer_all(txn_error::kConcurrentTransactions);
    }
    bool grows = txn->status != TxnStatus::kOngoing;
    for (const TxnTopic& topic : request.topics) {
      for (int32_t p : topic.partitions) {
        if (txn->partitions.count(TopicPartition{topic.name, p}) == 0) {
          grows = true;
        }
      }
    }
    if (!grows) return answer_all(txn_error::kNone);
    txn->busy = true;
    next = *txn;
  }
  if (next.status != TxnStatus::kOngoing) {
    next.status = TxnStatus::kOngoing;
    next.start_ms = clock_->NowMillis();
  }
  for (const TxnTopic& topic : request.topics) {
    for (int32_t p : topic.partitions) {
      next.partitions.insert(TopicPartition{topic.name, p});
    }
  }
  // Durable before the producer writes: a crash then aborts its data.
  absl::Status persisted = Persist(request.transactional_id, next);
  Release(request.transactional_id);
  if (!persisted.ok()) {
    LOG(ERROR) << "AddPartitionsToTxn: " << persisted;
    return answer_all(txn_error::kCoordinatorNotAvailable);
  }
  return answer_all(txn_error::kNone);
}

TxnErrorResponse TxnCoordinator::Impl::AddOffsetsToTxn(
    const AddOffsetsToTxnRequest& request) {
  if (request.group_id.empty()) return {txn_error::kInvalidGroupId};
  Txn next;
  {
    absl::MutexLock lock(&mu_);
    Txn* txn = nullptr;
    const int16_t error =
        CheckProducer(request.transactional_id, request.producer_id,
                      request.producer_epoch, &txn);
    if (error != txn_error::kNone) return {error};
    if (Preparing(txn->status)) return {txn_error::kConcurrentTransactions};
    if (txn->status == TxnStatus::kOngoing) {
      txn->groups.insert(request.group_id);  // in memory only: no write
      return {txn_error::kNone};
    }
    txn->busy = true;
    next = *txn;
  }
  next.status = TxnStatus::kOngoing;
  next.start_ms = clock_->NowMillis();
  next.groups.insert(request.group_id);
  absl::Status persisted = Persist(request.transactional_id, next);
  Release(request.transactional_id);
  if (!persisted.ok()) {
    LOG(ERROR) << "AddOffsetsToTxn: " << persisted;
    return {txn_error::kCoordinatorNotAvailable};
  }
  return {txn_error::kNone};
}

TxnOffsetCommitResponse TxnCoordinator::Impl::TxnOffsetCommit(
    const TxnOffsetCommitRequest& request) {
  TxnOffsetCommitResponse response;
  int16_t error = txn_error::kNone;
  {
    absl::MutexLock lock(&mu_);
    Txn* txn = nullptr;
    error = CheckProducer(request.transactional_id, request.producer_id,
                          request.producer_epoch, &txn);
    if (error == txn_error::kNone &&
        (txn->status != TxnStatus::kOngoing ||
         txn->groups.count(request.group_id) == 0)) {
      // AddOffsetsToTxn must come first.
      error = txn_error::kInvalidTxnState;
    }
    if (error == txn_error::kNone) {
      std::vector<TxnOffsetCommitTopic>& staged =
          txn->offsets[request.group_id];
      staged.insert(staged.end(), request.topics.begin(), request.topics.end());
    }
  }
  for (const TxnOffsetCommitTopic& topic : request.topics) {
    TxnTopicResult& result = response.topics.emplace_back();
    result.name = topic.name;
    for (const TxnOffsetCommitPartition& p : topic.partitions) {
      result.results.push_back({p.partition_index, error});
    }
  }
  return response;
}

TxnErrorResponse TxnCoordinator::Impl::EndTxn(const EndTxnRequest& request) {
  const TxnStatus prepare =
      request.committed ? TxnStatus::kPrepareCommit : TxnStatus::kPrepareAbort;
  const TxnStatus complete = request.committed ? TxnStatus::kCompleteCommit
                                               : TxnStatus::kCompleteAbort;
  Txn next;
  {
    absl::MutexLock lock(&mu_);
    Txn* txn = nullptr;
    const int16_t error =
        CheckProducer(request.transactional_id, request.producer_id,
                      request.producer_epoch, &txn);
    if (error != txn_error::kNone) return {error};
    // A retry of an EndTxn that completed is answered as it was.
    if (txn->status == complete) return {txn_error::kNone};
    // Ongoing, or the same end interrupted by an engine error.
    if (txn->status != TxnStatus::kOngoing && txn->status != prepare) {
      return {txn_error::kInvalidTxnState};
    }
    txn->busy = true;
    next = *txn;
  }
  absl::Status ended = EndTransaction(request.transactional_id, next,
                                      request.committed, /*bump_epoch=*/false);
  Release(request.transactional_id);
  if (!ended.ok()) {
    LOG(ERROR) << "EndTxn of " << request.transactional_id << ": " << ended;
    return {txn_error::kCoordinatorNotAvailable};
  }
  return {txn_error::kNone};
}

void TxnCoordinator::Impl::Tick() {
  const int64_t now_ms = clock_->NowMillis();
  std::vector<std::pair<std::string, Txn>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, txn] : txns_) {
      if (txn.busy) continue;
      const bool timed_out = txn.status == TxnStatus::kOngoing &&
                             now_ms - txn.start_ms >= txn.timeout_ms;
      if (timed_out || Preparing(txn.status)) {
        txn.busy = true;
        due.emplace_back(id, txn);
      }
    }
  }
  for (auto& [id, next] : due) {
    const bool commit = next.status == TxnStatus::kPrepareCommit;
    const bool bump = next.status == TxnStatus::kOngoing;
    absl::Status ended = EndTransaction(id, next, commit, bump);
    if (!ended.ok()) LOG(ERROR) << "ending transaction " << id << ": " << ended;
    Release(id);
  }
}

// ---- Public -----------------------------------------------------------------

absl::StatusOr<std::unique_ptr<TxnCoordinator>> TxnCoordinator::Create(
    StorageEngine* engine, ProducerIdAllocator* producer_ids,
    TxnCoordinatorOptions options) {
  auto impl = std::make_unique<Impl>(engine, producer_ids, std::move(options));
  KAAS_RETURN_IF_ERROR(impl->Recover());
  return std::unique_ptr<TxnCoordinator>(new TxnCoordinator(std::move(impl)));
}

TxnCoordinator::TxnCoordinator(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
TxnCoordinator::~TxnCoordinator() = default;

InitProducerIdResponse TxnCoordinator::InitProducerId(
    const InitProducerIdRequest& request) {
  return impl_->InitProducerId(request);
}
AddPartitionsToTxnResponse TxnCoordinator::AddPartitionsToTxn(
    const AddPartitionsToTxnRequest& request) {
  return impl_->AddPartitionsToTxn(request);
}
TxnErrorResponse TxnCoordinator::AddOffsetsToTxn(
    const AddOffsetsToTxnRequest& request) {
  return impl_->AddOffsetsToTxn(request);
}
TxnOffsetCommitResponse TxnCoordinator::TxnOffsetCommit(
    const TxnOffsetCommitRequest& request) {
  return impl_->TxnOffsetCommit(request);
}
TxnErrorResponse TxnCoordinator::EndTxn(const EndTxnRequest& request) {
  return impl_->EndTxn(request);
}
void TxnCoordinator::Tick() { impl_->Tick(); }

}  // namespace kaas::broker
