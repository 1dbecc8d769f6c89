// libFuzzer target: the codec layer (gzip, snappy in both framings, lz4,
// zstd) on arbitrary bytes. The first input byte picks the codec, the rest
// is the compressed payload. Beyond "no crash and nothing inflated past the
// bound", it checks that whatever decompresses round-trips: compressing it
// again with the same codec and decompressing gives it back.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "glog/logging.h"
#include "storage/batch/compression.h"
#include "storage/batch/record_batch.h"

namespace {

constexpr size_t kBound = 1 << 20;

constexpr kaas::CompressionCodec kCodecs[] = {
    kaas::CompressionCodec::kNone, kaas::CompressionCodec::kGzip,
    kaas::CompressionCodec::kSnappy, kaas::CompressionCodec::kLz4,
    kaas::CompressionCodec::kZstd};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const kaas::CompressionCodec codec = kCodecs[data[0] % 5];
  const absl::string_view payload(reinterpret_cast<const char*>(data) + 1,
                                  size - 1);
  const absl::StatusOr<std::string> plain =
      kaas::Decompress(codec, payload, kBound);
  if (!plain.ok()) return 0;
  CHECK_LE(plain->size(), kBound);
  const absl::StatusOr<std::string> compressed = kaas::Compress(codec, *plain);
  CHECK(compressed.ok()) << compressed.status();
  const absl::StatusOr<std::string> again =
      kaas::Decompress(codec, *compressed, kBound);
  CHECK(again.ok()) << again.status();
  CHECK(*again == *plain);
  return 0;
}
