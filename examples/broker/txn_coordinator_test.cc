// File: examples/broker/txn_coordinator_test.cc
//
// The transaction coordinator over the memory engine, on a ManualClock
// (Tick() drives timeouts; no sleeps): ids and epochs, fencing of zombies,
// commit and abort markers as a read_committed reader sees them, offsets
// handed over only on commit, per-request errors, timeouts, and recovery by
// a new coordinator over the same engine (a broker restart).

#include "examples/broker/txn_coordinator.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "base/clock.h"
#include "base/storage_error.h"
#include "examples/broker/messages.h"
#include "examples/broker/producer_ids.h"
#include "examples/broker/txn_messages.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/memory_engine.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

constexpr int64_t kEpoch = 1;

class TxnCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int32_t p = 0; p < 2; ++p) {
      ASSERT_OK(engine_.CreatePartition(Tp(p)));
      ASSERT_OK(engine_.TakeOver(Tp(p), kEpoch).status());
    }
    Start();
  }

  void Start() {
    coordinator_.reset();
    TxnCoordinatorOptions options;
    options.leader_epoch = kEpoch;
    options.clock = &clock_;
    options.partition_error = [](const std::string& topic, int32_t p) {
      return topic == "t" && p >= 0 && p < 2
                 ? txn_error::kNone
                 : txn_error::kUnknownTopicOrPartition;
    };
    options.commit_offsets =
        [this](const std::string& group,
               const std::vector<TxnOffsetCommitTopic>& topics) {
          if (fail_offsets_) {
            return absl::UnavailableError("offsets topic unavailable");
          }
          for (const TxnOffsetCommitTopic& t : topics) {
            for (const TxnOffsetCommitPartition& p : t.partitions) {
              committed_.push_back(group + "/" + t.name + "/" +
                                   std::to_string(p.partition_index) + "=" +
                                   std::to_string(p.committed_offset));
            }
          }
          return absl::OkStatus();
        };
    absl::StatusOr<std::unique_ptr<TxnCoordinator>> c =
        TxnCoordinator::Create(&engine_, &ids_, std::move(options));
    ASSERT_OK(c.status());
    coordinator_ = *std::move(c);
  }

  static TopicPartition Tp(int32_t p) { return TopicPartition{"t", p}; }

  InitProducerIdResponse Init(const std::string& id, int32_t timeout = 60000) {
    InitProducerIdRequest request;
    request.transactional_id = id;
    request.transaction_timeout_ms = timeout;
    return coordinator_->InitProducerId(request);
  }

  int16_t AddPartitions(const InitProducerIdResponse& p,
                        std::vector<int32_t> partitions,
                        const std::string& topic = "t") {
    AddPartitionsToTxnRequest request;
    request.transactional_id = "tx";
    request.producer_id = p.producer_id;
    request.producer_epoch = p.producer_epoch;
    request.topics.push_back({topic, std::move(partitions)});
    AddPartitionsToTxnResponse response =
        coordinator_->AddPartitionsToTxn(request);
    return response.results.at(0).results.at(0).error_code;
  }

  int16_t End(const InitProducerIdResponse& p, bool commit) {
    EndTxnRequest request;
    request.transactional_id = "tx";
    request.producer_id = p.producer_id;
    request.producer_epoch = p.producer_epoch;
    request.committed = commit;
    return coordinator_->EndTxn(request).error_code;
  }

  absl::Status Produce(const InitProducerIdResponse& p, int32_t partition,
                       int32_t sequence) {
    return engine_
        .AppendAndWait(Tp(partition), kEpoch, Acks::kAll,
                       test::BatchBuilder()
                           .Producer(p.producer_id, p.producer_epoch, sequence)
                           .Transactional()
                           .AddRecord("k", "v")
                           .Build())
        .status();
  }

  int64_t Lso(int32_t p) { return *engine_.LastStableOffset(Tp(p)); }
  int64_t Hwm(int32_t p) { return *engine_.HighWatermark(Tp(p)); }
  std::vector<AbortedTransaction> Aborted(int32_t p) {
    return *engine_.AbortedTransactionsInRange(Tp(p), 0, Hwm(p));
  }

  ManualClock clock_;
  MemoryEngine engine_;
  ProducerIdAllocator ids_{""};
  std::vector<std::string> committed_;
  bool fail_offsets_ = false;  // commit_offsets fails (a crash before them)
  std::unique_ptr<TxnCoordinator> coordinator_;
};

TEST_F(TxnCoordinatorTest, ReinitBumpsTheEpochAndFencesTheZombie) {
  InitProducerIdResponse first = Init("tx");
  ASSERT_EQ(first.error_code, 0);
  EXPECT_GE(first.producer_id, 0);
  EXPECT_EQ(first.producer_epoch, 0);
  InitProducerIdResponse other = Init("other");
  EXPECT_NE(other.producer_id, first.producer_id);

  InitProducerIdResponse second = Init("tx");
  ASSERT_EQ(second.error_code, 0);
  EXPECT_EQ(second.producer_id, first.producer_id);
  EXPECT_EQ(second.producer_epoch, 1);
  EXPECT_EQ(GetStorageErrorCode(Produce(first, 0, 0)),
            StorageErrorCode::kInvalidProducerEpoch);
  // The zombie's coordinator requests are refused as well.
  EXPECT_EQ(AddPartitions(first, {0}), txn_error::kInvalidProducerEpoch);
  EXPECT_EQ(End(first, true), txn_error::kInvalidProducerEpoch);
}

TEST_F(TxnCoordinatorTest, CommitAndAbortWriteMarkers) {
  InitProducerIdResponse p = Init("tx");
  ASSERT_EQ(AddPartitions(p, {0, 1}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 0));
  ASSERT_OK(Produce(p, 1, 0));
  EXPECT_EQ(Lso(0), 0);  // the transaction holds the stable offset back
  ASSERT_EQ(End(p, true), txn_error::kNone);
  EXPECT_EQ(Hwm(0), 2);  // data + COMMIT marker
  EXPECT_EQ(Lso(0), 2);
  EXPECT_EQ(Lso(1), 2);
  EXPECT_TRUE(Aborted(0).empty());
  // A retried commit is answered as the first; an abort now is refused.
  EXPECT_EQ(End(p, true), txn_error::kNone);
  EXPECT_EQ(End(p, false), txn_error::kInvalidTxnState);

  ASSERT_EQ(AddPartitions(p, {0}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 1));
  ASSERT_EQ(End(p, false), txn_error::kNone);
  EXPECT_EQ(Hwm(0), 4);
  EXPECT_EQ(Lso(0), 4);
  std::vector<AbortedTransaction> aborted = Aborted(0);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0].producer_id, p.producer_id);
  EXPECT_EQ(aborted[0].first_offset, 2);
  EXPECT_EQ(Hwm(1), 2);  // partition 1 was not in the second transaction
}

TEST_F(TxnCoordinatorTest, OffsetsAreHandedOverOnlyOnCommit) {
  InitProducerIdResponse p = Init("tx");
  auto stage = [&](int64_t offset) {
    AddOffsetsToTxnRequest add;
    add.transactional_id = "tx";
    add.producer_id = p.producer_id;
    add.producer_epoch = p.producer_epoch;
    add.group_id = "g";
    EXPECT_EQ(coordinator_->AddOffsetsToTxn(add).error_code, txn_error::kNone);
    TxnOffsetCommitRequest commit;
    commit.transactional_id = "tx";
    commit.group_id = "g";
    commit.producer_id = p.producer_id;
    commit.producer_epoch = p.producer_epoch;
    commit.topics.push_back({"in", {{3, offset, -1, std::nullopt}}});
    TxnOffsetCommitResponse response = coordinator_->TxnOffsetCommit(commit);
    EXPECT_EQ(response.topics.at(0).results.at(0).error_code, txn_error::kNone);
  };
  stage(10);
  ASSERT_EQ(End(p, false), txn_error::kNone);
  EXPECT_TRUE(committed_.empty());
  stage(20);
  ASSERT_EQ(End(p, true), txn_error::kNone);
  EXPECT_EQ(committed_, std::vector<std::string>{"g/in/3=20"});
}

// The staged offsets are durable with PrepareCommit: a restart between it
// and their hand-off completes the commit with them.
TEST_F(TxnCoordinatorTest, ARecoveredCommitHandsOverItsOffsets) {
  InitProducerIdResponse p = Init("tx");
  ASSERT_EQ(AddPartitions(p, {0}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 0));
  AddOffsetsToTxnRequest add;
  add.transactional_id = "tx";
  add.producer_id = p.producer_id;
  add.producer_epoch = p.producer_epoch;
  add.group_id = "g";
  ASSERT_EQ(coordinator_->AddOffsetsToTxn(add).error_code, txn_error::kNone);
  TxnOffsetCommitRequest commit;
  commit.transactional_id = "tx";
  commit.group_id = "g";
  commit.producer_id = p.producer_id;
  commit.producer_epoch = p.producer_epoch;
  commit.topics.push_back({"in", {{3, 42, 7, std::string("meta")}}});
  ASSERT_EQ(coordinator_->TxnOffsetCommit(commit)
                .topics.at(0)
                .results.at(0)
                .error_code,
            txn_error::kNone);
  fail_offsets_ = true;
  EXPECT_NE(End(p, true), txn_error::kNone);
  EXPECT_TRUE(committed_.empty());
  EXPECT_LT(Lso(0), Hwm(0)) << "no marker yet";

  fail_offsets_ = false;
  Start();  // a restart: the staged offsets in memory are gone
  EXPECT_EQ(committed_, std::vector<std::string>{"g/in/3=42"});
  EXPECT_EQ(Lso(0), Hwm(0));
  EXPECT_TRUE(Aborted(0).empty()) << "committed, not aborted";
}

TEST_F(TxnCoordinatorTest, RequestErrors) {
  InitProducerIdResponse bad_timeout = Init("tx", 0);
  EXPECT_EQ(bad_timeout.error_code, txn_error::kInvalidTransactionTimeout);
  EXPECT_EQ(Init("tx", 1000000000).error_code,
            txn_error::kInvalidTransactionTimeout);
  InitProducerIdResponse p = Init("tx");
  ASSERT_EQ(p.error_code, 0);

  // Unknown partitions fail alone; the rest are not attempted.
  AddPartitionsToTxnRequest add;
  add.transactional_id = "tx";
  add.producer_id = p.producer_id;
  add.producer_epoch = p.producer_epoch;
  add.topics.push_back({"t", {0}});
  add.topics.push_back({"nope", {0}});
  AddPartitionsToTxnResponse response = coordinator_->AddPartitionsToTxn(add);
  EXPECT_EQ(response.results[0].results[0].error_code,
            txn_error::kOperationNotAttempted);
  EXPECT_EQ(response.results[1].results[0].error_code,
            txn_error::kUnknownTopicOrPartition);

  InitProducerIdResponse wrong_id = p;
  wrong_id.producer_id += 1;
  EXPECT_EQ(AddPartitions(wrong_id, {0}), txn_error::kInvalidProducerIdMapping);
  InitProducerIdResponse newer = p;
  newer.producer_epoch += 1;
  EXPECT_EQ(AddPartitions(newer, {0}), txn_error::kInvalidProducerEpoch);
  // Nothing to end yet.
  EXPECT_EQ(End(p, true), txn_error::kInvalidTxnState);
  // Offsets of a group not added to the transaction.
  TxnOffsetCommitRequest commit;
  commit.transactional_id = "tx";
  commit.group_id = "g";
  commit.producer_id = p.producer_id;
  commit.producer_epoch = p.producer_epoch;
  commit.topics.push_back({"in", {{0, 1, -1, std::nullopt}}});
  EXPECT_EQ(
      coordinator_->TxnOffsetCommit(commit).topics[0].results[0].error_code,
      txn_error::kInvalidTxnState);
  // An unknown transactional id.
  EndTxnRequest end;
  end.transactional_id = "unknown";
  end.producer_id = p.producer_id;
  end.producer_epoch = 0;
  EXPECT_EQ(coordinator_->EndTxn(end).error_code,
            txn_error::kInvalidProducerIdMapping);
}

// An allocator that cannot write its file fails InitProducerId; the id then
// has no producer, so a request as producer -1 epoch -1 matches nothing.
TEST_F(TxnCoordinatorTest, FailedInitLeavesNoProducer) {
  ProducerIdAllocator broken("/nonexistent/kaas-txn-test");
  TxnCoordinatorOptions options;
  options.clock = &clock_;
  absl::StatusOr<std::unique_ptr<TxnCoordinator>> c =
      TxnCoordinator::Create(&engine_, &broken, std::move(options));
  ASSERT_OK(c.status());
  InitProducerIdRequest init;
  init.transactional_id = "tx";
  init.transaction_timeout_ms = 60000;
  EXPECT_EQ((*c)->InitProducerId(init).error_code,
            txn_error::kCoordinatorNotAvailable);
  EndTxnRequest end;
  end.transactional_id = "tx";
  end.producer_id = -1;
  end.producer_epoch = -1;
  end.committed = true;
  EXPECT_EQ((*c)->EndTxn(end).error_code, txn_error::kInvalidProducerIdMapping);
}

TEST_F(TxnCoordinatorTest, ReinitAbortsTheOngoingTransaction) {
  InitProducerIdResponse first = Init("tx");
  ASSERT_EQ(AddPartitions(first, {0}), txn_error::kNone);
  ASSERT_OK(Produce(first, 0, 0));
  InitProducerIdResponse second = Init("tx");
  ASSERT_EQ(second.error_code, 0);
  EXPECT_GT(second.producer_epoch, first.producer_epoch);
  EXPECT_EQ(Lso(0), Hwm(0));
  EXPECT_EQ(Aborted(0).size(), 1u);
  EXPECT_EQ(End(first, true), txn_error::kInvalidProducerEpoch);
}

TEST_F(TxnCoordinatorTest, TimedOutTransactionIsAbortedAndFenced) {
  InitProducerIdResponse p = Init("tx", 1000);
  ASSERT_EQ(AddPartitions(p, {0}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 0));
  clock_.Advance(absl::Milliseconds(999));
  coordinator_->Tick();
  EXPECT_EQ(Lso(0), 0);  // not yet
  clock_.Advance(absl::Milliseconds(1));
  coordinator_->Tick();
  EXPECT_EQ(Lso(0), Hwm(0));
  EXPECT_EQ(Aborted(0).size(), 1u);
  EXPECT_EQ(End(p, true), txn_error::kInvalidProducerEpoch);
  EXPECT_EQ(GetStorageErrorCode(Produce(p, 0, 1)),
            StorageErrorCode::kInvalidProducerEpoch);
}

TEST_F(TxnCoordinatorTest, RestartKeepsIdsAndAbortsOngoing) {
  InitProducerIdResponse p = Init("tx");
  ASSERT_EQ(AddPartitions(p, {0}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 0));
  ASSERT_EQ(End(p, true), txn_error::kNone);
  ASSERT_EQ(AddPartitions(p, {0, 1}), txn_error::kNone);
  ASSERT_OK(Produce(p, 0, 1));
  ASSERT_OK(Produce(p, 1, 0));
  EXPECT_LT(Lso(0), Hwm(0));

  Start();  // a new coordinator over the same log: a broker restart
  EXPECT_EQ(Lso(0), Hwm(0));
  EXPECT_EQ(Lso(1), Hwm(1));
  EXPECT_EQ(Aborted(0).size(), 1u);
  EXPECT_EQ(Aborted(1).size(), 1u);
  // The recovered abort fenced the producer.
  EXPECT_EQ(End(p, true), txn_error::kInvalidProducerEpoch);
  InitProducerIdResponse again = Init("tx");
  ASSERT_EQ(again.error_code, 0);
  EXPECT_EQ(again.producer_id, p.producer_id);
  EXPECT_GT(again.producer_epoch, p.producer_epoch + 1);

  // And a clean state survives a restart as it was.
  Start();
  InitProducerIdResponse third = Init("tx");
  EXPECT_EQ(third.producer_id, p.producer_id);
  EXPECT_EQ(third.producer_epoch, again.producer_epoch + 1);
}

// Over the disk engine, a real restart: engine, allocator and coordinator
// all recreated over the same data dir.
TEST(TxnCoordinatorDiskTest, StateAndFencesSurviveARestart) {
  fs::ScopedTempDir dir;
  ManualClock clock;
  const TopicPartition tp{"t", 0};
  auto open = [&](int64_t epoch) {
    DiskEngine::Options options;
    options.data_dir = dir.path();
    options.format_log_dirs = true;  // a scratch dir that exists, empty
    options.clock = &clock;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(options);
    EXPECT_OK(engine.status());
    EXPECT_OK((*engine)->CreatePartition(tp));
    EXPECT_OK((*engine)->TakeOver(tp, epoch).status());
    return *std::move(engine);
  };
  auto coordinator = [&](StorageEngine* engine, ProducerIdAllocator* ids,
                         int64_t epoch) {
    TxnCoordinatorOptions options;
    options.leader_epoch = epoch;
    options.clock = &clock;
    absl::StatusOr<std::unique_ptr<TxnCoordinator>> c =
        TxnCoordinator::Create(engine, ids, std::move(options));
    EXPECT_OK(c.status());
    return *std::move(c);
  };
  auto init = [](TxnCoordinator& c, const std::string& id) {
    InitProducerIdRequest request;
    request.transactional_id = id;
    request.transaction_timeout_ms = 60000;
    InitProducerIdResponse response = c.InitProducerId(request);
    EXPECT_EQ(response.error_code, 0);
    return response;
  };
  auto add = [&](TxnCoordinator& c, const std::string& id,
                 const InitProducerIdResponse& p) {
    AddPartitionsToTxnRequest request;
    request.transactional_id = id;
    request.producer_id = p.producer_id;
    request.producer_epoch = p.producer_epoch;
    request.topics.push_back({"t", {0}});
    return c.AddPartitionsToTxn(request).results.at(0).results.at(0).error_code;
  };
  auto produce = [&](StorageEngine& engine, int64_t epoch,
                     const InitProducerIdResponse& p, int32_t sequence) {
    return engine
        .AppendAndWait(tp, epoch, Acks::kAll,
                       test::BatchBuilder()
                           .Producer(p.producer_id, p.producer_epoch, sequence)
                           .Transactional()
                           .AddRecord("k", "v")
                           .Build())
        .status();
  };
  InitProducerIdResponse committed;
  InitProducerIdResponse ongoing;
  {
    std::unique_ptr<DiskEngine> engine = open(1);
    ProducerIdAllocator ids(dir.path());
    std::unique_ptr<TxnCoordinator> c = coordinator(engine.get(), &ids, 1);
    committed = init(*c, "a");
    ASSERT_EQ(add(*c, "a", committed), txn_error::kNone);
    ASSERT_OK(produce(*engine, 1, committed, 0));
    EndTxnRequest end;
    end.transactional_id = "a";
    end.producer_id = committed.producer_id;
    end.producer_epoch = committed.producer_epoch;
    end.committed = true;
    ASSERT_EQ(c->EndTxn(end).error_code, txn_error::kNone);
    ongoing = init(*c, "b");
    ASSERT_EQ(add(*c, "b", ongoing), txn_error::kNone);
    ASSERT_OK(produce(*engine, 1, ongoing, 0));
    EXPECT_EQ(*engine->LastStableOffset(tp), 2);
    c.reset();
    ASSERT_OK(engine->Drain());
  }
  std::unique_ptr<DiskEngine> engine = open(2);
  ProducerIdAllocator ids(dir.path());
  std::unique_ptr<TxnCoordinator> c = coordinator(engine.get(), &ids, 2);
  // b's transaction was aborted at start, and b fenced.
  EXPECT_EQ(*engine->LastStableOffset(tp), *engine->HighWatermark(tp));
  EXPECT_EQ(engine->AbortedTransactionsInRange(tp, 0, 100)->size(), 1u);
  EXPECT_EQ(GetStorageErrorCode(produce(*engine, 2, ongoing, 1)),
            StorageErrorCode::kInvalidProducerEpoch);
  InitProducerIdResponse a2 = init(*c, "a");
  EXPECT_EQ(a2.producer_id, committed.producer_id);
  EXPECT_EQ(a2.producer_epoch, committed.producer_epoch + 1);
  InitProducerIdResponse b2 = init(*c, "b");
  EXPECT_EQ(b2.producer_id, ongoing.producer_id);
  EXPECT_GT(b2.producer_epoch, ongoing.producer_epoch + 1);
  // Ids are never handed out twice.
  InitProducerIdResponse fresh = init(*c, "c");
  EXPECT_NE(fresh.producer_id, committed.producer_id);
  EXPECT_NE(fresh.producer_id, ongoing.producer_id);
  c.reset();
  ASSERT_OK(engine->Drain());
}

}  // namespace
}  // namespace kaas::broker
