// RetentionCleaner over a real DiskEngine on the fault-injecting filesystem,
// with a manual clock for retention.ms and segment.ms.
#include "cleaner/retention_cleaner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/retention_host.h"
#include "storage/engine/topic_config.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::cleaner {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const TopicPartition kTp{"events", 0};
constexpr int64_t kEpoch = 1;
// With segment.bytes 1024, every batch of one such record fills a segment:
// the next append rolls.
constexpr size_t kValueBytes = 600;

class RetentionCleanerTest : public DiskEngineTest {
 protected:
  // One batch per segment; retention by time only (1 hour); age rolls after
  // an hour.
  static PartitionConfig OneBatchPerSegment() {
    PartitionConfig config = SmallConfig();
    config.segment_bytes = 1024;
    config.segment_ms = absl::Hours(1);
    config.retention_ms = absl::Hours(1);
    config.retention_bytes.reset();
    return config;
  }

  std::unique_ptr<DiskEngine> NewEngine(
      const PartitionConfig& config = OneBatchPerSegment()) {
    DiskEngine::Options options = MakeOptions();
    options.default_config = config;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  int next_key_ = 0;

  // A batch of one record whose timestamp is `age` before the clock's now.
  std::string BatchAged(absl::Duration age) {
    test::BatchBuilder builder;
    // Keyed: compacted topics refuse records without a key.
    builder.BaseTimestamp(absl::ToUnixMillis(clock().Now() - age))
        .AddRecord(absl::StrCat("key-", next_key_++),
                   std::string(kValueBytes, 'v'));
    return builder.Build();
  }

  // Appends batches `ages` old (durably: acks=all), one segment each.
  void AppendAged(DiskEngine& engine, const std::vector<absl::Duration>& ages,
                  const TopicPartition& tp = kTp) {
    for (absl::Duration age : ages) {
      ASSERT_OK(engine.AppendAndWait(tp, kEpoch, Acks::kAll, BatchAged(age))
                    .status());
    }
  }

  // The base offsets of the partition's .log files on disk, ascending
  // (segment files are named "<epoch>-<base offset>.log").
  std::vector<int64_t> SegmentFiles(DiskEngine& engine,
                                    const TopicPartition& tp = kTp) {
    absl::StatusOr<std::string> dir = engine.PartitionDir(tp);
    EXPECT_OK(dir.status());
    absl::StatusOr<std::vector<std::string>> names = fs().ListDir(*dir);
    EXPECT_OK(names.status());
    std::vector<int64_t> bases;
    for (absl::string_view name : *names) {
      if (!absl::ConsumeSuffix(&name, ".log")) continue;
      int64_t base = -1;
      EXPECT_TRUE(absl::SimpleAtoi(name.substr(name.rfind('-') + 1), &base))
          << name;
      bases.push_back(base);
    }
    std::sort(bases.begin(), bases.end());
    return bases;
  }

  // What an operator's tooling does: atomically replaces the topic's
  // `.config.json`.
  void WriteTopicConfig(absl::string_view json,
                        const std::string& topic = kTp.topic) {
    WriteTopicFile(topic, kTopicConfigFileName, json);
  }

  std::unique_ptr<RetentionCleaner> NewCleaner(
      RetentionHost* host, absl::Duration check_interval = absl::ZeroDuration(),
      std::function<void(const SweepReport&)> on_sweep = nullptr) {
    RetentionCleaner::Options options;
    options.check_interval = check_interval;
    options.clock = &clock();
    options.on_sweep = std::move(on_sweep);
    return std::make_unique<RetentionCleaner>(host, std::move(options));
  }

  static void ExpectOutOfRange(DiskEngine& engine, int64_t offset,
                               const TopicPartition& tp = kTp) {
    EXPECT_THAT(
        engine.Read(tp, offset, 1 << 20, Isolation::kReadUncommitted).status(),
        HasStorageError(StorageErrorCode::kOffsetOutOfRange))
        << "offset " << offset;
  }

  static void ExpectReadable(DiskEngine& engine, int64_t offset,
                             const TopicPartition& tp = kTp) {
    absl::StatusOr<ReadResult> read =
        engine.Read(tp, offset, 1 << 20, Isolation::kReadUncommitted);
    ASSERT_OK(read.status());
    EXPECT_GT(read->batches, 0) << "offset " << offset;
  }
};

TEST_F(RetentionCleanerTest, TimeRetentionDeletesExpiredSegmentsAndFiles) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  // Segments 0 and 1 are past the hour, 2 is not, 3 is active.
  AppendAged(*engine, {absl::Hours(3), absl::Hours(2), absl::Minutes(10),
                       absl::ZeroDuration()});
  ASSERT_THAT(SegmentFiles(*engine), SizeIs(4));
  ASSERT_OK_AND_ASSIGN(RetentionView before, engine->DescribeForRetention(kTp));
  const uint64_t expired_bytes =
      before.segments[0].size_bytes + before.segments[1].size_bytes;

  auto cleaner = NewCleaner(engine.get());
  SweepReport report = cleaner->RunOnce();

  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 1);
  EXPECT_EQ(report.by_time.segments, 2);
  EXPECT_EQ(report.by_time.bytes, expired_bytes);
  EXPECT_EQ(report.by_size.segments, 0);
  EXPECT_EQ(report.errors, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
  EXPECT_THAT(SegmentFiles(*engine), ElementsAre(2, 3));
  ExpectOutOfRange(*engine, 0);
  ExpectOutOfRange(*engine, 1);
  ExpectReadable(*engine, 2);
  EXPECT_EQ(engine->Stats().retention_segments_by_time.load(), 2u);
  EXPECT_EQ(engine->Stats().retention_bytes_by_time.load(), expired_bytes);
  EXPECT_EQ(engine->Stats().retention_segments_by_size.load(), 0u);

  // Idempotent: the next sweep finds nothing new.
  report = cleaner->RunOnce();
  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 0);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(2));
}

TEST_F(RetentionCleanerTest, SizeRetentionKeepsAtLeastRetentionBytes) {
  const uint64_t segment_bytes = BatchAged(absl::ZeroDuration()).size();
  PartitionConfig config = OneBatchPerSegment();
  config.retention_ms.reset();
  // Five segments of one batch: deleting three leaves exactly two.
  config.retention_bytes = 2 * segment_bytes;
  auto engine = NewEngine(config);
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, std::vector<absl::Duration>(5, absl::ZeroDuration()));

  SweepReport report = NewCleaner(engine.get())->RunOnce();

  EXPECT_EQ(report.partitions_advanced, 1);
  EXPECT_EQ(report.by_size.segments, 3);
  EXPECT_EQ(report.by_size.bytes, 3 * segment_bytes);
  EXPECT_EQ(report.by_time.segments, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(3));
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(2));
  ExpectOutOfRange(*engine, 2);
  ExpectReadable(*engine, 3);
  EXPECT_EQ(engine->Stats().retention_segments_by_size.load(), 3u);
  EXPECT_EQ(engine->Stats().retention_bytes_by_size.load(), 3 * segment_bytes);
  EXPECT_EQ(engine->Stats().retention_segments_by_time.load(), 0u);
}

TEST_F(RetentionCleanerTest, WhicheverRemovesMoreWinsAndIsCreditedForIt) {
  const uint64_t segment_bytes = BatchAged(absl::ZeroDuration()).size();
  PartitionConfig config = OneBatchPerSegment();
  config.retention_bytes = 2 * segment_bytes;
  auto engine = NewEngine(config);
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  // Time would remove one segment, size three: size wins.
  AppendAged(*engine,
             {absl::Hours(2), absl::ZeroDuration(), absl::ZeroDuration(),
              absl::ZeroDuration(), absl::ZeroDuration()});
  auto cleaner = NewCleaner(engine.get());
  SweepReport report = cleaner->RunOnce();
  EXPECT_EQ(report.by_size.segments, 3);
  EXPECT_EQ(report.by_time.segments, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(3));

  // Two hours on, the active segment rolls by age and time expires both
  // remaining segments; size (two segments left) would delete none.
  clock().Advance(absl::Hours(2));
  report = cleaner->RunOnce();
  EXPECT_EQ(report.rolls, 1);
  EXPECT_EQ(report.by_time.segments, 2);
  EXPECT_EQ(report.by_size.segments, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(5));
  EXPECT_EQ(engine->Stats().retention_segments_by_size.load(), 3u);
  EXPECT_EQ(engine->Stats().retention_segments_by_time.load(), 2u);
}

TEST_F(RetentionCleanerTest, MinusOneKeepsEverything) {
  WriteTopicConfig(R"({"retentionMs": -1, "retentionBytes": -1})");
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(24 * 365), absl::Hours(24 * 365),
                       absl::Hours(24 * 365)});

  SweepReport report = NewCleaner(engine.get())->RunOnce();

  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 0);
  EXPECT_EQ(report.errors, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(0));
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(3));
  ExpectReadable(*engine, 0);
}

TEST_F(RetentionCleanerTest, TheActiveSegmentIsNeverRemoved) {
  WriteTopicConfig(R"({"retentionMs": 0})");
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine,
             {absl::Hours(2), absl::Hours(2), absl::Hours(2), absl::Hours(2)});
  auto cleaner = NewCleaner(engine.get());

  SweepReport report = cleaner->RunOnce();

  // Everything is expired, but the active segment (offset 3) stays.
  EXPECT_EQ(report.by_time.segments, 3);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(3));
  EXPECT_THAT(SegmentFiles(*engine), ElementsAre(3));
  ExpectReadable(*engine, 3);
  report = cleaner->RunOnce();
  EXPECT_EQ(report.partitions_advanced, 0);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
}

TEST_F(RetentionCleanerTest, AQuietPartitionRollsBySegmentMsThenItsDataGoes) {
  PartitionConfig config = OneBatchPerSegment();
  config.segment_bytes = 1 << 20;  // never rolls by size here
  auto engine = NewEngine(config);
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::ZeroDuration(), absl::ZeroDuration()});
  auto cleaner = NewCleaner(engine.get());
  EXPECT_EQ(cleaner->RunOnce().rolls, 0);  // younger than segment.ms

  // Nobody writes for two hours: the only segment rolls and expires.
  clock().Advance(absl::Hours(2));
  SweepReport report = cleaner->RunOnce();

  EXPECT_EQ(report.rolls, 1);
  EXPECT_EQ(report.by_time.segments, 1);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
  EXPECT_THAT(SegmentFiles(*engine), ElementsAre(2));
  ExpectOutOfRange(*engine, 0);
}

TEST_F(RetentionCleanerTest, ConfigChangesApplyAtTheNextSweep) {
  PartitionConfig config = OneBatchPerSegment();
  config.retention_ms = absl::Hours(24 * 7);  // the engine default
  auto engine = NewEngine(config);
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(3), absl::Hours(3), absl::ZeroDuration()});
  auto cleaner = NewCleaner(engine.get());
  EXPECT_EQ(cleaner->RunOnce().partitions_advanced, 0);

  WriteTopicConfig(R"({"retentionMs": 3600000})");
  SweepReport report = cleaner->RunOnce();
  EXPECT_EQ(report.by_time.segments, 2);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));

  // D-17: a removed override reverts to the engine default (7 days), not to
  // the hour the partition was running with. Two hours on, the active
  // segment rolls by age; an hour's retention would delete it, the default
  // does not.
  RemoveTopicFile(kTp.topic, kTopicConfigFileName);
  clock().Advance(absl::Hours(2));
  report = cleaner->RunOnce();
  EXPECT_EQ(report.rolls, 1);
  EXPECT_EQ(report.partitions_advanced, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  EXPECT_EQ(view.config.retention_ms, absl::Hours(24 * 7));
}

TEST_F(RetentionCleanerTest, CompactOnlyTopicsAreNotDeleted) {
  WriteTopicConfig(R"({"cleanupPolicy": "compact", "retentionMs": 0})");
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::Hours(2)});
  auto cleaner = NewCleaner(engine.get());

  SweepReport report = cleaner->RunOnce();
  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 0);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(3));

  // "compact,delete" is subject to retention.
  WriteTopicConfig(R"({"cleanupPolicy": "compact,delete", "retentionMs": 0})");
  report = cleaner->RunOnce();
  EXPECT_EQ(report.by_time.segments, 2);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
}

TEST_F(RetentionCleanerTest, OnlyLedPartitionsAreTouched) {
  const TopicPartition other{kTp.topic, 1};
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  ASSERT_OK(engine->TakeOver(other, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::Hours(2)});
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::Hours(2)}, other);
  ASSERT_OK(engine->Relinquish(other));

  SweepReport report = NewCleaner(engine.get())->RunOnce();

  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 1);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
  EXPECT_THAT(SegmentFiles(*engine, other), SizeIs(3));
  ASSERT_OK(engine->TakeOver(other, kEpoch + 1).status());
  EXPECT_THAT(engine->LogStartOffset(other), IsOkAndHolds(0));
}

// Forwards to the engine but lists partitions as they were led when it was
// made: leadership moves between LedPartitions and the sweep's calls.
class StaleLeadershipHost : public RetentionHost {
 public:
  explicit StaleLeadershipHost(DiskEngine* engine)
      : engine_(engine), led_(engine->LedPartitions()) {}
  std::vector<TopicPartition> LedPartitions() override { return led_; }
  absl::Status ReloadTopicConfig(const TopicPartition& tp) override {
    return engine_->ReloadTopicConfig(tp);
  }
  absl::StatusOr<RetentionView> DescribeForRetention(
      const TopicPartition& tp) override {
    return engine_->DescribeForRetention(tp);
  }
  absl::StatusOr<bool> RollIfAged(const TopicPartition& tp) override {
    return engine_->RollIfAged(tp);
  }
  absl::StatusOr<LogStartAdvance> AdvanceLogStartForRetention(
      const TopicPartition& tp, int64_t target,
      RetentionReason reason) override {
    return engine_->AdvanceLogStartForRetention(tp, target, reason);
  }

 private:
  DiskEngine* const engine_;
  const std::vector<TopicPartition> led_;
};

TEST_F(RetentionCleanerTest, APartitionThatLostLeadershipIsSkippedQuietly) {
  const TopicPartition other{kTp.topic, 1};
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  ASSERT_OK(engine->TakeOver(other, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)});
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)}, other);
  StaleLeadershipHost host(engine.get());
  ASSERT_OK(engine->Relinquish(kTp));

  SweepReport report = NewCleaner(&host)->RunOnce();

  EXPECT_EQ(report.errors, 0);
  EXPECT_EQ(report.partitions_examined, 1);
  EXPECT_EQ(report.partitions_advanced, 1);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(2));
  EXPECT_THAT(SegmentFiles(*engine, other), SizeIs(1));
}

TEST_F(RetentionCleanerTest, AnErrorIsCountedAndTheSweepGoesOn) {
  const TopicPartition broken{"broken", 0};
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(broken, kEpoch).status());
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)}, broken);
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)});
  // An operator's typo: the partition keeps its data until it is fixed
  // (never retention by a config the operator meant to change).
  WriteTopicConfig(R"({"retentionMz": 0})", broken.topic);

  SweepReport report = NewCleaner(engine.get())->RunOnce();

  EXPECT_EQ(report.errors, 1);
  EXPECT_EQ(report.partitions_advanced, 1);
  EXPECT_THAT(SegmentFiles(*engine, broken), SizeIs(2));
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
}

TEST_F(RetentionCleanerTest, ATargetAboveTheHighWatermarkWaitsForDurability) {
  PartitionConfig config = OneBatchPerSegment();
  config.retention_ms = absl::ZeroDuration();
  auto engine = NewEngine(config);
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2)});
  // flush.messages 1: the high watermark is the durable end, held at 1 while
  // the log's syncs are blocked; the roll to segment 2 makes 1 closed.
  fs().BlockSyncs(test::PathPattern::Substring(".log"));
  // No ASSERT until the syncs are released: the engine's destructor would
  // wait for them.
  for (int i = 0; i < 2; ++i) {
    EXPECT_OK(
        engine->Append(kTp, kEpoch, Acks::kLeader, BatchAged(absl::Hours(2)))
            .status());
  }
  EXPECT_THAT(engine->HighWatermark(kTp), IsOkAndHolds(1));
  auto cleaner = NewCleaner(engine.get());

  // Segment 0 lies below the high watermark and goes; segment 1 is expired
  // too but not visible yet: it waits.
  SweepReport report = cleaner->RunOnce();
  EXPECT_EQ(report.deferred, 1);
  EXPECT_EQ(report.errors, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(1));

  fs().ReleaseSyncs();
  AppendAged(*engine, {absl::Hours(2)});  // acks=all: all durable now
  report = cleaner->RunOnce();
  EXPECT_EQ(report.deferred, 0);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(3));
}

TEST_F(RetentionCleanerTest, CrashBetweenPersistingLogStartAndUnlinking) {
  {
    auto engine = NewEngine();
    ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
    AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::ZeroDuration()});
    test::Fault fault(test::FsOp::kUnlink, EIO);
    fault.path = test::PathPattern::Substring(".log");
    fault.count = test::Fault::kForever;
    fs().InjectFault(fault);

    SweepReport report = NewCleaner(engine.get())->RunOnce();

    // The log start moved (durably); the files could not be unlinked.
    EXPECT_EQ(report.partitions_advanced, 1);
    EXPECT_EQ(report.by_time.segments, 0);
    EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
    EXPECT_THAT(SegmentFiles(*engine), SizeIs(3));
    ExpectOutOfRange(*engine, 0);
    fs().Crash();
    fs().ClearFaults();
  }
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch + 1).status());
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
  ExpectOutOfRange(*engine, 0);
  ExpectOutOfRange(*engine, 1);
  ExpectReadable(*engine, 2);
  // The reopen removed what lay below the log start (and the take-over at
  // a new epoch started segment 3).
  EXPECT_THAT(SegmentFiles(*engine), ElementsAre(2, 3));
}

TEST_F(RetentionCleanerTest, ThePeriodicSweepRunsOnItsOwnThread) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::ZeroDuration()});
  absl::Notification advanced;
  auto cleaner = NewCleaner(
      engine.get(), absl::Milliseconds(10), [&](const SweepReport& report) {
        // Sweeps run one at a time on the cleaner's thread.
        if (report.partitions_advanced > 0 && !advanced.HasBeenNotified()) {
          advanced.Notify();
        }
      });
  cleaner->Start();
  advanced.WaitForNotification();
  cleaner->Stop();
  EXPECT_EQ(engine->Stats().retention_segments_by_time.load(), 2u);
  EXPECT_THAT(engine->LogStartOffset(kTp), IsOkAndHolds(2));
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
}

TEST_F(RetentionCleanerTest, NoSweepBeforeTheFirstIntervalAndStopIsPrompt) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)});
  absl::Mutex mu;
  int sweeps = 0;
  auto cleaner =
      NewCleaner(engine.get(), absl::Hours(1), [&](const SweepReport&) {
        absl::MutexLock lock(&mu);
        ++sweeps;
      });
  cleaner->Start();
  // Stop() returns without waiting out the hour (the test would time out).
  // A sweep at Start() would usually get in before it: the thread has no
  // other work.
  cleaner->Stop();
  cleaner->Stop();  // idempotent
  absl::MutexLock lock(&mu);
  EXPECT_EQ(sweeps, 0);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(2));
}

TEST_F(RetentionCleanerTest, AZeroIntervalDisablesThePeriodicSweepOnly) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, kEpoch).status());
  AppendAged(*engine, {absl::Hours(2), absl::Hours(2)});
  auto cleaner = NewCleaner(engine.get(), absl::ZeroDuration());
  cleaner->Start();  // no thread
  EXPECT_EQ(cleaner->RunOnce().partitions_advanced, 1);
  EXPECT_THAT(SegmentFiles(*engine), SizeIs(1));
}

TEST_F(RetentionCleanerTest, RunOnceAndThePeriodicSweepDoNotOverlap) {
  auto engine = NewEngine();
  const std::vector<TopicPartition> partitions = {
      {kTp.topic, 0}, {kTp.topic, 1}, {kTp.topic, 2}};
  for (const TopicPartition& tp : partitions) {
    ASSERT_OK(engine->TakeOver(tp, kEpoch).status());
    AppendAged(*engine, {absl::Hours(2), absl::Hours(2), absl::Hours(2)}, tp);
  }
  absl::Mutex mu;
  int64_t segments = 0;
  int advanced = 0;
  auto count = [&](const SweepReport& report) {
    absl::MutexLock lock(&mu);
    segments += report.by_time.segments;
    advanced += report.partitions_advanced;
  };
  auto cleaner = NewCleaner(engine.get(), absl::Milliseconds(1), count);
  cleaner->Start();
  for (int i = 0; i < 20; ++i) cleaner->RunOnce();
  cleaner->Stop();
  // Each partition advanced, and each expired segment was deleted (and
  // credited), exactly once.
  absl::MutexLock lock(&mu);
  EXPECT_EQ(advanced, 3);
  EXPECT_EQ(segments, 6);
  EXPECT_EQ(engine->Stats().retention_segments_by_time.load(), 6u);
  for (const TopicPartition& tp : partitions) {
    EXPECT_THAT(SegmentFiles(*engine, tp), SizeIs(1));
  }
}

}  // namespace
}  // namespace kaas::cleaner
