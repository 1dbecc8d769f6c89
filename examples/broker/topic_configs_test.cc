#include "examples/broker/topic_configs.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

absl::StatusOr<TopicConfigOverrides> From(
    std::vector<KafkaTopicConfig> configs) {
  return TopicConfigFromKafka(configs);
}

TEST(TopicConfigFromKafkaTest, MapsEveryServedKey) {
  ASSERT_OK_AND_ASSIGN(TopicConfigOverrides overrides,
                       From({{"retention.ms", "86400000"},
                             {"retention.bytes", "-1"},
                             {"segment.bytes", "1048576"},
                             {"segment.ms", "3600000"},
                             {"cleanup.policy", "compact,delete"},
                             {"min.compaction.lag.ms", "10"},
                             {"max.compaction.lag.ms", "20"},
                             {"min.cleanable.dirty.ratio", "0.25"},
                             {"delete.retention.ms", "30"},
                             {"flush.messages", "1"},
                             {"max.message.bytes", "2000000"}}));
  EXPECT_EQ(overrides.retention_ms, 86400000);
  EXPECT_EQ(overrides.retention_bytes, -1);
  EXPECT_EQ(overrides.segment_bytes, 1048576);
  EXPECT_EQ(overrides.segment_ms, 3600000);
  EXPECT_EQ(overrides.cleanup_policy, "compact,delete");
  EXPECT_EQ(overrides.min_compaction_lag_ms, 10);
  EXPECT_EQ(overrides.max_compaction_lag_ms, 20);
  EXPECT_EQ(overrides.min_cleanable_dirty_ratio, 0.25);
  EXPECT_EQ(overrides.delete_retention_ms, 30);
  EXPECT_EQ(overrides.flush_messages, 1);
  EXPECT_EQ(overrides.max_message_bytes, 2000000);
  EXPECT_EQ(overrides.validate_records, std::nullopt);
}

TEST(TopicConfigFromKafkaTest, NoConfigsAreNoOverrides) {
  EXPECT_THAT(From({}), test::IsOkAndHolds(TopicConfigOverrides()));
}

TEST(TopicConfigFromKafkaTest, RefusesAKeyItDoesNotServe) {
  EXPECT_THAT(From({{"compression.type", "zstd"}}).status(),
              test::StatusIs(absl::StatusCode::kInvalidArgument,
                             AllOf(HasSubstr("compression.type"),
                                   HasSubstr("retention.ms"))));
}

TEST(TopicConfigFromKafkaTest, RefusesAValueThatDoesNotParse) {
  EXPECT_THAT(From({{"retention.ms", "1d"}}).status(),
              test::StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("retention.ms: \"1d\"")));
  EXPECT_THAT(From({{"min.cleanable.dirty.ratio", "half"}}).status(),
              test::StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("min.cleanable.dirty.ratio")));
}

TEST(TopicConfigFromKafkaTest, RefusesANullValueAndARepeatedKey) {
  EXPECT_THAT(
      From({{"retention.ms", std::nullopt}}).status(),
      test::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("null")));
  EXPECT_THAT(
      From({{"retention.ms", "1"}, {"retention.ms", "2"}}).status(),
      test::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
}

}  // namespace
}  // namespace kaas::broker
