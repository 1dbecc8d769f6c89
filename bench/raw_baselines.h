// File: bench/raw_baselines.h
//
// The raw-device baselines of the standard workload, measured in the same
// data dir and the same run as the engine scenarios, so every engine figure
// can be given as a ratio to the physical limit measured minutes apart:
//   * 1 KiB appending write + fdatasync, single thread: ops/s and p50 (the
//     floor for one acks=all producer);
//   * sequential write of the data set in 1 MiB blocks with a final
//     fdatasync: MB/s (the ceiling for large-batch appends);
//   * sequential read of that file in 1 MiB blocks, warm and then cold
//     (after posix_fadvise DONTNEED): MB/s (the ceiling for reads and the
//     recovery scan);
//   * the 1 KiB pwrite+fdatasync loop in T threads at once, each on a file
//     of its own, T = 4, 16, 64: aggregate ops/s (how many syncs the device
//     serves in parallel: the ceiling for many partitions);
//   * sequential write of the data set with O_DIRECT in 1 MiB blocks into
//     a preallocated file, then fdatasync: MB/s (the ceiling for a write
//     path that bypasses the page cache).
// Every I/O but the O_DIRECT one goes through the filesystem seam
// (fs::PosixFileSystem in the benchmark), i.e. the same pwrite/fdatasync/
// pread calls the engine makes; the seam has no O_DIRECT, so that one uses
// open/fallocate/pwrite directly. MB = 10^6 bytes.
//
// Thread-safety: thread-safe (no state); blocks for the measurements.

#ifndef KAAS_BENCH_RAW_BASELINES_H_
#define KAAS_BENCH_RAW_BASELINES_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fs/file_system.h"

namespace kaas::bench {

struct RawBaselines {
  double fdatasync_ops_per_s = 0;
  double fdatasync_p50_us = 0;
  double seq_write_mb_per_s = 0;
  double seq_read_warm_mb_per_s = 0;
  double seq_read_cold_mb_per_s = 0;
  // The parallel loop's aggregate rate with 4, 16 and 64 threads.
  double fdatasync_ops_per_s_t4 = 0;
  double fdatasync_ops_per_s_t16 = 0;
  double fdatasync_ops_per_s_t64 = 0;
  // nullopt where the filesystem refuses O_DIRECT (tmpfs, for one).
  std::optional<double> direct_write_mb_per_s;
};

struct RawBaselineSpec {
  // An existing directory; the measurement files are created in it and
  // removed before returning.
  std::string dir;
  absl::Duration sync_window = absl::Seconds(5);
  size_t sync_write_bytes = 1024;
  uint64_t sequential_bytes = uint64_t{2} << 30;
  size_t block_bytes = size_t{1} << 20;
};

// The 1 KiB pwrite+fdatasync loop alone, for `window` in a file of its own
// in `dir` (removed after): the device's sync rate right now. The benchmark
// also runs it right before and after the 1-producer acks=all row, whose
// ratio it is the floor of, because a shared disk's rate drifts by 2x within
// minutes.
struct SyncedAppendRate {
  double ops_per_s = 0;
  double p50_us = 0;
};
absl::StatusOr<SyncedAppendRate> MeasureSyncedAppendRate(fs::FileSystem& fs,
                                                         const std::string& dir,
                                                         absl::Duration window,
                                                         size_t write_bytes);

// The loop of MeasureSyncedAppendRate in `threads` threads at once, each on
// a file of its own in `dir` (removed after): the aggregate ops/s.
absl::StatusOr<double> MeasureParallelSyncedAppends(fs::FileSystem& fs,
                                                    const std::string& dir,
                                                    absl::Duration window,
                                                    size_t write_bytes,
                                                    int threads);

// `bytes` written sequentially with O_DIRECT in `block_bytes` blocks (a
// multiple of 4096) into a file of `dir` preallocated first, then
// fdatasynced: MB/s. nullopt if the filesystem refuses O_DIRECT (EINVAL).
absl::StatusOr<std::optional<double>> MeasureDirectWrite(const std::string& dir,
                                                         uint64_t bytes,
                                                         size_t block_bytes);

// Measures the baselines (see the file comment). `fs` must be the real
// filesystem for the cold read to mean anything.
absl::StatusOr<RawBaselines> MeasureRawBaselines(fs::FileSystem& fs,
                                                 const RawBaselineSpec& spec);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_RAW_BASELINES_H_
