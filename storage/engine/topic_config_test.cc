#include "storage/engine/topic_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/partition_config.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas {

// Failure messages show the overrides as their JSON.
void PrintTo(const TopicConfigOverrides& overrides, std::ostream* os) {
  *os << TopicConfigToJson(overrides);
}

namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::StartsWith;

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

constexpr absl::string_view kFile = "/data/orders/.config.json";

// (Empty overrides are compared with EXPECT_EQ, not IsOkAndHolds: copying a
// temporary TopicConfigOverrides into a matcher trips GCC 12's
// -Wmaybe-uninitialized false positive at -O1.)

// A kInvalidConfig error whose message matches `message_matcher`.
template <typename M>
auto ConfigError(M message_matcher) {
  return AllOf(StatusIs(absl::StatusCode::kInvalidArgument, message_matcher),
               HasStorageError(StorageErrorCode::kInvalidConfig));
}

absl::StatusOr<TopicConfigOverrides> Parse(absl::string_view json) {
  return ParseTopicConfigJson(json, kFile);
}

// ---- ParseTopicConfigJson: keys and types ---------------------------------

TEST(ParseTopicConfigJson, EmptyObjectOverridesNothing) {
  ASSERT_OK_AND_ASSIGN(TopicConfigOverrides overrides, Parse(" {} "));
  EXPECT_EQ(overrides, TopicConfigOverrides());
}

TEST(ParseTopicConfigJson, ParsesEveryKey) {
  ASSERT_OK_AND_ASSIGN(
      TopicConfigOverrides overrides,
      Parse(R"({"retentionMs": 86400000, "retentionBytes": 1073741824,
                "segmentBytes": 268435456, "segmentMs": 3600000,
                "cleanupPolicy": "compact,delete", "minCompactionLagMs": 5,
                "deleteRetentionMs": 6, "flushMessages": 7,
                "maxMessageBytes": 1048576, "validateRecords": true})"));
  EXPECT_EQ(overrides.retention_ms, 86400000);
  EXPECT_EQ(overrides.retention_bytes, 1073741824);
  EXPECT_EQ(overrides.segment_bytes, 268435456);
  EXPECT_EQ(overrides.segment_ms, 3600000);
  EXPECT_EQ(overrides.cleanup_policy, "compact,delete");
  EXPECT_EQ(overrides.min_compaction_lag_ms, 5);
  EXPECT_EQ(overrides.delete_retention_ms, 6);
  EXPECT_EQ(overrides.flush_messages, 7);
  EXPECT_EQ(overrides.max_message_bytes, 1048576);
  EXPECT_EQ(overrides.validate_records, true);
  EXPECT_TRUE(ApplyTopicConfig(PartitionConfig(), overrides).validate_records);
  EXPECT_EQ(TopicConfigToJson(overrides).find("\"validateRecords\":true") !=
                std::string::npos,
            true);
}

TEST(ParseTopicConfigJson, AbsentKeysStayUnset) {
  ASSERT_OK_AND_ASSIGN(TopicConfigOverrides overrides,
                       Parse(R"({"retentionMs": 0})"));
  TopicConfigOverrides expected;
  expected.retention_ms = 0;  // 0 is set, not absent
  EXPECT_EQ(overrides, expected);
}

TEST(ParseTopicConfigJson, NullLeavesKeyUnset) {
  ASSERT_OK_AND_ASSIGN(
      TopicConfigOverrides overrides,
      Parse(R"({"retentionMs": null, "cleanupPolicy": null})"));
  EXPECT_EQ(overrides, TopicConfigOverrides());
}

TEST(ParseTopicConfigJson, AcceptsIntegersWrittenAsStrings) {
  ASSERT_OK_AND_ASSIGN(TopicConfigOverrides overrides,
                       Parse(R"({"retentionBytes": "9223372036854775807"})"));
  EXPECT_EQ(overrides.retention_bytes, kInt64Max);
}

TEST(ParseTopicConfigJson, UnknownKeyIsNamed) {
  EXPECT_THAT(
      Parse(R"({"retentionMs": 1, "retentionMx": 2})"),
      ConfigError(StartsWith(
          "/data/orders/.config.json: unknown field \"retentionMx\" (known "
          "fields: retentionMs, retentionBytes, segmentBytes, segmentMs, "
          "cleanupPolicy, minCompactionLagMs, deleteRetentionMs, "
          "flushMessages, maxMessageBytes, validateRecords, "
          "maxCompactionLagMs, minCleanableDirtyRatio)")));
}

TEST(ParseTopicConfigJson, KafkaDottedNameIsUnknown) {
  EXPECT_THAT(Parse(R"({"retention.ms": 1})"),
              ConfigError(HasSubstr("unknown field \"retention.ms\"")));
}

TEST(ParseTopicConfigJson, WrongTypeIsNamed) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"retentionMs": "1d"})",
       "field retentionMs: expected a 64-bit integer, got \"1d\""},
      {R"({"segmentBytes": true})",
       "field segmentBytes: expected a 64-bit integer, got true"},
      {R"({"flushMessages": 1.5})",
       "field flushMessages: expected a 64-bit integer, got 1.5"},
      {R"({"segmentMs": [1]})",
       "field segmentMs: expected a 64-bit integer, got a list"},
      {R"({"maxMessageBytes": {"value": 1}})",
       "field maxMessageBytes: expected a 64-bit integer, got an object"},
      {R"({"cleanupPolicy": 5})",
       "field cleanupPolicy: expected a string, got 5"},
      {R"({"cleanupPolicy": ["delete"]})",
       "field cleanupPolicy: expected a string, got a list"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THAT(Parse(c.json),
                ConfigError(absl::StrCat(kFile, ": ", c.message)));
  }
}

TEST(ParseTopicConfigJson, IntegerBeyondInt64IsNamed) {
  EXPECT_THAT(Parse(R"({"retentionBytes": 9223372036854775808})"),
              ConfigError(HasSubstr(
                  "field retentionBytes: expected a 64-bit integer, got")));
}

TEST(ParseTopicConfigJson, KeyGivenTwiceIsNamed) {
  EXPECT_THAT(Parse(R"({"segmentMs": 1, "segmentMs": 2})"),
              ConfigError(absl::StrCat(kFile, ": field segmentMs: set twice")));
}

TEST(ParseTopicConfigJson, NonObjectIsRejected) {
  for (const char* json : {"", " \n ", "[]", "42", "\"x\"", "null"}) {
    SCOPED_TRACE(json);
    EXPECT_THAT(Parse(json), ConfigError(StartsWith(absl::StrCat(
                                 kFile, ": expected a JSON object"))));
  }
}

TEST(ParseTopicConfigJson, SyntaxErrorNamesTheFile) {
  for (const char* json : {R"({"retentionMs": 1)", R"({"retentionMs": 1} x)",
                           R"({"retentionMs": 0x10})"}) {
    SCOPED_TRACE(json);
    EXPECT_THAT(
        Parse(json),
        ConfigError(StartsWith(absl::StrCat(kFile, ": invalid JSON: "))));
  }
}

// Hostile nesting: protobuf's parse into generic JSON values needs time
// quadratic in the depth; the parse into the flat schema does not.
TEST(ParseTopicConfigJson, DeeplyNestedValueIsRejected) {
  const std::string nested =
      std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(Parse(absl::StrCat(R"({"segmentMs": )", nested, "}")),
              ConfigError(HasSubstr("field segmentMs: expected")));
  EXPECT_THAT(Parse(absl::StrCat(R"({"nested": )", nested, "}")),
              ConfigError(HasSubstr("unknown field \"nested\"")));
}

// ---- ParseTopicConfigJson: value ranges ------------------------------------

struct RangeCase {
  const char* key;
  int64_t lowest_valid;
  int64_t highest_valid;
};

// Every integer key at both ends of its range, and one step beyond each end
// that is not the end of int64.
TEST(ParseTopicConfigJson, EnforcesEachRangeAtItsBoundaries) {
  const RangeCase cases[] = {
      {"retentionMs", -1, kInt64Max},
      {"retentionBytes", -1, kInt64Max},
      {"segmentBytes", 1024, 2147483647},
      {"segmentMs", kInt64Min, kInt64Max},
      {"minCompactionLagMs", 0, kInt64Max},
      {"deleteRetentionMs", 0, kInt64Max},
      {"flushMessages", kInt64Min, kInt64Max},
      {"maxMessageBytes", 1, kInt64Max},
  };
  for (const RangeCase& c : cases) {
    SCOPED_TRACE(c.key);
    EXPECT_OK(Parse(absl::StrCat("{\"", c.key, "\": ", c.lowest_valid, "}")));
    EXPECT_OK(Parse(absl::StrCat("{\"", c.key, "\": ", c.highest_valid, "}")));
    if (c.lowest_valid != kInt64Min) {
      const int64_t below = c.lowest_valid - 1;
      EXPECT_THAT(
          Parse(absl::StrCat("{\"", c.key, "\": ", below, "}")),
          ConfigError(absl::StrCat(kFile, ": field ", c.key, ": ", below,
                                   " is below the minimum ", c.lowest_valid)));
    }
    if (c.highest_valid != kInt64Max) {
      const int64_t above = c.highest_valid + 1;
      EXPECT_THAT(
          Parse(absl::StrCat("{\"", c.key, "\": ", above, "}")),
          ConfigError(absl::StrCat(kFile, ": field ", c.key, ": ", above,
                                   " is above the maximum ", c.highest_valid)));
    }
  }
}

TEST(ParseTopicConfigJson, AcceptsEachCleanupPolicy) {
  for (const char* policy :
       {"delete", "compact", "compact,delete", "delete,compact"}) {
    SCOPED_TRACE(policy);
    EXPECT_THAT(
        Parse(absl::StrCat(R"({"cleanupPolicy": ")", policy, "\"}")),
        IsOkAndHolds(::testing::Field(&TopicConfigOverrides::cleanup_policy,
                                      Optional(std::string(policy)))));
  }
}

TEST(ParseTopicConfigJson, RejectsOtherCleanupPolicies) {
  for (const char* policy : {"", "Delete", "compact, delete", "delete,",
                             "delete,delete", "compact,delete,compact"}) {
    SCOPED_TRACE(policy);
    EXPECT_THAT(
        Parse(absl::StrCat(R"({"cleanupPolicy": ")", policy, "\"}")),
        ConfigError(absl::StrCat(
            kFile, ": field cleanupPolicy: \"", policy,
            "\" is not one of \"delete\", \"compact\", \"compact,delete\", "
            "\"delete,compact\"")));
  }
}

// ---- TopicConfigToJson -----------------------------------------------------

TEST(TopicConfigToJson, NoOverridesIsAnEmptyObject) {
  EXPECT_EQ(TopicConfigToJson(TopicConfigOverrides()), "{}");
}

TEST(TopicConfigToJson, WritesSetKeysInDeclarationOrderAsPlainNumbers) {
  TopicConfigOverrides overrides;
  overrides.max_message_bytes = 1048576;
  overrides.cleanup_policy = "compact,delete";
  overrides.retention_ms = -1;
  EXPECT_EQ(TopicConfigToJson(overrides),
            R"({"retentionMs":-1,"cleanupPolicy":"compact,delete",)"
            R"("maxMessageBytes":1048576})");
}

TEST(TopicConfigToJson, EscapesStrings) {
  TopicConfigOverrides overrides;
  overrides.cleanup_policy = "a\"b\\c\n";
  EXPECT_EQ(TopicConfigToJson(overrides),
            R"({"cleanupPolicy":"a\"b\\c\u000a"})");
}

TEST(TopicConfigToJson, RoundTripsThroughParse) {
  TopicConfigOverrides overrides;
  overrides.retention_ms = 0;
  overrides.retention_bytes = kInt64Max;
  overrides.segment_bytes = 1024;
  overrides.segment_ms = kInt64Min;
  overrides.cleanup_policy = "delete,compact";
  overrides.min_compaction_lag_ms = 0;
  overrides.delete_retention_ms = 86400000;
  overrides.flush_messages = -3;
  overrides.max_message_bytes = 1;
  EXPECT_THAT(Parse(TopicConfigToJson(overrides)), IsOkAndHolds(overrides));
}

// ---- ApplyTopicConfig ------------------------------------------------------

// A default unlike PartitionConfig's own, so that every overlay shows.
PartitionConfig EngineDefault() {
  PartitionConfig config;
  config.segment_bytes = 1 << 20;
  config.segment_ms = absl::Hours(1);
  config.index_interval_bytes = 512;
  config.flush_interval_messages = 100;
  config.max_message_bytes = 4096;
  config.retention_ms = absl::Hours(2);
  config.retention_bytes = 1 << 30;
  config.cleanup_delete = false;
  return config;
}

TEST(ApplyTopicConfig, NoOverridesGiveTheEngineDefault) {
  EXPECT_EQ(ApplyTopicConfig(EngineDefault(), TopicConfigOverrides()),
            EngineDefault());
}

TEST(ApplyTopicConfig, OverlaysEachKnobOntoTheDefault) {
  TopicConfigOverrides overrides;
  overrides.retention_ms = 1000;
  overrides.retention_bytes = 2048;
  overrides.segment_bytes = 4096;
  overrides.segment_ms = 5000;
  overrides.cleanup_policy = "delete";
  overrides.flush_messages = 7;
  overrides.max_message_bytes = 8192;

  PartitionConfig expected = EngineDefault();
  expected.retention_ms = absl::Seconds(1);
  expected.retention_bytes = 2048;
  expected.segment_bytes = 4096;
  expected.segment_ms = absl::Seconds(5);
  expected.cleanup_delete = true;
  expected.flush_interval_messages = 7;
  expected.max_message_bytes = 8192;
  EXPECT_EQ(ApplyTopicConfig(EngineDefault(), overrides), expected);
}

TEST(ApplyTopicConfig, RemovedOverrideRevertsToTheDefault) {
  TopicConfigOverrides a;
  a.retention_ms = 1000;
  a.segment_bytes = 4096;
  a.cleanup_policy = "delete";
  const PartitionConfig with_a = ApplyTopicConfig(EngineDefault(), a);
  ASSERT_NE(with_a, EngineDefault());

  // Every key removed: the default again, whatever was applied before.
  EXPECT_EQ(ApplyTopicConfig(EngineDefault(), TopicConfigOverrides()),
            EngineDefault());
  // One key removed: that knob reverts, the others stay overridden.
  TopicConfigOverrides b = a;
  b.segment_bytes.reset();
  PartitionConfig expected = with_a;
  expected.segment_bytes = EngineDefault().segment_bytes;
  EXPECT_EQ(ApplyTopicConfig(EngineDefault(), b), expected);
}

TEST(ApplyTopicConfig, MinusOneRetentionKeepsForever) {
  TopicConfigOverrides overrides;
  overrides.retention_ms = -1;
  overrides.retention_bytes = -1;
  const PartitionConfig config = ApplyTopicConfig(EngineDefault(), overrides);
  EXPECT_EQ(config.retention_ms, std::nullopt);
  EXPECT_EQ(config.retention_bytes, std::nullopt);
}

TEST(ApplyTopicConfig, ZeroRetentionDeletesClosedSegmentsAtOnce) {
  TopicConfigOverrides overrides;
  overrides.retention_ms = 0;
  overrides.retention_bytes = 0;
  const PartitionConfig config = ApplyTopicConfig(EngineDefault(), overrides);
  EXPECT_EQ(config.retention_ms, absl::ZeroDuration());
  EXPECT_EQ(config.retention_bytes, 0u);
}

TEST(ApplyTopicConfig, NonPositiveSegmentMsDisablesAgeRolls) {
  for (int64_t segment_ms : {int64_t{0}, int64_t{-1}, kInt64Min}) {
    SCOPED_TRACE(segment_ms);
    TopicConfigOverrides overrides;
    overrides.segment_ms = segment_ms;
    EXPECT_EQ(ApplyTopicConfig(EngineDefault(), overrides).segment_ms,
              std::nullopt);
  }
  TopicConfigOverrides one_ms;
  one_ms.segment_ms = 1;
  EXPECT_EQ(ApplyTopicConfig(EngineDefault(), one_ms).segment_ms,
            absl::Milliseconds(1));
}

TEST(ApplyTopicConfig, CleanupDeleteFollowsThePolicy) {
  const struct {
    const char* policy;
    bool cleanup_delete;
  } cases[] = {{"delete", true},
               {"compact", false},
               {"compact,delete", true},
               {"delete,compact", true}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.policy);
    TopicConfigOverrides overrides;
    overrides.cleanup_policy = c.policy;
    for (bool default_delete : {false, true}) {
      PartitionConfig engine_default = EngineDefault();
      engine_default.cleanup_delete = default_delete;
      EXPECT_EQ(ApplyTopicConfig(engine_default, overrides).cleanup_delete,
                c.cleanup_delete);
    }
  }
}

TEST(ApplyTopicConfig, FlushMessagesIsAppliedVerbatim) {
  for (int64_t flush : {int64_t{0}, int64_t{-5}, int64_t{1}, kInt64Max}) {
    SCOPED_TRACE(flush);
    TopicConfigOverrides overrides;
    overrides.flush_messages = flush;
    EXPECT_EQ(
        ApplyTopicConfig(EngineDefault(), overrides).flush_interval_messages,
        flush);
  }
}

TEST(ApplyTopicConfig, CompactionKeysSetTheirFields) {
  TopicConfigOverrides overrides;
  overrides.cleanup_policy = "compact";
  overrides.min_compaction_lag_ms = 1;
  overrides.max_compaction_lag_ms = 3;
  overrides.min_cleanable_dirty_ratio = 0.25;
  overrides.delete_retention_ms = 2;
  const PartitionConfig config = ApplyTopicConfig(EngineDefault(), overrides);
  EXPECT_TRUE(config.cleanup_compact);
  EXPECT_FALSE(config.cleanup_delete);
  EXPECT_EQ(config.min_compaction_lag_ms, 1);
  EXPECT_EQ(config.max_compaction_lag_ms, 3);
  EXPECT_EQ(config.min_cleanable_dirty_ratio, 0.25);
  EXPECT_EQ(config.delete_retention_ms, 2);
  EXPECT_OK(config.Validate());
}

TEST(ParseTopicConfigJson, CompactionKeysRoundTripAndAreChecked) {
  ASSERT_OK_AND_ASSIGN(
      TopicConfigOverrides overrides,
      Parse(R"({"maxCompactionLagMs": 5, "minCleanableDirtyRatio": 0.75})"));
  EXPECT_EQ(overrides.max_compaction_lag_ms, 5);
  EXPECT_EQ(overrides.min_cleanable_dirty_ratio, 0.75);
  EXPECT_EQ(TopicConfigToJson(overrides),
            R"({"maxCompactionLagMs":5,"minCleanableDirtyRatio":0.75})");
  EXPECT_THAT(Parse(R"({"minCleanableDirtyRatio": 1.5})"),
              ConfigError(HasSubstr("minCleanableDirtyRatio: 1.5 is not "
                                    "between 0 and 1")));
  EXPECT_THAT(Parse(R"({"maxCompactionLagMs": 0})"),
              ConfigError(HasSubstr("maxCompactionLagMs: 0 is below")));
}

TEST(ApplyTopicConfig, ParsedBoundaryValuesGiveAValidConfig) {
  for (const char* json : {
           R"({"retentionMs": -1, "retentionBytes": -1, "segmentBytes": 1024,
               "segmentMs": -1, "maxMessageBytes": 1})",
           R"({"retentionMs": 0, "retentionBytes": 0,
               "segmentBytes": 2147483647, "segmentMs": 1,
               "flushMessages": -1})",
           R"({"retentionMs": 9223372036854775807,
               "segmentMs": 9223372036854775807,
               "maxMessageBytes": 9223372036854775807})",
       }) {
    SCOPED_TRACE(json);
    ASSERT_OK_AND_ASSIGN(TopicConfigOverrides overrides, Parse(json));
    EXPECT_OK(ApplyTopicConfig(PartitionConfig(), overrides).Validate());
  }
}

// ---- ReadTopicConfig -------------------------------------------------------

class ReadTopicConfigTest : public ::testing::Test {
 protected:
  std::string ConfigPath() const {
    return fs::JoinPath(dir_.path(), kTopicConfigFileName);
  }

  fs::PosixFileSystem fs_;
  fs::ScopedTempDir dir_;
};

TEST_F(ReadTopicConfigTest, AbsentFileIsNoOverrides) {
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()), IsOkAndHolds(std::nullopt));
}

TEST_F(ReadTopicConfigTest, AbsentTopicDirIsNoOverrides) {
  EXPECT_THAT(ReadTopicConfig(fs_, fs::JoinPath(dir_.path(), "missing")),
              IsOkAndHolds(std::nullopt));
}

TEST_F(ReadTopicConfigTest, PresentFileIsParsed) {
  ASSERT_OK(fs::WriteStringToFile(
      fs_, ConfigPath(), R"({"retentionMs": 86400000, "segmentBytes": 2048})"));
  TopicConfigOverrides expected;
  expected.retention_ms = 86400000;
  expected.segment_bytes = 2048;
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              IsOkAndHolds(Optional(expected)));
}

TEST_F(ReadTopicConfigTest, MalformedFileIsAnErrorNamingThePath) {
  ASSERT_OK(fs::WriteStringToFile(fs_, ConfigPath(), R"({"retentionMs": )"));
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(StartsWith(ConfigPath() + ": invalid JSON")));
}

TEST_F(ReadTopicConfigTest, InvalidValueIsAnErrorNamingThePathAndField) {
  ASSERT_OK(
      fs::WriteStringToFile(fs_, ConfigPath(), R"({"segmentBytes": 12})"));
  EXPECT_THAT(
      ReadTopicConfig(fs_, dir_.path()),
      ConfigError(ConfigPath() +
                  ": field segmentBytes: 12 is below the minimum 1024"));
}

TEST_F(ReadTopicConfigTest, ADirectoryInPlaceOfTheFileIsAnInvalidConfig) {
  ASSERT_OK(fs_.CreateDirs(ConfigPath()));
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(HasSubstr("not a regular file")));
}

// A FIFO would block the reader forever (every take-over reads the config).
TEST_F(ReadTopicConfigTest, AFifoInPlaceOfTheFileIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(ConfigPath().c_str(), 0644), 0);
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(HasSubstr("not a regular file")));
}

TEST_F(ReadTopicConfigTest, ASymbolicLinkIsNotFollowed) {
  const std::string elsewhere = fs::JoinPath(dir_.path(), "elsewhere.json");
  ASSERT_OK(fs::WriteStringToFile(fs_, elsewhere, R"({"retentionMs": 1})"));
  ASSERT_EQ(::symlink(elsewhere.c_str(), ConfigPath().c_str()), 0);
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(HasSubstr("symbolic link")));
}

// A file the OS does not let the engine read is an I/O error, not a bad
// config: the operator fixes permissions, not the file's content.
TEST_F(ReadTopicConfigTest, AnUnreadableFileIsAStorageError) {
  ASSERT_OK(fs::WriteStringToFile(fs_, ConfigPath(), R"({"retentionMs": 1})"));
  test::FaultInjectingFileSystem faulty(&fs_, /*seed=*/1);
  test::Fault fault(test::FsOp::kOpenForRead, EACCES);
  fault.path = test::PathPattern::Substring(kTopicConfigFileName);
  faulty.InjectFault(fault);
  EXPECT_THAT(ReadTopicConfig(faulty, dir_.path()),
              HasStorageError(StorageErrorCode::kStorageError));
}

// What an error quotes of the file is capped: a long value must not end up
// whole in a log line or a response.
TEST_F(ReadTopicConfigTest, AHugeValueIsQuotedOnlyInPart) {
  const std::string value(500000, 'x');
  ASSERT_OK(fs::WriteStringToFile(
      fs_, ConfigPath(),
      absl::StrCat(R"({"cleanupPolicy": ")", value, R"("})")));
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(HasSubstr("...(500000 bytes)")));
  absl::StatusOr<std::optional<TopicConfigOverrides>> read =
      ReadTopicConfig(fs_, dir_.path());
  EXPECT_LT(read.status().message().size(), 1000u);
}

TEST_F(ReadTopicConfigTest, AFileLargerThanAnyConfigIsRefusedUnread) {
  ASSERT_OK(
      fs::WriteStringToFile(fs_, ConfigPath(), std::string(2 << 20, ' ')));
  EXPECT_THAT(ReadTopicConfig(fs_, dir_.path()),
              ConfigError(HasSubstr("more than the")));
}

}  // namespace
}  // namespace kaas
