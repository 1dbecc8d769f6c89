// File: storage/partition/partition_testlib.h
//
// A test fixture for the partition layer: a partition directory under a
// scratch dir, the real filesystem wrapped by the fault-injecting one, an I/O
// pool, a timer thread, a manual clock, and helpers to build batches and to
// reopen after a simulated crash.

#ifndef KAAS_STORAGE_PARTITION_PARTITION_TESTLIB_H_
#define KAAS_STORAGE_PARTITION_PARTITION_TESTLIB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/common/storage_stats.h"
#include "storage/metadata/state_snapshot.pb.h"
#include "storage/partition/partition.h"
#include "storage/segment/read_handle_cache.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"

namespace kaas::partition {

class PartitionTest : public ::testing::Test {
 protected:
  PartitionTest();
  ~PartitionTest() override;

  // A small-segment config that keeps tests fast; the watchdog is off unless
  // a test turns it on.
  static PartitionConfig SmallConfig();

  PartitionRuntime runtime();
  // Whether active segments are written through the direct-I/O log (the
  // *_direct variants, KAAS_PARTITION_TEST_DIRECT_IO=1).
  static bool direct_io();
  const std::string& dir() const { return dir_; }
  test::FaultInjectingFileSystem& fs() { return fs_; }
  ManualClock& clock() { return clock_; }
  StorageStats& stats() { return stats_; }
  // The engine-wide read-handle cache the partitions share.
  segment::ReadHandleCache& read_cache() { return cache_; }
  // The timer thread the partitions use (for watchdogs and probes).
  TimerThread& timers() { return timers_; }
  // The I/O pool the partitions run their sync cycles on.
  ThreadPool& io_pool() { return pool_; }

  // Opens dir() (asserting success) with `config`.
  std::shared_ptr<Partition> Open(const PartitionConfig& config = SmallConfig(),
                                  OpenReport* report = nullptr);
  absl::StatusOr<std::shared_ptr<Partition>> TryOpen(
      const PartitionConfig& config = SmallConfig(),
      OpenReport* report = nullptr);
  // Open + TakeOver(epoch).
  std::shared_ptr<Partition> OpenLeader(
      int64_t epoch = 1, const PartitionConfig& config = SmallConfig(),
      OpenReport* report = nullptr);

  // A valid batch of `records` records with `value_size`-byte values and the
  // given base timestamp.
  static std::string Batch(int records = 1, size_t value_size = 16,
                           int64_t timestamp = 1000);
  // An idempotent (or transactional) batch.
  static std::string ProducerBatch(int64_t producer_id, int16_t epoch,
                                   int32_t base_sequence, int records = 1,
                                   bool transactional = false);

  // Appends with acks=all and waits; asserts success; returns the base.
  int64_t AppendDurably(Partition& partition, absl::string_view batch,
                        int64_t epoch = 1);

  // Abandons `partition` (as a crash would: nothing more is persisted). With
  // direct I/O it then cuts the zero padding of its active log's last block
  // (which recovery would truncate as a torn tail), so that the files hold
  // exactly the appended batches, as after a buffered writer's crash.
  void AbandonWithoutPadding(Partition& partition);

  // A leader's log whose producer state lies wholly below the log start:
  // producer 5 appends 20 durable batches of 2 records (epoch 0, sequences
  // from 0), plain batches follow until two more segments exist, then
  // DeleteRecords up to the last segment's base, and plain batches until
  // two more rolls (whose snapshots lie past it). Needs segment_bytes 2048
  // and no periodic checkpoint in the partition's config.
  struct ProducerBelowTheLogStart {
    int64_t log_start = -1;
    int32_t next_sequence = 0;
    int64_t last_producer_offset = -1;
  };
  ProducerBelowTheLogStart DeleteAProducersBatches(Partition& partition);

  // All batches from `offset` to the high watermark, concatenated.
  std::string ReadAll(Partition& partition, int64_t offset = 0,
                      Isolation isolation = Isolation::kReadUncommitted);

  // The names in dir(), sorted.
  std::vector<std::string> ListDir();
  // The name of the .log file of the segment at `base_offset`, `epoch`.
  static std::string LogFileName(uint32_t epoch, int64_t base_offset);
  std::string PathOf(absl::string_view name) const;

 private:
  fs::ScopedTempDir temp_dir_;
  std::string dir_;
  test::FaultInjectingFileSystem fs_;
  ManualClock clock_;
  StorageStats stats_;
  segment::ReadHandleCache cache_{64};
  // Destroyed in reverse order, as in DiskEngine: the timer thread first
  // (its tasks post into the pool), then the pool (the destructor has let
  // its running tasks finish first; see ~PartitionTest).
  ThreadPool pool_{2, "test-io"};
  TimerThread timers_{"test-timers"};
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_PARTITION_TESTLIB_H_
