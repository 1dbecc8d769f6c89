// ScanLog, the recovery scan of a segment after a crash: every batch's
// header checked and CRC32C verified, the file read in chunks from the page
// cache. A 256 MiB .log of workload batches (1KiB and 16KiB) is written once
// to a temp dir on the default temp volume and kept warm. Compare with
// kaaslog bench's "seq read warm" baseline: the scan cannot beat the copy out
// of the page cache.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/workload_batch.h"
#include "benchmark/benchmark.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/segment/log_scanner.h"

namespace kaas::bench {
namespace {

constexpr size_t kFileBytes = size_t{256} << 20;

// A temp dir holding one .log per batch shape, removed at exit.
class ScanFiles {
 public:
  static ScanFiles& Get() {
    static ScanFiles* files = new ScanFiles();
    return *files;
  }

  const std::string& PathFor(const BatchShape& shape) {
    std::string& path = shape.records == kBatch1KiB.records ? small_ : large_;
    if (path.empty()) path = Write(shape);
    return path;
  }

 private:
  std::string Write(const BatchShape& shape) {
    std::string batch = BuildWorkloadBatch(shape, /*seed=*/7, 1000);
    std::string contents;
    contents.reserve(kFileBytes + batch.size());
    int64_t offset = 0;
    while (contents.size() < kFileBytes) {
      SetBaseOffset(batch.data(), offset);
      contents += batch;
      offset += shape.records;
    }
    std::string path =
        fs::JoinPath(dir_.path(), absl::StrCat(shape.name, ".log"));
    absl::Status written =
        fs::WriteStringToFile(*fs::PosixFileSystem::Default(), path, contents);
    CHECK(written.ok()) << written;
    return path;
  }

  fs::ScopedTempDir dir_;
  std::string small_;
  std::string large_;
};

void BM_ScanLog(benchmark::State& state, const BatchShape& shape) {
  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  auto file = fs::FileOpener::OpenForRead(fs, ScanFiles::Get().PathFor(shape));
  CHECK(file.ok()) << file.status();
  segment::ScanOptions options;
  options.buffer_bytes = static_cast<size_t>(state.range(0)) << 10;
  for (auto _ : state) {
    auto scan =
        segment::ScanLog(**file, 0, 0, options,
                         [](const RecordBatchView&, uint64_t) { return true; });
    CHECK(scan.ok()) << scan.status();
    CHECK(scan->stop == segment::ScanStop::kEndOfFile) << scan->detail;
    benchmark::DoNotOptimize(scan->next_offset);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(kFileBytes));
}
BENCHMARK_CAPTURE(BM_ScanLog, 1KiB, kBatch1KiB)
    ->ArgName("chunk_kib")
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ScanLog, 16KiB, kBatch16KiB)
    ->ArgName("chunk_kib")
    ->Arg(256)
    ->Arg(1024)
    ->Arg(4096)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kaas::bench
