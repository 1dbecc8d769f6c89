// Simulated power loss at random points under concurrent acks=all
// appenders: every acknowledged append is recovered byte for byte at its
// offset, and no offset is ever handed out again for different bytes.
#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/partition_testlib.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

struct Acked {
  std::string batch;  // as sent (base offset not yet assigned)
};

class CrashTest : public PartitionTest,
                  public ::testing::WithParamInterface<int> {};

// Returns the batch stored at `offset` (reading from there).
std::string StoredBatchAt(Partition& partition, int64_t offset) {
  absl::StatusOr<ReadResult> read =
      partition.Read(offset, 1, Isolation::kReadUncommitted);
  if (!read.ok() || read->batches == 0) return "";
  return std::string(read->records);
}

TEST_P(CrashTest, AcknowledgedAppendsSurviveACrashAtARandomPoint) {
  const int seed = GetParam();
  std::mt19937_64 random(seed);
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 8 << 10;  // several rolls per run
  config.checkpoint_interval_bytes = 4 << 10;
  test::CrashOptions crash;
  crash.tail = seed % 3 == 0   ? test::UnsyncedTail::kDrop
               : seed % 3 == 1 ? test::UnsyncedTail::kKeepRandomPrefix
                               : test::UnsyncedTail::kKeepAll;
  crash.content =
      seed % 2 == 0 ? test::TailContent::kWritten : test::TailContent::kGarbage;

  absl::Mutex mu;
  std::map<int64_t, std::string> acked;  // base offset -> batch sent
  int64_t acked_end = 0;
  for (int round = 0; round < 3; ++round) {
    auto partition = OpenLeader(1, config);
    ASSERT_NE(partition, nullptr);
    // Everything acknowledged before is still there, byte for byte.
    ASSERT_GE(partition->LogEndOffset(), acked_end);
    {
      absl::MutexLock lock(&mu);
      for (const auto& [offset, batch] : acked) {
        std::string stored = StoredBatchAt(*partition, offset);
        ASSERT_EQ(stored.size(), batch.size()) << "offset " << offset;
        ASSERT_EQ(ReadBigEndian64(stored.data()), offset);
        ASSERT_TRUE(SameBatchButForLeaderFields(stored, batch))
            << "offset " << offset;
      }
    }
    const int appends_before_crash = 20 + static_cast<int>(random() % 80);
    std::atomic<int> appended{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> producers;
    for (int t = 0; t < 4; ++t) {
      producers.emplace_back([&, t] {
        std::mt19937_64 local(seed * 100 + round * 10 + t);
        while (!stop.load()) {
          std::string batch =
              Batch(1 + static_cast<int>(local() % 4), 50 + local() % 400,
                    /*timestamp=*/static_cast<int64_t>(local() % 100000));
          // Half the producers block in AppendAndWait, which may run the
          // cycle's fdatasync on their own thread.
          absl::StatusOr<AppendResult> result =
              t % 2 == 0 ? partition->Append(batch, 1, Acks::kAll)
                         : partition->AppendAndWait(batch, 1, Acks::kAll);
          if (!result.ok()) continue;  // after the crash: errors
          if (!result->durable.Wait().ok()) continue;
          absl::MutexLock lock(&mu);
          acked[result->base_offset] = batch;
          acked_end = std::max(acked_end, result->last_offset + 1);
          appended.fetch_add(1);
        }
      });
    }
    while (appended.load() < appends_before_crash) std::this_thread::yield();
    fs().Crash(crash);
    stop.store(true);
    for (std::thread& producer : producers) producer.join();
    // The "crashed" process is gone: its handles (and the segment locks a
    // roll after the crash may have taken) are closed before the reopen,
    // whatever background task still holds the object.
    partition->Abandon();
    partition.reset();
  }
  auto partition = OpenLeader(1, config);
  absl::MutexLock lock(&mu);
  ASSERT_GE(partition->LogEndOffset(), acked_end);
  for (const auto& [offset, batch] : acked) {
    std::string stored = StoredBatchAt(*partition, offset);
    ASSERT_TRUE(SameBatchButForLeaderFields(stored, batch))
        << "offset " << offset;
  }
  // The log is contiguous: walking it from 0 visits every acked offset.
  std::string all = ReadAll(*partition);
  int64_t expected = 0;
  for (absl::string_view rest = all; !rest.empty();) {
    absl::StatusOr<size_t> size = PeekBatchSize(rest);
    ASSERT_OK(size.status());
    ASSERT_EQ(ReadBigEndian64(rest.data()), expected);
    expected +=
        ReadBigEndian32(rest.data() + batch_layout::kLastOffsetDelta) + 1;
    rest.remove_prefix(*size);
  }
  EXPECT_EQ(expected, partition->HighWatermark());
}

INSTANTIATE_TEST_SUITE_P(Seeds, CrashTest, ::testing::Range(1, 13));

}  // namespace
}  // namespace kaas::partition
