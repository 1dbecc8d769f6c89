// A model check of compaction: after any seeded sequence of keyed appends
// (tombstones, compressed batches, committed and aborted transactions),
// compaction passes (with maps of random sizes), simulated power losses and
// reopens, reading the partition gives per key the latest value of a model
// built from the acknowledged records, and every acknowledged record that
// compaction may not remove yet (at or past the offset up to which it has
// read keys) is still there.
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "storage/common/offset_map.h"
#include "storage/partition/partition_testlib.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using Value = std::optional<std::string>;

struct Stored {
  std::string key;
  Value value;
};

class CompactionModelTest : public PartitionTest,
                            public ::testing::WithParamInterface<int> {
 protected:
  static PartitionConfig Config() {
    PartitionConfig config = SmallConfig();
    config.cleanup_compact = true;
    config.cleanup_delete = false;
    config.segment_bytes = 1024;
    config.checkpoint_interval_bytes = 512;
    config.delete_retention_ms = 5000;
    return config;
  }

  // offset -> record, of every record the partition serves.
  std::map<int64_t, Stored> Served(Partition& partition) {
    std::map<int64_t, Stored> out;
    const std::string bytes = ReadAll(partition, partition.LogStartOffset(),
                                      Isolation::kReadCommitted);
    for (absl::string_view rest = bytes; !rest.empty();) {
      absl::StatusOr<size_t> size = PeekBatchSize(rest);
      EXPECT_OK(size.status());
      if (!size.ok()) break;
      absl::StatusOr<RecordBatchView> batch =
          RecordBatchView::ParseStored(rest.substr(0, *size));
      EXPECT_OK(batch.status());
      if (!batch.ok()) break;
      rest.remove_prefix(*size);
      if (batch->is_control()) continue;
      absl::StatusOr<DecodedRecords> records = DecodeRecords(*batch);
      EXPECT_OK(records.status());
      if (!records.ok()) break;
      for (const Record& record : *records) {
        Stored stored;
        stored.key = std::string(record.key.value_or(""));
        if (record.value) stored.value = std::string(*record.value);
        out[batch->base_offset() + record.offset_delta] = stored;
      }
    }
    return out;
  }
};

TEST_P(CompactionModelTest, LatestValuesAndUncompactedRecordsSurvive) {
  std::mt19937_64 random(GetParam());
  // Committed (and plain) acknowledged records: offset -> record; the
  // aborted ones apart.
  std::map<int64_t, Stored> acked;
  std::set<int64_t> aborted;
  std::map<int64_t, std::string> aborted_keys;
  int64_t epoch = 1;
  int64_t keys_read_up_to = 0;
  int64_t next_producer = 100;
  auto partition = OpenLeader(epoch, Config());
  auto check = [&] {
    const std::map<int64_t, Stored> served = Served(*partition);
    std::map<std::string, Value> model, latest;
    for (const auto& [offset, record] : acked) model[record.key] = record.value;
    for (const auto& [offset, record] : served) {
      // A read_committed consumer drops aborted records (the read returns
      // their ranges); compaction removes them once it cleans past them.
      if (aborted.count(offset)) {
        ASSERT_GE(offset, keys_read_up_to) << "aborted offset " << offset;
        continue;
      }
      latest[record.key] = record.value;
    }
    for (const auto& [key, value] : model) {
      // A tombstone may be gone (after its horizon) or still there.
      if (!value.has_value() && !latest.count(key)) continue;
      if (!latest.count(key)) {
        std::string history;
        for (const auto& [offset, record] : acked) {
          if (record.key == key) {
            absl::StrAppend(&history, " acked@", offset, "=",
                            record.value.value_or("<null>"),
                            served.count(offset) ? "(served)" : "");
          }
        }
        for (int64_t offset : aborted) {
          absl::StrAppend(&history, " ab@", offset, "=", aborted_keys[offset]);
        }
        absl::StrAppend(&history, " aborted in index:");
        for (const AbortedTransaction& txn :
             partition->AbortedTransactions(0, INT64_MAX)) {
          absl::StrAppend(&history, " ", txn.producer_id, "@",
                          txn.first_offset);
        }
        // What the log holds, batch by batch, for the failure message.
        const std::string raw = ReadAll(*partition, 0);
        for (absl::string_view rest = raw; !rest.empty();) {
          const size_t size = *PeekBatchSize(rest);
          RecordBatchView batch =
              *RecordBatchView::ParseStored(rest.substr(0, size));
          rest.remove_prefix(size);
          absl::StrAppend(
              &history, "\n batch ", batch.base_offset(), "..",
              batch.last_offset(), " n=", batch.record_count(),
              " pid=", batch.producer_id(), " ctl=", batch.is_control(),
              " codec=", static_cast<int>(batch.compression()), ":");
          if (batch.is_control()) continue;
          absl::StatusOr<DecodedRecords> decoded = DecodeRecords(batch);
          for (const Record& r : *decoded) {
            absl::StrAppend(&history, " ", batch.base_offset() + r.offset_delta,
                            "=", r.key.value_or("?"));
          }
        }
        ADD_FAILURE() << key << ": keys read up to " << keys_read_up_to
                      << " lso " << partition->LastStableOffset() << " hwm "
                      << partition->HighWatermark() << " served "
                      << served.size() << " last served "
                      << (served.empty() ? -1 : served.rbegin()->first)
                      << history;
      }
      ASSERT_TRUE(latest.count(key)) << key;
      ASSERT_EQ(latest[key], value) << key;
    }
    for (const auto& [offset, record] : acked) {
      if (offset < keys_read_up_to) continue;
      ASSERT_TRUE(served.count(offset)) << "offset " << offset;
      ASSERT_EQ(served.at(offset).value, record.value) << offset;
    }
  };
  for (int step = 0; step < 160; ++step) {
    const int op = static_cast<int>(random() % 20);
    if (op < 12) {
      // Keyed records, sometimes compressed, some tombstones.
      test::BatchBuilder builder;
      builder.BaseTimestamp(1000);
      const auto codec = static_cast<CompressionCodec>(random() % 5);
      builder.Compression(codec);
      const int records = 1 + static_cast<int>(random() % 3);
      std::vector<Stored> sent;
      for (int r = 0; r < records; ++r) {
        Stored record{absl::StrCat("key", random() % 12), std::nullopt};
        if (random() % 8 != 0) record.value = absl::StrCat("v", step, "-", r);
        builder.AddRecord(absl::string_view(record.key),
                          record.value
                              ? absl::optional<absl::string_view>(*record.value)
                              : absl::nullopt);
        sent.push_back(record);
      }
      const int64_t base = AppendDurably(*partition, builder.Build(), epoch);
      for (int r = 0; r < records; ++r) acked[base + r] = sent[r];
    } else if (op < 14) {
      // A transaction of one record, committed or aborted.
      const int64_t producer = next_producer++;
      const std::string key = absl::StrCat("key", random() % 12);
      const std::string value = absl::StrCat("txn", step);
      const bool commit = random() % 2 == 0;
      const int64_t base = AppendDurably(
          *partition,
          test::BatchBuilder()
              .BaseTimestamp(1000)
              .Producer(producer, 0, 0)
              .Transactional()
              .AddRecord(absl::string_view(key), absl::string_view(value))
              .Build(),
          epoch);
      AppendDurably(*partition,
                    test::ControlBatch(
                        commit ? ControlType::kCommit : ControlType::kAbort,
                        producer, 0, 0, 1000),
                    epoch);
      if (commit) {
        acked[base] = Stored{key, value};
      } else {
        aborted.insert(base);
        aborted_keys[base] = key;
      }
    } else if (op < 17) {
      OffsetMap map(OffsetMap::kEntryBytes * (3 + random() % 40));
      Partition::CompactionRequest request;
      request.now_ms = clock().NowMillis();
      request.map = &map;
      absl::StatusOr<CompactionReport> report = partition->Compact(request);
      // A map too small for one batch is the only error expected.
      if (!report.ok()) {
        ASSERT_TRUE(HasStorageErrorCode(report.status(),
                                        StorageErrorCode::kInvalidConfig))
            << report.status();
        continue;
      }
      if (report->complete) {
        keys_read_up_to = std::max(keys_read_up_to, report->map_end);
      }
      ASSERT_NO_FATAL_FAILURE(check());
    } else if (op < 18) {
      clock().Advance(absl::Seconds(3));
    } else {
      // Power loss (everything acknowledged was durable), then a reopen.
      fs().Crash();
      partition->Abandon();
      partition.reset();
      partition = OpenLeader(++epoch, Config());
      ASSERT_NO_FATAL_FAILURE(check());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check());
}

INSTANTIATE_TEST_SUITE_P(Seeds, CompactionModelTest, ::testing::Range(1, 17));

}  // namespace
}  // namespace kaas::partition
