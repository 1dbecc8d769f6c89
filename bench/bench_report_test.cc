#include "bench/bench_report.h"

#include <string>

#include "bench/test_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

using test::JsonValue;
using test::ParseJson;
using ::testing::HasSubstr;
using ::testing::Not;

std::string RoundTrip(absl::string_view text) {
  absl::StatusOr<JsonValue> value = ParseJson(JsonQuote(text));
  EXPECT_TRUE(value.ok()) << value.status() << " for " << JsonQuote(text);
  return value.ok() ? value->string : "";
}

TEST(JsonQuote, EscapesWhatJsonRequires) {
  const std::string hostile = std::string("a\"b\\c/\n\r\t\b\f") + '\x01' +
                              '\x1f' + '\x7f' + std::string(1, '\0') + "end";
  EXPECT_EQ(RoundTrip(hostile), hostile);
}

TEST(JsonQuote, KeepsUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(RoundTrip("caf\xC3\xA9 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xF0\x9F\x98\x80");
  // A lone continuation byte, a truncated sequence, an overlong form and a
  // UTF-16 surrogate encoded in UTF-8 are each replaced by U+FFFD.
  EXPECT_EQ(RoundTrip("a\x80z"), "a\xEF\xBF\xBDz");
  EXPECT_EQ(RoundTrip("a\xE2\x82"), "a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(RoundTrip("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(RoundTrip("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

BenchRow Row(std::string scenario, std::string batch) {
  BenchRow row;
  row.scenario = std::move(scenario);
  row.name = "row";
  row.batch = std::move(batch);
  row.batches_per_s = 1000;
  row.mb_per_s = 100;
  return row;
}

RawBaselines Raw() {
  RawBaselines raw;
  raw.fdatasync_ops_per_s = 2000;
  raw.fdatasync_p50_us = 300;
  raw.seq_write_mb_per_s = 200;
  raw.seq_read_warm_mb_per_s = 1000;
  raw.seq_read_cold_mb_per_s = 400;
  return raw;
}

TEST(RatioToBaseline, PicksTheMatchingBaseline) {
  BenchRow acks_all_small = Row("a", "1KiB");
  acks_all_small.acks = "all";
  std::optional<Ratio> ratio = RatioToBaseline(acks_all_small, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.5);
  EXPECT_EQ(ratio->basis, "fdatasync ops/s");

  BenchRow acks_all_large = Row("a", "16KiB");
  acks_all_large.acks = "all";
  ratio = RatioToBaseline(acks_all_large, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.5);
  EXPECT_EQ(ratio->basis, "seq write MB/s");

  // With direct I/O: the raw O_DIRECT write, where the run measured one.
  acks_all_large.io = "direct";
  RawBaselines with_direct = Raw();
  with_direct.direct_write_mb_per_s = 400;
  ratio = RatioToBaseline(acks_all_large, with_direct);
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.25);
  EXPECT_EQ(ratio->basis, "O_DIRECT seq write MB/s");
  ratio = RatioToBaseline(acks_all_large, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_EQ(ratio->basis, "seq write MB/s");

  BenchRow acks_one = Row("b", "1KiB");
  acks_one.acks = "1";
  ratio = RatioToBaseline(acks_one, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_EQ(ratio->basis, "seq write MB/s");

  BenchRow cold_read = Row("c", "16KiB");
  cold_read.cache = "cold";
  ratio = RatioToBaseline(cold_read, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.25);
  EXPECT_EQ(ratio->basis, "seq read cold MB/s");

  BenchRow warm_reopen = Row("d", "16KiB");
  warm_reopen.cache = "warm";
  ratio = RatioToBaseline(warm_reopen, Raw());
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.1);
  EXPECT_EQ(ratio->basis, "seq read warm MB/s");
}

TEST(RatioToBaseline, NoneWithoutBaselineOrAfterFailure) {
  BenchRow row = Row("c", "16KiB");
  row.cache = "warm";
  EXPECT_FALSE(RatioToBaseline(row, std::nullopt).has_value());
  row.error = "boom";
  EXPECT_FALSE(RatioToBaseline(row, Raw()).has_value());
  RawBaselines zero;
  BenchRow fine = Row("c", "16KiB");
  EXPECT_FALSE(RatioToBaseline(fine, zero).has_value());
}

// The 1-producer row is also compared with the raw rate measured around it.
TEST(RatioToAdjacentBaseline, UsesTheProbesAroundTheRow) {
  BenchRow row = Row("a", "1KiB");
  row.acks = "all";
  row.producers = 1;
  EXPECT_FALSE(RatioToAdjacentBaseline(row).has_value());
  row.adjacent_fdatasync_ops_per_s = 1250;
  std::optional<Ratio> ratio = RatioToAdjacentBaseline(row);
  ASSERT_TRUE(ratio.has_value());
  EXPECT_DOUBLE_EQ(ratio->value, 0.8);

  BenchReport report;
  report.raw = Raw();
  report.rows.push_back(row);
  EXPECT_THAT(RenderTable(report),
              HasSubstr("0.50x fdatasync ops/s (0.80x the 1250 ops/s "
                        "measured around it)"));
  ASSERT_OK_AND_ASSIGN(JsonValue json, ParseJson(RenderJson(report)));
  const auto& object = json.object.at("rows").array[0].object;
  EXPECT_DOUBLE_EQ(object.at("adjacent_fdatasync_ops_per_s").number, 1250);
  EXPECT_DOUBLE_EQ(object.at("adjacent_ratio").number, 0.8);

  row.error = "boom";
  EXPECT_FALSE(RatioToAdjacentBaseline(row).has_value());
  row.error.reset();
  row.adjacent_fdatasync_ops_per_s = 0;
  EXPECT_FALSE(RatioToAdjacentBaseline(row).has_value());
}

TEST(RenderJson, NullsWhatDoesNotApplyAndEscapesErrors) {
  BenchReport report;
  BenchRow failed = Row("d", "16KiB");
  failed.batches_per_s.reset();
  failed.mb_per_s = std::numeric_limits<double>::infinity();
  failed.error = "open \"/d/\xFF\": \n boom";
  report.rows.push_back(failed);
  ASSERT_OK_AND_ASSIGN(JsonValue json, ParseJson(RenderJson(report)));
  EXPECT_TRUE(json.object.at("raw").is_null());
  ASSERT_EQ(json.object.at("rows").array.size(), 1u);
  const auto& row = json.object.at("rows").array[0].object;
  EXPECT_TRUE(row.at("batches_per_s").is_null());
  EXPECT_TRUE(row.at("mb_per_s").is_null());  // not finite
  EXPECT_TRUE(row.at("producers").is_null());
  EXPECT_TRUE(row.at("ratio").is_null());
  EXPECT_TRUE(row.at("adjacent_ratio").is_null());
  EXPECT_EQ(row.at("error").string, "open \"/d/\xEF\xBF\xBD\": \n boom");
}

TEST(RenderTable, MirrorsTheWorkloadSections) {
  BenchReport report;
  report.raw = Raw();
  BenchRow a = Row("a", "1KiB");
  a.acks = "all";
  a.producers = 4;
  report.rows.push_back(a);
  BenchRow d = Row("d", "16KiB");
  d.close = "crash";
  d.flush_interval = 0;
  d.cache = "cold";
  d.error = "the child died";
  report.rows.push_back(d);
  const std::string table = RenderTable(report);
  EXPECT_THAT(table, HasSubstr("Raw device baselines"));
  EXPECT_THAT(table, HasSubstr("(a) acks=all throughput"));
  EXPECT_THAT(table, HasSubstr("0.50x fdatasync ops/s"));
  EXPECT_THAT(table, HasSubstr("(d) reopen"));
  EXPECT_THAT(table, HasSubstr("FAILED: the child died"));
  EXPECT_THAT(table, Not(HasSubstr("(b) acks=1")));  // no rows, no table
}

}  // namespace
}  // namespace kaas::bench
