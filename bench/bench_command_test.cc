// RunBench end to end, in-process, with windows of milliseconds and a
// 1 MiB data set; the writer child of (c) and (d) is //bench:bench_dev. No
// timing assertions: this pins the workload's structure and the report.

#include "bench/bench_command.h"

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/str_split.h"
#include "bench/test_json.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

using test::JsonValue;
using test::ParseJson;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class BenchCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = fs::JoinPath(::testing::TempDir(), "bench_command_test");
    ASSERT_OK(fs::RemoveTree(fs_, data_dir_));
  }
  void TearDown() override { ASSERT_OK(fs::RemoveTree(fs_, data_dir_)); }

  // Tiny but complete: every scenario, every case.
  BenchOptions TinyOptions() const {
    BenchOptions options;
    options.data_dir = data_dir_;
    options.seconds = absl::Milliseconds(30);
    options.warmup_seconds = absl::Milliseconds(10);
    options.data_set_bytes_for_test = 1 << 20;
    options.partition_counts_for_test = {1, 3};
    options.self_executable =
        fs::JoinPath(std::getenv("TEST_SRCDIR"), std::getenv("TEST_WORKSPACE"),
                     "bench", "bench_dev");
    return options;
  }

  int Run(const BenchOptions& options) {
    out_.str("");
    progress_.str("");
    return RunBench(options, out_, progress_);
  }

  fs::PosixFileSystem fs_;
  std::string data_dir_;
  std::ostringstream out_;
  std::ostringstream progress_;
};

constexpr const char* kRowFields[] = {
    "scenario",
    "name",
    "batch",
    "producers",
    "flush_interval",
    "acks",
    "io",
    "records",
    "close",
    "cache",
    "batches_per_s",
    "mb_per_s",
    "p50_us",
    "p99_us",
    "p999_us",
    "fsyncs_per_s",
    "batches_per_fsync",
    "open_ms",
    "takeover_ms",
    "recovery_scanned_bytes",
    "hwm_ok",
    "ratio",
    "ratio_to",
    "adjacent_fdatasync_ops_per_s",
    "adjacent_ratio",
    "partitions",
    "producers_per_partition",
    "open_fds",
    "threads",
    "rss_bytes_per_partition",
    "path",
    "sendfile_mb_per_s",
    "error",
};

bool IsNumber(const JsonValue& value) {
  return value.kind == JsonValue::Kind::kNumber;
}

TEST_F(BenchCommandTest, RunsEveryCaseAndEmitsOneValidJsonObject) {
  BenchOptions options = TinyOptions();
  options.format = "json";
  ASSERT_EQ(Run(options), 0) << progress_.str();

  ASSERT_OK_AND_ASSIGN(JsonValue json, ParseJson(out_.str()));
  ASSERT_EQ(json.kind, JsonValue::Kind::kObject);
  const JsonValue& raw = json.object.at("raw");
  for (const char* field :
       {"fdatasync_ops_per_s", "fdatasync_p50_us", "seq_write_mb_per_s",
        "seq_read_warm_mb_per_s", "seq_read_cold_mb_per_s",
        "fdatasync_ops_per_s_t4", "fdatasync_ops_per_s_t16",
        "fdatasync_ops_per_s_t64", "direct_write_mb_per_s"}) {
    ASSERT_TRUE(raw.object.count(field)) << field;
    EXPECT_TRUE(IsNumber(raw.object.at(field))) << field;
  }

  const std::vector<JsonValue>& rows = json.object.at("rows").array;
  // (a) 2 write paths x 2 sizes x 4 producer counts, (b) 2 x 3 (flush 1,
  // never, never with record validation), (c) 3, (d) 7, (e) 2 partition
  // counts x 2 producer counts per partition, (f) 2 sizes x 2 cache states x
  // 2 paths.
  ASSERT_EQ(rows.size(), 44u);
  std::map<std::string, int> per_scenario;
  std::set<std::string> names;
  for (const JsonValue& row : rows) {
    for (const char* field : kRowFields) {
      ASSERT_TRUE(row.object.count(field)) << field;
    }
    const std::string scenario = row.object.at("scenario").string;
    const std::string name = row.object.at("name").string;
    ++per_scenario[scenario];
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    EXPECT_TRUE(row.object.at("error").is_null()) << name;
    EXPECT_TRUE(IsNumber(row.object.at("ratio"))) << name;
    // Only the 1-producer acks=all row is probed around.
    EXPECT_EQ(IsNumber(row.object.at("adjacent_ratio")), name == "(a) 1KiB P=1")
        << name;
    if (scenario == "e") {
      for (const char* field :
           {"producers", "partitions", "producers_per_partition",
            "batches_per_s", "p99_us", "fsyncs_per_s", "open_fds", "threads",
            "rss_bytes_per_partition"}) {
        EXPECT_TRUE(IsNumber(row.object.at(field))) << name << " " << field;
      }
      EXPECT_EQ(row.object.at("acks").string, "all");
      EXPECT_EQ(row.object.at("ratio_to").string, "fdatasync ops/s, 64 files");
    } else {
      for (const char* field :
           {"partitions", "producers_per_partition", "open_fds", "threads",
            "rss_bytes_per_partition"}) {
        EXPECT_TRUE(row.object.at(field).is_null()) << name << " " << field;
      }
    }
    if (scenario == "e") {
      // Checked above.
    } else if (scenario == "a" || scenario == "b") {
      for (const char* field :
           {"producers", "flush_interval", "batches_per_s", "mb_per_s",
            "p50_us", "p99_us", "p999_us", "fsyncs_per_s"}) {
        EXPECT_TRUE(IsNumber(row.object.at(field))) << name << " " << field;
      }
      EXPECT_EQ(row.object.at("acks").string, scenario == "a" ? "all" : "1");
      if (scenario == "a") {
        // Both write paths, the direct one named so.
        EXPECT_EQ(
            row.object.at("io").string,
            name.find("direct") != std::string::npos ? "direct" : "buffered")
            << name;
      } else {
        EXPECT_TRUE(row.object.at("io").is_null()) << name;
      }
      if (scenario == "b") {
        EXPECT_EQ(row.object.at("records").string,
                  name.find("validate") != std::string::npos ? "on" : "off")
            << name;
      }
      EXPECT_TRUE(row.object.at("open_ms").is_null()) << name;
      EXPECT_TRUE(row.object.at("hwm_ok").is_null()) << name;
      EXPECT_TRUE(row.object.at("cache").is_null()) << name;
    } else {
      EXPECT_TRUE(IsNumber(row.object.at("mb_per_s"))) << name;
      EXPECT_TRUE(row.object.at("hwm_ok").boolean) << name;
      EXPECT_TRUE(row.object.at("producers").is_null()) << name;
      EXPECT_TRUE(row.object.at("p50_us").is_null()) << name;
      EXPECT_THAT(row.object.at("cache").string,
                  ::testing::AnyOf("warm", "cold"));
    }
    if (scenario == "f") {
      EXPECT_THAT(row.object.at("path").string,
                  ::testing::AnyOf("copy", "zero-copy"));
      EXPECT_TRUE(IsNumber(row.object.at("sendfile_mb_per_s"))) << name;
      EXPECT_EQ(row.object.at("ratio_to").string, "raw sendfile MB/s");
    } else {
      EXPECT_TRUE(row.object.at("path").is_null()) << name;
      EXPECT_TRUE(row.object.at("sendfile_mb_per_s").is_null()) << name;
    }
    if (scenario == "d") {
      EXPECT_TRUE(IsNumber(row.object.at("open_ms"))) << name;
      EXPECT_TRUE(IsNumber(row.object.at("takeover_ms"))) << name;
      EXPECT_TRUE(IsNumber(row.object.at("recovery_scanned_bytes"))) << name;
      EXPECT_THAT(row.object.at("close").string,
                  ::testing::AnyOf("clean", "crash"));
    }
  }
  EXPECT_EQ(per_scenario["a"], 16);
  EXPECT_EQ(per_scenario["b"], 6);
  EXPECT_EQ(per_scenario["c"], 3);
  EXPECT_EQ(per_scenario["d"], 7);
  EXPECT_EQ(per_scenario["e"], 4);
  EXPECT_EQ(per_scenario["f"], 8);

  // One progress line per case, plus the raw baselines.
  std::vector<std::string> lines =
      absl::StrSplit(progress_.str(), '\n', absl::SkipEmpty());
  int progress_lines = 0;
  for (const std::string& line : lines) {
    progress_lines += absl::StartsWith(line, "[bench] ");
  }
  EXPECT_EQ(progress_lines, 45) << progress_.str();

  // The data dir did not exist: everything, it included, is removed.
  EXPECT_THAT(fs_.Exists(data_dir_), ::kaas::test::IsOkAndHolds(false));
}

TEST_F(BenchCommandTest, TableShowsOnlyTheSelectedScenarios) {
  BenchOptions options = TinyOptions();
  options.scenarios = {"b", "raw"};
  ASSERT_EQ(Run(options), 0) << progress_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Raw device baselines"));
  EXPECT_THAT(out_.str(), HasSubstr("(b) acks=1, single producer"));
  EXPECT_THAT(out_.str(), HasSubstr("x seq write MB/s"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("(a) acks=all")));
  EXPECT_THAT(out_.str(), Not(HasSubstr("(c) sequential read")));
}

TEST_F(BenchCommandTest, AnExistingDataDirIsLeftAsItWas) {
  ASSERT_OK(fs_.CreateDirs(data_dir_));
  ASSERT_OK(fs::AtomicReplaceFile(fs_, fs::JoinPath(data_dir_, "mine"), "x"));
  BenchOptions options = TinyOptions();
  options.scenarios = {"b"};
  ASSERT_EQ(Run(options), 0) << progress_.str();
  EXPECT_THAT(fs_.ListDir(data_dir_),
              ::kaas::test::IsOkAndHolds(::testing::ElementsAre("mine")));
}

TEST_F(BenchCommandTest, BadOptionsExitWithTwo) {
  struct Case {
    std::function<void(BenchOptions&)> change;
    std::string message;
  };
  const Case cases[] = {
      {[](BenchOptions& o) { o.scenarios = {"z"}; }, "unknown scenario \"z\""},
      {[](BenchOptions& o) { o.format = "xml"; }, "unknown format \"xml\""},
      {[](BenchOptions& o) { o.seconds = absl::ZeroDuration(); }, "window"},
      {[](BenchOptions& o) { o.warmup_seconds = absl::Seconds(-1); },
       "warm-up"},
      {[](BenchOptions& o) { o.data_dir = ""; }, "data dir"},
      {[](BenchOptions& o) {
         o.scenarios = {"d"};
         o.self_executable = "";
       },
       "self_executable"},
  };
  for (const Case& c : cases) {
    BenchOptions options = TinyOptions();
    c.change(options);
    EXPECT_EQ(Run(options), 2) << c.message;
    EXPECT_THAT(progress_.str(), HasSubstr(c.message));
    EXPECT_THAT(out_.str(), IsEmpty());
  }
  EXPECT_THAT(fs_.Exists(data_dir_), ::kaas::test::IsOkAndHolds(false));
}

TEST_F(BenchCommandTest, AFailingChildFailsItsRowsAndTheRun) {
  BenchOptions options = TinyOptions();
  options.scenarios = {"c"};
  options.self_executable = "/bin/false";
  options.format = "json";
  EXPECT_EQ(Run(options), 1);
  ASSERT_OK_AND_ASSIGN(JsonValue json, ParseJson(out_.str()));
  ASSERT_EQ(json.object.at("rows").array.size(), 3u);
  for (const JsonValue& row : json.object.at("rows").array) {
    EXPECT_THAT(row.object.at("error").string, HasSubstr("/bin/false"));
  }
  EXPECT_THAT(progress_.str(), HasSubstr("FAILED"));
}

}  // namespace
}  // namespace kaas::bench
