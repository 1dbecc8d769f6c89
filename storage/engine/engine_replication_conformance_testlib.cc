// The replication API's part of the StorageEngine conformance suite (see
// engine_conformance_testlib.h): followers (AppendAsFollower), promotion and
// demotion, truncation, and the broker-managed high watermark. A follower
// here replicates a leader in the same engine: what the leader partition
// stores is exactly what a fetch from it would carry.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/engine_conformance_testlib.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::ControlBatch;
using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::OverwriteBigEndian64;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

const TopicPartition kLeader{"orders", 0};
const TopicPartition kFollower{"replica", 0};

// Every batch of `bytes`, split (whole batches).
std::vector<std::string> Split(absl::string_view bytes) {
  std::vector<std::string> batches;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok() || *size > bytes.size()) {
      ADD_FAILURE() << "not whole batches: " << size.status();
      break;
    }
    batches.emplace_back(bytes.substr(0, *size));
    bytes.remove_prefix(*size);
  }
  return batches;
}

std::vector<int32_t> LeaderEpochs(absl::string_view bytes) {
  std::vector<int32_t> epochs;
  for (const std::string& batch : Split(bytes)) {
    epochs.push_back(
        ReadBigEndian32(batch.data() + batch_layout::kPartitionLeaderEpoch));
  }
  return epochs;
}

// `batch` as a leader would have stored it at `base_offset` in
// `leader_epoch` (neither field is covered by the CRC).
std::string Stored(std::string batch, int64_t base_offset,
                   int32_t leader_epoch) {
  OverwriteBigEndian64(&batch, batch_layout::kBaseOffset, base_offset);
  OverwriteBigEndian32(&batch, batch_layout::kPartitionLeaderEpoch,
                       leader_epoch);
  return batch;
}

// ---- Follower appends ------------------------------------------------------

TEST_P(EngineConformanceTest, FollowerStoresTheLeadersBatchesVerbatim) {
  const std::string log =
      LeaderLog(kLeader, {Batch(3), Batch(2, 16, 2000, 2), Batch(1)}, 3);
  ASSERT_FALSE(log.empty());
  ASSERT_THAT(engine().BecomeFollower(kFollower, 3), IsOkAndHolds(0));
  EXPECT_THAT(engine().PartitionRole(kFollower), Optional(Role::kFollower));
  EXPECT_THAT(engine().PartitionRole(kLeader), Optional(Role::kLeader));

  ASSERT_OK_AND_ASSIGN(AppendResult result, Replicate(kFollower, log, 3));
  EXPECT_EQ(result.base_offset, 0);
  EXPECT_EQ(result.last_offset, 5);
  ASSERT_OK(result.durable.Wait());
  // Byte for byte: offsets and epochs are the leader's.
  EXPECT_EQ(ReadAll(kFollower), log);
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(6));
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch3,
                       engine().OffsetForLeaderEpoch(kFollower, 3));
  EXPECT_EQ(epoch3.leader_epoch, 3);
  EXPECT_EQ(epoch3.end_offset, 6);
  // Batch by batch, as a fetcher that gets one at a time appends them.
  const TopicPartition other{"replica", 1};
  ASSERT_OK(engine().BecomeFollower(other, 3).status());
  for (const std::string& batch : Split(log)) {
    ASSERT_OK(Replicate(other, batch, 3).status());
  }
  EXPECT_EQ(ReadAll(other), log);
}

TEST_P(EngineConformanceTest, FollowerAppendsContinueTheLogEndExactly) {
  const std::vector<std::string> batches =
      Split(LeaderLog(kLeader, {Batch(2), Batch(2), Batch(2)}, 3));
  ASSERT_EQ(batches.size(), 3u);
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  const auto out_of_range =
      HasStorageError(StorageErrorCode::kOffsetOutOfRange);
  // A gap before the first batch, a gap between two, and a batch already
  // stored: the fetcher must truncate or fetch from the log end instead.
  EXPECT_THAT(Replicate(kFollower, batches[1], 3), out_of_range);
  EXPECT_THAT(Replicate(kFollower, batches[0] + batches[2], 3), out_of_range);
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(0))
      << "a refused append stores none of its batches";
  ASSERT_OK(Replicate(kFollower, batches[0], 3).status());
  EXPECT_THAT(Replicate(kFollower, batches[0], 3), out_of_range);
  ASSERT_OK(Replicate(kFollower, batches[1] + batches[2], 3).status());
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(6));
  EXPECT_THAT(Replicate(kFollower, "", 3),
              HasStorageError(StorageErrorCode::kCorruptMessage));
  std::string torn = batches[0];
  torn.resize(torn.size() - 1);
  EXPECT_THAT(Replicate(kFollower, torn, 3),
              HasStorageError(StorageErrorCode::kCorruptMessage));
}

TEST_P(EngineConformanceTest, FollowerAppendsFollowTheEpochRules) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 4).status());
  const std::string batch = Batch(1);
  ASSERT_OK(Replicate(kFollower, Stored(batch, 0, 2), 4).status());
  ASSERT_OK(Replicate(kFollower, Stored(batch, 1, 4), 4).status());
  // An epoch older than one already in the log: not a leader's log.
  EXPECT_THAT(Replicate(kFollower, Stored(batch, 2, 3), 4),
              HasStorageError(StorageErrorCode::kInvalidRecord));
  // A batch from a leader newer than the one this follower knows of.
  EXPECT_THAT(Replicate(kFollower, Stored(batch, 2, 5), 4),
              HasStorageError(StorageErrorCode::kNotLeader));
  // A fetcher of an older epoch is fenced.
  EXPECT_THAT(Replicate(kFollower, Stored(batch, 2, 4), 3),
              HasStorageError(StorageErrorCode::kNotLeader));
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch2,
                       engine().OffsetForLeaderEpoch(kFollower, 2));
  EXPECT_EQ(epoch2.leader_epoch, 2);
  EXPECT_EQ(epoch2.end_offset, 1);
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch3,
                       engine().OffsetForLeaderEpoch(kFollower, 3));
  EXPECT_EQ(epoch3.leader_epoch, 2) << "no epoch 3: the largest below it";
  EXPECT_EQ(epoch3.end_offset, 1);
  EXPECT_THAT(LeaderEpochs(ReadAll(kFollower)), ElementsAre(2, 4));
}

TEST_P(EngineConformanceTest, EachRoleRefusesTheOthersAppends) {
  ASSERT_FALSE(LeaderLog(kLeader, {Batch(1)}, 3).empty());
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  const auto not_leader = HasStorageError(StorageErrorCode::kNotLeader);
  EXPECT_THAT(engine().Append(kFollower, 3, Acks::kAll, Batch()), not_leader);
  EXPECT_THAT(Replicate(kLeader, Stored(Batch(), 1, 3), 3), not_leader);
  // A follower's log end is the leader's business, not a consumer's.
  EXPECT_THAT(engine().TruncateTo(kLeader, 0), not_leader);
  EXPECT_THAT(engine().TruncateFullyAndStartAt(kLeader, 0), not_leader);
  EXPECT_THAT(Replicate({"unknown", 0}, Stored(Batch(), 0, 3), 3), not_leader);
}

TEST_P(EngineConformanceTest, APromotedFollowerLeadsFromItsLogEnd) {
  const std::string log = LeaderLog(kLeader, {Batch(2), Batch(3)}, 3);
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  ASSERT_OK(Replicate(kFollower, log, 3).status());
  ASSERT_THAT(engine().TakeOver(kFollower, 4), IsOkAndHolds(5));
  EXPECT_THAT(engine().PartitionRole(kFollower), Optional(Role::kLeader));
  AppendResult appended = MustAppend(kFollower, Batch(1), 4);
  EXPECT_EQ(appended.base_offset, 5);
  EXPECT_THAT(LeaderEpochs(ReadAll(kFollower)), ElementsAre(3, 3, 4));
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch3,
                       engine().OffsetForLeaderEpoch(kFollower, 3));
  EXPECT_EQ(epoch3.end_offset, 5);

  // Demoted (the old leader becomes a follower of the new one): it stops
  // assigning offsets and takes the new leader's batches.
  ASSERT_THAT(engine().BecomeFollower(kLeader, 4), IsOkAndHolds(5));
  EXPECT_THAT(engine().PartitionRole(kLeader), Optional(Role::kFollower));
  EXPECT_THAT(engine().Append(kLeader, 4, Acks::kAll, Batch()),
              HasStorageError(StorageErrorCode::kNotLeader));
  const std::string new_tail = ReadAll(kFollower, 5);
  ASSERT_OK(Replicate(kLeader, new_tail, 4).status());
  EXPECT_EQ(ReadAll(kLeader), ReadAll(kFollower));
  // Same epoch, same role: idempotent.
  EXPECT_THAT(engine().BecomeFollower(kLeader, 4), IsOkAndHolds(6));
}

// ---- Truncation ------------------------------------------------------------

TEST_P(EngineConformanceTest, TruncateToCutsAtTheBatchHoldingTheOffset) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 5).status());
  const std::string first = Stored(Batch(2), 0, 3);     // 0..1, epoch 3
  const std::string second = Stored(Batch(3), 2, 3);    // 2..4
  const std::string third = Stored(Batch(2, 8), 5, 5);  // 5..6, epoch 5
  ASSERT_OK(Replicate(kFollower, first + second + third, 5).status());

  // Offset 3 is inside the second batch: the whole batch goes.
  EXPECT_THAT(engine().TruncateTo(kFollower, 3), IsOkAndHolds(2));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(2));
  EXPECT_EQ(ReadAll(kFollower), first);
  EXPECT_THAT(engine().PartitionSize(kFollower), IsOkAndHolds(first.size()));
  // Epoch 5 began past the cut: forgotten (unknown, as Kafka answers an
  // epoch newer than any in the history), and epoch 3 ends the log.
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch5,
                       engine().OffsetForLeaderEpoch(kFollower, 5));
  EXPECT_EQ(epoch5.leader_epoch, -1);
  EXPECT_EQ(epoch5.end_offset, -1);
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch3,
                       engine().OffsetForLeaderEpoch(kFollower, 3));
  EXPECT_EQ(epoch3.leader_epoch, 3);
  EXPECT_EQ(epoch3.end_offset, 2);
  EXPECT_THAT(engine().PartitionRole(kFollower), Optional(Role::kFollower));
  EXPECT_THAT(engine().PartitionEpoch(kFollower), Optional(5));

  // The fetcher continues from the new log end, with the leader's batches.
  const std::string replacement = Stored(Batch(1, 4), 2, 5);
  ASSERT_OK(Replicate(kFollower, replacement, 5).status());
  EXPECT_EQ(ReadAll(kFollower), first + replacement);
  // At or past the log end: nothing to cut.
  EXPECT_THAT(engine().TruncateTo(kFollower, 3), IsOkAndHolds(3));
  EXPECT_THAT(engine().TruncateTo(kFollower, 100), IsOkAndHolds(3));
  EXPECT_EQ(ReadAll(kFollower), first + replacement);
  // To 0: an empty log that still starts at 0.
  EXPECT_THAT(engine().TruncateTo(kFollower, 0), IsOkAndHolds(0));
  EXPECT_EQ(ReadAll(kFollower), "");
  EXPECT_THAT(engine().LogStartOffset(kFollower), IsOkAndHolds(0));
}

TEST_P(EngineConformanceTest, TruncationForgetsTheProducerStateItCuts) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  // Producer 7: sequences 0..1 (offsets 0..1), then 2..3 (offsets 2..3).
  const std::string kept = Stored(ProducerBatch(7, 0, 0, 2), 0, 3);
  const std::string cut = Stored(ProducerBatch(7, 0, 2, 2), 2, 3);
  ASSERT_OK(Replicate(kFollower, kept + cut, 3).status());
  ASSERT_THAT(engine().TruncateTo(kFollower, 2), IsOkAndHolds(2));
  // Promoted, it must take sequence 2 again as new (the cut batch was never
  // committed) and refuse 4 (a gap after the kept batch).
  ASSERT_OK(engine().TakeOver(kFollower, 4).status());
  EXPECT_THAT(engine().AppendAndWait(kFollower, 4, Acks::kAll,
                                     ProducerBatch(7, 0, 4, 1)),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  AppendResult retried = MustAppend(kFollower, ProducerBatch(7, 0, 2, 2), 4);
  EXPECT_FALSE(retried.duplicate);
  EXPECT_EQ(retried.base_offset, 2);
  // A retry of the kept one is still a duplicate.
  AppendResult duplicate = MustAppend(kFollower, ProducerBatch(7, 0, 0, 2), 4);
  EXPECT_TRUE(duplicate.duplicate);
  EXPECT_EQ(duplicate.base_offset, 0);
}

// Found by opfuzz: a producer whose batches DeleteRecords removed keeps its
// state (the disk engine's snapshots keep it, as Kafka's do), also across a
// truncation that cuts later batches.
TEST_P(EngineConformanceTest, TruncationKeepsTheProducersOfDeletedRecords) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  ASSERT_OK(Replicate(kFollower,
                      Stored(ProducerBatch(7, 0, 0, 2), 0, 3) +
                          Stored(Batch(2), 2, 3) + Stored(Batch(1), 4, 3),
                      3)
                .status());
  ASSERT_THAT(engine().DeleteRecords(kFollower, 2), IsOkAndHolds(2));
  ASSERT_THAT(engine().TruncateTo(kFollower, 4), IsOkAndHolds(4));
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       engine().DescribeProducers(kFollower));
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].producer_id, 7);
  EXPECT_EQ(producers[0].last_sequence, 1);
  // Promoted, it still knows the producer's sequence: a gap is refused.
  ASSERT_OK(engine().TakeOver(kFollower, 4).status());
  EXPECT_THAT(engine().AppendAndWait(kFollower, 4, Acks::kAll,
                                     ProducerBatch(7, 0, 5, 1)),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  EXPECT_EQ(MustAppend(kFollower, ProducerBatch(7, 0, 2, 1), 4).base_offset, 4);
}

TEST_P(EngineConformanceTest, TruncationForgetsTheTransactionStateItCuts) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  const std::string data =
      Stored(ProducerBatch(5, 0, 0, 2, /*transactional=*/true), 0, 3);
  const std::string abort =
      Stored(ControlBatch(ControlType::kAbort, 5, 0, 0, 2000), 2, 3);
  ASSERT_OK(Replicate(kFollower, data + abort, 3).status());
  EXPECT_THAT(engine().AbortedTransactionsInRange(kFollower, 0, 3),
              IsOkAndHolds(ElementsAre(
                  ::testing::Field(&AbortedTransaction::first_offset, 0))));
  EXPECT_THAT(engine().LastStableOffset(kFollower), IsOkAndHolds(3));
  // Without its marker the transaction is open again.
  ASSERT_THAT(engine().TruncateTo(kFollower, 2), IsOkAndHolds(2));
  EXPECT_THAT(engine().AbortedTransactionsInRange(kFollower, 0, 3),
              IsOkAndHolds(IsEmpty()));
  EXPECT_THAT(engine().LastStableOffset(kFollower), IsOkAndHolds(0));
  // And the leader's marker completes it again.
  ASSERT_OK(Replicate(kFollower, abort, 3).status());
  EXPECT_THAT(engine().LastStableOffset(kFollower), IsOkAndHolds(3));
}

TEST_P(EngineConformanceTest, TruncateToBelowTheLogStartIsOutOfRange) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  ASSERT_OK(
      Replicate(kFollower, Stored(Batch(2), 0, 3) + Stored(Batch(2), 2, 3), 3)
          .status());
  ASSERT_THAT(engine().DeleteRecords(kFollower, 2), IsOkAndHolds(2));
  EXPECT_THAT(engine().TruncateTo(kFollower, 1),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(4));
}

TEST_P(EngineConformanceTest, TruncateFullyRestartsTheLogAtTheOffset) {
  ASSERT_OK(engine().BecomeFollower(kFollower, 3).status());
  ASSERT_OK(Replicate(kFollower,
                      Stored(ProducerBatch(7, 0, 0, 2), 0, 3) +
                          Stored(Batch(2), 2, 3),
                      3)
                .status());
  ASSERT_OK(engine().TruncateFullyAndStartAt(kFollower, 100));
  EXPECT_THAT(engine().LogStartOffset(kFollower), IsOkAndHolds(100));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(100));
  EXPECT_THAT(engine().PartitionSize(kFollower), IsOkAndHolds(0u));
  EXPECT_THAT(engine().Read(kFollower, 0, 1024, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  ASSERT_OK_AND_ASSIGN(EpochEndOffset epoch3,
                       engine().OffsetForLeaderEpoch(kFollower, 3));
  EXPECT_EQ(epoch3.end_offset, -1) << "no epoch history left";
  // The leader's log from its log start on.
  const std::string next = Stored(Batch(1), 100, 3);
  ASSERT_OK(Replicate(kFollower, next, 3).status());
  EXPECT_EQ(ReadAll(kFollower, 100), next);
  // No producer state left: promoted, producer 7 starts over.
  ASSERT_OK(engine().TakeOver(kFollower, 4).status());
  EXPECT_FALSE(MustAppend(kFollower, ProducerBatch(7, 0, 0, 2), 4).duplicate);
  // Back to following, a negative start is refused.
  ASSERT_OK(engine().BecomeFollower(kFollower, 5).status());
  EXPECT_THAT(engine().TruncateFullyAndStartAt(kFollower, -1),
              HasStorageError(StorageErrorCode::kInvalidRequest));
}

// ---- Broker-managed high watermark -----------------------------------------

TEST_P(EngineConformanceTest, BrokerManagedHighWatermarkBoundsConsumers) {
  UseEngine(EngineSettings{.broker_managed_high_watermark = true});
  // What it stored is not visible yet: nothing to compare.
  LeaderLog(kLeader, {Batch(1), Batch(1), Batch(1)}, 3);
  ASSERT_FALSE(HasFailure());
  // Nothing is committed until the broker says so.
  EXPECT_THAT(engine().HighWatermark(kLeader), IsOkAndHolds(0));
  ASSERT_OK_AND_ASSIGN(
      ReadResult consumer,
      engine().Read(kLeader, 0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(consumer.batches, 0);
  EXPECT_EQ(consumer.high_watermark, 0);
  EXPECT_EQ(consumer.log_end_offset, 3);
  // Replicas read to the log end.
  ASSERT_OK_AND_ASSIGN(ReadResult replica,
                       engine().Read(kLeader, 0, 1 << 20, Isolation::kReplica));
  EXPECT_THAT(BaseOffsets(std::string(replica.records)), ElementsAre(0, 1, 2));

  ASSERT_OK(engine().SetHighWatermark(kLeader, 2));
  EXPECT_THAT(engine().HighWatermark(kLeader), IsOkAndHolds(2));
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp latest,
      engine().OffsetForTimestamp(kLeader, -1, Isolation::kReadUncommitted));
  EXPECT_EQ(latest.offset, 2);
  ASSERT_OK_AND_ASSIGN(
      latest, engine().OffsetForTimestamp(kLeader, -1, Isolation::kReplica));
  EXPECT_EQ(latest.offset, 3);
  EXPECT_THAT(engine().LastStableOffset(kLeader), IsOkAndHolds(2));
  EXPECT_THAT(BaseOffsets(ReadAll(kLeader)), ElementsAre(0, 1));
  EXPECT_THAT(BaseOffsets(ReadAll(kLeader, 0, Isolation::kReadCommitted)),
              ElementsAre(0, 1));
  EXPECT_THAT(engine().Read(kLeader, 3, 1024, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(engine().DeleteRecords(kLeader, 3),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  // Never backwards; never past the log end.
  ASSERT_OK(engine().SetHighWatermark(kLeader, 1));
  EXPECT_THAT(engine().HighWatermark(kLeader), IsOkAndHolds(2));
  ASSERT_OK(engine().SetHighWatermark(kLeader, 100));
  EXPECT_THAT(engine().HighWatermark(kLeader), IsOkAndHolds(3));
  EXPECT_THAT(engine().DeleteRecords(kLeader, -1), IsOkAndHolds(3));
}

// A follower's truncation keeps the broker's high watermark, lowered only
// to the new log end (Kafka's truncateTo); a full truncation restarts it at
// the new log start.
TEST_P(EngineConformanceTest,
       ATruncationKeepsTheBrokerHighWatermarkUpToTheEnd) {
  UseEngine(EngineSettings{.broker_managed_high_watermark = true});
  LeaderLog(kLeader, {Batch(1), Batch(1), Batch(1), Batch(1), Batch(1)}, 3);
  ASSERT_OK(engine().SetHighWatermark(kLeader, 5));
  const std::string log = ReadAll(kLeader);
  ASSERT_EQ(BaseOffsets(log).size(), 5u);
  ASSERT_THAT(engine().BecomeFollower(kFollower, 3), IsOkAndHolds(0));
  ASSERT_OK(Replicate(kFollower, log, 3).status());
  ASSERT_OK(engine().SetHighWatermark(kFollower, 2));
  EXPECT_THAT(engine().TruncateTo(kFollower, 4), IsOkAndHolds(4));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(2));
  ASSERT_OK(engine().SetHighWatermark(kFollower, 4));
  EXPECT_THAT(engine().TruncateTo(kFollower, 3), IsOkAndHolds(3));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(3));
  ASSERT_OK(engine().TruncateFullyAndStartAt(kFollower, 10));
  EXPECT_THAT(engine().HighWatermark(kFollower), IsOkAndHolds(10));
}

TEST_P(EngineConformanceTest, TheEngineManagesTheHighWatermarkByDefault) {
  ASSERT_FALSE(LeaderLog(kLeader, {Batch(2)}, 3).empty());
  EXPECT_THAT(engine().SetHighWatermark(kLeader, 1),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  EXPECT_THAT(engine().HighWatermark(kLeader), IsOkAndHolds(2));
  EXPECT_THAT(engine().SetHighWatermark({"unknown", 0}, 1),
              HasStorageError(StorageErrorCode::kNotLeader));
}

}  // namespace
}  // namespace kaas
