#include "bench/raw_baselines.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/latency_summary.h"
#include "bench/page_cache.h"
#include "bench/workload_batch.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"

namespace kaas::bench {
namespace {

double MegabytesPerSecond(uint64_t bytes, absl::Duration elapsed) {
  return static_cast<double>(bytes) / 1e6 / absl::ToDoubleSeconds(elapsed);
}

absl::StatusOr<absl::Duration> ReadSequentially(fs::FileSystem& fs,
                                                const std::string& path,
                                                uint64_t bytes,
                                                size_t block_bytes) {
  std::unique_ptr<char[]> buffer(new char[block_bytes]);
  const absl::Time start = absl::Now();
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::ReadableFile> file,
                        fs::FileOpener::OpenForRead(fs, path));
  uint64_t offset = 0;
  while (offset < bytes) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(block_bytes, bytes - offset));
    KAAS_ASSIGN_OR_RETURN(size_t got, file->ReadAt(offset, want, buffer.get()));
    if (got != want) {
      return absl::DataLossError(absl::StrCat("read \"", path, "\": ", got,
                                              " bytes at ", offset,
                                              " instead of ", want));
    }
    offset += got;
  }
  return absl::Now() - start;
}

absl::Status MeasureSequential(fs::FileSystem& fs, const RawBaselineSpec& spec,
                               RawBaselines* out) {
  const std::string path = fs::JoinPath(spec.dir, "sequential.raw");
  const std::string block = IncompressibleBytes(spec.block_bytes, /*seed=*/2);
  {
    const absl::Time start = absl::Now();
    KAAS_ASSIGN_OR_RETURN(
        std::unique_ptr<fs::WritableFile> file,
        fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kTruncate));
    uint64_t written = 0;
    while (written < spec.sequential_bytes) {
      const size_t n = static_cast<size_t>(
          std::min<uint64_t>(block.size(), spec.sequential_bytes - written));
      KAAS_RETURN_IF_ERROR(file->Append(absl::string_view(block).substr(0, n)));
      written += n;
    }
    KAAS_RETURN_IF_ERROR(file->DataSync());
    KAAS_RETURN_IF_ERROR(file->Close());
    out->seq_write_mb_per_s =
        MegabytesPerSecond(spec.sequential_bytes, absl::Now() - start);
  }
  KAAS_ASSIGN_OR_RETURN(
      absl::Duration warm,
      ReadSequentially(fs, path, spec.sequential_bytes, spec.block_bytes));
  out->seq_read_warm_mb_per_s = MegabytesPerSecond(spec.sequential_bytes, warm);
  KAAS_RETURN_IF_ERROR(EvictFromPageCache(path));
  KAAS_ASSIGN_OR_RETURN(
      absl::Duration cold,
      ReadSequentially(fs, path, spec.sequential_bytes, spec.block_bytes));
  out->seq_read_cold_mb_per_s = MegabytesPerSecond(spec.sequential_bytes, cold);
  return fs.Unlink(path);
}

}  // namespace

absl::StatusOr<SyncedAppendRate> MeasureSyncedAppendRate(fs::FileSystem& fs,
                                                         const std::string& dir,
                                                         absl::Duration window,
                                                         size_t write_bytes) {
  if (window <= absl::ZeroDuration() || write_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad synced-append probe: window ", absl::FormatDuration(window), ", ",
        write_bytes, " bytes per write"));
  }
  const std::string path = fs::JoinPath(dir, "fdatasync.raw");
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::WritableFile> file,
      fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kTruncate));
  const std::string record = IncompressibleBytes(write_bytes, /*seed=*/1);
  std::vector<int64_t> latencies;
  const absl::Time start = absl::Now();
  const absl::Time end = start + window;
  absl::Time now = start;
  while (now < end) {
    const absl::Time op_start = now;
    KAAS_RETURN_IF_ERROR(file->Append(record));
    KAAS_RETURN_IF_ERROR(file->DataSync());
    now = absl::Now();
    latencies.push_back(absl::ToInt64Nanoseconds(now - op_start));
  }
  KAAS_RETURN_IF_ERROR(file->Close());
  SyncedAppendRate rate;
  rate.ops_per_s = static_cast<double>(latencies.size()) /
                   absl::ToDoubleSeconds(now - start);
  rate.p50_us = SummarizeLatencies(&latencies).p50_us;
  KAAS_RETURN_IF_ERROR(fs.Unlink(path));
  return rate;
}

absl::StatusOr<RawBaselines> MeasureRawBaselines(fs::FileSystem& fs,
                                                 const RawBaselineSpec& spec) {
  if (spec.sync_window <= absl::ZeroDuration() || spec.sync_write_bytes == 0 ||
      spec.sequential_bytes == 0 || spec.block_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad raw baseline spec: sync window ",
        absl::FormatDuration(spec.sync_window), ", sync write ",
        spec.sync_write_bytes, " bytes, sequential ", spec.sequential_bytes,
        " bytes in blocks of ", spec.block_bytes));
  }
  RawBaselines baselines;
  KAAS_ASSIGN_OR_RETURN(SyncedAppendRate synced,
                        MeasureSyncedAppendRate(fs, spec.dir, spec.sync_window,
                                                spec.sync_write_bytes));
  baselines.fdatasync_ops_per_s = synced.ops_per_s;
  baselines.fdatasync_p50_us = synced.p50_us;
  KAAS_RETURN_IF_ERROR(MeasureSequential(fs, spec, &baselines));
  return baselines;
}

}  // namespace kaas::bench
