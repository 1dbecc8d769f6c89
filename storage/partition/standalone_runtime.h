// File: storage/partition/standalone_runtime.h
//
// What a Partition needs from an engine (PartitionRuntime), owned by one
// object, for tools and benchmarks that open a partition without a
// DiskEngine (`kaaslog compact`, bench/). The real clock; the given
// filesystem (not owned).
//
// Thread-safety: Get() is thread-safe; the object must outlive every
// partition opened with its runtime.

#ifndef KAAS_STORAGE_PARTITION_STANDALONE_RUNTIME_H_
#define KAAS_STORAGE_PARTITION_STANDALONE_RUNTIME_H_

#include "base/clock.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/file_system.h"
#include "storage/common/storage_stats.h"
#include "storage/partition/partition.h"
#include "storage/segment/read_handle_cache.h"

namespace kaas::partition {

class StandaloneRuntime {
 public:
  explicit StandaloneRuntime(fs::FileSystem* fs, int io_threads = 2)
      : fs_(fs), pool_(io_threads, "standalone-io") {}

  // A pool task may hold the last reference to a partition, and an open
  // partition schedules timers: once the pool is idle every partition is
  // gone and the timer thread can stop first.
  ~StandaloneRuntime() { pool_.WaitUntilIdle(); }

  StandaloneRuntime(const StandaloneRuntime&) = delete;
  StandaloneRuntime& operator=(const StandaloneRuntime&) = delete;

  PartitionRuntime Get() {
    PartitionRuntime runtime;
    runtime.fs = fs_;
    runtime.clock = Clock::Real();
    runtime.io_pool = &pool_;
    runtime.timers = &timers_;
    runtime.read_cache = &cache_;
    runtime.stats = &stats_;
    return runtime;
  }

  const StorageStats& stats() const { return stats_; }

 private:
  fs::FileSystem* const fs_;
  StorageStats stats_;
  segment::ReadHandleCache cache_{64};
  // Destroyed in reverse order, as in DiskEngine: the timer thread first
  // (its tasks post into the pool), then the pool.
  ThreadPool pool_;
  TimerThread timers_{"standalone-timers"};
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_STANDALONE_RUNTIME_H_
