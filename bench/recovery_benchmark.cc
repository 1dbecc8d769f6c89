// Partition::Open after a crash: the whole recovery of a 1 GiB active
// segment that was never fsynced and has no checkpoint past its start (the
// CRC scan, the offset and time index rebuild, the producer-state replay,
// and the durable index, checkpoint and snapshot writes at the end). The
// segment is written once by a leader that then crashes (Abandon, nothing
// persisted) and kept warm; before every open the metadata files are put
// back as the crash left them, so each iteration repeats the same recovery.
// Compare with kaaslog bench's "(d) crash-nofsync 16KiB warm" row, which
// measures the same open behind a DiskEngine::TakeOver, and with
// scan_benchmark (the CRC scan alone).
//
//   bazel run -c opt //bench:recovery_benchmark

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "bench/workload_batch.h"
#include "benchmark/benchmark.h"
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/common/storage_stats.h"
#include "storage/partition/partition.h"
#include "storage/partition/standalone_runtime.h"
#include "storage/segment/read_handle_cache.h"

namespace kaas::bench {

using ::kaas::partition::OpenReport;
using ::kaas::partition::Partition;
using ::kaas::partition::PartitionRuntime;
namespace {

constexpr uint64_t kLogBytes = uint64_t{1} << 30;

// What a Partition needs from its engine, owned here.
class Runtime : public partition::StandaloneRuntime {
 public:
  Runtime() : StandaloneRuntime(fs::PosixFileSystem::Default()) {}
};

PartitionConfig CrashConfig() {
  PartitionConfig config;
  config.segment_bytes = (int64_t{2} << 30) - 1;  // one active segment
  config.flush_interval_messages = 0;  // nothing fsynced before the crash
  return config;
}

// A partition dir holding a crashed 1 GiB active segment per batch shape.
class CrashedPartitions {
 public:
  static CrashedPartitions& Get() {
    static CrashedPartitions* partitions = new CrashedPartitions();
    return *partitions;
  }

  Runtime& runtime() { return runtime_; }

  // Returns the dir of `shape`'s partition, as the crash left it.
  const std::string& Prepare(const BatchShape& shape) {
    Crashed& crashed = crashed_[shape.records];
    if (crashed.dir.empty()) crashed = Write(shape);
    Restore(crashed);
    return crashed.dir;
  }

 private:
  struct Crashed {
    std::string dir;
    // Every file but the .log, as the crash left it.
    std::map<std::string, std::string> metadata;
  };

  Crashed Write(const BatchShape& shape) {
    fs::FileSystem& fs = *fs::PosixFileSystem::Default();
    Crashed crashed;
    crashed.dir = fs::JoinPath(dir_.path(), shape.name, "0");
    auto partition = Partition::Open(runtime_.Get(), crashed.dir, CrashConfig(),
                                     metadata::ProducerFences(), nullptr);
    CHECK(partition.ok()) << partition.status();
    CHECK((*partition)->TakeOver(1).ok());
    std::string batch = BuildWorkloadBatch(shape, /*seed=*/7, 1000);
    for (uint64_t written = 0; written + batch.size() <= kLogBytes;
         written += batch.size()) {
      auto appended = (*partition)->Append(batch, 1, Acks::kLeader);
      CHECK(appended.ok()) << appended.status();
    }
    (*partition)->Abandon();  // the crash: nothing more persisted
    // Warm and clean in the page cache, like kaaslog bench's warm rows.
    auto names = fs.ListDir(crashed.dir);
    CHECK(names.ok()) << names.status();
    for (const std::string& name : *names) {
      std::string path = fs::JoinPath(crashed.dir, name);
      if (absl::EndsWith(name, ".log")) {
        auto file =
            fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kMustExist);
        CHECK(file.ok()) << file.status();
        CHECK((*file)->DataSync().ok());
        continue;
      }
      auto contents = fs::ReadFileToString(fs, path);
      CHECK(contents.ok()) << contents.status();
      crashed.metadata[name] = *std::move(contents);
    }
    return crashed;
  }

  static void Restore(const Crashed& crashed) {
    fs::FileSystem& fs = *fs::PosixFileSystem::Default();
    auto names = fs.ListDir(crashed.dir);
    CHECK(names.ok()) << names.status();
    for (const std::string& name : *names) {
      if (absl::EndsWith(name, ".log") || crashed.metadata.count(name) != 0) {
        continue;
      }
      CHECK(fs.Unlink(fs::JoinPath(crashed.dir, name)).ok());
    }
    for (const auto& [name, contents] : crashed.metadata) {
      CHECK(fs::AtomicReplaceFile(fs, fs::JoinPath(crashed.dir, name), contents)
                .ok());
    }
  }

  fs::ScopedTempDir dir_;
  Runtime runtime_;
  std::map<int, Crashed> crashed_;
};

void BM_RecoverCrashedSegment(benchmark::State& state,
                              const BatchShape& shape) {
  CrashedPartitions& partitions = CrashedPartitions::Get();
  uint64_t scanned = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string& dir = partitions.Prepare(shape);
    state.ResumeTiming();
    OpenReport report;
    auto partition =
        Partition::Open(partitions.runtime().Get(), dir, CrashConfig(),
                        metadata::ProducerFences(), &report);
    CHECK(partition.ok()) << partition.status();
    scanned = report.scanned_bytes;
    state.PauseTiming();
    CHECK(!report.used_checkpoint || report.scanned_bytes > 0);
    (*partition)->Abandon();
    partition->reset();
    state.ResumeTiming();
  }
  state.counters["scanned_MiB"] = static_cast<double>(scanned) / (1 << 20);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(scanned));
}
BENCHMARK_CAPTURE(BM_RecoverCrashedSegment, 1KiB, kBatch1KiB)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(8);
BENCHMARK_CAPTURE(BM_RecoverCrashedSegment, 16KiB, kBatch16KiB)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(8);

}  // namespace
}  // namespace kaas::bench
