// File: tools/make_batches.cc
//
// `make_batches` (testonly): writes Kafka v2 RecordBatches to stdout, made
// with //testing:batch_builder, for the end-to-end tests of `kaaslog` and by
// hand, e.g.
//   make_batches --count=5 | kaaslog append --topic=t
//   make_batches --count=3 --corrupt_batch=1 > bad.bin
//
// Batch i (from 0) has --records records with keys "key-<i>-<r>" and values
// "value-<i>-<r>" (or pseudo-random bytes with --binary_values), each with a
// header "h"="<r>"; its base timestamp is --timestamp + i. With
// --producer_id >= 0 the batches carry sequences from --base_sequence on.

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/batch/record_batch.h"
#include "testing/batch_builder.h"

ABSL_FLAG(int32_t, count, 3, "Number of data batches.");
ABSL_FLAG(int32_t, records, 2, "Records per batch.");
ABSL_FLAG(int32_t, value_bytes, 0,
          "Pad each text value with '.' to this many bytes.");
ABSL_FLAG(bool, binary_values, false,
          "Values of 16 pseudo-random bytes instead of text.");
ABSL_FLAG(int64_t, producer_id, -1, "Producer id (-1: not idempotent).");
ABSL_FLAG(int32_t, producer_epoch, 0, "Producer epoch.");
ABSL_FLAG(int32_t, base_sequence, 0, "Base sequence of the first batch.");
ABSL_FLAG(bool, transactional, false, "Mark the data batches transactional.");
ABSL_FLAG(std::string, compression, "none",
          "Compress the records (none, gzip, snappy, lz4, zstd), as a "
          "producer does.");
ABSL_FLAG(bool, codec_bits_only, false,
          "With --compression: set only the codec bits, leaving the records "
          "uncompressed (a batch a broker must refuse).");
ABSL_FLAG(std::string, end_marker, "",
          "commit or abort: append a transaction marker of the producer.");
ABSL_FLAG(int64_t, timestamp, -1,
          "Base timestamp of batch 0 (-1: now, so that the engine does not "
          "roll segments for age).");
ABSL_FLAG(int64_t, first_offset, -1,
          "If >= 0, batch i gets base offset first_offset + i * records (as "
          "the engine assigns them); else 0, as producers send.");
ABSL_FLAG(int32_t, leader_epoch, -1,
          "partitionLeaderEpoch of every batch (-1, as producers send; a "
          "leader stamps its epoch).");
ABSL_FLAG(int32_t, corrupt_batch, -1,
          "Flip a bit in the records of this batch (a CRC mismatch).");
ABSL_FLAG(int32_t, duplicate_batch, -1,
          "Write this batch twice in a row (an idempotent retry).");
ABSL_FLAG(int32_t, bad_length_batch, -1,
          "Give this batch a batchLength of 2^31-1 (framing is lost).");
ABSL_FLAG(int32_t, truncate_bytes, 0, "Drop this many bytes at the end.");

namespace kaas::test {
namespace {

int64_t Timestamp() {
  static const int64_t timestamp = absl::GetFlag(FLAGS_timestamp) >= 0
                                       ? absl::GetFlag(FLAGS_timestamp)
                                       : absl::ToUnixMillis(absl::Now());
  return timestamp;
}

std::string MakeBatch(int i, int32_t sequence) {
  BatchBuilder builder;
  builder.BaseTimestamp(Timestamp() + i)
      .Transactional(absl::GetFlag(FLAGS_transactional));
  const std::string codec = absl::GetFlag(FLAGS_compression);
  for (CompressionCodec candidate :
       {CompressionCodec::kGzip, CompressionCodec::kSnappy,
        CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    if (codec != CompressionCodecName(candidate)) continue;
    if (absl::GetFlag(FLAGS_codec_bits_only)) {
      builder.CodecBitsOnly(candidate);
    } else {
      builder.Compression(candidate);
    }
  }
  if (absl::GetFlag(FLAGS_producer_id) >= 0) {
    builder.Producer(absl::GetFlag(FLAGS_producer_id),
                     static_cast<int16_t>(absl::GetFlag(FLAGS_producer_epoch)),
                     sequence);
  }
  for (int r = 0; r < absl::GetFlag(FLAGS_records); ++r) {
    TestRecord record;
    record.key = absl::StrCat("key-", i, "-", r);
    if (absl::GetFlag(FLAGS_binary_values)) {
      std::string value;
      uint64_t state = static_cast<uint64_t>(i) * 1000003 + r + 1;
      for (int b = 0; b < 16; ++b) {
        state = state * 6364136223846793005u + 1442695040888963407u;
        value.push_back(static_cast<char>(state >> 56));
      }
      record.value = value;
    } else {
      std::string value = absl::StrCat("value-", i, "-", r);
      value.resize(std::max<size_t>(
                       value.size(),
                       static_cast<size_t>(absl::GetFlag(FLAGS_value_bytes))),
                   '.');
      record.value = value;
    }
    record.timestamp_delta = r;
    record.headers.push_back({"h", absl::StrCat(r)});
    builder.AddRecord(std::move(record));
  }
  if (absl::GetFlag(FLAGS_first_offset) >= 0) {
    builder.BaseOffset(absl::GetFlag(FLAGS_first_offset) +
                       int64_t{i} * absl::GetFlag(FLAGS_records));
  }
  builder.PartitionLeaderEpoch(absl::GetFlag(FLAGS_leader_epoch));
  std::string batch = builder.Build();
  if (i == absl::GetFlag(FLAGS_corrupt_batch)) {
    FlipBit(&batch, batch.size() - 1);
  }
  if (i == absl::GetFlag(FLAGS_bad_length_batch)) {
    OverwriteBigEndian32(&batch, batch_layout::kBatchLength, INT32_MAX);
  }
  return batch;
}

int Main() {
  std::string out;
  int32_t sequence = absl::GetFlag(FLAGS_base_sequence);
  for (int i = 0; i < absl::GetFlag(FLAGS_count); ++i) {
    std::string batch = MakeBatch(i, sequence);
    out += batch;
    if (i == absl::GetFlag(FLAGS_duplicate_batch)) out += batch;
    sequence += absl::GetFlag(FLAGS_records);
  }
  std::string marker = absl::GetFlag(FLAGS_end_marker);
  if (!marker.empty()) {
    if (marker != "commit" && marker != "abort") {
      std::cerr << "make_batches: --end_marker must be commit or abort\n";
      return 2;
    }
    std::string control = ControlBatch(
        marker == "commit" ? ControlType::kCommit : ControlType::kAbort,
        absl::GetFlag(FLAGS_producer_id),
        static_cast<int16_t>(absl::GetFlag(FLAGS_producer_epoch)),
        /*coordinator_epoch=*/0, Timestamp());
    if (absl::GetFlag(FLAGS_first_offset) >= 0) {
      SetBaseOffset(control.data(), absl::GetFlag(FLAGS_first_offset) +
                                        int64_t{absl::GetFlag(FLAGS_count)} *
                                            absl::GetFlag(FLAGS_records));
    }
    SetPartitionLeaderEpoch(control.data(), absl::GetFlag(FLAGS_leader_epoch));
    out += control;
  }
  size_t cut = static_cast<size_t>(absl::GetFlag(FLAGS_truncate_bytes));
  out.resize(out.size() > cut ? out.size() - cut : 0);
  std::cout.write(out.data(), static_cast<std::streamsize>(out.size()));
  return std::cout.good() ? 0 : 1;
}

}  // namespace
}  // namespace kaas::test

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return kaas::test::Main();
}
