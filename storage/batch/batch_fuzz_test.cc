// Deterministic fuzzing of the batch parsers: thousands of mutated and
// truncated batches go through RecordBatchView::Parse/ParseHeader,
// control_type() and the record decoder. The property is "never crashes and
// never reads out of bounds"; each input lives in its own exactly-sized heap
// block so that ASan flags any read past its end.

#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "testing/batch_builder.h"

namespace kaas {
namespace {

namespace layout = batch_layout;
using ::kaas::test::BatchBuilder;
using ::kaas::test::ControlBatch;
using ::kaas::test::FixCrc;
using ::kaas::test::TestRecord;

std::vector<std::string> Seeds() {
  TestRecord with_headers;
  with_headers.key = "key";
  with_headers.value = std::string(200, 'v');
  with_headers.timestamp_delta = 1 << 20;
  with_headers.headers = {{"a", std::string("1")}, {"b", absl::nullopt}};
  return {
      BatchBuilder().AddRecord("k", "v").Build(),
      BatchBuilder()
          .Producer(9, 1, 100)
          .AddRecord(with_headers)
          .AddRecord(absl::nullopt, absl::nullopt)
          .AddRandomRecords(3, 17)
          .Build(),
      ControlBatch(ControlType::kCommit, 5, 2, 1, 1000),
      ControlBatch(ControlType::kAbort, 5, 2, 1, 1000),
      BatchBuilder()
          .Compression(CompressionCodec::kSnappy)
          .AddRecord("k", "v")
          .Build(),
  };
}

// Values that hit boundaries of the varint and length checks.
constexpr unsigned char kInterestingBytes[] = {0x00, 0x01, 0x02, 0x7e, 0x7f,
                                               0x80, 0x81, 0xfe, 0xff};

std::string Mutate(std::string batch, std::mt19937_64& rng) {
  const int kind = static_cast<int>(rng() % 6);
  switch (kind) {
    case 0: {  // flip a few bits
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips && !batch.empty(); ++i) {
        batch[rng() % batch.size()] ^= static_cast<char>(1 << (rng() % 8));
      }
      break;
    }
    case 1:  // overwrite a byte with a boundary value
      if (!batch.empty()) {
        batch[rng() % batch.size()] = static_cast<char>(
            kInterestingBytes[rng() % sizeof(kInterestingBytes)]);
      }
      break;
    case 2:  // truncate
      batch.resize(rng() % (batch.size() + 1));
      break;
    case 3: {  // append garbage
      const size_t extra = 1 + rng() % 16;
      for (size_t i = 0; i < extra; ++i)
        batch.push_back(static_cast<char>(rng()));
      break;
    }
    case 4: {  // random 32-bit header field
      if (batch.size() >= layout::kHeaderSize) {
        const size_t offset = rng() % (layout::kHeaderSize - 3);
        const uint32_t v = static_cast<uint32_t>(rng());
        for (int i = 0; i < 4; ++i)
          batch[offset + i] = static_cast<char>(v >> (8 * i));
      }
      break;
    }
    default: {  // mutate the records only, keeping the header consistent
      if (batch.size() > layout::kHeaderSize) {
        const size_t span = batch.size() - layout::kHeaderSize;
        batch[layout::kHeaderSize + rng() % span] = static_cast<char>(
            kInterestingBytes[rng() % sizeof(kInterestingBytes)]);
      }
      break;
    }
  }
  // Half of the time repair the CRC, so that mutations reach the field checks
  // and the record decoder instead of stopping at "crc mismatch".
  if (batch.size() >= layout::kCrcStart && rng() % 2 == 0) FixCrc(&batch);
  return batch;
}

// How far the inputs got; checked so that the mutations keep exercising the
// deep paths instead of all stopping at the first check.
struct Reach {
  int parsed = 0;
  int header_parsed = 0;
  int records_decoded = 0;
  int record_errors = 0;
  int control_types = 0;
};

// Runs every parser over `bytes` as an exactly-sized allocation.
void Exercise(const std::string& bytes, Reach* reach) {
  std::unique_ptr<char[]> exact(new char[bytes.size() + 1]);
  char* data = exact.get() + 1;  // `bytes` ends where the block ends
  if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
  const absl::string_view input(data, bytes.size());

  (void)PeekBatchSize(input);
  const absl::StatusOr<RecordBatchView> parsed = RecordBatchView::Parse(input);
  if (parsed.ok()) {
    ++reach->parsed;
    EXPECT_TRUE(parsed->CrcMatches());
    EXPECT_EQ(parsed->record_count(), parsed->last_offset_delta() + 1);
  }
  const absl::StatusOr<RecordBatchView> header =
      RecordBatchView::ParseHeader(input);
  if (parsed.ok()) {
    EXPECT_TRUE(header.ok());
  }
  if (!header.ok()) return;
  ++reach->header_parsed;
  // ParseHeader lets invalid field values through: the accessors and
  // decoders must cope with them.
  (void)header->last_sequence();
  (void)header->next_offset();
  if (header->control_type().ok()) ++reach->control_types;
  const absl::StatusOr<DecodedRecords> records = DecodeRecords(*header);
  if (!records.ok()) ++reach->record_errors;
  if (records.ok()) {
    ++reach->records_decoded;
    EXPECT_EQ(static_cast<int64_t>(records->size()), header->record_count());
  }
}

TEST(BatchFuzz, RandomMutationsNeverCrash) {
  std::mt19937_64 rng(0x6b616173);  // fixed seed: reproducible failures
  const std::vector<std::string> seeds = Seeds();
  Reach reach;
  for (const std::string& seed : seeds) Exercise(seed, &reach);
  constexpr int kIterations = 20000;
  for (int i = 0; i < kIterations; ++i) {
    std::string batch = seeds[rng() % seeds.size()];
    // Sometimes stack mutations.
    const int rounds = 1 + static_cast<int>(rng() % 3);
    for (int r = 0; r < rounds; ++r) batch = Mutate(std::move(batch), rng);
    Exercise(batch, &reach);
    if (HasFailure()) {
      ADD_FAILURE() << "iteration " << i;
      return;
    }
  }
  // Loose floors (the actual counts are printed): a change to Mutate that
  // makes every input fail early would otherwise go unnoticed.
  std::cout << "parsed " << reach.parsed << ", header parsed "
            << reach.header_parsed << ", records decoded "
            << reach.records_decoded << ", record errors "
            << reach.record_errors << ", control types " << reach.control_types
            << " of " << kIterations << "\n";
  EXPECT_GT(reach.parsed, kIterations / 20);
  EXPECT_GT(reach.records_decoded, kIterations / 20);
  EXPECT_GT(reach.record_errors, kIterations / 20);
  EXPECT_GT(reach.control_types, kIterations / 50);
}

TEST(BatchFuzz, EveryTruncationOfEverySeed) {
  for (const std::string& seed : Seeds()) {
    Reach reach;
    for (size_t n = 0; n <= seed.size(); ++n) {
      Exercise(seed.substr(0, n), &reach);
    }
    EXPECT_EQ(reach.parsed, 1);  // only the whole batch
  }
}

}  // namespace
}  // namespace kaas
