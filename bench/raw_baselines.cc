#include "bench/raw_baselines.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "absl/synchronization/notification.h"
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

absl::StatusOr<double> MeasureParallelSyncedAppends(fs::FileSystem& fs,
                                                    const std::string& dir,
                                                    absl::Duration window,
                                                    size_t write_bytes,
                                                    int threads) {
  if (threads < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad parallel synced-append probe: ", threads, " threads"));
  }
  const std::string record = IncompressibleBytes(write_bytes, /*seed=*/3);
  std::vector<int64_t> ops(threads, 0);
  std::vector<absl::Status> failures(threads);
  // Every thread opens its file before the clock starts, so the window
  // measures syncs only.
  absl::Barrier* ready = new absl::Barrier(threads + 1);
  absl::Time end;  // written before `started` is notified, read after
  absl::Notification started;
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      const std::string path =
          fs::JoinPath(dir, absl::StrCat("fdatasync-", i, ".raw"));
      absl::StatusOr<std::unique_ptr<fs::WritableFile>> file =
          fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kTruncate);
      if (ready->Block()) delete ready;
      started.WaitForNotification();
      if (!file.ok()) {
        failures[i] = file.status();
        return;
      }
      absl::Status status;
      while (status.ok() && absl::Now() < end) {
        status = (*file)->Append(record);
        if (status.ok()) status = (*file)->DataSync();
        if (status.ok()) ++ops[i];
      }
      if (status.ok()) status = (*file)->Close();
      if (status.ok()) status = fs.Unlink(path);
      failures[i] = status;
    });
  }
  if (ready->Block()) delete ready;
  end = absl::Now() + window;
  started.Notify();
  for (std::thread& worker : workers) worker.join();
  for (const absl::Status& failure : failures) KAAS_RETURN_IF_ERROR(failure);
  int64_t total = 0;
  for (int64_t n : ops) total += n;
  return static_cast<double>(total) / absl::ToDoubleSeconds(window);
}

absl::StatusOr<std::optional<double>> MeasureDirectWrite(const std::string& dir,
                                                         uint64_t bytes,
                                                         size_t block_bytes) {
  constexpr size_t kAlignment = 4096;
  if (block_bytes == 0 || block_bytes % kAlignment != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "O_DIRECT blocks must be a multiple of 4096, not ", block_bytes));
  }
  const std::string path = fs::JoinPath(dir, "direct.raw");
  const int fd = open(
      path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EINVAL) return std::nullopt;
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("open ", path, " O_DIRECT"));
  }
  auto fail = [&](absl::string_view what) {
    absl::Status status =
        absl::ErrnoToStatus(errno, absl::StrCat(what, " ", path));
    close(fd);
    unlink(path.c_str());
    return status;
  };
  // Rounded up to whole blocks: O_DIRECT writes whole aligned blocks.
  const uint64_t total = (bytes + block_bytes - 1) / block_bytes * block_bytes;
  if (fallocate(fd, 0, 0, static_cast<off_t>(total)) != 0 &&
      errno != EOPNOTSUPP) {
    return fail("fallocate");
  }
  std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(kAlignment, block_bytes)),
      &std::free);
  const std::string bytes_to_write = IncompressibleBytes(block_bytes, 4);
  std::memcpy(block.get(), bytes_to_write.data(), block_bytes);
  const absl::Time start = absl::Now();
  for (uint64_t offset = 0; offset < total; offset += block_bytes) {
    const ssize_t n =
        pwrite(fd, block.get(), block_bytes, static_cast<off_t>(offset));
    if (n != static_cast<ssize_t>(block_bytes)) {
      if (n >= 0) errno = EIO;
      return fail("pwrite");
    }
  }
  if (fdatasync(fd) != 0) return fail("fdatasync");
  const absl::Duration elapsed = absl::Now() - start;
  close(fd);
  if (unlink(path.c_str()) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat("unlink ", path));
  }
  return MegabytesPerSecond(total, elapsed);
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
  for (auto [threads, rate] :
       {std::pair{4, &baselines.fdatasync_ops_per_s_t4},
        std::pair{16, &baselines.fdatasync_ops_per_s_t16},
        std::pair{64, &baselines.fdatasync_ops_per_s_t64}}) {
    KAAS_ASSIGN_OR_RETURN(
        *rate, MeasureParallelSyncedAppends(fs, spec.dir, spec.sync_window,
                                            spec.sync_write_bytes, threads));
  }
  KAAS_ASSIGN_OR_RETURN(
      baselines.direct_write_mb_per_s,
      MeasureDirectWrite(spec.dir, spec.sequential_bytes, spec.block_bytes));
  return baselines;
}

}  // namespace kaas::bench
