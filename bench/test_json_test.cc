// The test JSON parser must reject what a real parser rejects, or the
// report tests prove nothing.

#include "bench/test_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::test {
namespace {

TEST(ParseJson, ParsesNestedValues) {
  ASSERT_OK_AND_ASSIGN(
      JsonValue value,
      ParseJson(
          R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"\u00e9\ud83d\ude00"}} )"));
  ASSERT_EQ(value.kind, JsonValue::Kind::kObject);
  const JsonValue& a = value.object.at("a");
  ASSERT_EQ(a.array.size(), 5u);
  EXPECT_EQ(a.array[0].number, 1);
  EXPECT_EQ(a.array[1].number, -2500);
  EXPECT_TRUE(a.array[2].boolean);
  EXPECT_EQ(a.array[3].kind, JsonValue::Kind::kBool);
  EXPECT_FALSE(a.array[3].boolean);
  EXPECT_TRUE(a.array[4].is_null());
  EXPECT_EQ(value.object.at("b").object.at("c").string,
            "x\"\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(ParseJson, RejectsInvalidDocuments) {
  for (const char* bad : {
           "",
           "{",
           "[1,]",
           "{\"a\":1,}",
           "{a:1}",
           "'x'",
           "\"\x01\"",
           "\"\\x\"",
           "\"\\ud800\"",
           "\"\\udc00\"",
           "\"\xC3\"",
           "\"\xFF\"",
           "01",
           "1.",
           "1e",
           "NaN",
           "Infinity",
           "{\"a\":1,\"a\":2}",
           "1 2",
           "nul",
           "[1] x",
       }) {
    EXPECT_FALSE(ParseJson(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace kaas::test
