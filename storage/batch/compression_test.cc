// Tests of the batch codecs: round trips, the framings Kafka's clients write,
// and refusal of what does not decompress or inflates past its bound.

#include "storage/batch/compression.h"

#include <snappy-c.h>

#include <random>
#include <string>

#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::HasSubstr;

constexpr CompressionCodec kCodecs[] = {
    CompressionCodec::kGzip, CompressionCodec::kSnappy, CompressionCodec::kLz4,
    CompressionCodec::kZstd};

std::string Mixed(size_t size, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::string out;
  while (out.size() < size) {
    if (random() % 2) {
      out.append(100, static_cast<char>('a' + random() % 26));
    } else {
      for (int i = 0; i < 100; ++i) out.push_back(static_cast<char>(random()));
    }
  }
  out.resize(size);
  return out;
}

TEST(Compression, EveryCodecRoundTrips) {
  for (CompressionCodec codec : kCodecs) {
    SCOPED_TRACE(CompressionCodecName(codec));
    for (size_t size : {size_t{0}, size_t{1}, size_t{1000}, size_t{300000}}) {
      const std::string input = Mixed(size, size);
      ASSERT_OK_AND_ASSIGN(std::string compressed, Compress(codec, input));
      EXPECT_NE(compressed, input);
      ASSERT_OK_AND_ASSIGN(std::string output, Decompress(codec, compressed));
      EXPECT_TRUE(output == input) << "size " << size;
    }
  }
}

TEST(Compression, NoneIsACopy) {
  EXPECT_THAT(Compress(CompressionCodec::kNone, "abc"), IsOkAndHolds("abc"));
  EXPECT_THAT(Decompress(CompressionCodec::kNone, "abc"), IsOkAndHolds("abc"));
}

// librdkafka writes one raw snappy block; the Java clients the xerial
// framing (which Compress writes, in 32 KiB blocks).
TEST(Compression, SnappyReadsRawBlocksAndXerialFraming) {
  const std::string input = Mixed(100000, 7);
  size_t length = snappy_max_compressed_length(input.size());
  std::string raw(length, '\0');
  ASSERT_EQ(snappy_compress(input.data(), input.size(), &raw[0], &length),
            SNAPPY_OK);
  raw.resize(length);
  EXPECT_THAT(Decompress(CompressionCodec::kSnappy, raw), IsOkAndHolds(input));
  ASSERT_OK_AND_ASSIGN(std::string framed,
                       Compress(CompressionCodec::kSnappy, input));
  EXPECT_EQ(framed.substr(0, 8), std::string("\x82SNAPPY\0", 8));
}

// Codec bits on bytes that are not compressed, garbage, or a stream cut
// short: CORRUPT_MESSAGE, never a crash or a hang.
TEST(Compression, WhatDoesNotDecompressIsACorruptMessage) {
  const std::string plain = Mixed(5000, 3);
  for (CompressionCodec codec : kCodecs) {
    SCOPED_TRACE(CompressionCodecName(codec));
    EXPECT_THAT(Decompress(codec, plain),
                HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                           HasSubstr("do not decompress")));
    ASSERT_OK_AND_ASSIGN(std::string compressed, Compress(codec, plain));
    for (size_t cut : {compressed.size() / 2, compressed.size() - 1}) {
      EXPECT_THAT(Decompress(codec, compressed.substr(0, cut)),
                  HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                             ::testing::_))
          << "cut at " << cut;
    }
  }
}

// A small batch that inflates to a lot is refused at the bound, not held.
TEST(Compression, InflatingPastTheBoundIsRefused) {
  const std::string zeros(4 << 20, '\0');
  for (CompressionCodec codec : kCodecs) {
    SCOPED_TRACE(CompressionCodecName(codec));
    ASSERT_OK_AND_ASSIGN(std::string bomb, Compress(codec, zeros));
    EXPECT_LT(bomb.size(), zeros.size() / 10);
    EXPECT_THAT(Decompress(codec, bomb, 1 << 20),
                HasStorageErrorWithMessage(StorageErrorCode::kCorruptMessage,
                                           HasSubstr("inflate past 1048576")));
    EXPECT_THAT(Decompress(codec, bomb, 4 << 20), IsOkAndHolds(zeros));
  }
}

TEST(Compression, AnUnknownCodecIsAnInvalidRecord) {
  EXPECT_THAT(Decompress(static_cast<CompressionCodec>(6), "x"),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRecord,
                                         HasSubstr("unknown compression")));
}

}  // namespace
}  // namespace kaas
