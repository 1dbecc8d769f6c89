// Compaction throughput (issue: key compaction): one pass over a 1 GiB
// partition of 1 KiB records in which 10% of the keys are live (each key
// written 10 times), uncompressed and zstd, beside the raw sequential read
// bandwidth of the same segment files in the same run (both from the page
// cache the writes left warm). Reports the pass's input MB/s, its ratio to
// the raw read, and the process's peak memory growth during the pass
// against the offset map's configured size.
//
//   bazel run --config=opt //bench:compaction_benchmark [-- DIR [none|zstd]]

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "glog/logging.h"
#include "storage/batch/compression.h"
#include "storage/batch/crc32c.h"
#include "storage/batch/record.h"
#include "storage/batch/record_batch.h"
#include "storage/common/offset_map.h"
#include "storage/common/storage_stats.h"
#include "storage/partition/partition.h"
#include "storage/partition/standalone_runtime.h"
#include "storage/segment/read_handle_cache.h"

namespace kaas::bench {
namespace {

constexpr uint64_t kLogBytes = uint64_t{1} << 30;
constexpr size_t kValueBytes = 1000;
constexpr int kRecordsPerBatch = 16;
constexpr size_t kMapBytes = size_t{128} << 20;

namespace layout = batch_layout;

// Peak resident memory of the process so far (Linux: VmHWM), in bytes.
uint64_t PeakRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stoull(line.substr(6)) * 1024;
    }
  }
  return 0;
}

// Resets the peak to the current size (Linux >= 4.0).
void ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

// A batch of `kRecordsPerBatch` keyed records, compressed with `codec`.
std::string MakeBatch(int64_t first_record, int64_t keys,
                      CompressionCodec codec) {
  std::string records;
  std::string value(kValueBytes, '\0');
  for (int i = 0; i < kRecordsPerBatch; ++i) {
    const int64_t n = first_record + i;
    // Values that compress to about half (random letters from a small
    // alphabet), so that zstd has real work.
    uint64_t state = static_cast<uint64_t>(n) * 0x9E3779B97F4A7C15u + 1;
    for (size_t j = 0; j < value.size(); ++j) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      value[j] = static_cast<char>('a' + state % 16);
    }
    const std::string key = absl::StrCat("key-", (n * 7919) % keys);
    Record record;
    record.offset_delta = i;
    record.key = key;
    record.value = value;
    AppendRecord(record, /*timestamp_delta=*/0, &records);
  }
  if (codec != CompressionCodec::kNone) {
    records = *Compress(codec, records);
  }
  std::string batch(layout::kHeaderSize, '\0');
  batch += records;
  char* p = batch.data();
  WriteBigEndian32(p + layout::kBatchLength,
                   static_cast<int32_t>(batch.size() - layout::kLogOverhead));
  WriteBigEndian32(p + layout::kPartitionLeaderEpoch, -1);
  p[layout::kMagic] = layout::kMagicV2;
  WriteBigEndian16(p + layout::kAttributes, static_cast<int16_t>(codec));
  WriteBigEndian32(p + layout::kLastOffsetDelta, kRecordsPerBatch - 1);
  WriteBigEndian64(p + layout::kBaseTimestamp, 1000);
  WriteBigEndian64(p + layout::kMaxTimestamp, 1000);
  WriteBigEndian64(p + layout::kProducerId, -1);
  WriteBigEndian16(p + layout::kProducerEpoch, -1);
  WriteBigEndian32(p + layout::kBaseSequence, -1);
  WriteBigEndian32(p + layout::kRecordCount, kRecordsPerBatch);
  WriteBigEndian32(p + layout::kCrc, static_cast<int32_t>(crc32c::Value(
                                         p + layout::kCrcStart,
                                         batch.size() - layout::kCrcStart)));
  return batch;
}

// Reads every segment file of `dir` sequentially in 1 MiB reads: the raw
// baseline. Returns bytes/s.
double RawReadBandwidth(fs::FileSystem& fs, const std::string& dir) {
  std::vector<std::string> names = *fs.ListDir(dir);
  std::sort(names.begin(), names.end());
  std::string buffer(1 << 20, '\0');
  uint64_t total = 0;
  const absl::Time start = absl::Now();
  for (const std::string& name : names) {
    if (name.size() < 4 || name.substr(name.size() - 4) != ".log") continue;
    std::unique_ptr<fs::ReadableFile> file =
        *fs::FileOpener::OpenForRead(fs, fs::JoinPath(dir, name));
    for (uint64_t offset = 0;;) {
      const size_t got = *file->ReadAt(offset, buffer.size(), buffer.data());
      if (got == 0) break;
      offset += got;
      total += got;
    }
  }
  return total / absl::ToDoubleSeconds(absl::Now() - start);
}

// The floor of a pass's shape without the engine: both walks read every
// segment file in 1 MiB reads and checksum each batch (CRC32C, as the
// engine verifies what it reads), and the second writes every tenth batch
// to a new file, fsynced, as the cleaned output. No record is parsed, no
// key hashed, no source file deleted. Returns seconds.
double RawPassShape(const std::string& dir) {
  std::vector<std::string> names;
  const std::vector<std::string> listing =
      *fs::PosixFileSystem::Default()->ListDir(dir);
  for (const std::string& name : listing) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".log") {
      names.push_back(fs::JoinPath(dir, name));
    }
  }
  std::sort(names.begin(), names.end());
  const std::string out_path = fs::JoinPath(dir, "raw-shape.out");
  std::string buffer(1 << 20, '\0');
  uint32_t crc_sum = 0;
  const absl::Time start = absl::Now();
  const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  PCHECK(out >= 0) << out_path;
  for (int walk = 0; walk < 2; ++walk) {
    int64_t batch_number = 0;
    for (const std::string& name : names) {
      const int in = open(name.c_str(), O_RDONLY);
      PCHECK(in >= 0) << name;
      size_t held = 0;
      for (off_t offset = 0;;) {
        const ssize_t got =
            pread(in, &buffer[held], buffer.size() - held, offset);
        PCHECK(got >= 0) << name;
        if (got == 0) break;
        offset += got;
        held += static_cast<size_t>(got);
        size_t at = 0;
        while (held - at >= layout::kHeaderSize) {
          const size_t size = layout::kLogOverhead +
                              static_cast<uint32_t>(ReadBigEndian32(
                                  buffer.data() + at + layout::kBatchLength));
          if (held - at < size) break;
          crc_sum ^= crc32c::Value(buffer.data() + at + layout::kCrcStart,
                                   size - layout::kCrcStart);
          if (walk == 1 && batch_number % 10 == 0) {
            PCHECK(write(out, buffer.data() + at, size) ==
                   static_cast<ssize_t>(size));
          }
          ++batch_number;
          at += size;
        }
        std::memmove(&buffer[0], &buffer[at], held - at);
        held -= at;
      }
      close(in);
    }
  }
  PCHECK(fsync(out) == 0);
  close(out);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  PCHECK(unlink(out_path.c_str()) == 0);
  CHECK_NE(crc_sum, 1u);  // keeps the checksums from being optimised away
  return seconds;
}

void Run(const std::string& parent, CompressionCodec codec) {
  fs::ScopedTempDir temp(parent);
  const std::string dir = fs::JoinPath(temp.path(), "topic/0");
  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  partition::StandaloneRuntime runtime(&fs);
  PartitionConfig config;
  config.cleanup_compact = true;
  config.cleanup_delete = false;
  config.flush_interval_messages = 0;  // the writes are not what is measured
  partition::OpenReport report;
  std::shared_ptr<partition::Partition> partition = *partition::Partition::Open(
      runtime.Get(), dir, config, metadata::ProducerFences(), &report);
  CHECK(partition->TakeOver(1).status().ok());
  // 1 GiB of records; every key written 10 times, so 10% of them are live.
  const int64_t records = kLogBytes / (kValueBytes + 24);
  const int64_t keys = records / 10;
  for (int64_t n = 0; n < records; n += kRecordsPerBatch) {
    CHECK(
        (partition->Append(MakeBatch(n, keys, codec), 1, Acks::kNone).status())
            .ok());
  }
  // Roll, so that everything written is compactable, and make it durable
  // (a few appends: the sync after the roll moves the recovery checkpoint
  // off the segments to clean).
  config.segment_bytes = 64 << 10;
  CHECK(partition->SetConfig(config).ok());
  for (int i = 0; i < 3; ++i) {
    CHECK((partition
               ->AppendAndWait(MakeBatch(records, keys, codec), 1, Acks::kAll)
               .status())
              .ok());
  }
  const uint64_t log_bytes = partition->SizeBytes();
  // The median of five raw reads: a single one varies by 2x from run to
  // run on a shared machine.
  std::vector<double> raws;
  for (int i = 0; i < 5; ++i) raws.push_back(RawReadBandwidth(fs, dir));
  std::sort(raws.begin(), raws.end());
  const double raw = raws[2];

  std::vector<double> shapes;
  for (int i = 0; i < 3; ++i) shapes.push_back(RawPassShape(dir));
  std::sort(shapes.begin(), shapes.end());
  const double shape_seconds = shapes[1];

  OffsetMap map(kMapBytes);
  ResetPeakRss();
  const uint64_t rss_before = PeakRss();
  CompactionRequest request;
  request.now_ms = Clock::Real()->NowMillis();
  request.map = &map;
  const absl::Time start = absl::Now();
  CompactionReport result = *partition->Compact(request);
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  const uint64_t rss_growth = PeakRss() - rss_before;
  const double rate = result.bytes_before / seconds;
  std::cout << absl::StrFormat(
      "compaction %-6s log %d MiB, %d keys (%d records): pass %.2f s, "
      "%.0f MB/s of input (%.2fx the raw sequential read of %.0f MB/s); "
      "%d -> %d MiB, %d records removed; peak memory +%d MiB (map %d MiB; "
      "the map's pages are touched as it fills)\n"
      "           the pass's raw shape (read and CRC32C twice, write a tenth, "
      "fsync; median of 3) takes %.2f s: %.2fx the raw read; the pass takes "
      "%.2fx the raw shape\n",
      CompressionCodecName(codec), log_bytes >> 20, result.keys, records,
      seconds, rate / 1e6, rate / raw, raw / 1e6, result.bytes_before >> 20,
      result.bytes_after >> 20, result.records_removed, rss_growth >> 20,
      kMapBytes >> 20, shape_seconds,
      (result.bytes_before / shape_seconds) / raw, seconds / shape_seconds);
  CHECK(partition->Relinquish().ok());
}

}  // namespace
}  // namespace kaas::bench

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  const std::string parent = argc > 1 ? argv[1] : "/tmp";
  // An optional second argument runs one codec only ("none" or "zstd").
  const std::string only = argc > 2 ? argv[2] : "";
  if (only.empty() || only == "none") {
    kaas::bench::Run(parent, kaas::CompressionCodec::kNone);
  }
  if (only.empty() || only == "zstd") {
    kaas::bench::Run(parent, kaas::CompressionCodec::kZstd);
  }
  return 0;
}
