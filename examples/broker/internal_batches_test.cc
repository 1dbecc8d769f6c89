// File: examples/broker/internal_batches_test.cc
//
// The broker's batches are byte for byte what testing/batch_builder.h (the
// reference the engine tests use) builds, and parse as what they claim.

#include "examples/broker/internal_batches.h"

#include <string>

#include "absl/types/optional.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "testing/batch_builder.h"

namespace kaas::broker {
namespace {

TEST(InternalBatchesTest, ControlBatchMatchesTheReference) {
  for (ControlType type : {ControlType::kCommit, ControlType::kAbort}) {
    const std::string built = BuildControlBatch(type, 77, 3, 5, 1234);
    EXPECT_EQ(built, test::ControlBatch(type, 77, 3, 5, 1234));
    auto view = RecordBatchView::ParseStored(built);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_TRUE(view->is_control());
    auto parsed = view->control_type();
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, type);
  }
}

TEST(InternalBatchesTest, RecordBatchMatchesTheReference) {
  const std::string built =
      BuildRecordBatch({{"k1", std::string("v1")}, {"k2", std::nullopt}}, 99);
  const std::string want = test::BatchBuilder()
                               .PartitionLeaderEpoch(-1)
                               .BaseTimestamp(99)
                               .AddRecord("k1", "v1")
                               .AddRecord("k2", absl::nullopt)
                               .Build();
  EXPECT_EQ(built, want);
  auto view = RecordBatchView::ParseStored(built);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_FALSE(view->is_control());
}

}  // namespace
}  // namespace kaas::broker
