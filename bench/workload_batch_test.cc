#include "bench/workload_batch.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

TEST(WorkloadBatch, SizesAreTheWorkloads) {
  EXPECT_EQ(WorkloadBatchSize(kBatch1KiB), 1029u);
  EXPECT_EQ(WorkloadBatchSize(kBatch16KiB), 16333u);
  EXPECT_EQ(BuildWorkloadBatch(kBatch1KiB, 1, 0).size(), 1029u);
  EXPECT_EQ(BuildWorkloadBatch(kBatch16KiB, 1, 0).size(), 16333u);
}

TEST(WorkloadBatch, HeaderIsAsSpecified) {
  const int64_t t = 1700000000000;
  const std::string bytes = BuildWorkloadBatch(kBatch1KiB, 7, t);
  ASSERT_OK_AND_ASSIGN(RecordBatchView batch, RecordBatchView::Parse(bytes));
  EXPECT_TRUE(batch.CrcMatches());
  EXPECT_EQ(batch.base_offset(), 0);
  EXPECT_EQ(batch.batch_length(), 1029 - 12);
  EXPECT_EQ(batch.partition_leader_epoch(), -1);
  EXPECT_EQ(batch.magic(), 2);
  EXPECT_EQ(batch.attributes(), 0);
  EXPECT_EQ(batch.last_offset_delta(), 7);
  EXPECT_EQ(batch.base_timestamp(), t);
  EXPECT_EQ(batch.max_timestamp(), t + 7);
  EXPECT_EQ(batch.producer_id(), -1);
  EXPECT_EQ(batch.producer_epoch(), -1);
  EXPECT_EQ(batch.base_sequence(), -1);
  EXPECT_EQ(batch.record_count(), 8);
}

TEST(WorkloadBatch, RecordsHaveNullKeysAndValuesOfTheShape) {
  const std::string bytes = BuildWorkloadBatch(kBatch16KiB, 3, 0);
  ASSERT_OK_AND_ASSIGN(RecordBatchView batch, RecordBatchView::Parse(bytes));
  ASSERT_OK_AND_ASSIGN(DecodedRecords records, DecodeRecords(batch));
  ASSERT_EQ(records.size(), 16u);
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(records[i].attributes, 0);
    EXPECT_EQ(records[i].timestamp_delta, i);
    EXPECT_EQ(records[i].offset_delta, i);
    EXPECT_FALSE(records[i].key.has_value());
    ASSERT_TRUE(records[i].value.has_value());
    EXPECT_EQ(records[i].value->size(), 1008u);
    EXPECT_TRUE(records[i].headers.empty());
  }
  // The values are consecutive parts of the seed's stream.
  const std::string stream = IncompressibleBytes(16 * 1008, 3);
  EXPECT_EQ(*records[0].value, stream.substr(0, 1008));
  EXPECT_EQ(*records[15].value, stream.substr(15 * 1008, 1008));
}

TEST(WorkloadBatch, SeedsGiveDistinctDeterministicValues) {
  EXPECT_EQ(BuildWorkloadBatch(kBatch1KiB, 5, 0),
            BuildWorkloadBatch(kBatch1KiB, 5, 0));
  EXPECT_NE(BuildWorkloadBatch(kBatch1KiB, 5, 0),
            BuildWorkloadBatch(kBatch1KiB, 6, 0));
  // Seed 0 is usable (xorshift would otherwise emit only zeros).
  EXPECT_NE(IncompressibleBytes(64, 0), std::string(64, '\0'));
}

TEST(IncompressibleBytes, HasNoRepeatedWords) {
  // Every 8-byte word of a 1 MiB block is distinct: nothing for a
  // compressor to find.
  const std::string bytes = IncompressibleBytes(1 << 20, 1);
  std::set<std::string> words;
  for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
    words.insert(bytes.substr(i, 8));
  }
  EXPECT_EQ(words.size(), bytes.size() / 8);
}

}  // namespace
}  // namespace kaas::bench
