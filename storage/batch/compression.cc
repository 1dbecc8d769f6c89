// File: storage/batch/compression.cc

#include "storage/batch/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/storage_error.h"

namespace kaas {
namespace {

constexpr size_t kChunkBytes = 64 << 10;

// The xerial snappy framing of the Java clients.
constexpr char kXerialMagic[] = {'\x82', 'S', 'N', 'A', 'P', 'P', 'Y', '\0'};
constexpr size_t kXerialHeaderBytes = sizeof(kXerialMagic) + 8;
constexpr size_t kXerialBlockBytes = 32 << 10;  // the Java default

absl::Status Corrupt(CompressionCodec codec, absl::string_view why) {
  return StorageError(
      StorageErrorCode::kCorruptMessage,
      absl::StrCat("the records of a ", CompressionCodecName(codec),
                   "-compressed batch do not decompress: ", why));
}

absl::Status TooLarge(CompressionCodec codec, size_t max_bytes) {
  return Corrupt(
      codec, absl::StrCat("they inflate past ", max_bytes, " bytes (refused)"));
}

uint32_t GetBigEndian32(const char* p) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(p[0])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(p[3]));
}

void PutBigEndian32(std::string* out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out->append(bytes, 4);
}

// ---- gzip
// --------------------------------------------------------------------

absl::StatusOr<std::string> InflateGzip(absl::string_view input,
                                        size_t max_bytes) {
  z_stream stream{};
  // 15 window bits + 32: gzip or zlib, detected from the header.
  if (inflateInit2(&stream, 15 + 32) != Z_OK) {
    return Corrupt(CompressionCodec::kGzip, "zlib could not start");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, inflateEnd);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  std::string out;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (out.size() >= max_bytes) {
      return TooLarge(CompressionCodec::kGzip, max_bytes);
    }
    const size_t done = out.size();
    const size_t room = std::min(kChunkBytes, max_bytes - done);
    out.resize(done + room);
    stream.next_out = reinterpret_cast<Bytef*>(&out[done]);
    stream.avail_out = static_cast<uInt>(room);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.resize(done + room - stream.avail_out);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK) {
      return Corrupt(CompressionCodec::kGzip,
                     stream.msg != nullptr ? stream.msg : "not a gzip stream");
    }
    if (stream.avail_in == 0 && stream.avail_out != 0) {
      return Corrupt(CompressionCodec::kGzip, "the stream is cut short");
    }
  }
  return out;
}

absl::StatusOr<std::string> DeflateGzip(absl::string_view input) {
  z_stream stream{};
  // 15 window bits + 16: a gzip member, as Java's GZIPOutputStream writes.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("zlib could not start");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&stream, deflateEnd);
  std::string out(deflateBound(&stream, input.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = reinterpret_cast<Bytef*>(&out[0]);
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) {
    return absl::InternalError("gzip compression did not finish");
  }
  out.resize(stream.total_out);
  return out;
}

// ---- snappy
// ------------------------------------------------------------------

absl::Status UnsnappyBlock(absl::string_view block, size_t max_bytes,
                           std::string* out) {
  size_t length = 0;
  if (snappy_uncompressed_length(block.data(), block.size(), &length) !=
      SNAPPY_OK) {
    return Corrupt(CompressionCodec::kSnappy, "not a snappy block");
  }
  if (length > max_bytes - out->size()) {
    return TooLarge(CompressionCodec::kSnappy, max_bytes);
  }
  const size_t done = out->size();
  out->resize(done + length);
  if (snappy_uncompress(block.data(), block.size(), &(*out)[done], &length) !=
      SNAPPY_OK) {
    return Corrupt(CompressionCodec::kSnappy, "not a snappy block");
  }
  out->resize(done + length);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Unsnappy(absl::string_view input,
                                     size_t max_bytes) {
  std::string out;
  if (input.size() < kXerialHeaderBytes ||
      std::memcmp(input.data(), kXerialMagic, sizeof(kXerialMagic)) != 0) {
    if (absl::Status status = UnsnappyBlock(input, max_bytes, &out);
        !status.ok()) {
      return status;
    }
    return out;
  }
  input.remove_prefix(kXerialHeaderBytes);
  while (!input.empty()) {
    if (input.size() < 4) {
      return Corrupt(CompressionCodec::kSnappy, "a block length is cut short");
    }
    const uint32_t length = GetBigEndian32(input.data());
    input.remove_prefix(4);
    if (length > input.size()) {
      return Corrupt(CompressionCodec::kSnappy,
                     "a block is longer than what remains");
    }
    if (absl::Status status =
            UnsnappyBlock(input.substr(0, length), max_bytes, &out);
        !status.ok()) {
      return status;
    }
    input.remove_prefix(length);
  }
  return out;
}

absl::StatusOr<std::string> Snappy(absl::string_view input) {
  std::string out(kXerialMagic, sizeof(kXerialMagic));
  PutBigEndian32(&out, 1);  // version
  PutBigEndian32(&out, 1);  // compatible version
  std::string block;
  for (size_t at = 0; at < input.size(); at += kXerialBlockBytes) {
    absl::string_view piece = input.substr(at, kXerialBlockBytes);
    size_t length = snappy_max_compressed_length(piece.size());
    block.resize(length);
    if (snappy_compress(piece.data(), piece.size(), &block[0], &length) !=
        SNAPPY_OK) {
      return absl::InternalError("snappy compression failed");
    }
    PutBigEndian32(&out, static_cast<uint32_t>(length));
    out.append(block.data(), length);
  }
  return out;
}

// ---- lz4
// ---------------------------------------------------------------------

absl::StatusOr<std::string> UnLz4(absl::string_view input, size_t max_bytes) {
  LZ4F_dctx* context = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&context, LZ4F_VERSION))) {
    return Corrupt(CompressionCodec::kLz4, "lz4 could not start");
  }
  std::unique_ptr<LZ4F_dctx, size_t (*)(LZ4F_dctx*)> guard(
      context, LZ4F_freeDecompressionContext);
  std::string out;
  const char* in = input.data();
  size_t in_left = input.size();
  size_t hint = 1;
  while (in_left > 0 && hint != 0) {
    if (out.size() >= max_bytes) {
      return TooLarge(CompressionCodec::kLz4, max_bytes);
    }
    const size_t done = out.size();
    size_t room = std::min(kChunkBytes, max_bytes - done);
    out.resize(done + room);
    size_t consumed = in_left;
    hint = LZ4F_decompress(context, &out[done], &room, in, &consumed, nullptr);
    if (LZ4F_isError(hint)) {
      return Corrupt(CompressionCodec::kLz4, LZ4F_getErrorName(hint));
    }
    out.resize(done + room);
    in += consumed;
    in_left -= consumed;
    if (consumed == 0 && room == 0) {
      return Corrupt(CompressionCodec::kLz4, "the frame makes no progress");
    }
  }
  // Drain what the context still holds for an input already consumed.
  while (hint != 0) {
    if (out.size() >= max_bytes) {
      return TooLarge(CompressionCodec::kLz4, max_bytes);
    }
    const size_t done = out.size();
    size_t room = std::min(kChunkBytes, max_bytes - done);
    out.resize(done + room);
    size_t consumed = 0;
    hint = LZ4F_decompress(context, &out[done], &room, in, &consumed, nullptr);
    if (LZ4F_isError(hint)) {
      return Corrupt(CompressionCodec::kLz4, LZ4F_getErrorName(hint));
    }
    out.resize(done + room);
    if (room == 0) {
      return Corrupt(CompressionCodec::kLz4, "the frame is cut short");
    }
  }
  return out;
}

absl::StatusOr<std::string> Lz4(absl::string_view input) {
  LZ4F_preferences_t preferences{};
  preferences.frameInfo.blockSizeID = LZ4F_max64KB;  // as Kafka's clients
  preferences.frameInfo.blockMode = LZ4F_blockIndependent;
  std::string out(LZ4F_compressFrameBound(input.size(), &preferences), '\0');
  const size_t written = LZ4F_compressFrame(&out[0], out.size(), input.data(),
                                            input.size(), &preferences);
  if (LZ4F_isError(written)) {
    return absl::InternalError(
        absl::StrCat("lz4 compression failed: ", LZ4F_getErrorName(written)));
  }
  out.resize(written);
  return out;
}

// ---- zstd
// --------------------------------------------------------------------

// One decompression context per thread, reset for each frame: creating one
// per batch cost more than decompressing the batch (the cleaner decodes
// every batch of a partition).
ZSTD_DStream* ThreadZstdStream() {
  thread_local std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(
      ZSTD_createDStream(), ZSTD_freeDStream);
  if (stream == nullptr) return nullptr;
  // A frame left half read (an error, a size limit) must not leak into
  // the next one.
  if (ZSTD_isError(ZSTD_DCtx_reset(stream.get(), ZSTD_reset_session_only))) {
    return nullptr;
  }
  return stream.get();
}

absl::StatusOr<std::string> UnZstd(absl::string_view input, size_t max_bytes) {
  ZSTD_DStream* stream = ThreadZstdStream();
  if (stream == nullptr) {
    return Corrupt(CompressionCodec::kZstd, "zstd could not start");
  }
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  std::string out;
  size_t left = 1;
  while (in.pos < in.size || left != 0) {
    if (out.size() >= max_bytes) {
      return TooLarge(CompressionCodec::kZstd, max_bytes);
    }
    const size_t done = out.size();
    const size_t room = std::min(kChunkBytes, max_bytes - done);
    out.resize(done + room);
    ZSTD_outBuffer chunk{&out[done], room, 0};
    const size_t before = in.pos;
    left = ZSTD_decompressStream(stream, &chunk, &in);
    if (ZSTD_isError(left)) {
      return Corrupt(CompressionCodec::kZstd, ZSTD_getErrorName(left));
    }
    out.resize(done + chunk.pos);
    if (chunk.pos == 0 && in.pos == before) {
      return Corrupt(CompressionCodec::kZstd, "the frame is cut short");
    }
  }
  return out;
}

absl::StatusOr<std::string> Zstd(absl::string_view input) {
  std::string out(ZSTD_compressBound(input.size()), '\0');
  const size_t written = ZSTD_compress(&out[0], out.size(), input.data(),
                                       input.size(), ZSTD_CLEVEL_DEFAULT);
  if (ZSTD_isError(written)) {
    return absl::InternalError(
        absl::StrCat("zstd compression failed: ", ZSTD_getErrorName(written)));
  }
  out.resize(written);
  return out;
}

absl::Status UnknownCodec(CompressionCodec codec) {
  return StorageError(
      StorageErrorCode::kInvalidRecord,
      absl::StrCat("unknown compression codec ", static_cast<int>(codec)));
}

}  // namespace

absl::StatusOr<std::string> Decompress(CompressionCodec codec,
                                       absl::string_view input,
                                       size_t max_bytes) {
  switch (codec) {
    case CompressionCodec::kNone:
      if (input.size() > max_bytes) return TooLarge(codec, max_bytes);
      return std::string(input);
    case CompressionCodec::kGzip:
      return InflateGzip(input, max_bytes);
    case CompressionCodec::kSnappy:
      return Unsnappy(input, max_bytes);
    case CompressionCodec::kLz4:
      return UnLz4(input, max_bytes);
    case CompressionCodec::kZstd:
      return UnZstd(input, max_bytes);
  }
  return UnknownCodec(codec);
}

absl::StatusOr<std::string> Compress(CompressionCodec codec,
                                     absl::string_view input) {
  switch (codec) {
    case CompressionCodec::kNone:
      return std::string(input);
    case CompressionCodec::kGzip:
      return DeflateGzip(input);
    case CompressionCodec::kSnappy:
      return Snappy(input);
    case CompressionCodec::kLz4:
      return Lz4(input);
    case CompressionCodec::kZstd:
      return Zstd(input);
  }
  return UnknownCodec(codec);
}

}  // namespace kaas
