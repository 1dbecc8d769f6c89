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
//     recovery scan).
// Every I/O goes through the filesystem seam (fs::PosixFileSystem in the
// benchmark), i.e. the same pwrite/fdatasync/pread calls the engine makes.
// MB = 10^6 bytes.
//
// Thread-safety: thread-safe (no state); blocks for the measurements.

#ifndef KAAS_BENCH_RAW_BASELINES_H_
#define KAAS_BENCH_RAW_BASELINES_H_

#include <cstddef>
#include <cstdint>
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

// Measures the baselines (see the file comment). `fs` must be the real
// filesystem for the cold read to mean anything.
absl::StatusOr<RawBaselines> MeasureRawBaselines(fs::FileSystem& fs,
                                                 const RawBaselineSpec& spec);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_RAW_BASELINES_H_
