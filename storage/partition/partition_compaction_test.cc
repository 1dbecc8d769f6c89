// Compaction (cleanup.policy=compact) of one partition: Kafka's cleaner
// scenarios, the swap protocol under simulated power loss at every
// filesystem operation, and compaction under concurrent appends and reads.
#include <atomic>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "storage/common/offset_map.h"
#include "storage/partition/partition_testlib.h"
#include "storage/segment/segment_name.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using test::HasStorageError;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using Value = std::optional<std::string>;  // nullopt: a tombstone

struct StoredRecord {
  int64_t offset = 0;
  Value key;
  Value value;
  int64_t timestamp = 0;
};

PartitionConfig CompactConfigFrom(PartitionConfig config) {
  config.cleanup_compact = true;
  config.cleanup_delete = false;
  config.segment_bytes = 1024;
  config.checkpoint_interval_bytes = 512;
  config.delete_retention_ms = 60000;
  return config;
}

std::string Keyed(const std::vector<std::pair<std::string, Value>>& records,
                  int64_t timestamp = 1000,
                  CompressionCodec codec = CompressionCodec::kNone) {
  test::BatchBuilder builder;
  builder.BaseTimestamp(timestamp).Compression(codec);
  for (const auto& [key, value] : records) {
    builder.AddRecord(absl::string_view(key),
                      value.has_value()
                          ? absl::optional<absl::string_view>(*value)
                          : absl::nullopt);
  }
  return builder.Build();
}

// The records of the batches in `bytes` (any stored batch), with the
// offsets the batches give them; checks the batches are contiguous.
std::vector<StoredRecord> RecordsOf(absl::string_view bytes,
                                    int64_t first_offset) {
  std::vector<StoredRecord> out;
  int64_t expected = first_offset;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    EXPECT_OK(size.status());
    if (!size.ok()) break;
    absl::StatusOr<RecordBatchView> batch =
        RecordBatchView::ParseStored(bytes.substr(0, *size));
    EXPECT_OK(batch.status());
    if (!batch.ok()) break;
    // Every offset lies in exactly one batch: compaction leaves no hole.
    EXPECT_EQ(batch->base_offset(), expected);
    expected = batch->next_offset();
    absl::StatusOr<DecodedRecords> records = DecodeRecords(*batch);
    EXPECT_OK(records.status());
    if (!records.ok()) break;
    for (const Record& record : *records) {
      StoredRecord stored;
      stored.offset = batch->base_offset() + record.offset_delta;
      if (record.key) stored.key = std::string(*record.key);
      if (record.value) stored.value = std::string(*record.value);
      stored.timestamp =
          (batch->has_delete_horizon() ? batch->base_timestamp()
                                       : batch->base_timestamp()) +
          record.timestamp_delta;
      out.push_back(std::move(stored));
    }
    bytes.remove_prefix(*size);
  }
  return out;
}

class CompactionTest : public PartitionTest {
 protected:
  static PartitionConfig CompactConfig() {
    return CompactConfigFrom(SmallConfig());
  }

  // A transactional batch of one keyed record.
  static std::string TxnBatch(int64_t producer_id, int16_t epoch,
                              const std::string& key, const std::string& value,
                              int32_t seq = 0) {
    return test::BatchBuilder()
        .BaseTimestamp(1000)
        .Producer(producer_id, epoch, seq)
        .Transactional()
        .AddRecord(absl::string_view(key), absl::string_view(value))
        .Build();
  }

  std::vector<StoredRecord> Records(Partition& partition) {
    return RecordsOf(ReadAll(partition, partition.LogStartOffset()),
                     partition.LogStartOffset());
  }

  // key -> value of the latest record of each key.
  static std::map<std::string, Value> Latest(
      const std::vector<StoredRecord>& records) {
    std::map<std::string, Value> latest;
    for (const StoredRecord& record : records) {
      if (record.key) latest[*record.key] = record.value;
    }
    return latest;
  }

  CompactionReport Compact(Partition& partition,
                           size_t map_bytes = size_t{1} << 20) {
    OffsetMap map(map_bytes);
    Partition::CompactionRequest request;
    request.now_ms = clock().NowMillis();
    request.map = &map;
    absl::StatusOr<CompactionReport> report = partition.Compact(request);
    EXPECT_OK(report.status());
    return report.ok() ? *report : CompactionReport{};
  }

  // Empties dir() (but for its lock file) for the next round of a test.
  void RemovePartitionFiles() {
    for (const std::string& name : ListDir()) {
      if (name != "lock") {
        ASSERT_OK(fs().Unlink(PathOf(name)));
      }
    }
  }

  // Appends `rounds` rounds over keys k0..k{keys-1}, one record per batch.
  std::map<std::string, Value> Overwrite(Partition& partition, int keys,
                                         int rounds, size_t value_padding = 0) {
    std::map<std::string, Value> model;
    for (int round = 0; round < rounds; ++round) {
      for (int k = 0; k < keys; ++k) {
        const std::string key = absl::StrCat("k", k);
        const std::string value =
            absl::StrCat("v", round, "-", k, std::string(value_padding, '.'));
        AppendDurably(partition, Keyed({{key, value}}));
        model[key] = value;
      }
    }
    return model;
  }
};

TEST_F(CompactionTest, KeepsTheLatestValueOfEveryKeyAtItsOffset) {
  auto partition = OpenLeader(1, CompactConfig());
  std::map<std::string, Value> model = Overwrite(*partition, 10, 8);
  const std::vector<StoredRecord> before = Records(*partition);
  const size_t segments_before = partition->Segments().size();
  ASSERT_GT(segments_before, 4u);

  CompactionReport report = Compact(*partition);
  EXPECT_TRUE(report.complete);
  EXPECT_GT(report.records_removed, 0);
  EXPECT_LT(report.bytes_after, report.bytes_before);
  EXPECT_EQ(report.map_end,
            partition->Segments()[report.segments_written].base_offset);

  const std::vector<StoredRecord> after = Records(*partition);
  EXPECT_LT(after.size(), before.size());
  EXPECT_EQ(Latest(after), model);
  // Each survivor is the record that was at its offset.
  std::map<int64_t, StoredRecord> by_offset;
  for (const StoredRecord& record : before) by_offset[record.offset] = record;
  for (const StoredRecord& record : after) {
    EXPECT_EQ(by_offset[record.offset].value, record.value) << record.offset;
    EXPECT_EQ(by_offset[record.offset].key, record.key);
  }
  // Cleaned segments hold at most one record per key below map_end.
  std::map<std::string, int> copies;
  for (const StoredRecord& record : after) {
    if (record.offset < report.map_end) ++copies[*record.key];
  }
  for (const auto& [key, count] : copies) EXPECT_EQ(count, 1) << key;
  EXPECT_EQ(partition->Stats().compaction_passes, 1u);

  // A second pass with nothing new has nothing to do.
  CompactionReport again = Compact(*partition);
  EXPECT_EQ(again.segments_written, 0);
  EXPECT_EQ(again.dirty_start, report.map_end);

  // With more to clean, the next pass groups the small cleaned segments
  // (their sizes add up to less than segment.bytes): fewer segments.
  model = Overwrite(*partition, 10, 4);
  const size_t segments_now = partition->Segments().size();
  report = Compact(*partition);
  EXPECT_GT(report.segments_replaced, report.segments_written);
  EXPECT_LT(partition->Segments().size(), segments_now);
  EXPECT_EQ(Latest(Records(*partition)), model);

  // It all survives a reopen (the cleaner offset too).
  ASSERT_OK(partition->Relinquish());
  partition = OpenLeader(2, CompactConfig());
  EXPECT_EQ(Latest(Records(*partition)), model);
  EXPECT_EQ(Compact(*partition).dirty_start, report.map_end);
}

TEST_F(CompactionTest, AFetchAtARemovedOffsetReturnsFromTheNextSurvivor) {
  auto partition = OpenLeader(1, CompactConfig());
  Overwrite(*partition, 3, 10);
  Compact(*partition);
  // Offset 0 (k0's first value) is gone: the read starts at the batch that
  // covers it (an empty one) and goes on to the next surviving records.
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      partition->Read(0, 1 << 20, Isolation::kReadUncommitted));
  std::vector<StoredRecord> records = RecordsOf(std::string(read.records), 0);
  ASSERT_THAT(records, Not(IsEmpty()));
  EXPECT_GT(records.front().offset, 0);
}

TEST_F(CompactionTest, TombstonesGoInASecondPassAfterDeleteRetention) {
  PartitionConfig config = CompactConfig();
  auto partition = OpenLeader(1, config);
  Overwrite(*partition, 4, 3);
  AppendDurably(*partition, Keyed({{"k1", std::nullopt}}));
  Overwrite(*partition, 1, 12);  // more segments after the tombstone

  Compact(*partition);
  std::map<std::string, Value> latest = Latest(Records(*partition));
  ASSERT_TRUE(latest.count("k1"));
  EXPECT_EQ(latest["k1"], std::nullopt);  // kept, horizon stamped
  ASSERT_OK_AND_ASSIGN(CompactionView view,
                       partition->DescribeCompaction(clock().NowMillis()));
  EXPECT_FALSE(view.delete_horizon_due);

  // Before the horizon: still there.
  clock().Advance(absl::Milliseconds(config.delete_retention_ms - 1));
  Compact(*partition);
  EXPECT_TRUE(Latest(Records(*partition)).count("k1"));

  // After it, a pass removes it, although nothing is dirty.
  clock().Advance(absl::Milliseconds(2));
  ASSERT_OK_AND_ASSIGN(view,
                       partition->DescribeCompaction(clock().NowMillis()));
  EXPECT_TRUE(view.delete_horizon_due);
  CompactionReport report = Compact(*partition);
  EXPECT_EQ(report.tombstones_removed, 1);
  EXPECT_FALSE(Latest(Records(*partition)).count("k1"));
  // The record timestamps survived the horizon's rebasing.
  for (const StoredRecord& record : Records(*partition)) {
    EXPECT_EQ(record.timestamp, 1000) << record.offset;
  }
}

TEST_F(CompactionTest, AFullMapCleansUpToWhereItFilledAndProgressesNextPass) {
  auto partition = OpenLeader(1, CompactConfig());
  std::map<std::string, Value> model = Overwrite(*partition, 30, 3);
  // Room for 9 keys per pass.
  const size_t map_bytes = 10 * OffsetMap::kEntryBytes;
  int passes = 0;
  int64_t previous_end = -1;
  while (true) {
    CompactionReport report = Compact(*partition, map_bytes);
    ++passes;
    ASSERT_LE(report.keys, 9);
    if (report.map_end == report.dirty_start) break;
    ASSERT_GT(report.map_end, previous_end);  // never stuck
    previous_end = report.map_end;
    ASSERT_LT(passes, 100);
    EXPECT_EQ(Latest(Records(*partition)), model);
  }
  EXPECT_GT(passes, 3);
  EXPECT_EQ(Latest(Records(*partition)), model);
}

TEST_F(CompactionTest, AMapTooSmallForOneBatchIsATypedError) {
  auto partition = OpenLeader(1, CompactConfig());
  for (int i = 0; i < 40; ++i) {
    AppendDurably(*partition,
                  Keyed({{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}}));
  }
  OffsetMap map(3 * OffsetMap::kEntryBytes);  // 2 entries
  Partition::CompactionRequest request;
  request.now_ms = clock().NowMillis();
  request.map = &map;
  absl::StatusOr<CompactionReport> report = partition->Compact(request);
  EXPECT_THAT(report, HasStorageError(StorageErrorCode::kInvalidConfig));
  EXPECT_THAT(report.status().message(), HasSubstr("dedupe.buffer.size"));
  EXPECT_EQ(partition->Stats().compaction_failures, 1u);
}

TEST_F(CompactionTest, MinCompactionLagKeepsRecentSegmentsAsTheyAre) {
  PartitionConfig config = CompactConfig();
  config.min_compaction_lag_ms = 10000;
  auto partition = OpenLeader(1, config);
  clock().Set(absl::FromUnixMillis(100000));
  for (int i = 0; i < 40; ++i) {
    // Old records, then recent ones.
    const int64_t timestamp = i < 20 ? 1000 : 95000;
    AppendDurably(*partition, Keyed({{"k", absl::StrCat("v", i)}}, timestamp));
  }
  const std::vector<StoredRecord> before = Records(*partition);
  CompactionReport report = Compact(*partition);
  std::vector<StoredRecord> after = Records(*partition);
  // Every record newer than the lag is still there.
  for (const StoredRecord& record : before) {
    if (record.timestamp < 90000) continue;
    EXPECT_TRUE(std::any_of(
        after.begin(), after.end(),
        [&](const StoredRecord& r) { return r.offset == record.offset; }))
        << record.offset;
  }
  EXPECT_GT(report.records_removed, 0);
  EXPECT_EQ(Latest(after)["k"], "v39");
}

TEST_F(CompactionTest, RecordsWithoutAKeyAreRefusedOnACompactedTopic) {
  auto partition = OpenLeader(1, CompactConfig());
  absl::StatusOr<AppendResult> refused =
      partition->Append(Batch(), 1, Acks::kAll);
  EXPECT_THAT(refused, HasStorageError(StorageErrorCode::kInvalidRecord));
  EXPECT_THAT(refused.status().message(), HasSubstr("null key"));
  // Control batches need no key.
  AppendDurably(*partition, TxnBatch(9, 0, "x", "y"));
  AppendDurably(*partition,
                test::ControlBatch(ControlType::kCommit, 9, 0, 0, 1000));
}

TEST_F(CompactionTest, AbortedDataGoesAndMarkersGoOnceAloneAndPastHorizon) {
  PartitionConfig config = CompactConfig();
  config.producer_id_expiration_ms = 1000;
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, TxnBatch(7, 0, "t", "aborted"));
  AppendDurably(*partition, TxnBatch(8, 0, "c", "committed", /*seq=*/0));
  AppendDurably(*partition,
                test::ControlBatch(ControlType::kAbort, 7, 0, 0, 1000));
  const int64_t commit_marker = AppendDurably(
      *partition, test::ControlBatch(ControlType::kCommit, 8, 0, 0, 1000));
  Overwrite(*partition, 3, 12);

  CompactionReport report = Compact(*partition);
  std::map<std::string, Value> latest = Latest(Records(*partition));
  EXPECT_FALSE(latest.count("t"));  // aborted data removed
  EXPECT_EQ(latest["c"], "committed");
  // Both markers are still there: the commit's data remains; the abort's
  // horizon has just been stamped.
  auto markers = [&] {
    int count = 0;
    std::string bytes = ReadAll(*partition);
    for (absl::string_view rest = bytes; !rest.empty();) {
      const size_t size = *PeekBatchSize(rest);
      RecordBatchView batch =
          *RecordBatchView::ParseStored(rest.substr(0, size));
      if (batch.is_control() && batch.record_count() == 1) ++count;
      rest.remove_prefix(size);
    }
    return count;
  };
  EXPECT_EQ(markers(), 2);
  EXPECT_EQ(report.markers_removed, 0);
  // The aborted batch stays (emptied) while producer 7's idempotence window
  // holds it, and with it its marker (AKeptTransactionalBatchKeepsItsMarker).
  clock().Advance(absl::Milliseconds(config.delete_retention_ms + 1));
  EXPECT_EQ(Compact(*partition).markers_removed, 0);
  // Once the producer has expired, the batch goes; its marker, alone now,
  // gets its horizon, and goes after it.
  clock().Advance(absl::Milliseconds(config.producer_id_expiration_ms + 1));
  partition->ExpireProducers();
  Overwrite(*partition, 3, 12);  // something dirty, so that a pass runs
  EXPECT_EQ(Compact(*partition).markers_removed, 0);
  EXPECT_EQ(markers(), 2);
  clock().Advance(absl::Milliseconds(config.delete_retention_ms + 1));
  report = Compact(*partition);
  EXPECT_EQ(report.markers_removed, 1);
  EXPECT_EQ(markers(), 1);
  // The commit marker stays while "c" does.
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      partition->Read(commit_marker, 1, Isolation::kReadUncommitted));
  EXPECT_TRUE(RecordBatchView::ParseHeader(
                  std::string(read.records)
                      .substr(0, *PeekBatchSize(std::string(read.records))))
                  ->is_control());
  // read_committed still sees exactly the committed record.
  std::string committed = ReadAll(*partition, 0, Isolation::kReadCommitted);
  EXPECT_EQ(Latest(RecordsOf(committed, 0))["c"], "committed");
}

// Found by the model test: an aborted transaction's data batch that a
// producer's window keeps (emptied) reopens the transaction when recovery
// replays it, so its marker must stay; without it the last stable offset
// stayed there for good after a restart.
TEST_F(CompactionTest, AKeptTransactionalBatchKeepsItsMarker) {
  PartitionConfig config = CompactConfig();
  auto partition = OpenLeader(1, config);
  AppendDurably(*partition, TxnBatch(7, 0, "t", "aborted"));
  AppendDurably(*partition,
                test::ControlBatch(ControlType::kAbort, 7, 0, 0, 1000));
  Overwrite(*partition, 3, 12);
  Compact(*partition);
  clock().Advance(absl::Milliseconds(config.delete_retention_ms + 1));
  Compact(*partition);
  ASSERT_OK(partition->Relinquish());
  // Recovery rebuilds the transaction state from the log (as after a crash
  // that left no usable snapshot).
  for (const std::string& name : ListDir()) {
    if (absl::EndsWith(name, ".snapshot")) {
      ASSERT_OK(fs().Unlink(PathOf(name)));
    }
  }
  partition = OpenLeader(2, config);
  EXPECT_EQ(partition->LastStableOffset(), partition->HighWatermark());
}

TEST_F(CompactionTest, AProducersLastBatchSurvivesEmptiedAndStillDedupes) {
  auto partition = OpenLeader(1, CompactConfig());
  test::BatchBuilder idempotent;
  idempotent.Producer(5, 0, 0).AddRecord("a", "first");
  const std::string first = idempotent.Build();
  const int64_t offset = AppendDurably(*partition, first);
  for (int i = 0; i < 10; ++i) {
    AppendDurably(*partition, Keyed({{"a", absl::StrCat("later", i)}}));
  }
  Overwrite(*partition, 1, 10);
  CompactionReport report = Compact(*partition);
  EXPECT_GT(report.records_removed, 0);
  // The batch is there, emptied, with its producer fields.
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       partition->Read(offset, 1, Isolation::kReadUncommitted));
  const std::string bytes(read.records);
  ASSERT_OK_AND_ASSIGN(size_t size, PeekBatchSize(bytes));
  ASSERT_OK_AND_ASSIGN(
      RecordBatchView batch,
      RecordBatchView::ParseStored(absl::string_view(bytes).substr(0, size)));
  EXPECT_EQ(batch.base_offset(), offset);
  EXPECT_EQ(batch.producer_id(), 5);
  EXPECT_EQ(batch.record_count(), 0);
  // After a restart (state rebuilt from the log), a retry is a duplicate.
  ASSERT_OK(partition->Relinquish());
  partition = OpenLeader(2, CompactConfig());
  ASSERT_OK_AND_ASSIGN(AppendResult retry,
                       partition->Append(first, 2, Acks::kAll));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.base_offset, offset);
}

TEST_F(CompactionTest, EveryCodecIsRecompressedWithItsOwn) {
  for (CompressionCodec codec :
       {CompressionCodec::kGzip, CompressionCodec::kSnappy,
        CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    SCOPED_TRACE(CompressionCodecName(codec));
    PartitionConfig config = CompactConfig();
    auto partition = OpenLeader(1, config);
    const int64_t start = partition->LogEndOffset();
    std::map<std::string, Value> model;
    for (int round = 0; round < 12; ++round) {
      AppendDurably(*partition, Keyed({{"a", absl::StrCat("a", round)},
                                       {absl::StrCat("b", round % 3), "b"}},
                                      1000, codec));
      model["a"] = absl::StrCat("a", round);
      model[absl::StrCat("b", round % 3)] = "b";
    }
    Compact(*partition);
    std::string bytes = ReadAll(*partition, start);
    EXPECT_EQ(Latest(RecordsOf(bytes, start)), model);
    // The rewritten batches that hold records kept the codec.
    for (absl::string_view rest = bytes; !rest.empty();) {
      const size_t size = *PeekBatchSize(rest);
      RecordBatchView batch =
          *RecordBatchView::ParseStored(rest.substr(0, size));
      if (batch.record_count() > 0) {
        EXPECT_EQ(batch.compression(), codec);
      }
      rest.remove_prefix(size);
    }
    ASSERT_OK(partition->Relinquish());
    partition.reset();
    ASSERT_NO_FATAL_FAILURE(RemovePartitionFiles());
  }
}

// The swap protocol at every step: the N-th filesystem operation of a pass
// fails, then the power goes. Whatever the step, the reopened log holds the
// latest value of every key, is contiguous, and nothing not yet compactable
// is gone; the pass after completes the job.
TEST_F(CompactionTest, APowerLossAtAnyStepOfAPassLosesNothing) {
  // Every step of the pass below is one filesystem call; a run without
  // faults counts them (an upper bound: other threads' calls count too).
  int64_t calls = -1;
  for (int step = -1; step <= calls; ++step) {
    SCOPED_TRACE(absl::StrCat("fails at operation ", step));
    std::map<std::string, Value> model;
    std::vector<StoredRecord> before;
    {
      auto partition = OpenLeader(1, CompactConfig());
      model = Overwrite(*partition, 4, 5, /*value_padding=*/150);
      AppendDurably(*partition, Keyed({{"k2", std::nullopt}}));
      model["k2"] = std::nullopt;
      before = Records(*partition);
      ASSERT_OK(partition->Relinquish());
    }
    auto partition = OpenLeader(2, CompactConfig());
    // The files a pass touches (the epoch-1 segments, their cleaned
    // replacements, the manifest), not the new leader's own (its sync
    // cycles may run meanwhile: counting their calls would make the steps
    // depend on timing).
    test::Fault fault(test::FsOp::kAny, EIO);
    fault.path = test::PathPattern::Regex(R"(/00000001-|\.cleaned|manifest)");
    fault.skip = step;
    if (step >= 0) fs().InjectFault(fault);
    const int64_t calls_before = fs().Count(test::FsOp::kAny);
    OffsetMap map(1 << 20);
    Partition::CompactionRequest request;
    request.now_ms = clock().NowMillis();
    request.map = &map;
    absl::StatusOr<CompactionReport> report = partition->Compact(request);
    if (step < 0) {
      ASSERT_OK(report.status());
      ASSERT_GT(report->segments_written, 0);
      calls = fs().Count(test::FsOp::kAny) - calls_before;
    }
    fs().ClearFaults();
    fs().Crash();
    partition->Abandon();
    partition.reset();

    partition = OpenLeader(3, CompactConfig());
    const std::vector<StoredRecord> after = Records(*partition);
    EXPECT_EQ(Latest(after), model);
    // The active segment's records are all there.
    const int64_t active_base = partition->Segments().back().base_offset;
    for (const StoredRecord& record : before) {
      if (record.offset < active_base) continue;
      EXPECT_TRUE(std::any_of(
          after.begin(), after.end(),
          [&](const StoredRecord& r) { return r.offset == record.offset; }));
    }
    // No cleaned file or swap is left behind, and compaction goes on.
    for (const std::string& name : ListDir()) {
      EXPECT_FALSE(segment::ParseCleanedFileName(name).has_value()) << name;
    }
    Compact(*partition);
    EXPECT_EQ(Latest(Records(*partition)), model);
    ASSERT_OK(partition->Relinquish());
    partition.reset();
    ASSERT_NO_FATAL_FAILURE(RemovePartitionFiles());
  }
  EXPECT_GT(calls, 30);
  LOG(INFO) << calls << " crash points";
}

TEST_F(CompactionTest, AGroupRetentionTookMeanwhileIsGivenUp) {
  PartitionConfig config = CompactConfig();
  config.cleanup_delete = true;
  auto partition = OpenLeader(1, config);
  std::map<std::string, Value> model = Overwrite(*partition, 4, 10);
  OffsetMap map(1 << 20);
  Partition::CompactionRequest request;
  request.now_ms = clock().NowMillis();
  request.map = &map;
  bool deleted = false;
  const int64_t target = partition->Segments()[2].base_offset;
  // Mid-pass (the throttle runs between reads), the log start moves past
  // the first segments.
  request.throttle = [&](uint64_t) {
    if (!deleted) {
      deleted = true;
      ASSERT_OK(partition->DeleteRecords(target).status());
    }
  };
  ASSERT_OK_AND_ASSIGN(CompactionReport report, partition->Compact(request));
  EXPECT_FALSE(report.complete);
  EXPECT_EQ(partition->LogStartOffset(), target);
  // Nothing at or past the log start was lost; the next pass cleans.
  std::vector<StoredRecord> records = Records(*partition);
  ASSERT_THAT(records, Not(IsEmpty()));
  Compact(*partition);
  EXPECT_EQ(Latest(Records(*partition)), model);
}

// Relinquish or Abandon during a pass: the pass ends (or finishes first),
// nothing is lost, and no compaction file is left behind once they return.
TEST_F(CompactionTest, RelinquishAndAbandonEndAPassInProgress) {
  for (bool abandon : {false, true}) {
    SCOPED_TRACE(abandon ? "abandon" : "relinquish");
    auto partition = OpenLeader(1, CompactConfig());
    std::map<std::string, Value> model = Overwrite(*partition, 6, 10);
    std::thread closer;
    OffsetMap map(1 << 20);
    Partition::CompactionRequest request;
    request.now_ms = clock().NowMillis();
    request.map = &map;
    request.throttle = [&](uint64_t) {
      if (closer.joinable()) return;
      closer = std::thread([&] {
        if (abandon) {
          partition->Abandon();
        } else {
          EXPECT_OK(partition->Relinquish());
        }
      });
    };
    absl::StatusOr<CompactionReport> report = partition->Compact(request);
    // Either outcome is fine: the pass ends early or finishes first.
    EXPECT_TRUE(
        report.ok() ||
        HasStorageErrorCode(report.status(), StorageErrorCode::kNotLeader))
        << report.status();
    closer.join();
    for (const std::string& name : ListDir()) {
      EXPECT_FALSE(segment::ParseCleanedFileName(name).has_value()) << name;
    }
    partition.reset();
    partition = OpenLeader(2, CompactConfig());
    EXPECT_EQ(Latest(Records(*partition)), model);
    ASSERT_OK(partition->Relinquish());
    partition.reset();
    ASSERT_NO_FATAL_FAILURE(RemovePartitionFiles());
  }
}

// A follower's truncation that cuts nothing (refused below the log start,
// or at or past the log end) leaves the partition open, and its compaction
// running: only a truncation that closes the partition stops it.
TEST_F(CompactionTest, ATruncationThatCutsNothingLeavesCompactionRunning) {
  auto partition = OpenLeader(1, CompactConfig());
  const std::map<std::string, Value> model = Overwrite(*partition, 10, 8);
  // The first segment's records all have later values.
  ASSERT_OK(
      partition->DeleteRecords(partition->Segments()[1].base_offset).status());
  ASSERT_OK(partition->Relinquish());
  partition = Open(CompactConfig());
  ASSERT_OK(partition->TakeOver(2, Role::kFollower).status());
  const int64_t end = partition->LogEndOffset();
  EXPECT_THAT(partition->PrepareTruncation(1, false),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(partition->PrepareTruncation(end + 5, false),
              test::IsOkAndHolds(end));
  CompactionReport report = Compact(*partition);
  EXPECT_TRUE(report.complete);
  EXPECT_GT(report.records_removed, 0);
  EXPECT_EQ(Latest(Records(*partition)), model);
  EXPECT_EQ(partition->LogEndOffset(), end);
}

TEST_F(CompactionTest, ConcurrentAppendsAndReadsSeeAConsistentLog) {
  auto partition = OpenLeader(1, CompactConfig());
  Overwrite(*partition, 8, 6);
  std::atomic<bool> stop{false};
  std::atomic<int> read_errors{0};
  std::thread reader([&] {
    while (!stop.load()) {
      const int64_t start = partition->LogStartOffset();
      absl::StatusOr<ReadResult> read =
          partition->Read(start, 1 << 20, Isolation::kReadUncommitted);
      if (!read.ok()) {
        if (read_errors.fetch_add(1) < 3) LOG(ERROR) << read.status();
        continue;
      }
      // Contiguous from where it started (RecordsOf checks).
      RecordsOf(std::string(read->records), start);
    }
  });
  std::map<std::string, Value> model;
  std::thread writer([&] {
    for (int i = 0; i < 60; ++i) {
      const std::string key = absl::StrCat("k", i % 8);
      const std::string value = absl::StrCat("late", i);
      absl::StatusOr<AppendResult> result =
          partition->AppendAndWait(Keyed({{key, value}}), 1, Acks::kAll);
      ASSERT_OK(result.status());
      model[key] = value;
    }
  });
  for (int pass = 0; pass < 10; ++pass) Compact(*partition);
  writer.join();
  stop.store(true);
  reader.join();
  EXPECT_EQ(read_errors.load(), 0);
  Compact(*partition);
  std::map<std::string, Value> latest = Latest(Records(*partition));
  for (const auto& [key, value] : model) EXPECT_EQ(latest[key], value);
}

}  // namespace
}  // namespace kaas::partition
