#include "storage/partition/partition_testlib.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "storage/segment/segment_name.h"
#include "testing/status_matchers.h"

namespace kaas::partition {

// The *_direct variants of the partition tests (storage/partition/BUILD)
// run the same tests with KAAS_PARTITION_TEST_DIRECT_IO set: active segments
// are then written through the direct-I/O log
// (storage/segment/direct_log_file.h), which the fault-injecting filesystem
// grants with O_DIRECT's alignment rules enforced.
bool PartitionTest::direct_io() {
  static const bool direct = [] {
    const char* value = std::getenv("KAAS_PARTITION_TEST_DIRECT_IO");
    return value != nullptr && std::string(value) == "1";
  }();
  return direct;
}

PartitionTest::PartitionTest()
    : dir_(fs::JoinPath(temp_dir_.path(), "topic", "0")),
      fs_(fs::PosixFileSystem::Default(), /*seed=*/20261130) {
  fs_.GrantDirectIo(direct_io());
}

PartitionTest::~PartitionTest() {
  // A pool task may hold the last reference to a partition the test has let
  // go of, and an open partition schedules timers (stall re-arms, watchdogs).
  // Once the pool is idle every partition is gone, so the timer tasks still
  // pending find nothing to do and the timer thread can stop first.
  pool_.WaitUntilIdle();
}

PartitionConfig PartitionTest::SmallConfig() {
  PartitionConfig config;
  config.segment_bytes = 64 << 10;
  config.index_interval_bytes = 256;
  config.fsync_max_latency = absl::ZeroDuration();
  config.checkpoint_interval_bytes = 16 << 10;
  return config;
}

void PartitionTest::AbandonWithoutPadding(Partition& partition) {
  const SegmentSummary active = partition.Segments().back();
  partition.Abandon();
  if (!direct_io()) return;
  const std::string log = PathOf(
      LogFileName(static_cast<uint32_t>(active.epoch), active.base_offset));
  ASSERT_EQ(::truncate(log.c_str(), static_cast<off_t>(active.size_bytes)), 0)
      << log;
}

PartitionRuntime PartitionTest::runtime() {
  PartitionRuntime runtime;
  runtime.fs = &fs_;
  runtime.clock = &clock_;
  runtime.io_pool = &pool_;
  runtime.timers = &timers_;
  runtime.read_cache = &cache_;
  runtime.stats = &stats_;
  runtime.rearm_interval = absl::Milliseconds(10);
  runtime.direct_io = direct_io();
  return runtime;
}

absl::StatusOr<std::shared_ptr<Partition>> PartitionTest::TryOpen(
    const PartitionConfig& config, OpenReport* report) {
  return Partition::Open(runtime(), dir_, config, metadata::ProducerFences(),
                         report);
}

std::shared_ptr<Partition> PartitionTest::Open(const PartitionConfig& config,
                                               OpenReport* report) {
  absl::StatusOr<std::shared_ptr<Partition>> partition =
      TryOpen(config, report);
  EXPECT_OK(partition.status());
  return partition.ok() ? *std::move(partition) : nullptr;
}

std::shared_ptr<Partition> PartitionTest::OpenLeader(
    int64_t epoch, const PartitionConfig& config, OpenReport* report) {
  std::shared_ptr<Partition> partition = Open(config, report);
  if (partition == nullptr) return nullptr;
  EXPECT_OK(partition->TakeOver(epoch).status());
  return partition;
}

std::string PartitionTest::Batch(int records, size_t value_size,
                                 int64_t timestamp) {
  test::BatchBuilder builder;
  builder.BaseTimestamp(timestamp);
  builder.AddRandomRecords(records, value_size);
  return builder.Build();
}

std::string PartitionTest::ProducerBatch(int64_t producer_id, int16_t epoch,
                                         int32_t base_sequence, int records,
                                         bool transactional) {
  test::BatchBuilder builder;
  builder.Producer(producer_id, epoch, base_sequence);
  builder.Transactional(transactional);
  builder.AddRandomRecords(records, 8);
  return builder.Build();
}

int64_t PartitionTest::AppendDurably(Partition& partition,
                                     absl::string_view batch, int64_t epoch) {
  absl::StatusOr<AppendResult> result =
      partition.Append(batch, epoch, Acks::kAll);
  EXPECT_OK(result.status());
  if (!result.ok()) return -1;
  EXPECT_OK(result->durable.Wait());
  return result->base_offset;
}

PartitionTest::ProducerBelowTheLogStart PartitionTest::DeleteAProducersBatches(
    Partition& partition) {
  ProducerBelowTheLogStart out;
  for (int i = 0; i < 20; ++i, out.next_sequence += 2) {
    out.last_producer_offset =
        AppendDurably(partition, ProducerBatch(5, 0, out.next_sequence, 2));
  }
  const size_t producer_segments = partition.Segments().size();
  while (partition.Segments().size() < producer_segments + 2) {
    AppendDurably(partition, Batch(1, 300));
  }
  out.log_start = partition.Segments().back().base_offset;
  EXPECT_OK(partition.DeleteRecords(out.log_start).status());
  while (partition.Segments().size() < 3) {
    AppendDurably(partition, Batch(1, 300));
  }
  return out;
}

std::string PartitionTest::ReadAll(Partition& partition, int64_t offset,
                                   Isolation isolation) {
  std::string out;
  while (true) {
    absl::StatusOr<ReadResult> read =
        partition.Read(offset, 1 << 20, isolation);
    EXPECT_OK(read.status());
    if (!read.ok() || read->batches == 0) break;
    out += std::string(read->records);
    offset = read->next_offset;
  }
  return out;
}

std::vector<std::string> PartitionTest::ListDir() {
  absl::StatusOr<std::vector<std::string>> names =
      fs::PosixFileSystem::Default()->ListDir(dir_);
  return names.ok() ? *names : std::vector<std::string>();
}

std::string PartitionTest::LogFileName(uint32_t epoch, int64_t base_offset) {
  return segment::SegmentFileName(segment::SegmentId{base_offset, epoch},
                                  segment::SegmentFileKind::kLog);
}

std::string PartitionTest::PathOf(absl::string_view name) const {
  return fs::JoinPath(dir_, name);
}

}  // namespace kaas::partition
