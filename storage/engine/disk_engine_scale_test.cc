// DiskEngine at scale: the number of threads does not grow with the number
// of led partitions, and descriptors are bounded by the read-handle cache.
#include <sys/resource.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/process_stats.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

// fsyncs cost nothing on a tmpfs, and durability is not what these tests
// check: use one when the machine has it.
std::string ScratchParent() {
  absl::StatusOr<bool> shm = fs::PosixFileSystem::Default()->Exists("/dev/shm");
  return shm.ok() && *shm ? "/dev/shm" : ::testing::TempDir();
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kPartitions = 2000;  // the same property, at sanitizer speed
#else
constexpr int kPartitions = 10000;
#endif

// Each led partition holds two descriptors (its active segment and its lock
// file): raise the soft limit as far as the hard one allows, and lead as many
// partitions as fit (the property holds at any count).
int PartitionsThatFit() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 100;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
    (void)::getrlimit(RLIMIT_NOFILE, &limit);
  }
  const int fit =
      static_cast<int>(std::min<rlim_t>(limit.rlim_cur, 1 << 20) / 2) - 500;
  return std::max(100, std::min(kPartitions, fit));
}

TEST(DiskEngineScale, TenThousandLedPartitionsDoNotMeanTenThousandThreads) {
  const int partitions = PartitionsThatFit();
  fs::ScopedTempDir scratch(ScratchParent());
  DiskEngine::Options options;
  options.data_dir = scratch.path();
  options.format_log_dirs = true;  // a scratch dir that exists, empty
  options.io_threads = 4;
  const int threads_without_engine = CurrentThreadCount();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(options));
  // The pool grows on demand, up to io_threads; plus the timer thread.
  const int most_threads = threads_without_engine + options.io_threads + 1;
  const int threads_before = CurrentThreadCount();
  EXPECT_LE(threads_before, most_threads);
  const int fds_before = CurrentOpenFileDescriptors();
  test::BatchBuilder builder;
  std::string batch = builder.AddRecord(absl::nullopt, "v").Build();
  for (int p = 0; p < partitions; ++p) {
    TopicPartition tp{"wide", p};
    ASSERT_OK(engine->TakeOver(tp, 1).status());
    ASSERT_OK(engine->AppendAndWait(tp, 1, Acks::kAll, batch).status());
  }
  EXPECT_EQ(engine->LedPartitions().size(), static_cast<size_t>(partitions));
  EXPECT_LE(CurrentThreadCount(), most_threads);
  // Two descriptors per led partition (its active segment and its lock),
  // nothing more.
  EXPECT_LE(CurrentOpenFileDescriptors(), fds_before + 2 * partitions);
  ASSERT_OK(engine->Drain());
  EXPECT_LE(CurrentThreadCount(), most_threads);
  EXPECT_LE(CurrentOpenFileDescriptors(), fds_before);
}

TEST(DiskEngineScale, ClosedSegmentHandlesAreBoundedByTheCache) {
  fs::ScopedTempDir scratch(ScratchParent());
  DiskEngine::Options options;
  options.data_dir = scratch.path();
  options.format_log_dirs = true;  // a scratch dir that exists, empty
  options.default_config.segment_bytes = 1024;
  options.max_cached_read_handles = 8;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(options));
  TopicPartition tp{"deep", 0};
  ASSERT_OK(engine->TakeOver(tp, 1).status());
  test::BatchBuilder builder;
  std::string batch = builder.AddRandomRecords(1, 900).Build();
  for (int i = 0; i < 100; ++i) {
    ASSERT_OK(engine->AppendAndWait(tp, 1, Acks::kAll, batch).status());
  }
  ASSERT_OK(engine->Relinquish(tp));
  ASSERT_OK(engine->TakeOver(tp, 1).status());
  const int fds_before = CurrentOpenFileDescriptors();
  // Reading all 100 segments opens at most the cache's worth of handles.
  int64_t offset = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(
        ReadResult read,
        engine->Read(tp, offset, 1, Isolation::kReadUncommitted));
    if (read.batches == 0) break;
    offset = read.next_offset;
    EXPECT_LE(CurrentOpenFileDescriptors(), fds_before + 8);
  }
  EXPECT_EQ(offset, 100);
}

}  // namespace
}  // namespace kaas
