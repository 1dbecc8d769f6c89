#include "storage/common/topic_name.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageErrorWithMessage;
using ::testing::HasSubstr;

TEST(TopicName, AcceptsKafkaNames) {
  for (const char* name : {"orders", "a.b_c-D9", "x", "..a", "a.."}) {
    EXPECT_OK(ValidateTopicName(name)) << name;
  }
  EXPECT_OK(ValidateTopicName(std::string(249, 'a')));
}

TEST(TopicName, RejectsWhatCouldEscapeOrCollide) {
  EXPECT_THAT(ValidateTopicName(""),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("empty")));
  EXPECT_THAT(ValidateTopicName(".."),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("path component")));
  EXPECT_THAT(ValidateTopicName("."),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("path component")));
  for (const char* name : {"a/b", "../x", "a b", "tab\t", "é"}) {
    EXPECT_THAT(ValidateTopicName(name),
                HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                           HasSubstr("only ASCII letters")))
        << name;
  }
  EXPECT_THAT(ValidateTopicName(std::string(250, 'a')),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("limit is 249")));
}

TEST(TopicName, PartitionsAreNonNegative) {
  EXPECT_OK(ValidatePartition(0));
  EXPECT_THAT(ValidatePartition(-1),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("numbered from 0")));
}

TEST(TopicPartition, PrintsAndHashes) {
  TopicPartition a{"orders", 3};
  EXPECT_EQ(a.ToString(), "orders-3");
  absl::flat_hash_set<TopicPartition> set = {a, {"orders", 4}, a};
  EXPECT_EQ(set.size(), 2u);
}

}  // namespace
}  // namespace kaas
