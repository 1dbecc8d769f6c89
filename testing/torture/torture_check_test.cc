// The torture run's checker must catch every way a recovered log can break
// the invariant, or a passing torture run proves nothing. Each test builds a
// log in the memory engine (which keeps what it is given) and a ledger, and
// expects the checker's verdict.
#include "testing/torture/torture_check.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/memory_engine.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"
#include "testing/torture/torture_workload.h"

namespace kaas::torture {
namespace {

using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

constexpr int kPartitions = 2;
constexpr int64_t kEpoch = 1;

class TortureCheckTest : public ::testing::Test {
 protected:
  TortureCheckTest()
      : engine_(Options()),
        writers_(MakeWriters(/*count=*/6, kPartitions)),
        ledgers_(writers_.size()) {
    for (int p = 0; p < kPartitions; ++p) {
      EXPECT_OK(engine_.TakeOver({std::string(kTortureTopic), p}, kEpoch));
    }
  }

  static MemoryEngine::Options Options() {
    MemoryEngine::Options options;
    options.partition_config.producer_id_expiration_ms =
        int64_t{100} * 365 * 86400000;
    return options;
  }

  // Appends unit n of writer w; returns its offset.
  int64_t Store(int w, int64_t n) {
    return StoreBytes(writers_[w], UnitBytes(writers_[w], n));
  }
  int64_t StoreBytes(const Writer& writer, const std::string& bytes) {
    absl::StatusOr<AppendResult> result =
        engine_.AppendAndWait(writer.tp(), kEpoch, Acks::kAll, bytes);
    EXPECT_OK(result.status());
    return result.ok() ? result->base_offset : -1;
  }
  // Appends and acknowledges units 0 .. units - 1 of writer w.
  void StoreAcked(int w, int64_t units) {
    for (int64_t n = 0; n < units; ++n)
      ledgers_[w].acked.push_back(Store(w, n));
  }

  absl::StatusOr<LogContents> Check() {
    return CheckRecoveredLog(engine_, writers_, ledgers_, kPartitions);
  }

  MemoryEngine engine_;
  const std::vector<Writer> writers_;
  std::vector<WriterLedger> ledgers_;
};

TEST_F(TortureCheckTest, EveryWriterKindInterleavedPasses) {
  // Writers 0 (plain), 2 (transactional) and 4 (idempotent) share
  // partition 0; transaction 2 (units 8..11) is aborted, and units 12, 13
  // are an open transaction.
  for (int64_t n = 0; n < 14; ++n) {
    ledgers_[2].acked.push_back(Store(2, n));
    if (n < 5) ledgers_[0].acked.push_back(Store(0, n));
    if (n < 7) ledgers_[4].acked.push_back(Store(4, n));
  }
  StoreAcked(1, 3);
  ASSERT_OK_AND_ASSIGN(LogContents contents, Check());
  EXPECT_EQ(contents.batches, 14 + 5 + 7 + 3);
  EXPECT_EQ(contents.in_doubt_kept, 0);
  EXPECT_EQ(contents.writers[2].offsets, ledgers_[2].acked);
}

TEST_F(TortureCheckTest, AUnitInDoubtMayBeKeptOrLost) {
  StoreAcked(1, 2);
  ledgers_[1].in_doubt = true;
  ASSERT_OK_AND_ASSIGN(LogContents lost, Check());
  EXPECT_EQ(lost.in_doubt_kept, 0);
  Store(1, 2);
  ASSERT_OK_AND_ASSIGN(LogContents kept, Check());
  EXPECT_EQ(kept.in_doubt_kept, 1);
  EXPECT_EQ(kept.writers[1].offsets.size(), 3u);
}

TEST_F(TortureCheckTest, ALostAcknowledgedUnitIsDataLoss) {
  StoreAcked(1, 2);
  ledgers_[1].acked.push_back(99);  // acknowledged, never stored
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("acknowledged unit lost: writer 1")));
}

TEST_F(TortureCheckTest, AUnitAtAnotherOffsetThanAcknowledgedIsDataLoss) {
  StoreAcked(0, 2);
  ledgers_[0].acked[1] += 1;
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("acknowledged at offset")));
}

TEST_F(TortureCheckTest, AUnitNeverSentIsDataLoss) {
  StoreAcked(1, 2);
  Store(1, 2);  // stored, but the ledger has no unit in doubt
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("was never sent")));
}

TEST_F(TortureCheckTest, AForeignBatchIsDataLoss) {
  StoreAcked(0, 1);
  StoreBytes(writers_[0], test::BatchBuilder().AddRecord("k", "v").Build());
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("no writer of it sent")));
}

TEST_F(TortureCheckTest, AUnitOfAnotherPartitionsWriterIsDataLoss) {
  // Writer 1 writes to partition 1; its unit lands in partition 0.
  StoreBytes(writers_[0], UnitBytes(writers_[1], 0));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("no writer of it sent")));
}

TEST_F(TortureCheckTest, ChangedBytesAreDataLoss) {
  StoreAcked(0, 1);
  std::string unit = UnitBytes(writers_[0], 1);
  test::FlipBit(&unit, unit.size() - 3);
  test::FixCrc(&unit);
  ledgers_[0].acked.push_back(StoreBytes(writers_[0], unit));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("stored bytes differ")));
}

TEST_F(TortureCheckTest, UnitsOutOfOrderAreDataLoss) {
  Store(0, 1);
  Store(0, 0);
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("out of its writer's order")));
}

TEST_F(TortureCheckTest, APlainUnitStoredTwiceIsDataLoss) {
  StoreAcked(0, 2);
  Store(0, 1);
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("out of its writer's order")));
}

TEST_F(TortureCheckTest, AMissingMarkerIsDataLoss) {
  // Writer 2's unit 3 is its first transaction's marker.
  StoreAcked(2, 3);
  ledgers_[2].acked.push_back(Store(2, 4));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("out of its writer's order")));
}

}  // namespace
}  // namespace kaas::torture
