// libFuzzer target: recovery's scan (ScanLog) over arbitrary segment bytes,
// served from memory. Beyond "no crash, no hang, nothing allocated for a
// garbage length", it checks:
//   * the scanned prefix is a sequence of valid batches: each starts where
//     the previous ended, passes the header checks and its CRC32C, and has
//     the expected base offset; valid_end and next_offset are where the
//     last one ends;
//   * a scan that reports the end of the file consumed all of it;
//   * the result does not depend on the read chunk size or on reading ahead
//     on a helper thread.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"
#include "storage/segment/log_scanner.h"

namespace kaas::segment {
namespace {

class MemoryFile : public fs::ReadableFile {
 public:
  explicit MemoryFile(absl::string_view bytes) : bytes_(bytes) {}
  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (offset >= bytes_.size()) return 0;
    const size_t got = std::min<size_t>(n, bytes_.size() - offset);
    std::memcpy(dst, bytes_.data() + offset, got);
    return got;
  }
  absl::StatusOr<uint64_t> Size() const override { return bytes_.size(); }
  const std::string& path() const override { return path_; }

 private:
  absl::string_view bytes_;
  std::string path_ = "memory/00000000000000000000.log";
};

constexpr int64_t kBaseOffset = 0;

ScanResult Scan(const MemoryFile& file, absl::string_view bytes,
                const ScanOptions& options) {
  uint64_t expected_position = 0;
  int64_t expected_offset = kBaseOffset;
  absl::StatusOr<ScanResult> result =
      ScanLog(file, 0, kBaseOffset, options,
              [&](const RecordBatchView& batch, uint64_t position) {
                CHECK_EQ(position, expected_position);
                CHECK_EQ(batch.base_offset(), expected_offset);
                CHECK(batch.CrcMatches());
                CHECK_LE(position + batch.size(), bytes.size());
                CHECK(batch.bytes() == bytes.substr(position, batch.size()));
                CHECK(RecordBatchView::ParseHeader(batch.bytes()).ok());
                expected_position = position + batch.size();
                expected_offset = batch.next_offset();
                return true;
              });
  CHECK(result.ok()) << result.status();
  CHECK_EQ(result->valid_end, expected_position);
  if (result->batches > 0) CHECK_EQ(result->next_offset, expected_offset);
  CHECK_LE(result->valid_end, bytes.size());
  if (result->stop == ScanStop::kEndOfFile) {
    CHECK_EQ(result->valid_end, bytes.size());
  }
  return *result;
}

}  // namespace
}  // namespace kaas::segment

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kaas::segment::ScanOptions;
  using kaas::segment::ScanResult;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const kaas::segment::MemoryFile file(bytes);
  ScanOptions whole;
  whole.read_ahead_min_bytes = 0;
  const ScanResult a = kaas::segment::Scan(file, bytes, whole);
  ScanOptions small;
  // A chunk smaller than most batches, varied by the input.
  small.buffer_bytes = 64 + (size > 0 ? data[size / 2] : 0);
  small.read_ahead_min_bytes = 1;
  const ScanResult b = kaas::segment::Scan(file, bytes, small);
  CHECK_EQ(a.valid_end, b.valid_end);
  CHECK_EQ(a.next_offset, b.next_offset);
  CHECK_EQ(a.batches, b.batches);
  CHECK(a.stop == b.stop) << a.detail << " vs " << b.detail;
  return 0;
}
