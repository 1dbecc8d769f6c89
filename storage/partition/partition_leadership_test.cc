// Take-over, relinquish, abandon, delete_records.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition_testlib.h"
#include "storage/segment/segment_name.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

int CountSuffix(const std::vector<std::string>& names,
                absl::string_view suffix) {
  int n = 0;
  for (const std::string& name : names) n += absl::EndsWith(name, suffix);
  return n;
}

// The epochs of the .log files in `names`, in log order (by base offset).
std::vector<uint32_t> LogEpochs(const std::vector<std::string>& names) {
  std::vector<segment::SegmentId> ids;
  for (const std::string& name : names) {
    std::optional<segment::ParsedSegmentFile> parsed =
        segment::ParseSegmentFileName(name);
    if (parsed && parsed->kind == segment::SegmentFileKind::kLog) {
      ids.push_back(parsed->id);
    }
  }
  std::sort(ids.begin(), ids.end(),
            [](const segment::SegmentId& a, const segment::SegmentId& b) {
              return a.base_offset < b.base_offset;
            });
  std::vector<uint32_t> epochs;
  for (const segment::SegmentId& id : ids) epochs.push_back(id.epoch);
  return epochs;
}

// What the partition writes to disk: opens for writing, writes, truncations,
// renames and unlinks (not syncs, reads or closes).
int64_t PersistOps(test::FaultInjectingFileSystem& fs) {
  int64_t n = 0;
  for (test::FsOp op :
       {test::FsOp::kOpenForWrite, test::FsOp::kWrite, test::FsOp::kTruncate,
        test::FsOp::kRename, test::FsOp::kUnlink}) {
    n += fs.Count(op);
  }
  return n;
}

// Drops the last reference and waits until the partition is gone, i.e.
// until the sync cycle in flight (which holds one) has returned.
void DestroyOnceIdle(std::shared_ptr<Partition> partition) {
  std::weak_ptr<Partition> weak = partition;
  partition.reset();
  while (!weak.expired()) std::this_thread::yield();
}

// With a write of `partition` held in a blocked sync: abandons it (the
// sync is released once it is closed, so Abandon waits for that write) and
// checks that nothing is written after Abandon returned, until the last
// cycle in flight is gone.
void ExpectAbandonWritesNothingOnceItReturned(
    test::FaultInjectingFileSystem& fs, std::shared_ptr<Partition> partition) {
  std::thread release([&] {
    while (!partition->is_closed()) std::this_thread::yield();
    fs.ReleaseSyncs();
  });
  partition->Abandon();
  const int64_t written = PersistOps(fs);
  release.join();
  DestroyOnceIdle(std::move(partition));
  EXPECT_EQ(PersistOps(fs), written);
}

TEST_F(PartitionTest, TakeOverRollsToASegmentOfTheNewEpoch) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(4), 1);
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(6));
  EXPECT_EQ(log_end, 4);
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_THAT(ListDir(), Contains("00000001-00000000000000000000.log"));
  EXPECT_THAT(ListDir(), Contains("00000006-00000000000000000004.log"));
  // The old leader's epoch is fenced; the new one appends at offset 4.
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_EQ(AppendDurably(*partition, Batch(), 6), 4);
  EXPECT_EQ(ReadAll(*partition).size(), Batch(4).size() + Batch().size());
}

TEST_F(PartitionTest, TakeOverOverAnEmptySegmentLeavesOneFile) {
  auto partition = OpenLeader(7);
  EXPECT_EQ(CountSuffix(ListDir(), ".log"), 1);
  EXPECT_THAT(ListDir(), Contains("00000007-00000000000000000000.log"));
  EXPECT_EQ(partition->Segments().size(), 1u);
}

// Creating a partition costs one round of metadata writes, not two: the
// open of an empty directory writes no manifest, checkpoint or snapshot
// (the take-over that follows writes them at its epoch), and a crash between
// the two leaves a directory that opens and takes over normally.
TEST_F(PartitionTest, OpeningABrandNewPartitionWritesMetadataOnlyAtTakeOver) {
  auto partition = Open();
  EXPECT_THAT(ListDir(),
              Not(Contains(std::string(metadata::kManifestFileName))));
  EXPECT_THAT(ListDir(),
              Not(Contains(std::string(metadata::kCheckpointFileName))));
  EXPECT_EQ(CountSuffix(ListDir(), metadata::kSnapshotSuffix), 0);

  fs().Crash();
  partition.reset();
  partition = Open();
  ASSERT_OK(partition->TakeOver(3).status());
  EXPECT_THAT(ListDir(), Contains(std::string(metadata::kManifestFileName)));
  EXPECT_THAT(ListDir(), Contains(std::string(metadata::kCheckpointFileName)));
  EXPECT_EQ(CountSuffix(ListDir(), metadata::kSnapshotSuffix), 1);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 3), 0);
}

TEST_F(PartitionTest, TakeOverAtOrBelowTheCurrentEpochIsANoOp) {
  auto partition = OpenLeader(4);
  AppendDurably(*partition, Batch(2), 4);
  for (int64_t epoch : {4, 3, 0}) {
    ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(epoch));
    EXPECT_EQ(log_end, 2);
  }
  EXPECT_EQ(partition->LeaderEpoch(), 4);
  EXPECT_EQ(partition->Segments().size(), 1u);
}

TEST_F(PartitionTest, TakeOverBelowTheDurableEpochAfterReopenIsRefused) {
  {
    auto partition = OpenLeader(9);
    ASSERT_OK(partition->Relinquish());
  }
  auto partition = Open();
  EXPECT_EQ(partition->LeaderEpoch(), 9);
  EXPECT_THAT(partition->TakeOver(8).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("older than the durable")));
  EXPECT_OK(partition->TakeOver(9).status());
}

TEST_F(PartitionTest, FailedTakeOverRollLeavesThePartitionUntouched) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  test::Fault fault(test::FsOp::kOpenForWrite, ENOENT);
  fault.path = test::PathPattern::Substring("00000005-");
  fs().InjectFault(fault);
  EXPECT_THAT(partition->TakeOver(5).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  EXPECT_EQ(partition->Segments().size(), 1u);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 1), 3);  // still writable
  EXPECT_OK(partition->TakeOver(5).status());           // re-drive
  EXPECT_EQ(partition->LeaderEpoch(), 5);
}

// D-15 and the re-drive rule: a failed manifest write leaves the epoch
// where it was; the re-drive completes without truncating.
TEST_F(PartitionTest, FailedTakeOverPersistIsReDrivenToCompletion) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  test::Fault fault(test::FsOp::kOpenForWrite, ENOSPC);
  fault.path = test::PathPattern::Substring("manifest");
  fs().InjectFault(fault);
  EXPECT_FALSE(partition->TakeOver(6).ok());
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(6));
  EXPECT_EQ(log_end, 3);
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_EQ(CountSuffix(ListDir(), ".log"), 2);
  ASSERT_OK(partition->Relinquish());
  partition = Open();
  EXPECT_EQ(partition->LeaderEpoch(), 6);
  EXPECT_EQ(partition->LogEndOffset(), 3);
}

TEST_F(PartitionTest, TakeOverSupersededByANewerLeaderFails) {
  auto partition = OpenLeader(2);
  metadata::PartitionManifest newer;
  newer.set_leader_epoch(9);
  ASSERT_OK(
      metadata::WriteManifestUnlessSuperseded(fs(), dir(), newer).status());
  EXPECT_THAT(partition->TakeOver(3).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("superseded by leader "
                                                   "epoch 9")));
  EXPECT_EQ(partition->LeaderEpoch(), 2);
}

// From the roll to the new epoch's file until the epoch is adopted, no byte
// may go there at the old epoch, and no roll may create a segment of the old
// epoch after it (recovery would quarantine it as a deposed leader's).
TEST_F(PartitionTest, AppendsAndRollsWaitForATakeOverToAdoptItsEpoch) {
  PartitionConfig config = SmallConfig();
  config.segment_ms = absl::Minutes(1);
  auto partition = OpenLeader(5, config);
  AppendDurably(*partition, Batch(), 5);
  fs().BlockSyncs(test::PathPattern::Substring(metadata::kManifestFileName));
  absl::StatusOr<int64_t> taken;
  std::thread take_over([&] { taken = partition->TakeOver(6); });
  fs().WaitUntilBlockedSyncs(1);  // rolled and synced; writing the manifest
  for (int64_t epoch : {5, 6}) {
    EXPECT_THAT(partition->Append(Batch(), epoch, Acks::kLeader).status(),
                HasStorageErrorWithMessage(
                    StorageErrorCode::kNotLeader,
                    HasSubstr("take-over to leader epoch 6 in progress")));
  }
  clock().Advance(absl::Minutes(2));
  EXPECT_THAT(partition->MaybeRoll(), test::IsOkAndHolds(false));
  fs().ReleaseSyncs();
  take_over.join();
  ASSERT_OK(taken.status());
  EXPECT_EQ(*taken, 1);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 6), 1);
  std::vector<uint32_t> epochs = LogEpochs(ListDir());
  EXPECT_TRUE(std::is_sorted(epochs.begin(), epochs.end()))
      << ::testing::PrintToString(epochs);
}

// After the roll, a failed take-over leaves the partition refusing appends
// (the new epoch's file is in place) until a re-drive completes it.
TEST_F(PartitionTest, AFailedTakeOverRefusesAppendsUntilReDriven) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  test::Fault fault(test::FsOp::kOpenForWrite, ENOSPC);
  fault.path = test::PathPattern::Substring("manifest");
  fs().InjectFault(fault);
  EXPECT_FALSE(partition->TakeOver(6).ok());
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  for (int64_t epoch : {1, 6}) {
    EXPECT_THAT(partition->Append(Batch(), epoch, Acks::kAll).status(),
                HasStorageErrorWithMessage(
                    StorageErrorCode::kNotLeader,
                    HasSubstr("take-over to leader epoch 6 in progress")));
  }
  EXPECT_THAT(partition->TakeOver(5).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  ASSERT_OK_AND_ASSIGN(int64_t log_end, partition->TakeOver(6));
  EXPECT_EQ(log_end, 3);
  EXPECT_EQ(AppendDurably(*partition, Batch(), 6), 3);
}

// D-15: superseded by a newer leader, the partition keeps refusing appends;
// it can still be relinquished (persisting nothing over the newer leader).
TEST_F(PartitionTest, ASupersededTakeOverKeepsRefusingAppends) {
  auto partition = OpenLeader(2);
  AppendDurably(*partition, Batch(3), 2);
  metadata::PartitionManifest newer;
  newer.set_leader_epoch(9);
  ASSERT_OK(
      metadata::WriteManifestUnlessSuperseded(fs(), dir(), newer).status());
  EXPECT_THAT(partition->TakeOver(3).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(partition->Append(Batch(), 2, Acks::kLeader).status(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kNotLeader,
                  HasSubstr("take-over to leader epoch 3 in progress")));
  ASSERT_OK(partition->Relinquish());
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest on_disk,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(on_disk.leader_epoch(), 9);
}

// The take-over's checkpoint claims only what its sync made durable. Here a
// waiter's callback, run by the take-over when its sync completes the
// waiter, appends before the checkpoint is written.
TEST_F(PartitionTest, TakeOverCheckpointNeverCoversAnUnsyncedAppend) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(), 1);
  // The append's cycle hangs in the fdatasync of S1; the take-over, which
  // syncs S1 too, completes the waiter once released.
  fs().BlockSyncs(test::PathPattern::Substring(LogFileName(1, 0)));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  absl::Status late_append;
  pending.durable.Then([&](const absl::Status&) {
    late_append = partition->Append(Batch(), 1, Acks::kLeader).status();
  });
  absl::StatusOr<int64_t> taken;
  std::thread take_over([&] { taken = partition->TakeOver(2); });
  fs().WaitUntilBlockedSyncs(2);
  fs().ReleaseSyncs();
  take_over.join();
  ASSERT_OK(taken.status());
  EXPECT_EQ(*taken, 2);
  EXPECT_THAT(late_append, HasStorageError(StorageErrorCode::kNotLeader));
  ASSERT_OK_AND_ASSIGN(metadata::RecoveryCheckpoint checkpoint,
                       metadata::ReadCheckpoint(fs(), dir()));
  EXPECT_EQ(checkpoint.next_offset(), 2);
  EXPECT_EQ(checkpoint.position(), 0u);
}

TEST_F(PartitionTest, TakeOverEpochSurvivesReopen) {
  {
    auto partition = OpenLeader(9);
    AppendDurably(*partition, Batch(3), 9);
    ASSERT_OK(partition->Relinquish());
  }
  auto partition = OpenLeader(9);
  EXPECT_EQ(partition->LeaderEpoch(), 9);
  EXPECT_EQ(partition->LogEndOffset(), 3);
  EXPECT_THAT(partition->Append(Batch(), 8, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
}

TEST_F(PartitionTest, CleanRelinquishMakesTheNextOpenScanNothing) {
  {
    auto partition = OpenLeader(1);
    for (int i = 0; i < 20; ++i) AppendDurably(*partition, Batch(2, 100));
    ASSERT_OK(partition->Relinquish());
    ASSERT_OK(partition->Relinquish());  // idempotent
  }
  OpenReport report;
  auto partition = OpenLeader(1, SmallConfig(), &report);
  EXPECT_TRUE(report.used_checkpoint);
  EXPECT_EQ(report.scanned_bytes, 0u);
  EXPECT_EQ(report.replayed_batches, 0);
  EXPECT_EQ(partition->LogEndOffset(), 40);
}

// D-16: waiters parked on durability are failed (retriable), never left
// hanging, when leadership goes without persisting.
TEST_F(PartitionTest, AbandonFailsParkedWaiters) {
  auto partition = OpenLeader(1);
  fs().BlockSyncs(test::PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_FALSE(pending.durable.IsReady());
  partition->Abandon();
  EXPECT_THAT(pending.durable.Wait(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(partition->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  fs().ReleaseSyncs();
}

// AbandonTopic's contract: nothing is written once Abandon returned (the
// directory may already be a new incarnation's). An index write of a sync
// cycle in flight finishes first; the cycle writes nothing after it.
TEST_F(PartitionTest, AbandonWaitsForAnIndexWriteInFlightAndStopsLaterOnes) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.flush_interval_messages = 0;
  auto partition = OpenLeader(1, config);
  // The roll's cycle (it checkpoints: persists S1's and S2's indexes, then
  // the checkpoint) is held in the fdatasync of S1's offset index.
  fs().BlockSyncs(
      test::PathPattern::Substring("00000001-00000000000000000000.index"));
  while (partition->Segments().size() < 2) {
    ASSERT_OK(partition->Append(Batch(1, 300), 1, Acks::kLeader).status());
  }
  fs().WaitUntilBlockedSyncs(1);
  ExpectAbandonWritesNothingOnceItReturned(fs(), std::move(partition));
}

// The same for a checkpoint (and snapshot) write in flight.
TEST_F(PartitionTest, AbandonWaitsForACheckpointWriteInFlight) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 1;  // every cycle checkpoints
  auto partition = OpenLeader(1, config);
  fs().BlockSyncs(test::PathPattern::Substring(metadata::kSnapshotSuffix));
  ASSERT_OK(partition->Append(Batch(), 1, Acks::kAll).status());
  fs().WaitUntilBlockedSyncs(1);
  ExpectAbandonWritesNothingOnceItReturned(fs(), std::move(partition));
}

TEST_F(PartitionTest, SupersededRelinquishPersistsNothingAndFailsWaiters) {
  auto partition = OpenLeader(2);
  AppendDurably(*partition, Batch(3), 2);
  metadata::PartitionManifest newer;
  newer.set_leader_epoch(5);
  newer.set_log_end_offset(3);
  ASSERT_OK(
      metadata::WriteManifestUnlessSuperseded(fs(), dir(), newer).status());
  fs().BlockSyncs(test::PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult pending,
                       partition->Append(Batch(), 2, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  std::vector<std::string> before = ListDir();
  ASSERT_OK(partition->Relinquish());
  EXPECT_THAT(pending.durable.Wait(),
              HasStorageError(StorageErrorCode::kNotLeader));
  fs().ReleaseSyncs();
  EXPECT_EQ(ListDir(), before);
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest on_disk,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(on_disk.leader_epoch(), 5);
}

TEST_F(PartitionTest, AbandonPersistsNothing) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3));
  std::vector<std::string> before = ListDir();
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest_before,
                       metadata::ReadManifest(fs(), dir()));
  partition->Abandon();
  EXPECT_EQ(ListDir(), before);
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest_after,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(manifest_after.SerializeAsString(),
            manifest_before.SerializeAsString());
}

TEST_F(PartitionTest, DeleteRecordsAdvancesDurablyAndDeletesCoveredSegments) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 30; ++i) AppendDurably(*partition, Batch(1, 300));
    size_t segments = partition->Segments().size();
    ASSERT_GT(segments, 4u);
    ASSERT_OK_AND_ASSIGN(int64_t log_start, partition->DeleteRecords(9));
    EXPECT_EQ(log_start, 9);
    EXPECT_LT(partition->Segments().size(), segments);
    EXPECT_LE(partition->Segments().front().base_offset, 9);
    // Never lowered; past the high watermark is out of range.
    ASSERT_OK_AND_ASSIGN(log_start, partition->DeleteRecords(3));
    EXPECT_EQ(log_start, 9);
    EXPECT_THAT(partition->DeleteRecords(31).status(),
                HasStorageError(StorageErrorCode::kOffsetOutOfRange));
    EXPECT_GE(stats().segments_deleted.load(), 1u);
  }
  // Durable without a relinquish: abandon persists nothing more.
  auto partition = OpenLeader(1, config);
  EXPECT_EQ(partition->LogStartOffset(), 9);
  EXPECT_THAT(partition->Read(8, 100, Isolation::kReadUncommitted).status(),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  ASSERT_OK_AND_ASSIGN(int64_t purged, partition->DeleteRecords(-1));
  EXPECT_EQ(purged, 30);
}

// Producer state lives in the log and the state snapshots only: segments
// DeleteRecords frees must be covered by a snapshot first, or a power loss
// afterwards rebuilds the producers from an older snapshot and the log past
// it, without the deleted batches (found by engine_opfuzz_test: a producer
// was then told its next sequence was out of order).
TEST_F(PartitionTest, DeletedSegmentsKeepTheirProducerStateAcrossACrash) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.checkpoint_interval_bytes = 1 << 30;  // no periodic snapshot
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, Batch(1, 300));
  int32_t sequence = 0;
  for (int i = 0; i < 60; ++i, sequence += 2) {
    AppendDurably(*partition, ProducerBatch(5, 0, sequence, 2));
  }
  ASSERT_GE(partition->Segments().size(), 3u);
  const int64_t end = partition->LogEndOffset();
  AppendDurably(*partition, Batch(1, 300));
  ASSERT_OK(partition->DeleteRecords(end).status());
  fs().Crash();
  partition.reset();
  partition = OpenLeader(2, config);
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].last_sequence, sequence - 1);
  EXPECT_EQ(AppendDurably(*partition, ProducerBatch(5, 0, sequence, 1), 2),
            end + 1);
}

// A recovery that cannot use the recovery checkpoint replays the log from
// the first segment file on disk: the files below the log start go only once
// a state snapshot lies at the base of the file after them, so the producer
// state they held is never forgotten.
TEST_F(PartitionTest, DeletedSegmentsKeepTheirProducerStateWithoutACheckpoint) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.checkpoint_interval_bytes = 1 << 30;  // snapshots at rolls only
  auto partition = OpenLeader(1, config);
  const ProducerBelowTheLogStart deleted = DeleteAProducersBatches(*partition);
  const int64_t target = deleted.log_start;
  {
    const std::vector<std::string> names = ListDir();
    EXPECT_THAT(names, Contains(metadata::SnapshotFileName(target)));
    const auto first_log = std::find_if(
        names.begin(), names.end(),
        [](const std::string& name) { return absl::EndsWith(name, ".log"); });
    ASSERT_NE(first_log, names.end());
    EXPECT_EQ(*first_log, LogFileName(1, target))
        << "the segments below the log start went";
  }
  fs().Crash();
  partition.reset();
  ASSERT_OK(fs().Unlink(PathOf(metadata::kCheckpointFileName)));

  OpenReport report;
  partition = OpenLeader(2, config, &report);
  EXPECT_FALSE(report.used_checkpoint);
  EXPECT_EQ(report.snapshot_offset, target);
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].last_sequence, deleted.next_sequence - 1);
  EXPECT_EQ(AppendDurably(*partition,
                          ProducerBatch(5, 0, deleted.next_sequence - 2, 2), 2),
            deleted.last_producer_offset)
      << "a retry of the producer's newest batch is recognised";
}

// The deferred half of the rule above: DeleteRecords while the newest
// roll's state snapshot (at the new segment's base) cannot be written (its
// fsync fails; later writes are not durable either). The log start moves at
// once and the segments leave the list at once; the files of a segment followed
// by one with a durable snapshot at its base go at once, but those of the other
// stay until that snapshot is durable (recovery rebuilds producer state from
// them), and go with it. A power loss in between recovers with the log start
// where DeleteRecords put it and the producer's state replayed from the kept
// files; that open writes the snapshot the replay took at the log start's
// segment base, then deletes them.
TEST_F(PartitionTest, DeletedSegmentsKeepTheirFilesUntilASnapshotCoversThem) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  config.checkpoint_interval_bytes = 1 << 30;  // snapshots at rolls only
  config.flush_interval_messages = 0;          // acks=1 appends start no cycle
  // The snapshot writes fail (their fsync) until the faults are cleared.
  test::Fault snapshot_fault(test::FsOp::kSync, EIO);
  snapshot_fault.path = test::PathPattern::Substring(".snapshot");
  snapshot_fault.count = test::Fault::kForever;
  auto partition = OpenLeader(1, config);
  int32_t sequence = 0;
  int64_t last_producer_offset = -1;
  // Durable appends until the partition has `segments`: the producer's
  // batches while they fit, so that its newest batch lies in the segment
  // sealed last, and the roll by a batch of no producer.
  auto fill = [&](size_t segments) {
    while (partition->Segments().size() < segments) {
      const std::string batch = ProducerBatch(5, 0, sequence, 2);
      if (partition->Segments().back().size_bytes + batch.size() >
          config.segment_bytes) {
        AppendDurably(*partition, Batch());
      } else {
        last_producer_offset = AppendDurably(*partition, batch);
        sequence += 2;
      }
    }
  };
  auto log_of = [](const SegmentSummary& segment) {
    return LogFileName(static_cast<uint32_t>(segment.epoch),
                       segment.base_offset);
  };
  auto files_of = [](const SegmentSummary& segment) {
    std::vector<std::string> names;
    for (segment::SegmentFileKind kind :
         {segment::SegmentFileKind::kLog,
          segment::SegmentFileKind::kOffsetIndex,
          segment::SegmentFileKind::kTimeIndex}) {
      names.push_back(segment::SegmentFileName(
          {segment.base_offset, static_cast<uint32_t>(segment.epoch)}, kind));
    }
    return names;
  };

  // The roll's snapshot at the new segment's base cannot be written.
  fs().InjectFault(snapshot_fault);
  fill(2);
  ASSERT_OK(partition->Append(Batch(), 1, Acks::kLeader).status());
  const SegmentSummary uncovered = partition->Segments().front();
  const int64_t target = partition->Segments().back().base_offset;
  ASSERT_OK_AND_ASSIGN(int64_t log_start, partition->DeleteRecords(target));
  EXPECT_EQ(log_start, target);
  EXPECT_EQ(partition->LogStartOffset(), target);
  EXPECT_EQ(partition->Segments().front().base_offset, target);
  EXPECT_THAT(partition->Read(target - 1, 100, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(ListDir(), Contains(log_of(uncovered)));
  // The disk recovers: the next cycle writes the snapshot and deletes the
  // files; the acknowledgement after it comes from a later cycle (one runs
  // at a time), so the files are gone by then.
  fs().ClearFaults();
  AppendDurably(*partition, Batch());
  AppendDurably(*partition, Batch());
  for (const std::string& name : files_of(uncovered)) {
    EXPECT_THAT(ListDir(), Not(Contains(name)));
  }

  // Again with a segment a snapshot covers (sealed, then a cycle after its
  // roll's) and an uncovered one, and a power loss before the snapshot.
  fill(2);
  AppendDurably(*partition, Batch());
  fs().InjectFault(snapshot_fault);
  fill(3);
  ASSERT_OK(partition->Append(Batch(), 1, Acks::kLeader).status());
  const std::vector<SegmentSummary> before = partition->Segments();
  const SegmentSummary& covered = before[0];
  const SegmentSummary& waiting = before[1];
  const int64_t second_target = before[2].base_offset;
  // Recovery must replay the deleted segment to know the producer's newest
  // batch.
  ASSERT_GE(last_producer_offset, waiting.base_offset);
  ASSERT_LT(last_producer_offset, second_target);
  ASSERT_OK(partition->DeleteRecords(second_target).status());
  EXPECT_EQ(partition->LogStartOffset(), second_target);
  for (const std::string& name : files_of(covered)) {
    EXPECT_THAT(ListDir(), Not(Contains(name)));
  }
  EXPECT_THAT(ListDir(), Contains(log_of(waiting)));
  fs().Crash();
  fs().ClearFaults();
  partition.reset();

  OpenReport report;
  partition = OpenLeader(2, config, &report);
  EXPECT_EQ(partition->LogStartOffset(), second_target);
  // The open replays the waiting segment, writes the state at the log
  // start's segment base, then deletes it.
  EXPECT_THAT(ListDir(),
              Contains(metadata::SnapshotFileName(before[2].base_offset)));
  for (const std::string& name : files_of(waiting)) {
    EXPECT_THAT(ListDir(), Not(Contains(name)));
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       partition->DescribeProducers());
  ASSERT_EQ(producers.size(), 1u);
  EXPECT_EQ(producers[0].last_sequence, sequence - 1);
  EXPECT_GE(AppendDurably(*partition, ProducerBatch(5, 0, sequence, 1), 2),
            second_target);
}

// D-12 (log start part): a crash between persisting the log start and
// unlinking the segments never brings the records back, and the leftovers
// are removed by the next open.
TEST_F(PartitionTest, CrashBetweenLogStartAndUnlinkNeverResurrectsRecords) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
  test::Fault fault(test::FsOp::kUnlink, EIO);
  fault.path = test::PathPattern::Substring(".log");
  fault.count = test::Fault::kForever;
  fs().InjectFault(fault);
  ASSERT_OK(partition->DeleteRecords(8).status());
  fs().Crash();
  fs().ClearFaults();
  partition.reset();
  OpenReport report;
  partition = OpenLeader(1, config, &report);
  EXPECT_EQ(partition->LogStartOffset(), 8);
  EXPECT_GE(report.deleted_segments, 1);
  EXPECT_LE(partition->Segments().front().base_offset, 8);
  EXPECT_GT(partition->Segments().front().base_offset, 0);
}

// Unsynced appends (acks=1, no flush) let DeleteRecords pass the durable
// end. The manifest then records a log end no lower than its log start, so
// it stays valid: after a power loss that takes the unsynced records, the
// partition opens with its manifest (epoch, history, log start), the log
// that ends short of the log start goes, and appends continue at the log
// start: no offset below it is assigned twice.
TEST_F(PartitionTest, DeleteRecordsPastTheDurableEndKeepsTheManifestValid) {
  PartitionConfig config = SmallConfig();
  config.flush_interval_messages = 0;  // fdatasync at roll and close only
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, Batch(2), 1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(partition->Append(Batch(2), 1, Acks::kLeader).status());
  }
  // Past the one durable batch (the manifest's durable end is 2).
  const int64_t high_watermark = partition->HighWatermark();
  ASSERT_GT(high_watermark, 2);
  ASSERT_OK(partition->DeleteRecords(high_watermark).status());
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest written,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(written.log_start_offset(), high_watermark);
  EXPECT_GE(written.log_end_offset(), high_watermark);
  fs().Crash();
  partition.reset();
  OpenReport report;
  partition = OpenLeader(1, config, &report);
  EXPECT_THAT(report.quarantined, IsEmpty());
  EXPECT_THAT(report.deleted, ElementsAre("00000001-00000000000000000000.log"));
  EXPECT_EQ(partition->LeaderEpoch(), 1);
  EXPECT_EQ(partition->LogStartOffset(), high_watermark);
  EXPECT_EQ(partition->LogEndOffset(), high_watermark);
  EXPECT_EQ(AppendDurably(*partition, Batch(1), 1), high_watermark);
}

TEST_F(PartitionTest, DeleteRecordsTrimsTheEpochHistory) {
  auto partition = OpenLeader(1);
  AppendDurably(*partition, Batch(3), 1);
  ASSERT_OK(partition->TakeOver(2).status());
  AppendDurably(*partition, Batch(3), 2);
  ASSERT_OK(partition->DeleteRecords(4).status());
  EpochEndOffset answer = partition->OffsetForLeaderEpoch(1);
  EXPECT_EQ(answer.leader_epoch, 1);  // below the first kept epoch
  EXPECT_EQ(answer.end_offset, 4);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(2).end_offset, 6);
}

}  // namespace
}  // namespace kaas::partition
