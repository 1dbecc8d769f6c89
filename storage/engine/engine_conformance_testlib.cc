// The StorageEngine conformance suite (see engine_conformance_testlib.h). Every
// test uses only the StorageEngine interface.

#include "storage/engine/engine_conformance_testlib.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "placement/log_dir_info.h"
#include "storage/batch/record_batch.h"
#include "storage/common/storage_stats.h"
#include "storage/common/topic_name.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {

std::string EngineFactoryName(
    const ::testing::TestParamInfo<EngineFactory>& info) {
  return info.param.name;
}

void PrintTo(const EngineFactory& factory, std::ostream* os) {
  *os << factory.name;
}

void EngineConformanceTest::SetUp() { UseEngine(EngineSettings()); }

void EngineConformanceTest::UseEngine(const EngineSettings& settings) {
  engine_.reset();
  engine_ = GetParam().create(settings);
  ASSERT_NE(engine_, nullptr) << GetParam().name << " created no engine";
}

void EngineConformanceTest::TearDown() { engine_.reset(); }

void EngineConformanceTest::Lead(const TopicPartition& tp, int64_t epoch) {
  ASSERT_OK(engine().TakeOver(tp, epoch).status()) << tp.ToString();
}

AppendResult EngineConformanceTest::MustAppend(const TopicPartition& tp,
                                               absl::string_view batch,
                                               int64_t epoch) {
  absl::StatusOr<AppendResult> result =
      engine().AppendAndWait(tp, epoch, Acks::kAll, batch);
  EXPECT_OK(result.status()) << tp.ToString();
  return result.ok() ? *std::move(result) : AppendResult();
}

std::string EngineConformanceTest::ReadAll(const TopicPartition& tp,
                                           int64_t offset, Isolation isolation,
                                           size_t page_bytes) {
  std::string out;
  while (true) {
    absl::StatusOr<ReadResult> read =
        engine().Read(tp, offset, page_bytes, isolation);
    EXPECT_OK(read.status()) << tp.ToString() << " at " << offset;
    if (!read.ok() || read->batches == 0) break;
    out += std::string(read->records);
    offset = read->next_offset;
  }
  return out;
}

std::string EngineConformanceTest::Batch(int records, size_t value_size,
                                         int64_t timestamp, uint64_t seed) {
  test::BatchBuilder builder;
  builder.BaseOffset(999).BaseTimestamp(timestamp);
  builder.AddRandomRecords(records, value_size, seed);
  return builder.Build();
}

std::string EngineConformanceTest::ProducerBatch(int64_t producer_id,
                                                 int16_t epoch,
                                                 int32_t base_sequence,
                                                 int records,
                                                 bool transactional) {
  test::BatchBuilder builder;
  builder.BaseOffset(999).Producer(producer_id, epoch, base_sequence);
  builder.Transactional(transactional);
  builder.AddRandomRecords(records, 8);
  return builder.Build();
}

std::vector<int64_t> EngineConformanceTest::BaseOffsets(
    absl::string_view bytes) {
  std::vector<int64_t> bases;
  while (!bytes.empty()) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok() || *size > bytes.size()) {
      ADD_FAILURE() << "not whole batches: " << size.status();
      break;
    }
    bases.push_back(ReadBigEndian64(bytes.data()));
    bytes.remove_prefix(*size);
  }
  return bases;
}

std::string EngineConformanceTest::LeaderLog(
    const TopicPartition& leader, const std::vector<std::string>& batches,
    int64_t epoch) {
  absl::Status led = engine().TakeOver(leader, epoch).status();
  EXPECT_OK(led) << leader.ToString();
  if (!led.ok()) return "";
  for (const std::string& batch : batches) MustAppend(leader, batch, epoch);
  return ReadAll(leader);
}

absl::StatusOr<AppendResult> EngineConformanceTest::Replicate(
    const TopicPartition& follower, absl::string_view batches, int64_t epoch) {
  absl::StatusOr<AppendResult> result =
      engine().AppendAsFollower(follower, epoch, Acks::kAll, batches);
  if (!result.ok()) return result;
  // As AppendAndWait: the engine's high watermark may be the durable end.
  if (absl::Status durable = result->durable.Wait(); !durable.ok()) {
    return durable;
  }
  return result;
}

namespace {

using ::kaas::test::ControlBatch;
using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

TopicPartition Orders(int32_t partition = 0) { return {"orders", partition}; }

std::vector<std::string> Names(const std::vector<TopicPartition>& tps) {
  std::vector<std::string> names;
  for (const TopicPartition& tp : tps) names.push_back(tp.ToString());
  return names;
}

MATCHER_P3(IsAborted, producer_id, first_offset, last_offset,
           "is producer " + ::testing::PrintToString(producer_id) +
               "'s aborted transaction [" +
               ::testing::PrintToString(first_offset) + ", " +
               ::testing::PrintToString(last_offset) + "]") {
  *result_listener << "producer " << arg.producer_id << " [" << arg.first_offset
                   << ", " << arg.last_offset << "]";
  return arg.producer_id == producer_id && arg.first_offset == first_offset &&
         arg.last_offset == last_offset;
}

}  // namespace

void EngineConformanceTest::ExpectNotLed(const TopicPartition& tp) {
  SCOPED_TRACE(tp.ToString());
  const auto not_leader = HasStorageError(StorageErrorCode::kNotLeader);
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, Batch()), not_leader);
  EXPECT_THAT(engine().Read(tp, 0, 1024, Isolation::kReadUncommitted),
              not_leader);
  EXPECT_THAT(engine().ReadRegions(tp, 0, 1024, Isolation::kReadUncommitted),
              not_leader);
  EXPECT_THAT(engine().HighWatermark(tp), not_leader);
  EXPECT_THAT(engine().LogStartOffset(tp), not_leader);
  EXPECT_THAT(engine().LastStableOffset(tp), not_leader);
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 0, 10), not_leader);
  EXPECT_THAT(engine().OffsetForTimestamp(tp, -1, Isolation::kReadUncommitted),
              not_leader);
  EXPECT_THAT(engine().OffsetForLeaderEpoch(tp, 0), not_leader);
  EXPECT_THAT(engine().PartitionSize(tp), not_leader);
  EXPECT_THAT(engine().DeleteRecords(tp, -1), not_leader);
  EXPECT_EQ(engine().PartitionEpoch(tp), std::nullopt);
  EXPECT_THAT(engine().ReloadTopicConfig(tp), not_leader);
  EXPECT_THAT(engine().DescribeProducers(tp), not_leader);
  EXPECT_THAT(engine().PartitionStatsOf(tp), not_leader);
}

namespace {

// ---- Appends and reads
// -------------------------------------------------------

TEST_P(EngineConformanceTest, NewPartitionStartsEmpty) {
  const TopicPartition tp = Orders();
  EXPECT_THAT(engine().TakeOver(tp, 1), IsOkAndHolds(0));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().LastStableOffset(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().PartitionSize(tp), IsOkAndHolds(0u));
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       engine().Read(tp, 0, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 0);
  EXPECT_TRUE(read.records.empty());
  EXPECT_EQ(read.next_offset, 0);
}

TEST_P(EngineConformanceTest,
       BatchesReadBackByteIdenticalButForBaseOffsetAndLeaderEpoch) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const std::string first = Batch(/*records=*/5);
  const std::string second = Batch(/*records=*/3, 16, 2000, /*seed=*/2);
  AppendResult a = MustAppend(tp, first);
  EXPECT_EQ(a.base_offset, 0);
  EXPECT_EQ(a.last_offset, 4);
  EXPECT_FALSE(a.duplicate);
  EXPECT_EQ(a.log_start_offset, 0);
  AppendResult b = MustAppend(tp, second);
  EXPECT_EQ(b.base_offset, 5);
  EXPECT_EQ(b.last_offset, 7);
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(8));
  EXPECT_THAT(engine().PartitionSize(tp),
              IsOkAndHolds(first.size() + second.size()));

  const std::string stored = ReadAll(tp);
  ASSERT_EQ(stored.size(), first.size() + second.size());
  // The producer's base offset (999) is replaced by the assigned one and its
  // leader epoch (-1) by the leader's; every other byte is the producer's.
  EXPECT_EQ(ReadBigEndian64(stored.data()), 0);
  EXPECT_TRUE(
      SameBatchButForLeaderFields(stored.substr(0, first.size()), first));
  EXPECT_EQ(ReadBigEndian64(stored.data() + first.size()), 5);
  EXPECT_TRUE(SameBatchButForLeaderFields(stored.substr(first.size()), second));
  EXPECT_TRUE(RecordBatchView::Parse(stored.substr(0, first.size())).ok())
      << "the CRC still matches";
}

// KIP-101/KIP-320: each stored batch carries the epoch of the leader that
// appended it, so a follower or a consumer can tell where logs diverged.
TEST_P(EngineConformanceTest, AppendsStampTheLeadersEpochIntoEachBatch) {
  const TopicPartition tp = Orders();
  Lead(tp, 3);
  ASSERT_FALSE(HasFatalFailure());
  const std::string batch = Batch();
  ASSERT_EQ(ReadBigEndian32(batch.data() + batch_layout::kPartitionLeaderEpoch),
            -1);
  MustAppend(tp, batch, /*epoch=*/3);
  // A producer that believes in a newer epoch does not change the stamp:
  // the partition is led at 3 until a take-over says otherwise.
  MustAppend(tp, batch, /*epoch=*/7);
  ASSERT_OK(engine().TakeOver(tp, 5).status());
  MustAppend(tp, batch, /*epoch=*/5);
  std::vector<int32_t> epochs;
  const std::string stored = ReadAll(tp);
  for (absl::string_view rest = stored; !rest.empty();) {
    epochs.push_back(
        ReadBigEndian32(rest.data() + batch_layout::kPartitionLeaderEpoch));
    rest.remove_prefix(batch.size());
  }
  EXPECT_THAT(epochs, ElementsAre(3, 3, 5));
}

TEST_P(EngineConformanceTest, OffsetsAreContiguousAcrossManyBatches) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  constexpr int kBatches = 100;
  int64_t expected = 0;
  for (int i = 0; i < kBatches; ++i) {
    const int records = 1 + i % 7;
    AppendResult result =
        MustAppend(tp, Batch(records, 8 + i % 5, 1000 + i, /*seed=*/i + 1));
    ASSERT_EQ(result.base_offset, expected) << "batch " << i;
    ASSERT_EQ(result.last_offset, expected + records - 1) << "batch " << i;
    expected += records;
  }
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(expected));
  // Reads of one batch at a time (max_bytes 1: KIP-74) visit every batch in
  // order, each at its assigned base offset.
  int64_t offset = 0;
  int batches = 0;
  while (offset < expected) {
    ASSERT_OK_AND_ASSIGN(
        ReadResult read,
        engine().Read(tp, offset, 1, Isolation::kReadUncommitted));
    ASSERT_EQ(read.batches, 1) << "at " << offset;
    EXPECT_THAT(BaseOffsets(std::string(read.records)), ElementsAre(offset));
    offset = read.next_offset;
    ++batches;
  }
  EXPECT_EQ(batches, kBatches);
}

TEST_P(EngineConformanceTest, ReadStartsAtTheBatchContainingTheOffset) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(4));  // 0..3
  MustAppend(tp, Batch(4));  // 4..7
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine().Read(tp, 6, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 1);
  EXPECT_THAT(BaseOffsets(std::string(read.records)), ElementsAre(4));
  EXPECT_EQ(read.next_offset, 8);
  EXPECT_EQ(read.high_watermark, 8);
}

// KIP-74: the first batch is returned whole even when larger than max_bytes;
// later batches only if they fit whole.
TEST_P(EngineConformanceTest, FirstBatchIsWholeEvenWhenLargerThanMaxBytes) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const std::string big = Batch(1, 2000);
  const std::string small = Batch(1, 10);
  MustAppend(tp, big);
  MustAppend(tp, small);
  for (size_t max_bytes :
       {size_t{0}, size_t{100}, big.size() + small.size() - 1}) {
    ASSERT_OK_AND_ASSIGN(
        ReadResult read,
        engine().Read(tp, 0, max_bytes, Isolation::kReadUncommitted));
    EXPECT_EQ(read.batches, 1) << "max_bytes " << max_bytes;
    EXPECT_EQ(read.records.size(), big.size()) << "max_bytes " << max_bytes;
    EXPECT_EQ(read.next_offset, 1) << "max_bytes " << max_bytes;
  }
  ASSERT_OK_AND_ASSIGN(ReadResult both,
                       engine().Read(tp, 0, big.size() + small.size(),
                                     Isolation::kReadUncommitted));
  EXPECT_EQ(both.batches, 2);
  EXPECT_EQ(both.next_offset, 2);
}

// ReadRegions answers exactly what Read does, as references: for every
// offset, budget and isolation, across segments (each take-over rolls one),
// and the regions send the same bytes to a socket.
TEST_P(EngineConformanceTest, ReadRegionsHoldWhatReadReturns) {
  const TopicPartition tp = Orders();
  for (int64_t epoch = 1; epoch <= 3; ++epoch) {
    Lead(tp, epoch);
    ASSERT_FALSE(HasFatalFailure());
    for (int i = 0; i < 4; ++i) {
      MustAppend(tp, Batch(1 + i % 3, 40 + 300 * i, -1, epoch * 10 + i), epoch);
    }
  }
  ASSERT_OK_AND_ASSIGN(const int64_t high_watermark,
                       engine().HighWatermark(tp));
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  for (Isolation isolation :
       {Isolation::kReadUncommitted, Isolation::kReadCommitted}) {
    for (size_t max_bytes :
         {size_t{1}, size_t{700}, size_t{3000}, size_t{1} << 20}) {
      for (int64_t offset = 0; offset <= high_watermark; ++offset) {
        SCOPED_TRACE(absl::StrCat("offset ", offset, " max_bytes ", max_bytes));
        ASSERT_OK_AND_ASSIGN(ReadResult read,
                             engine().Read(tp, offset, max_bytes, isolation));
        ASSERT_OK_AND_ASSIGN(
            RegionReadResult regions,
            engine().ReadRegions(tp, offset, max_bytes, isolation));
        EXPECT_EQ(regions.batches, read.batches);
        EXPECT_EQ(regions.next_offset, read.next_offset);
        EXPECT_EQ(regions.high_watermark, read.high_watermark);
        EXPECT_EQ(regions.last_stable_offset, read.last_stable_offset);
        EXPECT_EQ(regions.log_start_offset, read.log_start_offset);
        EXPECT_EQ(regions.records.size(), read.records.size());
        EXPECT_THAT(regions.records.ToCord(), IsOkAndHolds(read.records));
        // The whole read fits the pipe (64 KiB).
        ASSERT_THAT(regions.records.SendTo(pipe_fds[1]),
                    IsOkAndHolds(read.records.size()));
        std::string sent(read.records.size(), '\0');
        ASSERT_EQ(::read(pipe_fds[0], sent.data(), sent.size()),
                  static_cast<ssize_t>(sent.size()));
        EXPECT_EQ(sent, std::string(read.records));
      }
    }
  }
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_THAT(engine().ReadRegions(tp, high_watermark + 1, 1024,
                                   Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
}

TEST_P(EngineConformanceTest, ReadingAtTheHighWatermarkIsEmpty) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3));
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       engine().Read(tp, 3, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 0);
  EXPECT_TRUE(read.records.empty());
  EXPECT_EQ(read.next_offset, 3);
  EXPECT_EQ(read.high_watermark, 3);
}

TEST_P(EngineConformanceTest, ReadingOutsideTheLogIsOutOfRange) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3));
  const auto out_of_range =
      HasStorageError(StorageErrorCode::kOffsetOutOfRange);
  EXPECT_THAT(engine().Read(tp, 4, 1024, Isolation::kReadUncommitted),
              out_of_range);
  EXPECT_THAT(engine().Read(tp, -1, 1024, Isolation::kReadUncommitted),
              out_of_range);
  EXPECT_THAT(engine().Read(tp, 4, 1024, Isolation::kReadCommitted),
              out_of_range);
  ASSERT_OK(engine().DeleteRecords(tp, 2).status());
  EXPECT_THAT(engine().Read(tp, 1, 1024, Isolation::kReadUncommitted),
              out_of_range);
}

TEST_P(EngineConformanceTest, ReadResultReportsThePartitionOffsets) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3));                                           // 0..2
  MustAppend(tp, ProducerBatch(5, 0, 0, 2, /*transactional=*/true));  // 3..4
  MustAppend(tp, Batch(1));                                           // 5
  ASSERT_OK(engine().DeleteRecords(tp, 1).status());
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       engine().Read(tp, 1, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(read.log_start_offset, 1);
  EXPECT_EQ(read.high_watermark, 6);
  EXPECT_EQ(read.last_stable_offset, 3);
  EXPECT_EQ(read.batches, 3);
  EXPECT_EQ(read.next_offset, 6);
  EXPECT_THAT(read.aborted_transactions, IsEmpty());  // read_uncommitted
}

TEST_P(EngineConformanceTest, EveryAcksLevelIsAcknowledged) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_OK_AND_ASSIGN(AppendResult none,
                       engine().Append(tp, 1, Acks::kNone, Batch()));
  EXPECT_EQ(none.base_offset, 0);
  EXPECT_OK(none.durable.Wait());
  ASSERT_OK_AND_ASSIGN(AppendResult leader,
                       engine().Append(tp, 1, Acks::kLeader, Batch()));
  EXPECT_EQ(leader.base_offset, 1);
  EXPECT_OK(leader.durable.Wait());
  ASSERT_OK_AND_ASSIGN(AppendResult all,
                       engine().Append(tp, 1, Acks::kAll, Batch()));
  EXPECT_EQ(all.base_offset, 2);
  EXPECT_OK(all.durable.Wait());
  // Durable through the acks=all append: everything is visible.
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(3));
}

// ---- Leadership
// ----------------------------------------------------------------

TEST_P(EngineConformanceTest, EveryPartitionOperationNeedsATakeOver) {
  const TopicPartition tp = Orders();
  ExpectNotLed(tp);
  ASSERT_OK(engine().CreatePartition(tp));
  ExpectNotLed(tp);  // created is not led
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
}

TEST_P(EngineConformanceTest, RelinquishStopsServingAndKeepsTheData) {
  const TopicPartition tp = Orders();
  Lead(tp, 3);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(2), 3);
  MustAppend(tp, Batch(3, 16, 1000, 2), 3);
  const std::string before = ReadAll(tp);

  ASSERT_OK(engine().Relinquish(tp));
  ExpectNotLed(tp);
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());

  EXPECT_THAT(engine().TakeOver(tp, 3), IsOkAndHolds(5));
  EXPECT_THAT(engine().PartitionEpoch(tp), Optional(3));
  EXPECT_EQ(ReadAll(tp), before);
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(5));
  EXPECT_EQ(MustAppend(tp, Batch(), 3).base_offset, 5);
}

TEST_P(EngineConformanceTest, RelinquishOfAPartitionNotLedIsANoOp) {
  EXPECT_OK(engine().Relinquish(Orders(7)));
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_OK(engine().Relinquish(tp));
  EXPECT_OK(engine().Relinquish(tp));
}

TEST_P(EngineConformanceTest, StaleLeaderEpochIsFencedAndANewerOneAccepted) {
  const TopicPartition tp = Orders();
  Lead(tp, 5);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_THAT(engine().Append(tp, 4, Acks::kAll, Batch()),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("older than")));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(0));
  // A newer caller epoch is accepted and does not raise the partition's.
  EXPECT_EQ(MustAppend(tp, Batch(), 6).base_offset, 0);
  EXPECT_THAT(engine().PartitionEpoch(tp), Optional(5));
  EXPECT_EQ(MustAppend(tp, Batch(), 5).base_offset, 1);
}

TEST_P(EngineConformanceTest, TakeOverIsIdempotentAtOrBelowTheEpoch) {
  const TopicPartition tp = Orders();
  EXPECT_EQ(engine().PartitionEpoch(tp), std::nullopt);
  EXPECT_THAT(engine().TakeOver(tp, 3), IsOkAndHolds(0));
  MustAppend(tp, Batch(2), 3);
  EXPECT_THAT(engine().TakeOver(tp, 3), IsOkAndHolds(2));
  EXPECT_THAT(engine().TakeOver(tp, 1), IsOkAndHolds(2));
  EXPECT_THAT(engine().PartitionEpoch(tp), Optional(3));
  EXPECT_THAT(engine().TakeOver(tp, 4), IsOkAndHolds(2));
  EXPECT_THAT(engine().PartitionEpoch(tp), Optional(4));
  EXPECT_THAT(engine().Append(tp, 3, Acks::kAll, Batch()),
              HasStorageError(StorageErrorCode::kNotLeader));
}

TEST_P(EngineConformanceTest,
       TakeOverBelowTheEpochOfARelinquishedPartitionFails) {
  const TopicPartition tp = Orders();
  Lead(tp, 3);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(), 3);
  ASSERT_OK(engine().Relinquish(tp));
  EXPECT_THAT(engine().TakeOver(tp, 2),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
  EXPECT_THAT(engine().TakeOver(tp, 3), IsOkAndHolds(1));
}

TEST_P(EngineConformanceTest, TakeOverRejectsAnEpochOutOfRange) {
  const TopicPartition tp = Orders();
  EXPECT_THAT(engine().TakeOver(tp, -1),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  EXPECT_THAT(engine().TakeOver(tp, int64_t{1} << 32),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  // Kafka leader epochs are int32.
  EXPECT_THAT(engine().TakeOver(tp, int64_t{1} << 31),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
  EXPECT_THAT(engine().TakeOver(tp, kMaxLeaderEpoch), IsOkAndHolds(0));
}

TEST_P(EngineConformanceTest, LedPartitionsAreSortedAndOnlyTheLedOnes) {
  Lead({"b", 1});
  Lead({"a", 2});
  Lead({"a", 0});
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_OK(engine().CreatePartition({"c", 0}));
  EXPECT_THAT(Names(engine().LedPartitions()),
              ElementsAre("a-0", "a-2", "b-1"));
  ASSERT_OK(engine().Relinquish({"a", 2}));
  EXPECT_THAT(Names(engine().LedPartitions()), ElementsAre("a-0", "b-1"));
}

TEST_P(EngineConformanceTest, DrainRelinquishesEveryPartition) {
  Lead(Orders(0), 2);
  Lead(Orders(1), 2);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(Orders(0), Batch(2), 2);
  MustAppend(Orders(1), Batch(3), 2);
  ASSERT_OK(engine().Drain());
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
  ExpectNotLed(Orders(0));
  ExpectNotLed(Orders(1));
  EXPECT_THAT(engine().TakeOver(Orders(0), 2), IsOkAndHolds(2));
  EXPECT_THAT(engine().TakeOver(Orders(1), 2), IsOkAndHolds(3));
}

// ---- DeleteRecords
// ---------------------------------------------------------------

TEST_P(EngineConformanceTest, DeleteRecordsAdvancesTheLogStart) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(2));  // 0..1
  MustAppend(tp, Batch(2));  // 2..3
  MustAppend(tp, Batch(2));  // 4..5
  EXPECT_THAT(engine().DeleteRecords(tp, 3), IsOkAndHolds(3));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(3));
  EXPECT_THAT(engine().Read(tp, 2, 1024, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  // The log start may fall inside a batch: that batch is returned whole.
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       engine().Read(tp, 3, 1024, Isolation::kReadUncommitted));
  EXPECT_THAT(BaseOffsets(std::string(read.records)), ElementsAre(2, 4));
  EXPECT_EQ(read.log_start_offset, 3);
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp earliest,
      engine().OffsetForTimestamp(tp, -2, Isolation::kReadUncommitted));
  EXPECT_EQ(earliest.offset, 3);
}

TEST_P(EngineConformanceTest, DeleteRecordsToMinusOneDeletesEverything) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(4));
  EXPECT_THAT(engine().DeleteRecords(tp, -1), IsOkAndHolds(4));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(4));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(4));
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       engine().Read(tp, 4, 1024, Isolation::kReadUncommitted));
  EXPECT_EQ(read.batches, 0);
  EXPECT_EQ(MustAppend(tp, Batch()).base_offset, 4);
}

TEST_P(EngineConformanceTest, DeleteRecordsPastTheHighWatermarkIsOutOfRange) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(2));
  EXPECT_THAT(engine().DeleteRecords(tp, 3),
              HasStorageError(StorageErrorCode::kOffsetOutOfRange));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().DeleteRecords(tp, 2), IsOkAndHolds(2));
}

TEST_P(EngineConformanceTest, DeleteRecordsNeverLowersTheLogStart) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(8));
  EXPECT_THAT(engine().DeleteRecords(tp, 5), IsOkAndHolds(5));
  EXPECT_THAT(engine().DeleteRecords(tp, 3), IsOkAndHolds(5));
  EXPECT_THAT(engine().DeleteRecords(tp, 5), IsOkAndHolds(5));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(5));
}

TEST_P(EngineConformanceTest, DeleteRecordsTrimsTheEpochHistory) {
  const TopicPartition tp = Orders();
  Lead(tp, 1);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3), 1);  // epoch 1: [0, 3)
  ASSERT_OK(engine().TakeOver(tp, 2).status());
  MustAppend(tp, Batch(3), 2);  // epoch 2: [3, 6)
  ASSERT_OK(engine().DeleteRecords(tp, 4).status());
  // Epoch 1 lies below the log start now: it is answered as "below the first
  // known epoch", which starts at the log start.
  ASSERT_OK_AND_ASSIGN(EpochEndOffset answer,
                       engine().OffsetForLeaderEpoch(tp, 1));
  EXPECT_EQ(answer.leader_epoch, 1);
  EXPECT_EQ(answer.end_offset, 4);
  ASSERT_OK_AND_ASSIGN(answer, engine().OffsetForLeaderEpoch(tp, 2));
  EXPECT_EQ(answer.leader_epoch, 2);
  EXPECT_EQ(answer.end_offset, 6);
}

// ---- Idempotent producers
// --------------------------------------------------------

TEST_P(EngineConformanceTest, IdempotentRetriesReturnTheOriginalOffsets) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3));  // offsets and sequences differ: 0..2
  // Six batches of two records: sequences 0..11. The window keeps the
  // newest five.
  std::vector<std::string> batches;
  std::vector<AppendResult> originals;
  for (int i = 0; i < 6; ++i) {
    batches.push_back(ProducerBatch(42, 0, 2 * i, 2));
    originals.push_back(MustAppend(tp, batches.back()));
    ASSERT_EQ(originals.back().base_offset, 3 + 2 * i);
  }
  // A retry of any batch in the window, oldest to newest, is answered with
  // the original offsets and writes nothing.
  for (int i = 1; i < 6; ++i) {
    ASSERT_OK_AND_ASSIGN(AppendResult retry,
                         engine().AppendAndWait(tp, 1, Acks::kAll, batches[i]));
    EXPECT_TRUE(retry.duplicate) << "batch " << i;
    EXPECT_EQ(retry.base_offset, originals[i].base_offset) << "batch " << i;
    EXPECT_EQ(retry.last_offset, originals[i].last_offset) << "batch " << i;
  }
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(15));
  // Older than the window: out of order, as in Kafka.
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, batches[0]),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(15));
  // The producer goes on after its newest batch.
  EXPECT_EQ(MustAppend(tp, ProducerBatch(42, 0, 12)).base_offset, 15);
}

TEST_P(EngineConformanceTest, OutOfOrderSequenceIsRejected) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(7, 0, 0));
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(7, 0, 2)),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  EXPECT_EQ(MustAppend(tp, ProducerBatch(7, 0, 1)).base_offset, 1);
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(2));
}

TEST_P(EngineConformanceTest, OlderProducerEpochIsRejected) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(7, 1, 0));
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(7, 0, 1)),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  // A newer epoch starts again at sequence 0.
  EXPECT_EQ(MustAppend(tp, ProducerBatch(7, 2, 0)).base_offset, 1);
}

TEST_P(EngineConformanceTest, FenceProducerEpochFencesLedPartitions) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(9, 1, 0));
  ASSERT_OK(engine().FenceProducerEpoch(9, 2));
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(9, 1, 1)),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  // The fenced epoch starts at sequence 0.
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(9, 2, 3)),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  EXPECT_EQ(MustAppend(tp, ProducerBatch(9, 2, 0)).base_offset, 1);
  // An older fence changes nothing.
  ASSERT_OK(engine().FenceProducerEpoch(9, 1));
  EXPECT_EQ(MustAppend(tp, ProducerBatch(9, 2, 1)).base_offset, 2);
  EXPECT_THAT(engine().FenceProducerEpoch(-1, 0),
              HasStorageError(StorageErrorCode::kInvalidRequest));
  EXPECT_THAT(engine().FenceProducerEpoch(9, -1),
              HasStorageError(StorageErrorCode::kInvalidRequest));
}

TEST_P(EngineConformanceTest, FenceAppliesToPartitionsTakenOverLater) {
  const TopicPartition relinquished = Orders(0);
  const TopicPartition brand_new = Orders(1);
  Lead(relinquished);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(relinquished, ProducerBatch(9, 1, 0));
  ASSERT_OK(engine().Relinquish(relinquished));

  ASSERT_OK(engine().FenceProducerEpoch(9, 3));

  Lead(relinquished);
  Lead(brand_new);
  ASSERT_FALSE(HasFatalFailure());
  for (const TopicPartition& tp : {relinquished, brand_new}) {
    SCOPED_TRACE(tp.ToString());
    EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(9, 1, 1)),
                HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
    EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, ProducerBatch(9, 2, 0)),
                HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
    EXPECT_OK(engine()
                  .AppendAndWait(tp, 1, Acks::kAll, ProducerBatch(9, 3, 0))
                  .status());
  }
}

// ---- Transactions
// ------------------------------------------------------------------

// Kafka DescribeProducers (KIP-664), as kafka-transactions.sh
// describe-producers shows it: what a stuck transaction's producer is.
TEST_P(EngineConformanceTest, DescribeProducersListsEachProducersState) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_THAT(engine().DescribeProducers(tp), IsOkAndHolds(IsEmpty()));
  MustAppend(tp, Batch(1));                         // 0: no producer
  MustAppend(tp, ProducerBatch(9, 2, 0, 2));        // 1..2
  MustAppend(tp, ProducerBatch(9, 2, 2, 3));        // 3..5: seq 2..4
  MustAppend(tp, ProducerBatch(4, 0, 0, 1, true));  // 6: txn opens
  MustAppend(tp, ProducerBatch(4, 0, 1, 1, true));  // 7
  ASSERT_OK_AND_ASSIGN(std::vector<ProducerDescription> producers,
                       engine().DescribeProducers(tp));
  ASSERT_EQ(producers.size(), 2u);
  EXPECT_EQ(producers[0].producer_id, 4);
  EXPECT_EQ(producers[0].producer_epoch, 0);
  EXPECT_EQ(producers[0].last_sequence, 1);
  EXPECT_EQ(producers[0].current_txn_start_offset, 6);
  EXPECT_EQ(producers[0].coordinator_epoch, -1);
  EXPECT_EQ(producers[1].producer_id, 9);
  EXPECT_EQ(producers[1].producer_epoch, 2);
  EXPECT_EQ(producers[1].last_sequence, 4);
  EXPECT_EQ(producers[1].current_txn_start_offset, -1);
  EXPECT_GE(producers[1].last_timestamp, 0);
  // The marker closes the transaction; the producer stays.
  MustAppend(tp, ControlBatch(ControlType::kCommit, 4, 0, 0, 2000));
  ASSERT_OK_AND_ASSIGN(producers, engine().DescribeProducers(tp));
  ASSERT_EQ(producers.size(), 2u);
  EXPECT_EQ(producers[0].current_txn_start_offset, -1);
}

TEST_P(EngineConformanceTest, OpenTransactionHoldsTheLastStableOffset) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const std::string plain = Batch(2);
  MustAppend(tp, plain);                                              // 0..1
  MustAppend(tp, ProducerBatch(5, 0, 0, 3, /*transactional=*/true));  // 2..4
  MustAppend(tp, Batch(1));                                           // 5
  EXPECT_THAT(engine().LastStableOffset(tp), IsOkAndHolds(2));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(6));

  ASSERT_OK_AND_ASSIGN(
      ReadResult committed,
      engine().Read(tp, 0, 1 << 20, Isolation::kReadCommitted));
  EXPECT_THAT(BaseOffsets(std::string(committed.records)), ElementsAre(0));
  EXPECT_EQ(committed.next_offset, 2);
  EXPECT_EQ(committed.last_stable_offset, 2);
  ASSERT_OK_AND_ASSIGN(
      committed, engine().Read(tp, 2, 1 << 20, Isolation::kReadCommitted));
  EXPECT_EQ(committed.batches, 0);  // at the last stable offset
  ASSERT_OK_AND_ASSIGN(
      ReadResult uncommitted,
      engine().Read(tp, 0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_THAT(BaseOffsets(std::string(uncommitted.records)),
              ElementsAre(0, 2, 5));

  MustAppend(tp, ControlBatch(ControlType::kCommit, 5, 0, 0, 2000));  // 6
  EXPECT_THAT(engine().LastStableOffset(tp), IsOkAndHolds(7));
  ASSERT_OK_AND_ASSIGN(
      committed, engine().Read(tp, 0, 1 << 20, Isolation::kReadCommitted));
  EXPECT_THAT(BaseOffsets(std::string(committed.records)),
              ElementsAre(0, 2, 5, 6));
  EXPECT_THAT(committed.aborted_transactions, IsEmpty());
}

// The log start moved inside an open transaction's batch becomes the last
// stable offset; a read_committed fetch there returns nothing, not the
// batch that straddles it, and a timestamp lookup no offset past it (both
// found by storage/engine/engine_opfuzz_test).
TEST_P(EngineConformanceTest, AReadAtALastStableOffsetInsideABatchIsEmpty) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3));                                           // 0..2
  MustAppend(tp, ProducerBatch(5, 0, 0, 2, /*transactional=*/true));  // 3..4
  ASSERT_THAT(engine().DeleteRecords(tp, 4), IsOkAndHolds(4));
  EXPECT_THAT(engine().LastStableOffset(tp), IsOkAndHolds(4));
  ASSERT_OK_AND_ASSIGN(
      ReadResult committed,
      engine().Read(tp, 4, 1 << 20, Isolation::kReadCommitted));
  EXPECT_EQ(committed.batches, 0);
  EXPECT_EQ(committed.next_offset, 4);
  ASSERT_OK_AND_ASSIGN(
      ReadResult uncommitted,
      engine().Read(tp, 4, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_THAT(BaseOffsets(std::string(uncommitted.records)), ElementsAre(3));
  // Nor does a timestamp lookup answer with an offset at or past it.
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp found,
      engine().OffsetForTimestamp(tp, 0, Isolation::kReadCommitted));
  EXPECT_EQ(found.offset, -1);
  ASSERT_OK_AND_ASSIGN(
      found, engine().OffsetForTimestamp(tp, 0, Isolation::kReadUncommitted));
  EXPECT_EQ(found.offset, 4);
}

TEST_P(EngineConformanceTest, AbortedTransactionsAreReported) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(5, 0, 0, 2, /*transactional=*/true));  // 0..1
  MustAppend(tp, Batch(1));                                           // 2
  MustAppend(tp, ControlBatch(ControlType::kAbort, 5, 0, 0, 2000));   // 3
  EXPECT_THAT(engine().LastStableOffset(tp), IsOkAndHolds(4));
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 0, 4),
              IsOkAndHolds(ElementsAre(IsAborted(5, 0, 3))));
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 3, 4),
              IsOkAndHolds(ElementsAre(IsAborted(5, 0, 3))));
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 4, 10),
              IsOkAndHolds(IsEmpty()));
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine().Read(tp, 0, 1 << 20, Isolation::kReadCommitted));
  EXPECT_EQ(read.batches, 3);
  EXPECT_THAT(read.aborted_transactions, ElementsAre(IsAborted(5, 0, 3)));
}

// An aborted transaction that began before the fetch offset still overlaps
// the fetched range: the consumer must be told (Kafka's overlap rule).
TEST_P(EngineConformanceTest,
       AbortedTransactionStartedBeforeTheFetchIsReported) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(5, 0, 0, 2, /*transactional=*/true));  // 0..1
  MustAppend(tp, Batch(2));                                           // 2..3
  MustAppend(tp, ProducerBatch(5, 0, 2, 1, /*transactional=*/true));  // 4
  MustAppend(tp, ControlBatch(ControlType::kAbort, 5, 0, 0, 2000));   // 5
  MustAppend(tp, Batch(1));                                           // 6
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine().Read(tp, 2, 1 << 20, Isolation::kReadCommitted));
  EXPECT_THAT(BaseOffsets(std::string(read.records)), ElementsAre(2, 4, 5, 6));
  EXPECT_THAT(read.aborted_transactions, ElementsAre(IsAborted(5, 0, 5)));
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 4, 7),
              IsOkAndHolds(ElementsAre(IsAborted(5, 0, 5))));
}

TEST_P(EngineConformanceTest, DeleteRecordsForgetsAbortedTransactionsBelowIt) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, ProducerBatch(5, 0, 0, 1, /*transactional=*/true));  // 0
  MustAppend(tp, ControlBatch(ControlType::kAbort, 5, 0, 0, 2000));   // 1
  MustAppend(tp, Batch(1));                                           // 2
  ASSERT_OK(engine().DeleteRecords(tp, 2).status());
  EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 0, 3),
              IsOkAndHolds(IsEmpty()));
}

// ---- Timestamps and epochs
// -----------------------------------------------------------

TEST_P(EngineConformanceTest, OffsetForTimestampFindsTheFirstRecordAtOrAfter) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  // Batch i holds offsets 2i, 2i+1 with timestamps 1000(i+1) and +1.
  for (int i = 0; i < 5; ++i) {
    test::BatchBuilder builder;
    builder.BaseTimestamp(1000 * (i + 1));
    builder.AddRecord(absl::nullopt, "a", 0).AddRecord(absl::nullopt, "b", 1);
    MustAppend(tp, builder.Build());
  }
  auto expect = [&](int64_t timestamp, int64_t offset, int64_t found_time) {
    ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                         engine().OffsetForTimestamp(
                             tp, timestamp, Isolation::kReadUncommitted));
    EXPECT_EQ(hit.offset, offset) << "timestamp " << timestamp;
    EXPECT_EQ(hit.timestamp, found_time) << "timestamp " << timestamp;
  };
  expect(0, 0, 1000);
  expect(3000, 4, 3000);
  expect(3001, 5, 3001);  // refined to the record
  expect(3500, 6, 4000);
  expect(9999, -1, -1);
  expect(-1, 10, -1);   // latest: the high watermark
  expect(-2, 0, -1);    // earliest: the log start
  expect(-3, 9, 5001);  // the record with the largest timestamp
  EXPECT_THAT(engine().OffsetForTimestamp(tp, -7, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kInvalidRequest));
}

// Kafka's ListOffsets never answers with a record below the log start.
TEST_P(EngineConformanceTest, OffsetForTimestampSkipsRecordsBelowTheLogStart) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  test::BatchBuilder builder;
  builder.BaseTimestamp(1000);
  for (int i = 0; i < 4; ++i) builder.AddRecord(absl::nullopt, "v", 3 - i);
  MustAppend(tp, builder.Build());     // 0..3 at 1003..1000
  MustAppend(tp, Batch(1, 16, 5000));  // 4 at 5000
  ASSERT_OK(engine().DeleteRecords(tp, 1).status());
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp hit,
      engine().OffsetForTimestamp(tp, 1002, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 1);
  EXPECT_EQ(hit.timestamp, 1002);
  // Only a record below the log start is late enough: the next batch
  // answers.
  ASSERT_OK(engine().DeleteRecords(tp, 2).status());
  ASSERT_OK_AND_ASSIGN(
      hit, engine().OffsetForTimestamp(tp, 1003, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 4);
  EXPECT_EQ(hit.timestamp, 5000);
}

constexpr CompressionCodec kCodecs[] = {
    CompressionCodec::kGzip, CompressionCodec::kSnappy, CompressionCodec::kLz4,
    CompressionCodec::kZstd};

// Kafka answers at record level inside compressed batches too: a consumer
// seeking by time lands on the record, not on the batch's first.
TEST_P(EngineConformanceTest,
       OffsetForTimestampIsRecordLevelInCompressedBatches) {
  for (int i = 0; i < 4; ++i) {
    const CompressionCodec codec = kCodecs[i];
    SCOPED_TRACE(CompressionCodecName(codec));
    const TopicPartition tp = Orders(i);
    Lead(tp);
    ASSERT_FALSE(HasFatalFailure());
    test::BatchBuilder first;
    first.BaseTimestamp(1000).Compression(codec);
    for (int r = 0; r < 5; ++r) first.AddRecord(absl::nullopt, "v", 10 * r);
    test::BatchBuilder second;
    second.BaseTimestamp(2000).Compression(codec);
    second.AddRecord(absl::nullopt, "w", 0).AddRecord(absl::nullopt, "x", 10);
    MustAppend(tp, first.Build());   // 0..4 at 1000, 1010, ..., 1040
    MustAppend(tp, second.Build());  // 5..6 at 2000, 2010
    auto expect = [&](int64_t timestamp, int64_t offset, int64_t found_time) {
      ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                           engine().OffsetForTimestamp(
                               tp, timestamp, Isolation::kReadUncommitted));
      EXPECT_EQ(hit.offset, offset) << "timestamp " << timestamp;
      EXPECT_EQ(hit.timestamp, found_time) << "timestamp " << timestamp;
    };
    expect(1020, 2, 1020);  // a middle record
    expect(1015, 2, 1020);  // between two records: the later one
    expect(1041, 5, 2000);  // above every record: the next batch
    expect(2001, 6, 2010);
    expect(-3, 6, 2010);
  }
}

// The search starts at the log start inside a compressed batch too: when only
// records below it are late enough, the next batch answers.
TEST_P(EngineConformanceTest,
       OffsetForTimestampInACompressedBatchSkipsRecordsBelowTheLogStart) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  test::BatchBuilder builder;
  builder.BaseTimestamp(1000).Compression(CompressionCodec::kZstd);
  for (int i = 0; i < 4; ++i) builder.AddRecord(absl::nullopt, "v", 3 - i);
  MustAppend(tp, builder.Build());     // 0..3 at 1003..1000
  MustAppend(tp, Batch(1, 16, 5000));  // 4 at 5000
  ASSERT_OK(engine().DeleteRecords(tp, 1).status());
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp hit,
      engine().OffsetForTimestamp(tp, 1002, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 1);
  EXPECT_EQ(hit.timestamp, 1002);
  ASSERT_OK(engine().DeleteRecords(tp, 2).status());
  ASSERT_OK_AND_ASSIGN(
      hit, engine().OffsetForTimestamp(tp, 1003, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 4);
  EXPECT_EQ(hit.timestamp, 5000);
}

// Kafka gives every record of a LogAppendTime batch the batch's
// maxTimestamp, so such a batch answers as a whole (compressed or not): its
// first offset, with maxTimestamp.
TEST_P(EngineConformanceTest, OffsetForTimestampInALogAppendTimeBatch) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(1, 16, 1000));  // 0
  for (CompressionCodec codec :
       {CompressionCodec::kNone, CompressionCodec::kLz4}) {
    test::BatchBuilder log_append_time;
    log_append_time.BaseTimestamp(3000).LogAppendTime().Compression(codec);
    log_append_time.AddRecord(absl::nullopt, "d", 0)
        .AddRecord(absl::nullopt, "e", 5);
    MustAppend(tp, log_append_time.Build());  // 1..2, then 3..4; max 3005
  }
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp hit,
      engine().OffsetForTimestamp(tp, 3003, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 1);
  EXPECT_EQ(hit.timestamp, 3005);
  ASSERT_OK(engine().DeleteRecords(tp, 4).status());
  ASSERT_OK_AND_ASSIGN(
      hit, engine().OffsetForTimestamp(tp, 3003, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 4) << "the compressed batch's first record at or "
                              "above the log start";
  EXPECT_EQ(hit.timestamp, 3005);
}

// A batch whose records do not decompress (stored because records are not
// validated by default) cannot name a record: the lookup that reaches it
// fails with the codec layer's typed error, as Kafka's does, rather than
// answer from the header. Lookups answered before it are unaffected.
TEST_P(EngineConformanceTest,
       OffsetForTimestampFailsOnRecordsThatDoNotDecompress) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  test::BatchBuilder undecodable;
  undecodable.BaseTimestamp(4000).CodecBitsOnly(CompressionCodec::kLz4);
  undecodable.AddRecord(absl::nullopt, "f", 0).AddRecord(absl::nullopt, "g", 3);
  MustAppend(tp, Batch(1, 16, 1000));   // 0
  MustAppend(tp, undecodable.Build());  // 1..2, max 4003
  EXPECT_THAT(
      engine().OffsetForTimestamp(tp, 4001, Isolation::kReadUncommitted),
      HasStorageErrorWithMessage(
          StorageErrorCode::kCorruptMessage,
          AllOf(HasSubstr("batch at offset 1: "), HasSubstr("lz4"))));
  EXPECT_THAT(engine().OffsetForTimestamp(tp, -3, Isolation::kReadUncommitted),
              HasStorageError(StorageErrorCode::kCorruptMessage));
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp hit,
      engine().OffsetForTimestamp(tp, 1000, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, 0);
  ASSERT_OK_AND_ASSIGN(
      hit, engine().OffsetForTimestamp(tp, 9999, Isolation::kReadUncommitted));
  EXPECT_EQ(hit.offset, -1);
}

TEST_P(EngineConformanceTest, OffsetForTimestampOfAnEmptyPartition) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  for (int64_t timestamp : {int64_t{0}, int64_t{1000}, int64_t{-3}}) {
    ASSERT_OK_AND_ASSIGN(OffsetAndTimestamp hit,
                         engine().OffsetForTimestamp(
                             tp, timestamp, Isolation::kReadUncommitted));
    EXPECT_EQ(hit.offset, -1) << "timestamp " << timestamp;
    EXPECT_EQ(hit.timestamp, -1) << "timestamp " << timestamp;
  }
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp latest,
      engine().OffsetForTimestamp(tp, -1, Isolation::kReadUncommitted));
  EXPECT_EQ(latest.offset, 0);
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp earliest,
      engine().OffsetForTimestamp(tp, -2, Isolation::kReadUncommitted));
  EXPECT_EQ(earliest.offset, 0);
}

// Kafka's ListOffsets bounds its answer by the isolation level's last
// fetchable offset: read_committed never learns of offsets past the last
// stable offset, not even through a timestamp.
TEST_P(EngineConformanceTest, OffsetForTimestampHonoursTheIsolationLevel) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(2, 16, /*timestamp=*/1000));  // 0..1
  test::BatchBuilder open;
  open.BaseOffset(999).Producer(5, 0, 0).Transactional(true).BaseTimestamp(
      5000);
  open.AddRandomRecords(2, 8);
  MustAppend(tp, open.Build());  // 2..3, its transaction still open
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp latest,
      engine().OffsetForTimestamp(tp, -1, Isolation::kReadUncommitted));
  EXPECT_EQ(latest.offset, 4);
  ASSERT_OK_AND_ASSIGN(
      latest, engine().OffsetForTimestamp(tp, -1, Isolation::kReadCommitted));
  EXPECT_EQ(latest.offset, 2);
  ASSERT_OK_AND_ASSIGN(
      OffsetAndTimestamp found,
      engine().OffsetForTimestamp(tp, 5000, Isolation::kReadUncommitted));
  EXPECT_EQ(found.offset, 2);
  ASSERT_OK_AND_ASSIGN(
      found, engine().OffsetForTimestamp(tp, 5000, Isolation::kReadCommitted));
  EXPECT_EQ(found.offset, -1) << "past the last stable offset";
  ASSERT_OK_AND_ASSIGN(
      found, engine().OffsetForTimestamp(tp, 1000, Isolation::kReadCommitted));
  EXPECT_EQ(found.offset, 0);
}

TEST_P(EngineConformanceTest, OffsetForLeaderEpochAcrossTakeOvers) {
  const TopicPartition tp = Orders();
  Lead(tp, 1);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3), 1);  // epoch 1: [0, 3)
  ASSERT_OK(engine().TakeOver(tp, 3).status());
  MustAppend(tp, Batch(2), 3);  // epoch 3: [3, 5)
  ASSERT_OK(engine().TakeOver(tp, 4).status());
  MustAppend(tp, Batch(1), 4);  // epoch 4: [5, 6)
  auto expect = [&](int64_t asked, int64_t epoch, int64_t end) {
    ASSERT_OK_AND_ASSIGN(EpochEndOffset answer,
                         engine().OffsetForLeaderEpoch(tp, asked));
    EXPECT_EQ(answer.leader_epoch, epoch) << "asked " << asked;
    EXPECT_EQ(answer.end_offset, end) << "asked " << asked;
  };
  expect(1, 1, 3);
  expect(2, 1, 3);  // no epoch 2: the largest below it
  expect(3, 3, 5);
  expect(4, 4, 6);  // the current epoch ends at the log end
  expect(5, -1, -1);
  expect(0, 0, 0);  // below the first known epoch
  expect(-1, -1, -1);
}

// Kafka drops an epoch that wrote nothing from its history.
TEST_P(EngineConformanceTest, AnEpochThatWroteNothingLeavesNoTrace) {
  const TopicPartition tp = Orders();
  Lead(tp, 1);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3), 1);
  ASSERT_OK(engine().TakeOver(tp, 2).status());  // writes nothing
  ASSERT_OK(engine().TakeOver(tp, 3).status());
  MustAppend(tp, Batch(1), 3);
  ASSERT_OK_AND_ASSIGN(EpochEndOffset answer,
                       engine().OffsetForLeaderEpoch(tp, 2));
  EXPECT_EQ(answer.leader_epoch, 1);
  EXPECT_EQ(answer.end_offset, 3);
}

// ---- Partition lifecycle
// -----------------------------------------------------------

TEST_P(EngineConformanceTest, AbandonTopicClosesOnlyThatTopicsPartitions) {
  const TopicPartition doomed0{"doomed", 0};
  const TopicPartition doomed1{"doomed", 1};
  const TopicPartition other{"doomed-not", 0};
  Lead(doomed0);
  Lead(doomed1);
  Lead(other);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(doomed0, Batch(2));
  MustAppend(other, Batch(3));
  EXPECT_EQ(engine().AbandonTopic("doomed"), 2);
  ExpectNotLed(doomed0);
  ExpectNotLed(doomed1);
  EXPECT_THAT(Names(engine().LedPartitions()), ElementsAre("doomed-not-0"));
  EXPECT_THAT(engine().HighWatermark(other), IsOkAndHolds(3));
  EXPECT_EQ(engine().AbandonTopic("doomed"), 0);  // idempotent
}

// The topic was deleted and created again. DeletePartition stands in for the
// operator's reclaim of the dead incarnation's directory (the disk engine
// leaves an abandoned directory on disk; the memory engine already dropped
// it): the new incarnation starts empty.
TEST_P(EngineConformanceTest, RecreateAfterAbandonAndReclaimStartsAtZero) {
  const TopicPartition tp = Orders();
  Lead(tp, 4);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(5), 4);
  ASSERT_EQ(engine().AbandonTopic(tp.topic), 1);
  ASSERT_OK(engine().DeletePartition(tp));
  EXPECT_THAT(engine().TakeOver(tp, 1), IsOkAndHolds(0));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().LogStartOffset(tp), IsOkAndHolds(0));
  EXPECT_EQ(MustAppend(tp, Batch()).base_offset, 0);
}

TEST_P(EngineConformanceTest, DeletePartitionDropsItsData) {
  const TopicPartition tp = Orders();
  Lead(tp, 2);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(3), 2);
  ASSERT_OK(engine().DeletePartition(tp));
  ExpectNotLed(tp);
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
  // A new partition at any epoch: the old one's epoch is gone too.
  EXPECT_THAT(engine().TakeOver(tp, 1), IsOkAndHolds(0));
  EXPECT_EQ(ReadAll(tp), "");
  EXPECT_OK(engine().DeletePartition(Orders(9)));  // never existed
}

TEST_P(EngineConformanceTest, CreatePartitionIsIdempotentAndDoesNotLead) {
  const TopicPartition tp = Orders();
  ASSERT_OK(engine().CreatePartition(tp));
  ASSERT_OK(engine().CreatePartition(tp));
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, Batch()),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(engine().TakeOver(tp, 1), IsOkAndHolds(0));
  ASSERT_OK(engine().CreatePartition(tp));  // led: nothing changes
  EXPECT_THAT(engine().PartitionEpoch(tp), Optional(1));
}

// ---- Invalid input
// ---------------------------------------------------------------

TEST_P(EngineConformanceTest, InvalidTopicNamesAndPartitionsAreRejected) {
  const std::vector<TopicPartition> invalid = {
      {"", 0},
      {".", 0},
      {"..", 0},
      {"a/b", 0},
      {"../etc", 0},
      {"with space", 0},
      {std::string(kMaxTopicNameLength + 1, 'x'), 0},
      {"orders", -1},
  };
  const auto invalid_request =
      HasStorageError(StorageErrorCode::kInvalidRequest);
  for (const TopicPartition& tp : invalid) {
    SCOPED_TRACE(
        absl::StrCat("topic \"", tp.topic, "\" partition ", tp.partition));
    EXPECT_THAT(engine().TakeOver(tp, 1), invalid_request);
    EXPECT_THAT(engine().Relinquish(tp), invalid_request);
    EXPECT_THAT(engine().CreatePartition(tp), invalid_request);
    EXPECT_THAT(engine().DeletePartition(tp), invalid_request);
    EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, Batch()), invalid_request);
    EXPECT_THAT(engine().Read(tp, 0, 1024, Isolation::kReadUncommitted),
                invalid_request);
    EXPECT_THAT(engine().HighWatermark(tp), invalid_request);
    EXPECT_THAT(engine().LogStartOffset(tp), invalid_request);
    EXPECT_THAT(engine().LastStableOffset(tp), invalid_request);
    EXPECT_THAT(engine().AbortedTransactionsInRange(tp, 0, 1), invalid_request);
    EXPECT_THAT(
        engine().OffsetForTimestamp(tp, -1, Isolation::kReadUncommitted),
        invalid_request);
    EXPECT_THAT(engine().OffsetForLeaderEpoch(tp, 0), invalid_request);
    EXPECT_THAT(engine().PartitionSize(tp), invalid_request);
    EXPECT_THAT(engine().DeleteRecords(tp, -1), invalid_request);
    EXPECT_THAT(engine().PartitionLogDir(tp), invalid_request);
    EXPECT_THAT(engine().MovePartitionToLogDir(tp, "default"), invalid_request);
    EXPECT_EQ(engine().PartitionEpoch(tp), std::nullopt);
    if (tp.partition >= 0) {
      EXPECT_THAT(engine().GetTopicConfig(tp.topic), invalid_request);
      EXPECT_EQ(engine().AbandonTopic(tp.topic), 0);
    }
  }
  EXPECT_THAT(engine().LedPartitions(), IsEmpty());
}

// The batch is validated exactly as the disk engine validates it
// (RecordBatchView::Parse): same codes, same messages, nothing written.
// Batches whose CRC is right but whose records Kafka's broker would refuse:
// stored as they come by default (the append path keeps batches opaque),
// refused with their codes when record validation is on, every codec's
// records decompressed to be checked.
TEST_P(EngineConformanceTest, RecordValidationRefusesWhatKafkasBrokerRefuses) {
  const TopicPartition tp = Orders();
  test::BatchBuilder fake_gzip;
  fake_gzip.CodecBitsOnly(CompressionCodec::kGzip).AddRecord("k", "v");
  std::string garbage = Batch(1, 40);
  garbage[batch_layout::kRecords] = 0x7e;  // a record length past the end
  test::FixCrc(&garbage);
  std::vector<std::string> sound;
  for (CompressionCodec codec :
       {CompressionCodec::kNone, CompressionCodec::kGzip,
        CompressionCodec::kSnappy, CompressionCodec::kLz4,
        CompressionCodec::kZstd}) {
    sound.push_back(test::BatchBuilder()
                        .Compression(codec)
                        .AddRecord("k", "v")
                        .AddRecord("k", "w")
                        .Build());
  }

  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_OK(engine().AppendAndWait(tp, 1, Acks::kAll, garbage).status());
  EXPECT_OK(
      engine().AppendAndWait(tp, 1, Acks::kAll, fake_gzip.Build()).status());

  UseEngine(EngineSettings{/*validate_records=*/true});
  ASSERT_FALSE(HasFatalFailure());
  const TopicPartition checked{"checked", 0};
  Lead(checked);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_THAT(engine().Append(checked, 1, Acks::kAll, garbage).status(),
              HasStorageError(StorageErrorCode::kInvalidRecord));
  EXPECT_THAT(
      engine().Append(checked, 1, Acks::kAll, fake_gzip.Build()).status(),
      HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                 HasSubstr("do not decompress")));
  EXPECT_THAT(engine().HighWatermark(checked), IsOkAndHolds(0));
  for (const std::string& batch : sound) {
    EXPECT_OK(engine().AppendAndWait(checked, 1, Acks::kAll, batch).status());
  }
  EXPECT_THAT(engine().HighWatermark(checked), IsOkAndHolds(10));
}

TEST_P(EngineConformanceTest, CorruptBatchesAreRejectedWithTheirCodes) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t rejected_before = engine().Stats().rejected_batches.load();
  const std::string good = Batch(2);
  auto append = [&](absl::string_view batch) {
    return engine().Append(tp, 1, Acks::kAll, batch);
  };
  const auto corrupt = [](absl::string_view message) {
    return HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                      HasSubstr(std::string(message)));
  };

  std::string bad_crc = good;
  test::FlipBit(&bad_crc, batch_layout::kRecords + 2);
  EXPECT_THAT(append(bad_crc), corrupt("crc mismatch"));
  EXPECT_THAT(append(good + good), corrupt("trailing bytes"));
  EXPECT_THAT(append(good.substr(0, good.size() - 1)), corrupt("truncated"));
  EXPECT_THAT(append(good.substr(0, 20)), corrupt("too short"));
  EXPECT_THAT(append(""), corrupt("too short"));
  std::string v1 = good;
  v1[batch_layout::kMagic] = 1;
  EXPECT_THAT(append(v1), corrupt("magic"));
  std::string bad_count = good;
  test::OverwriteBigEndian32(&bad_count, batch_layout::kRecordCount, 5);
  test::FixCrc(&bad_count);
  EXPECT_THAT(append(bad_count),
              HasStorageError(StorageErrorCode::kInvalidRecord));
  // A marker whose control type (key bytes 68..69 of the canonical layout)
  // is unknown.
  std::string bad_marker = ControlBatch(ControlType::kCommit, 5, 0, 0, 1000);
  test::OverwriteBigEndian16(&bad_marker, 68, 7);
  test::FixCrc(&bad_marker);
  EXPECT_THAT(append(bad_marker),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         HasSubstr("control")));

  EXPECT_EQ(engine().Stats().rejected_batches.load() - rejected_before, 8u);
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(0));
  EXPECT_THAT(engine().PartitionSize(tp), IsOkAndHolds(0u));
  EXPECT_EQ(MustAppend(tp, good).base_offset, 0);
}

// ---- Concurrency
// ---------------------------------------------------------------------

// Appenders on several threads get contiguous, non-overlapping offsets, and a
// concurrent reader always sees a gap-free prefix of the log.
TEST_P(EngineConformanceTest, ConcurrentAppendersGetContiguousOffsets) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  constexpr int kThreads = 4;
  constexpr int kAppendsPerThread = 50;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges(kThreads);
  std::atomic<int> appenders_left{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        const int records = 1 + (t + i) % 4;
        absl::StatusOr<AppendResult> result = engine().AppendAndWait(
            tp, 1, Acks::kAll,
            Batch(records, 8, 1000, /*seed=*/t * 1000 + i + 1));
        EXPECT_OK(result.status());
        if (!result.ok()) break;
        EXPECT_EQ(result->last_offset - result->base_offset, records - 1);
        ranges[t].emplace_back(result->base_offset, result->last_offset);
      }
      appenders_left.fetch_sub(1);
    });
  }
  int reads = 0;
  std::thread reader([&] {
    bool last_pass = false;
    while (!last_pass) {
      last_pass = appenders_left.load() == 0;
      absl::StatusOr<ReadResult> read =
          engine().Read(tp, 0, 1 << 20, Isolation::kReadUncommitted);
      ASSERT_OK(read.status());
      int64_t expected = 0;
      std::string bytes(read->records);
      absl::string_view rest = bytes;
      while (!rest.empty()) {
        ASSERT_OK_AND_ASSIGN(size_t size, PeekBatchSize(rest));
        ASSERT_OK_AND_ASSIGN(RecordBatchView batch,
                             RecordBatchView::Parse(rest.substr(0, size)));
        ASSERT_EQ(batch.base_offset(), expected);
        expected = batch.next_offset();
        rest.remove_prefix(size);
      }
      ASSERT_EQ(read->next_offset, expected);
      ++reads;
    }
  });
  for (std::thread& thread : threads) thread.join();
  reader.join();
  EXPECT_GT(reads, 0);

  std::vector<std::pair<int64_t, int64_t>> all;
  for (const auto& mine : ranges) {
    // Each thread's own appends are in offset order.
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    all.insert(all.end(), mine.begin(), mine.end());
  }
  ASSERT_EQ(all.size(), size_t{kThreads * kAppendsPerThread});
  std::sort(all.begin(), all.end());
  int64_t next = 0;
  for (const auto& [base, last] : all) {
    ASSERT_EQ(base, next);
    next = last + 1;
  }
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(next));
  std::vector<int64_t> bases;
  for (const auto& range : all) bases.push_back(range.first);
  EXPECT_EQ(BaseOffsets(ReadAll(tp)), bases);
}

// ---- Stats, log dirs, health
// -----------------------------------------------------------

TEST_P(EngineConformanceTest, StatsCountAppendsReadsDuplicatesAndRejections) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const StorageStats& stats = engine().Stats();
  const uint64_t batches = stats.appended_batches.load();
  const uint64_t records = stats.appended_records.load();
  const uint64_t bytes = stats.appended_bytes.load();
  const uint64_t duplicates = stats.duplicate_batches.load();
  const uint64_t rejected = stats.rejected_batches.load();
  const uint64_t read_calls = stats.read_calls.load();
  const uint64_t read_batches = stats.read_batches.load();
  const uint64_t read_records = stats.read_records.load();
  const uint64_t read_bytes = stats.read_bytes.load();

  const std::string plain = Batch(3);
  const std::string idempotent = ProducerBatch(1, 0, 0, 2);
  MustAppend(tp, plain);
  MustAppend(tp, idempotent);
  MustAppend(tp, idempotent);  // a duplicate
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, plain.substr(1)),
              HasStorageError(StorageErrorCode::kCorruptMessage));
  ASSERT_OK(
      engine().Read(tp, 0, 1 << 20, Isolation::kReadUncommitted).status());

  EXPECT_EQ(stats.appended_batches.load() - batches, 2u);
  EXPECT_EQ(stats.appended_records.load() - records, 5u);
  EXPECT_EQ(stats.appended_bytes.load() - bytes,
            plain.size() + idempotent.size());
  EXPECT_EQ(stats.duplicate_batches.load() - duplicates, 1u);
  EXPECT_EQ(stats.rejected_batches.load() - rejected, 1u);
  EXPECT_EQ(stats.read_calls.load() - read_calls, 1u);
  EXPECT_EQ(stats.read_batches.load() - read_batches, 2u);
  EXPECT_EQ(stats.read_records.load() - read_records, 5u);
  EXPECT_EQ(stats.read_bytes.load() - read_bytes,
            plain.size() + idempotent.size());
}

TEST_P(EngineConformanceTest, PartitionStatsCountThatPartitionOnly) {
  const TopicPartition tp = Orders();
  const TopicPartition other = Orders(1);
  Lead(tp);
  Lead(other);
  ASSERT_FALSE(HasFatalFailure());
  const std::string batch = Batch(3);
  MustAppend(tp, batch);
  MustAppend(tp, batch);
  MustAppend(tp, ProducerBatch(7, 0, 0));
  MustAppend(tp, ProducerBatch(7, 0, 0));  // a duplicate
  EXPECT_THAT(engine().Append(tp, 1, Acks::kAll, "garbage"),
              HasStorageError(StorageErrorCode::kCorruptMessage));
  MustAppend(other, batch);
  ReadAll(tp);
  ASSERT_OK_AND_ASSIGN(PartitionStats stats, engine().PartitionStatsOf(tp));
  EXPECT_EQ(stats.appended_batches, 3u);
  EXPECT_EQ(stats.appended_records, 7u);
  EXPECT_EQ(stats.appended_bytes,
            2 * batch.size() + ProducerBatch(7, 0, 0).size());
  EXPECT_EQ(stats.duplicate_batches, 1u);
  EXPECT_EQ(stats.rejected_batches, 1u);
  EXPECT_GE(stats.read_calls, 1u);
  EXPECT_EQ(stats.read_bytes, 2 * batch.size() + ProducerBatch(7, 0, 0).size());
  EXPECT_GE(stats.ack_latency.count, 3u) << "every acks=all append";
  EXPECT_FALSE(stats.stalled);
  ASSERT_OK_AND_ASSIGN(PartitionStats others, engine().PartitionStatsOf(other));
  EXPECT_EQ(others.appended_batches, 1u);
  EXPECT_EQ(others.read_calls, 0u);
}

// DescribeLogDirs reports every replica on a dir, led here or not.
TEST_P(EngineConformanceTest, DescribeReplicaNeedsNoLeadership) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  const std::string batch = Batch(2);
  for (int i = 0; i < 3; ++i) MustAppend(tp, batch);  // 0..5
  ASSERT_THAT(engine().DeleteRecords(tp, 2), IsOkAndHolds(2));
  ASSERT_OK_AND_ASSIGN(ReplicaDescription led, engine().DescribeReplica(tp));
  EXPECT_TRUE(led.taken_over);
  EXPECT_EQ(led.log_dir, "default");
  EXPECT_EQ(led.log_start_offset, 2);
  EXPECT_EQ(led.log_end_offset, 6);
  ASSERT_OK_AND_ASSIGN(uint64_t size, engine().PartitionSize(tp));
  EXPECT_EQ(led.size_bytes, size);

  ASSERT_OK(engine().Relinquish(tp));
  ASSERT_OK_AND_ASSIGN(ReplicaDescription idle, engine().DescribeReplica(tp));
  EXPECT_FALSE(idle.taken_over);
  EXPECT_EQ(idle.log_dir, "default");
  EXPECT_EQ(idle.log_start_offset, 2);
  EXPECT_EQ(idle.log_end_offset, 6);
  EXPECT_EQ(idle.size_bytes, size);
  EXPECT_THAT(engine().LedPartitions(), IsEmpty()) << "described, not led";
  EXPECT_THAT(engine().DescribeReplica(Orders(7)),
              HasStorageError(StorageErrorCode::kUnknownTopicOrPartition));
}

TEST_P(EngineConformanceTest, LogDirsStartWithTheDefaultDir) {
  const std::vector<placement::LogDirInfo> dirs = engine().LogDirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(dirs.front().name, "default");
  const std::vector<LogDirUsage> usages = engine().LogDirUsages();
  ASSERT_EQ(usages.size(), dirs.size());
  for (size_t i = 0; i < dirs.size(); ++i) {
    EXPECT_EQ(usages[i].name, dirs[i].name);
    EXPECT_EQ(usages[i].path, dirs[i].path);
  }
  const TopicPartition tp = Orders();
  EXPECT_THAT(engine().PartitionLogDir(tp), IsOkAndHolds("default"));
  EXPECT_THAT(engine().MovePartitionToLogDir(tp, "no-such-dir"),
              HasStorageError(StorageErrorCode::kLogDirNotFound));
  // Moving to where it already is returns the source and changes nothing.
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch(2));
  EXPECT_THAT(engine().MovePartitionToLogDir(tp, "default"),
              IsOkAndHolds("default"));
  EXPECT_THAT(engine().HighWatermark(tp), IsOkAndHolds(2));
}

TEST_P(EngineConformanceTest, AHealthyEngineHasNoStallsAndNoTopicConfig) {
  const TopicPartition tp = Orders();
  Lead(tp);
  ASSERT_FALSE(HasFatalFailure());
  MustAppend(tp, Batch());
  EXPECT_EQ(engine().StalledPartitions(), 0);
  EXPECT_THAT(engine().GetTopicConfig(tp.topic), IsOkAndHolds(std::nullopt));
}

}  // namespace
}  // namespace kaas
