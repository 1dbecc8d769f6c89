// File: testing/torture/torture_workload.cc

#include "testing/torture/torture_workload.h"

#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "glog/logging.h"
#include "storage/batch/record.h"
#include "storage/batch/records.h"
#include "testing/batch_builder.h"

namespace kaas::torture {
namespace {

// Base timestamp of every writer's unit 0; unit n is stamped one ms later
// per unit, so timestamps rise within each writer.
constexpr int64_t kBaseTimestampMs = 1'750'000'000'000;

// A seed for the pseudo-random parts of unit n of writer w.
uint64_t UnitSeed(const Writer& writer, int64_t n) {
  return (static_cast<uint64_t>(writer.index) << 40) ^
         static_cast<uint64_t>(n) ^ 0x9e3779b97f4a7c15ULL;
}

}  // namespace

absl::string_view WriterKindName(WriterKind kind) {
  switch (kind) {
    case WriterKind::kPlain:
      return "plain";
    case WriterKind::kIdempotent:
      return "idempotent";
    case WriterKind::kTransactional:
      return "transactional";
  }
  return "?";
}

int64_t Writer::producer_id() const {
  return kind == WriterKind::kPlain ? -1 : kFirstProducerId + index;
}

std::vector<Writer> MakeWriters(int count, int partitions) {
  CHECK_GE(count, 1);
  CHECK_GE(partitions, 1);
  std::vector<Writer> writers;
  for (int w = 0; w < count; ++w) {
    Writer writer;
    writer.index = w;
    writer.kind = static_cast<WriterKind>(w % 3);
    writer.partition = w % partitions;
    writer.records = 1 + w % 4;
    writers.push_back(writer);
  }
  return writers;
}

Unit UnitOf(const Writer& writer, int64_t n) {
  Unit unit;
  if (writer.kind != WriterKind::kTransactional) {
    unit.data_index = n;
    return unit;
  }
  constexpr int64_t kPeriod = kTransactionBatches + 1;
  unit.marker = n % kPeriod == kTransactionBatches;
  unit.data_index = n - n / kPeriod;
  const int64_t transaction = n / kPeriod;
  unit.marker_type =
      transaction % 3 == 2 ? ControlType::kAbort : ControlType::kCommit;
  return unit;
}

std::string UnitBytes(const Writer& writer, int64_t n) {
  const Unit unit = UnitOf(writer, n);
  const int64_t timestamp = kBaseTimestampMs + n;
  if (unit.marker) {
    return test::ControlBatch(unit.marker_type, writer.producer_id(),
                              /*producer_epoch=*/0, /*coordinator_epoch=*/0,
                              timestamp);
  }
  test::BatchBuilder builder;
  builder.BaseTimestamp(timestamp);
  if (writer.kind != WriterKind::kPlain) {
    builder.Producer(writer.producer_id(), /*producer_epoch=*/0,
                     static_cast<int32_t>(unit.data_index * writer.records));
  }
  if (writer.kind == WriterKind::kTransactional) builder.Transactional();
  std::mt19937_64 random(UnitSeed(writer, n));
  for (int i = 0; i < writer.records; ++i) {
    std::string value(16 + random() % 600, '\0');
    for (char& c : value) c = static_cast<char>(random());
    builder.AddRecord(absl::StrCat("w", writer.index, ".", n, ".", i), value,
                      /*timestamp_delta=*/i);
  }
  return builder.Build();
}

std::optional<UnitId> IdentifyDataBatch(const RecordBatchView& batch) {
  if (batch.is_control()) return std::nullopt;
  absl::StatusOr<RecordReader> reader = RecordReader::Create(batch);
  if (!reader.ok()) return std::nullopt;
  Record record;
  if (!reader->Next(&record) || !record.key.has_value()) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(*record.key, '.');
  UnitId id;
  if (parts.size() != 3 || !absl::ConsumePrefix(&parts[0], "w") ||
      !absl::SimpleAtoi(parts[0], &id.writer) ||
      !absl::SimpleAtoi(parts[1], &id.n) || id.writer < 0 || id.n < 0) {
    return std::nullopt;
  }
  return id;
}

}  // namespace kaas::torture
