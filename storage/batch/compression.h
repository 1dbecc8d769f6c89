// File: storage/batch/compression.h
//
// The codecs of Kafka's RecordBatch (attributes bits 0-2), on Debian's
// libraries: gzip (zlib), snappy (libsnappy), lz4 (liblz4), zstd (libzstd).
// The records section of a compressed batch (everything after the 61-byte
// header) is one compressed stream, framed as Kafka's clients frame it:
//   gzip    a gzip member (zlib streams are read too);
//   snappy  the Java clients' xerial framing ("\x82SNAPPY\0", two version
//           words, then length-prefixed blocks), or one raw snappy block (as
//           librdkafka writes it); Compress writes xerial framing;
//   lz4     an LZ4 frame (Kafka's KafkaLZ4BlockOutputStream since 0.10);
//   zstd    zstd frames.
//
// The append path never calls this: batches stay opaque. Record validation
// (storage/batch/records.h), compaction and tools decode records with it.
//
// Decompression is bounded: output beyond `max_bytes` fails (a small batch
// that inflates to gigabytes is refused, not held). Errors: kCorruptMessage
// (Kafka's CORRUPT_MESSAGE) when the bytes are not a valid stream of the
// codec (including codec bits on bytes that are not compressed) or inflate
// past the bound; kInvalidRecord for a codec value Kafka does not define.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_BATCH_COMPRESSION_H_
#define KAAS_STORAGE_BATCH_COMPRESSION_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/batch/record_batch.h"

namespace kaas {

// The default bound of Decompress: far above any batch a broker accepts
// (max.message.bytes is 1 MiB by default; a 64x ratio is extreme).
inline constexpr size_t kMaxDecompressedBytes = size_t{256} << 20;

// `input` decompressed with `codec` (kNone: a copy).
absl::StatusOr<std::string> Decompress(
    CompressionCodec codec, absl::string_view input,
    size_t max_bytes = kMaxDecompressedBytes);

// `input` compressed with `codec` (kNone: a copy), at each library's
// default level.
absl::StatusOr<std::string> Compress(CompressionCodec codec,
                                     absl::string_view input);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_COMPRESSION_H_
