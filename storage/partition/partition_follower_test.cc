// A follower's partition across crashes (simulated power loss through the
// fault-injecting filesystem): the epoch history it learns from replicated
// batches survives, and a truncation is all or nothing.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition_testlib.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::ControlBatch;
using ::kaas::test::OverwriteBigEndian32;
using ::kaas::test::OverwriteBigEndian64;

class FollowerTest : public PartitionTest {
 protected:
  // `batch` as the leader stored it at `base_offset` in `leader_epoch`.
  static std::string Stored(std::string batch, int64_t base_offset,
                            int32_t leader_epoch) {
    OverwriteBigEndian64(&batch, batch_layout::kBaseOffset, base_offset);
    OverwriteBigEndian32(&batch, batch_layout::kPartitionLeaderEpoch,
                         leader_epoch);
    return batch;
  }

  std::shared_ptr<Partition> OpenFollower(int64_t epoch,
                                          const PartitionConfig& config) {
    std::shared_ptr<Partition> partition = Open(config);
    if (partition == nullptr) return nullptr;
    EXPECT_OK(partition->TakeOver(epoch, Role::kFollower).status());
    return partition;
  }

  // Replicates `count` batches of 4 records at `leader_epoch` from the log
  // end, durably.
  void Replicate(Partition& partition, int count, int32_t leader_epoch,
                 int64_t follower_epoch) {
    for (int i = 0; i < count; ++i) {
      const int64_t end = partition.LogEndOffset();
      absl::StatusOr<AppendResult> result = partition.AppendAsFollower(
          Stored(Batch(4, 100), end, leader_epoch), follower_epoch, Acks::kAll);
      ASSERT_OK(result.status());
      ASSERT_OK(result->durable.Wait());
    }
  }

  // Crashes, drops the dead process's handles and reopens as follower.
  std::shared_ptr<Partition> CrashAndReopen(std::shared_ptr<Partition> old,
                                            int64_t epoch,
                                            const PartitionConfig& config) {
    test::CrashOptions crash;
    crash.tail = test::UnsyncedTail::kDrop;
    fs().Crash(crash);
    if (old != nullptr) old->Abandon();
    old.reset();
    return OpenFollower(epoch, config);
  }
};

// Recovery verifies, and so learns epochs from, only the log past the
// recovery checkpoint: before a checkpoint passes the start of an epoch the
// follower learned from its leader's batches, the manifest holds it.
TEST_F(FollowerTest, EpochsBelowTheCheckpointSurviveACrash) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 256;  // a checkpoint every cycle
  auto partition = OpenFollower(7, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 3, /*leader_epoch=*/2, 7);  // [0, 12)
  Replicate(*partition, 3, /*leader_epoch=*/5, 7);  // [12, 24)
  Replicate(*partition, 3, /*leader_epoch=*/6, 7);  // [24, 36): past it
  partition = CrashAndReopen(std::move(partition), 7, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 36);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 12);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(5).end_offset, 24);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(6).end_offset, 36);
}

// Without any checkpoint after the take-over, the manifest has not heard of
// the replicated epochs: recovery learns them from the batches it verifies.
TEST_F(FollowerTest, EpochsPastTheCheckpointAreLearnedFromTheBatches) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 1 << 30;  // none after the take-over
  auto partition = OpenFollower(7, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 2, /*leader_epoch=*/2, 7);  // [0, 8)
  Replicate(*partition, 2, /*leader_epoch=*/5, 7);  // [8, 16)
  partition = CrashAndReopen(std::move(partition), 7, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 16);
  EpochEndOffset epoch2 = partition->OffsetForLeaderEpoch(2);
  EXPECT_EQ(epoch2.leader_epoch, 2);
  EXPECT_EQ(epoch2.end_offset, 8);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(5).end_offset, 16);
}

// The intent is durable when PrepareTruncation returns; a crash before the
// reopen carries it out leaves the log cut, never whole and never a mix,
// even if every unsynced byte of the removed tail survived.
TEST_F(FollowerTest, ACrashAfterTheIntentLeavesTheLogTruncated) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;  // several segments: whole ones go too
  auto partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 10, /*leader_epoch=*/2, 3);  // [0, 40)
  Replicate(*partition, 5, /*leader_epoch=*/3, 3);   // [40, 60)
  const std::string whole = ReadAll(*partition, 0);
  const size_t batch_size = Batch(4, 100).size();
  ASSERT_OK_AND_ASSIGN(int64_t end, partition->PrepareTruncation(22, false));
  EXPECT_EQ(end, 20) << "the whole batch holding offset 22 goes";
  test::CrashOptions crash;
  crash.tail = test::UnsyncedTail::kKeepAll;
  fs().Crash(crash);
  partition->Abandon();
  partition.reset();
  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  EXPECT_EQ(ReadAll(*partition, 0), whole.substr(0, 5 * batch_size))
      << "batches [0, 20), byte for byte";
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 20);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(3).leader_epoch, -1)
      << "epoch 3 began past the cut: unknown";
  // Stable: another open finds the same log, and the fetcher continues.
  partition = CrashAndReopen(std::move(partition), 3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  Replicate(*partition, 1, /*leader_epoch=*/3, 3);
  EXPECT_EQ(partition->LogEndOffset(), 24);
}

// A truncation rebuilds the producer state at the cut from the newest
// snapshot at or before it and the log after that: after DeleteRecords the
// snapshot at the base of the first segment kept is there, so the state of
// the deleted segments' producers survives.
TEST_F(FollowerTest, ATruncationAfterDeleteRecordsKeepsTheProducerState) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.checkpoint_interval_bytes = 1 << 30;  // snapshots at rolls only
  auto partition = OpenLeader(1, config);
  const ProducerBelowTheLogStart deleted = DeleteAProducersBatches(*partition);
  const int64_t target = deleted.log_start;
  ASSERT_OK(partition->Relinquish());
  partition.reset();

  partition = OpenFollower(2, config);
  ASSERT_NE(partition, nullptr);
  ASSERT_OK_AND_ASSIGN(int64_t end,
                       partition->PrepareTruncation(target + 2, false));
  EXPECT_EQ(end, target + 2);
  partition->Abandon();
  partition.reset();
  partition = OpenFollower(2, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogStartOffset(), target);
  EXPECT_EQ(partition->LogEndOffset(), target + 2);
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].producer_id, 5);
  EXPECT_EQ(producers[0].last_sequence, deleted.next_sequence - 1);
}

// The same with the cut at the log start: no segment is left to verify, and
// the state comes from the snapshot at the log start.
TEST_F(FollowerTest, ATruncationToTheLogStartKeepsTheProducerState) {
  PartitionConfig config = SmallConfig();
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, ProducerBatch(5, 0, 0, 2));  // [0, 2)
  ASSERT_OK(partition->TakeOver(2).status());            // a roll at 2
  AppendDurably(*partition, Batch(2), 2);                // [2, 4)
  ASSERT_OK(partition->DeleteRecords(2).status());
  ASSERT_OK(partition->Relinquish());
  partition.reset();

  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_THAT(partition->PrepareTruncation(2, false), test::IsOkAndHolds(2));
  partition->Abandon();
  partition.reset();
  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogStartOffset(), 2);
  EXPECT_EQ(partition->LogEndOffset(), 2);
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].last_sequence, 1);
}

// A segment that leaves the log (DeleteRecords) while its seal's fdatasync
// is still under way lets go of its write lock at once: the reopen that
// completes a truncation, which the engine runs while it still holds the old
// partition object, locks the segments it finds for writing and would take
// the old lock for another writer's (found by engine_opfuzz_test).
TEST_F(FollowerTest, ASegmentDeletedBeforeItsSyncKeepsNoWriteLock) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 1024;
  config.flush_interval_messages = 0;  // acks=1 appends start no cycle
  auto partition = OpenLeader(1, config);
  // The roll's cycle is held in the sealed segment's fdatasync.
  fs().BlockSyncs(test::PathPattern::Substring(LogFileName(1, 0)));
  while (partition->Segments().size() < 2) {
    ASSERT_OK(partition->Append(Batch(1, 100), 1, Acks::kLeader).status());
  }
  fs().WaitUntilBlockedSyncs(1);
  const int64_t target = partition->Segments().back().base_offset;
  ASSERT_OK(partition->DeleteRecords(target).status());
  ASSERT_OK(partition->TakeOver(2, Role::kFollower).status());
  ASSERT_OK_AND_ASSIGN(int64_t end,
                       partition->PrepareTruncation(target, false));
  EXPECT_EQ(end, target);
  // The held cycle ends on a closed partition, which releases nothing.
  fs().ReleaseSyncs();
  // The old object is still alive, as in DiskEngine::Truncate.
  std::shared_ptr<Partition> reopened = OpenFollower(2, config);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->LogStartOffset(), target);
  EXPECT_EQ(reopened->LogEndOffset(), target);
}

// A truncation to the log start leaves no batch readable: the epochs
// recovery learns from the batches it verifies are only those of batches
// at or past the log start (DeleteRecords forgot the others), so no epoch
// ends at or below the log start.
TEST_F(FollowerTest, ATruncationToTheLogStartKeepsNoEpochBelowIt) {
  PartitionConfig config = SmallConfig();
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 3; ++i) AppendDurably(*partition, Batch(2), 1);  // [0, 6)
  ASSERT_OK(partition->TakeOver(2).status());
  for (int i = 0; i < 3; ++i)
    AppendDurably(*partition, Batch(2), 2);  // [6, 12)
  ASSERT_OK(partition->DeleteRecords(8).status());
  EXPECT_EQ(partition->OffsetForLeaderEpoch(1).end_offset, 8)
      << "epoch 2 now starts at the log start";
  ASSERT_OK(partition->Relinquish());
  partition.reset();

  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  ASSERT_OK_AND_ASSIGN(int64_t end, partition->PrepareTruncation(8, false));
  EXPECT_EQ(end, 8);
  partition->Abandon();
  partition.reset();
  // Without the checkpoint at the cut, recovery verifies (and learns the
  // epochs of) the whole segment, batches below the log start included.
  ASSERT_OK(fs().Unlink(PathOf(metadata::kCheckpointFileName)));
  partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogStartOffset(), 8);
  EXPECT_EQ(partition->LogEndOffset(), 8);
  // Kafka's truncateTo(8) forgets epoch 2, which began at 8 once the log
  // start moved there: no epoch is known.
  for (int32_t epoch : {1, 2}) {
    const EpochEndOffset answer = partition->OffsetForLeaderEpoch(epoch);
    EXPECT_EQ(answer.leader_epoch, -1)
        << "epoch " << epoch << ": " << answer.leader_epoch << "/"
        << answer.end_offset;
  }
}

// The intent did not reach the disk (the manifest write failed): the
// partition is closed, and the reopen finds the log as it was.
TEST_F(FollowerTest, ATruncationWhoseIntentFailedLeavesTheLogWhole) {
  PartitionConfig config = SmallConfig();
  auto partition = OpenFollower(3, config);
  ASSERT_NE(partition, nullptr);
  Replicate(*partition, 5, /*leader_epoch=*/3, 3);  // [0, 20)
  const std::string whole = ReadAll(*partition, 0);
  test::Fault fault(test::FsOp::kRename, EIO);
  fault.path = test::PathPattern::Substring("manifest");
  fault.count = test::Fault::kForever;
  fs().InjectFault(fault);
  EXPECT_FALSE(partition->PrepareTruncation(8, false).ok());
  fs().ClearFaults();
  partition = CrashAndReopen(std::move(partition), 3, config);
  ASSERT_NE(partition, nullptr);
  EXPECT_EQ(partition->LogEndOffset(), 20);
  EXPECT_EQ(ReadAll(*partition, 0), whole);
}

// ---- Truncation under power loss, against a model ---------------------------

// What the leader replicated, batch by batch: enough to say what a prefix of
// the log must leave in the epoch history, the producer state and the
// aborted-transaction index.
struct ModelBatch {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int32_t leader_epoch = 0;
  int64_t producer_id = -1;  // -1: not a producer's
  int32_t last_sequence = -1;
  bool transactional = false;
  std::optional<ControlType> marker;
};

struct ModelState {
  std::map<int32_t, int64_t> epoch_starts;   // epoch -> first offset
  std::map<int64_t, int32_t> last_sequence;  // producer -> last sequence
  std::map<int64_t, int64_t> open_since;     // producer -> txn first offset
  std::vector<AbortedTransaction> aborted;
};

ModelState ModelOf(const std::vector<ModelBatch>& log, int64_t end) {
  ModelState state;
  for (const ModelBatch& batch : log) {
    if (batch.base_offset >= end) break;
    if (state.epoch_starts.empty() ||
        state.epoch_starts.rbegin()->first < batch.leader_epoch) {
      state.epoch_starts[batch.leader_epoch] = batch.base_offset;
    }
    if (batch.producer_id < 0) continue;
    if (batch.marker.has_value()) {
      auto open = state.open_since.find(batch.producer_id);
      if (open != state.open_since.end()) {
        if (*batch.marker == ControlType::kAbort) {
          state.aborted.push_back(
              {batch.producer_id, open->second, batch.base_offset});
        }
        state.open_since.erase(open);
      }
      continue;
    }
    state.last_sequence[batch.producer_id] = batch.last_sequence;
    if (batch.transactional) {
      state.open_since.try_emplace(batch.producer_id, batch.base_offset);
    }
  }
  // The index answers in first-offset order.
  std::sort(state.aborted.begin(), state.aborted.end(),
            [](const AbortedTransaction& a, const AbortedTransaction& b) {
              return a.first_offset < b.first_offset;
            });
  return state;
}

class TruncationCrashTest : public FollowerTest,
                            public ::testing::WithParamInterface<int> {};

// Replicates a random log (epochs, idempotent and transactional producers,
// markers), then truncates at a random offset while the "machine" dies at a
// random filesystem operation of the truncation (every later operation
// fails, then power is lost). The reopened log is the whole one or the cut
// one, byte for byte, and its epochs, producer state and aborted ranges are
// the model's for that prefix; the fetcher then continues from its end.
TEST_P(TruncationCrashTest, ATruncationIsAllOrNothingUnderPowerLoss) {
  const int seed = GetParam();
  std::mt19937_64 random(seed);
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.checkpoint_interval_bytes = 512;
  constexpr int64_t kFollowerEpoch = 9;
  auto partition = OpenFollower(kFollowerEpoch, config);
  ASSERT_NE(partition, nullptr);

  std::vector<ModelBatch> log;
  std::map<int64_t, int32_t> next_sequence;
  std::map<int64_t, bool> in_txn;
  int32_t epoch = 1;
  int64_t end = 0;
  for (int i = 0; i < 60; ++i) {
    if (random() % 8 == 0 && epoch < kFollowerEpoch) ++epoch;
    ModelBatch model;
    model.base_offset = end;
    model.leader_epoch = epoch;
    std::string batch;
    const int kind = static_cast<int>(random() % 6);
    const int64_t producer = 1 + static_cast<int64_t>(random() % 2);
    if (kind <= 1) {
      batch = Batch(1 + static_cast<int>(random() % 3), 40);
    } else if (kind <= 3 || !in_txn[producer]) {
      const bool transactional = kind == 3 || (kind > 3 && random() % 2);
      const int records = 1 + static_cast<int>(random() % 3);
      batch = ProducerBatch(producer, 0, next_sequence[producer], records,
                            transactional);
      model.producer_id = producer;
      model.last_sequence = next_sequence[producer] + records - 1;
      model.transactional = transactional;
      next_sequence[producer] += records;
      if (transactional) in_txn[producer] = true;
    } else {
      const ControlType type =
          random() % 2 ? ControlType::kAbort : ControlType::kCommit;
      batch = ControlBatch(type, producer, 0, 0, 2000);
      model.producer_id = producer;
      model.marker = type;
      in_txn[producer] = false;
    }
    batch = Stored(std::move(batch), end, epoch);
    absl::StatusOr<RecordBatchView> view = RecordBatchView::Parse(batch);
    ASSERT_OK(view.status());
    model.last_offset = view->last_offset();
    absl::StatusOr<AppendResult> result =
        partition->AppendAsFollower(batch, kFollowerEpoch, Acks::kAll);
    ASSERT_OK(result.status());
    ASSERT_OK(result->durable.Wait());
    log.push_back(model);
    end = model.last_offset + 1;
  }
  const std::string whole = ReadAll(*partition, 0);
  const int64_t target = static_cast<int64_t>(random() % (end + 1));
  int64_t cut = end;  // the whole batch holding `target` goes
  for (const ModelBatch& batch : log) {
    if (batch.last_offset >= target) {
      cut = batch.base_offset;
      break;
    }
  }

  // The machine dies at the k-th filesystem operation of the truncation.
  const int64_t before = fs().Count(test::FsOp::kAny);
  {
    test::Fault fault(test::FsOp::kAny, EIO);
    fault.skip = static_cast<int>(random() % 24);
    fault.count = test::Fault::kForever;
    fs().InjectFault(fault);
  }
  absl::StatusOr<int64_t> prepared =
      partition->PrepareTruncation(target, false);
  const bool finished = prepared.ok();
  test::CrashOptions crash;
  crash.tail =
      seed % 2 ? test::UnsyncedTail::kKeepAll : test::UnsyncedTail::kDrop;
  fs().Crash(crash);
  fs().ClearFaults();
  partition->Abandon();
  partition.reset();
  SCOPED_TRACE(::testing::Message()
               << "seed " << seed << ": truncate to " << target << " (cut "
               << cut << ") of [0, " << end << "), "
               << fs().Count(test::FsOp::kAny) - before
               << " operations before the crash, prepared: "
               << (finished ? "yes" : prepared.status().ToString()));
  partition = OpenFollower(kFollowerEpoch, config);
  ASSERT_NE(partition, nullptr);
  const int64_t recovered = partition->LogEndOffset();
  if (finished) {
    ASSERT_EQ(recovered, cut) << "the intent was durable";
  } else {
    ASSERT_TRUE(recovered == cut || recovered == end) << recovered;
  }
  const std::string kept = ReadAll(*partition, 0);
  ASSERT_EQ(kept, whole.substr(0, kept.size())) << "a prefix, byte for byte";

  const ModelState model = ModelOf(log, recovered);
  for (auto it = model.epoch_starts.begin(); it != model.epoch_starts.end();
       ++it) {
    auto next = std::next(it);
    const int64_t epoch_end =
        next == model.epoch_starts.end() ? recovered : next->second;
    EpochEndOffset answer = partition->OffsetForLeaderEpoch(it->first);
    EXPECT_EQ(answer.leader_epoch, it->first);
    EXPECT_EQ(answer.end_offset, epoch_end) << "epoch " << it->first;
  }
  if (!model.epoch_starts.empty()) {
    EXPECT_EQ(partition->OffsetForLeaderEpoch(kFollowerEpoch).leader_epoch,
              model.epoch_starts.rbegin()->first == kFollowerEpoch
                  ? kFollowerEpoch
                  : -1)
        << "no epoch past the log";
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  std::map<int64_t, int32_t> sequences;
  std::map<int64_t, int64_t> open_since;
  for (const ProducerDescription& producer : producers) {
    sequences[producer.producer_id] = producer.last_sequence;
    if (producer.current_txn_start_offset >= 0) {
      open_since[producer.producer_id] = producer.current_txn_start_offset;
    }
  }
  EXPECT_EQ(sequences, model.last_sequence);
  EXPECT_EQ(open_since, model.open_since);
  EXPECT_EQ(partition->AbortedTransactions(0, recovered + 1), model.aborted);

  // The fetcher continues from the recovered end.
  const int64_t next_base = recovered;
  ASSERT_OK(partition
                ->AppendAsFollower(Stored(Batch(1), next_base, kFollowerEpoch),
                                   kFollowerEpoch, Acks::kAll)
                .status());
  EXPECT_EQ(partition->LogEndOffset(), next_base + 1);
}

INSTANTIATE_TEST_SUITE_P(Seeds, TruncationCrashTest, ::testing::Range(0, 40));

}  // namespace
}  // namespace kaas::partition
