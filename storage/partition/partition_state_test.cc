// Idempotent producers and transactions at the partition level. Every
// scenario runs three ways: live, after a simulated power loss and reopen,
// and after a fresh instance takes the partition over (relinquish + open).
// The state must come back exactly: from the newest valid snapshot plus a
// replay of the batch headers after it (D-12).
#include <limits>
#include <string>
#include <vector>

#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/partition/partition_testlib.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::HasStorageError;
using ::testing::ElementsAre;

enum class Transition { kNone, kCrashAndReopen, kFreshInstance };

std::string TransitionName(const ::testing::TestParamInfo<Transition>& info) {
  switch (info.param) {
    case Transition::kNone:
      return "Live";
    case Transition::kCrashAndReopen:
      return "AfterCrash";
    case Transition::kFreshInstance:
      return "AfterFreshTakeOver";
  }
  return "?";
}

class ProducerStateTest : public PartitionTest,
                          public ::testing::WithParamInterface<Transition> {
 protected:
  void SetUp() override {
    config_ = SmallConfig();
    config_.segment_bytes = 2048;  // transactions span segments
    partition_ = OpenLeader(1, config_);
  }

  // Applies the test's transition: afterwards partition_ serves the same
  // log from a new instance (or the same one, live).
  void Transition() {
    switch (GetParam()) {
      case Transition::kNone:
        return;
      case Transition::kCrashAndReopen:
        fs().Crash();
        partition_.reset();
        break;
      case Transition::kFreshInstance:
        ASSERT_OK(partition_->Relinquish());
        partition_.reset();
        break;
    }
    partition_ = OpenLeader(1, config_);
  }

  absl::StatusOr<AppendResult> Append(const std::string& batch) {
    absl::StatusOr<AppendResult> result =
        partition_->Append(batch, 1, Acks::kAll);
    if (result.ok()) {
      absl::Status durable = result->durable.Wait();
      if (!durable.ok()) return durable;
    }
    return result;
  }

  static std::string Data(int64_t pid, int16_t epoch, int32_t sequence,
                          int records = 1, bool transactional = false) {
    return ProducerBatch(pid, epoch, sequence, records, transactional);
  }
  static std::string Marker(ControlType type, int64_t pid, int16_t epoch) {
    return test::ControlBatch(type, pid, epoch, /*coordinator_epoch=*/0,
                              /*timestamp=*/1000);
  }

  PartitionConfig config_;
  std::shared_ptr<Partition> partition_;
};

TEST_P(ProducerStateTest, DuplicatesAtEveryWindowPositionAnswerTheOriginal) {
  std::vector<std::string> batches;
  std::vector<int64_t> offsets;
  for (int i = 0; i < 5; ++i) {
    batches.push_back(Data(7, 0, i * 2, /*records=*/2));
    ASSERT_OK_AND_ASSIGN(AppendResult result, Append(batches.back()));
    offsets.push_back(result.base_offset);
  }
  Transition();
  for (int i = 0; i < 5; ++i) {
    ASSERT_OK_AND_ASSIGN(AppendResult retry, Append(batches[i]));
    EXPECT_TRUE(retry.duplicate) << i;
    EXPECT_EQ(retry.base_offset, offsets[i]) << i;
    EXPECT_EQ(retry.last_offset, offsets[i] + 1) << i;
  }
  EXPECT_EQ(partition_->LogEndOffset(), 10);
  // The next in sequence is accepted; a gap is out of order.
  EXPECT_OK(Append(Data(7, 0, 10)).status());
  EXPECT_THAT(Append(Data(7, 0, 13)).status(),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
}

TEST_P(ProducerStateTest, ARetryOlderThanTheWindowIsOutOfOrder) {
  std::string first = Data(8, 0, 0);
  ASSERT_OK(Append(first).status());
  for (int i = 1; i <= 5; ++i) ASSERT_OK(Append(Data(8, 0, i)).status());
  Transition();
  EXPECT_THAT(Append(first).status(),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
}

TEST_P(ProducerStateTest, EpochBumpsAndFencedEpochs) {
  ASSERT_OK(Append(Data(9, 2, 0)).status());
  ASSERT_OK(Append(Data(9, 2, 1)).status());
  Transition();
  EXPECT_THAT(Append(Data(9, 1, 2)).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  EXPECT_THAT(Append(Data(9, 3, 5)).status(),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
  EXPECT_OK(Append(Data(9, 3, 0)).status());
  Transition();
  EXPECT_THAT(Append(Data(9, 2, 2)).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  EXPECT_OK(Append(Data(9, 3, 1)).status());
}

TEST_P(ProducerStateTest, SequencesWrapAfterInt32Max) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  ASSERT_OK(Append(Data(10, 0, max - 1, /*records=*/2)).status());
  Transition();
  EXPECT_OK(Append(Data(10, 0, 0)).status());
  EXPECT_THAT(Append(Data(10, 0, 5)).status(),
              HasStorageError(StorageErrorCode::kOutOfOrderSequence));
}

TEST_P(ProducerStateTest, MarkersDoNotTakeASequenceSlotAndAreEpochChecked) {
  ASSERT_OK(Append(Data(11, 0, 0, 3, /*transactional=*/true)).status());
  ASSERT_OK(Append(Marker(ControlType::kCommit, 11, 0)).status());
  Transition();
  EXPECT_OK(Append(Data(11, 0, 3, 1, true)).status());
  // D-25: a marker from an older producer epoch is rejected; a newer one is
  // adopted.
  ASSERT_OK(Append(Marker(ControlType::kAbort, 11, 2)).status());
  Transition();
  EXPECT_THAT(Append(Marker(ControlType::kCommit, 11, 1)).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  EXPECT_THAT(Append(Data(11, 0, 4)).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
}

TEST_P(ProducerStateTest, IdleProducersExpire) {
  config_.producer_id_expiration_ms = 60000;
  partition_->Abandon();
  partition_ = OpenLeader(1, config_);
  ASSERT_OK(Append(Data(12, 0, 0)).status());  // maxTimestamp 0 (builder)
  Transition();
  clock().Set(absl::FromUnixMillis(120000));
  partition_->ExpireProducers();
  // Unknown again: any sequence is accepted (Kafka).
  EXPECT_OK(Append(Data(12, 0, 40)).status());
}

TEST_P(ProducerStateTest, TransactionsSpanSegmentsAndHoldTheLso) {
  ASSERT_OK(Append(Batch(1)).status());                 // offset 0
  ASSERT_OK(Append(Data(20, 0, 0, 1, true)).status());  // txn starts at 1
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(Append(Batch(1, 400)).status());  // rolls segments
  }
  ASSERT_GT(partition_->Segments().size(), 1u);
  Transition();
  EXPECT_EQ(partition_->LastStableOffset(), 1);
  EXPECT_EQ(partition_->HighWatermark(), 12);
  // read_committed stops at the LSO.
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       partition_->Read(0, 1 << 20, Isolation::kReadCommitted));
  EXPECT_EQ(read.next_offset, 1);
  ASSERT_OK(Append(Data(20, 0, 1, 1, true)).status());              // 12
  ASSERT_OK(Append(Marker(ControlType::kCommit, 20, 0)).status());  // 13
  Transition();
  EXPECT_EQ(partition_->LastStableOffset(), partition_->HighWatermark());
  EXPECT_TRUE(partition_->AbortedTransactions(0, 100).empty());
}

// D-9: an aborted transaction that began before the fetch offset is still
// reported, so a consumer resuming inside it drops its records.
TEST_P(ProducerStateTest, AbortedRangesOverlappingTheFetchAreReported) {
  ASSERT_OK(Append(Data(30, 0, 0, 2, true)).status());              // 0-1
  ASSERT_OK(Append(Batch(1)).status());                             // 2
  ASSERT_OK(Append(Data(30, 0, 2, 2, true)).status());              // 3-4
  ASSERT_OK(Append(Marker(ControlType::kAbort, 30, 0)).status());   // 5
  ASSERT_OK(Append(Data(31, 0, 0, 1, true)).status());              // 6
  ASSERT_OK(Append(Marker(ControlType::kCommit, 31, 0)).status());  // 7
  Transition();
  ASSERT_OK_AND_ASSIGN(ReadResult read,
                       partition_->Read(3, 1 << 20, Isolation::kReadCommitted));
  ASSERT_EQ(read.aborted_transactions.size(), 1u);
  EXPECT_EQ(read.aborted_transactions[0].producer_id, 30);
  EXPECT_EQ(read.aborted_transactions[0].first_offset, 0);
  EXPECT_EQ(read.aborted_transactions[0].last_offset, 5);
  EXPECT_TRUE(partition_->AbortedTransactions(6, 8).empty());
}

// D-27: LSO and aborted ranges are answered while an fsync hangs.
TEST_P(ProducerStateTest, LsoQueriesNeverWaitBehindAnFsync) {
  ASSERT_OK(Append(Data(40, 0, 0, 1, true)).status());
  Transition();
  fs().BlockSyncs(test::PathPattern::Substring(".log"));
  ASSERT_OK(partition_->Append(Batch(), 1, Acks::kLeader).status());
  fs().WaitUntilBlockedSyncs(1);
  EXPECT_EQ(partition_->LastStableOffset(), 0);
  EXPECT_TRUE(partition_->AbortedTransactions(0, 10).empty());
  fs().ReleaseSyncs();
}

INSTANTIATE_TEST_SUITE_P(Transitions, ProducerStateTest,
                         ::testing::Values(Transition::kNone,
                                           Transition::kCrashAndReopen,
                                           Transition::kFreshInstance),
                         TransitionName);

}  // namespace
}  // namespace kaas::partition
