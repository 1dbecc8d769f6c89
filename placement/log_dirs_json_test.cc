#include "placement/log_dirs_json.h"

#include <string>
#include <vector>

#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/log_dir_info.h"
#include "testing/status_matchers.h"

namespace kaas::placement {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

// An InvalidArgument/kInvalidConfig error whose message has `substring`.
::testing::Matcher<absl::StatusOr<std::vector<LogDirInfo>>> ConfigError(
    const std::string& substring) {
  return AllOf(
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(substring)),
      HasStorageError(StorageErrorCode::kInvalidConfig));
}

TEST(ParseLogDirsJson, EmptyInputIsNoExtraDirs) {
  EXPECT_THAT(ParseLogDirsJson(""), IsOkAndHolds(IsEmpty()));
}

TEST(ParseLogDirsJson, WhitespaceOnlyInputIsNoExtraDirs) {
  EXPECT_THAT(ParseLogDirsJson(" \n\t\r "), IsOkAndHolds(IsEmpty()));
}

TEST(ParseLogDirsJson, EmptyArrayIsNoExtraDirs) {
  EXPECT_THAT(ParseLogDirsJson(" [ ] "), IsOkAndHolds(IsEmpty()));
}

TEST(ParseLogDirsJson, AppliesDefaultsToAbsentFields) {
  ASSERT_OK_AND_ASSIGN(std::vector<LogDirInfo> dirs,
                       ParseLogDirsJson(R"([{"name": "fast", "path": "/f"}])"));
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0].name, "fast");
  EXPECT_EQ(dirs[0].path, "/f");
  EXPECT_TRUE(dirs[0].default_eligible);
  EXPECT_FALSE(dirs[0].cordoned);
  EXPECT_THAT(dirs[0].labels, IsEmpty());
}

TEST(ParseLogDirsJson, NullMeansAbsent) {
  ASSERT_OK_AND_ASSIGN(std::vector<LogDirInfo> dirs,
                       ParseLogDirsJson(R"([{"name": "fast", "path": "/f",
                            "defaultEligible": null, "cordoned": null}])"));
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_TRUE(dirs[0].default_eligible);
  EXPECT_FALSE(dirs[0].cordoned);
}

TEST(ParseLogDirsJson, ReadsEveryFieldInDeclarationOrder) {
  ASSERT_OK_AND_ASSIGN(std::vector<LogDirInfo> dirs, ParseLogDirsJson(R"([
      {"name": "fast", "path": "/vols/fast", "defaultEligible": false,
       "cordoned": true, "labels": {"tier": "ssd", "zone": "a"}},
      {"name": "bulk", "path": "/vols/bulk", "defaultEligible": true,
       "cordoned": false}])"));
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[0].name, "fast");
  EXPECT_EQ(dirs[0].path, "/vols/fast");
  EXPECT_FALSE(dirs[0].default_eligible);
  EXPECT_TRUE(dirs[0].cordoned);
  EXPECT_THAT(dirs[0].labels,
              ElementsAre(Pair("tier", "ssd"), Pair("zone", "a")));
  EXPECT_EQ(dirs[1].name, "bulk");
  EXPECT_TRUE(dirs[1].default_eligible);
  EXPECT_FALSE(dirs[1].cordoned);
}

TEST(ParseLogDirsJson, AcceptsProtoFieldNames) {
  EXPECT_THAT(
      ParseLogDirsJson(
          R"([{"name": "fast", "path": "/f", "default_eligible": false}])"),
      IsOkAndHolds(ElementsAre(Field(&LogDirInfo::default_eligible, false))));
}

TEST(ParseLogDirsJson, InvalidJsonIsAnError) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name" "fast"}])"),
              ConfigError("log dirs: invalid JSON: "));
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "fast", "path": "/f"])"),
              ConfigError("log dirs: invalid JSON: "));
}

TEST(ParseLogDirsJson, RepeatedKeyIsAnError) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/a", "name": "b"}])"),
              ConfigError("'name' is already set"));
}

TEST(ParseLogDirsJson, TrailingGarbageIsAnError) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "fast", "path": "/f"}] x)"),
              ConfigError("log dirs: invalid JSON: "));
}

TEST(ParseLogDirsJson, SyntaxErrorsQuoteTheUsersOwnText) {
  auto result = ParseLogDirsJson(R"([{"name" "fast"}])");
  ASSERT_FALSE(result.ok());
  // The excerpt line is exactly the input and the caret is under "fast".
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("\n[{\"name\" \"fast\"}]\n         ^"));
}

TEST(ParseLogDirsJson, TopLevelMustBeAnArray) {
  const std::string expected =
      "log dirs: expected a JSON array of log dir objects";
  EXPECT_THAT(ParseLogDirsJson(R"({"name": "fast", "path": "/f"})"),
              ConfigError(expected));
  EXPECT_THAT(
      ParseLogDirsJson(R"({"values": [{"name": "fast", "path": "/f"}]})"),
      ConfigError(expected));
  EXPECT_THAT(ParseLogDirsJson("null"), ConfigError(expected));
  EXPECT_THAT(ParseLogDirsJson("\"fast\""), ConfigError(expected));
}

TEST(ParseLogDirsJson, EntriesMustBeObjects) {
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a"}, "b"])"),
      ConfigError("log dirs entry 1: expected a JSON object, got \"b\""));
  EXPECT_THAT(
      ParseLogDirsJson("[null]"),
      ConfigError("log dirs entry 0: expected a JSON object, got null"));
  EXPECT_THAT(ParseLogDirsJson("[[]]"),
              ConfigError("log dirs entry 0: expected a JSON object, got []"));
}

TEST(ParseLogDirsJson, UnknownFieldIsAnErrorNamingIt) {
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a"},
                           {"name": "b", "path": "/b", "cordonned": true}])"),
      ConfigError("log dirs entry 1: unknown field \"cordonned\" (known "
                  "fields: name, path, defaultEligible, cordoned, labels)"));
}

TEST(ParseLogDirsJson, NamesEveryUnknownFieldSorted) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/a", "zz": 1,
                                     "Name": "b"}])"),
              ConfigError("log dirs entry 0: unknown fields \"Name\", \"zz\""));
}

TEST(ParseLogDirsJson, WrongValueTypesNameEntryFieldAndValue) {
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a", "cordoned": 1}])"),
      ConfigError(
          "log dirs entry 0: field \"cordoned\" must be true or false, got 1"));
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": 7, "path": "/a"}])"),
      ConfigError("log dirs entry 0: field \"name\" must be a string, got 7"));
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a"},
                           {"name": "b", "path": "/b", "labels": ["k"]}])"),
      ConfigError("log dirs entry 1: field \"labels\" must be an object of "
                  "strings, got [\"k\"]"));
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a", "labels": {"k": 1}}])"),
      ConfigError("log dirs entry 0: field \"labels\": the value of \"k\" "
                  "must be a string, got 1"));
}

TEST(ParseLogDirsJson, BooleansMustBeJsonBooleans) {
  // Protobuf 3.21 alone would read "yes" as true and "no" as false.
  EXPECT_THAT(
      ParseLogDirsJson(R"([{"name": "a", "path": "/a", "cordoned": "yes"}])"),
      ConfigError("log dirs entry 0: field \"cordoned\" must be true or "
                  "false, got \"yes\""));
  EXPECT_THAT(ParseLogDirsJson(
                  R"([{"name": "a", "path": "/a", "default_eligible": "no"}])"),
              ConfigError("field \"default_eligible\" must be true or false"));
}

TEST(ParseLogDirsJson, InvalidUtf8IsAnError) {
  EXPECT_THAT(ParseLogDirsJson("[{\"name\": \"a\", \"path\": \"/\xff\"}]"),
              ConfigError("log dirs: invalid JSON: "));
}

TEST(ParseLogDirsJson, RejectsTheReservedName) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "default", "path": "/d"}])"),
              ConfigError("log dirs entry 0: name \"default\" is reserved"));
}

TEST(ParseLogDirsJson, RejectsBadNames) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/a"},
                                    {"name": "b", "path": "/b"},
                                    {"name": "Fast_1", "path": "/c"}])"),
              ConfigError("log dirs entry 2: name \"Fast_1\" must match "
                          "[a-z0-9]([-a-z0-9]*[a-z0-9])?"));
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "Fast", "path": "/a"}])"),
              ConfigError("entry 0: name \"Fast\" must match"));
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "fast_1", "path": "/a"}])"),
              ConfigError("entry 0: name \"fast_1\" must match"));
  const std::string too_long(64, 'a');
  EXPECT_THAT(
      ParseLogDirsJson("[{\"name\": \"" + too_long + "\", \"path\": \"/a\"}]"),
      ConfigError("entry 0: name \"" + too_long + "\" must match"));
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "", "path": "/a"}])"),
              ConfigError("entry 0: name \"\" must match"));
  EXPECT_THAT(ParseLogDirsJson(R"([{"path": "/a"}])"),
              ConfigError("entry 0: name \"\" must match"));
}

TEST(ParseLogDirsJson, RejectsDuplicateNames) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/a"},
                                    {"name": "a", "path": "/b"}])"),
              ConfigError("log dirs entry 1: name \"a\" is already used by "
                          "entry 0"));
}

TEST(ParseLogDirsJson, RejectsDuplicatePaths) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/vols/a"},
                                    {"name": "b", "path": "/vols/a/"}])"),
              ConfigError("log dirs entry 1: path \"/vols/a/\" is already "
                          "used by entry 0"));
}

TEST(ParseLogDirsJson, RejectsRelativeAndMissingPaths) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "vols/a"}])"),
              ConfigError("log dirs entry 0: path \"vols/a\" must be "
                          "absolute"));
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a"}])"),
              ConfigError("log dirs entry 0: path \"\" must be absolute"));
}

TEST(ParseLogDirsJson, RejectsNulInPath) {
  EXPECT_THAT(ParseLogDirsJson(R"([{"name": "a", "path": "/a\u0000b"}])"),
              ConfigError("log dirs entry 0: path \"/a\\000b\" must not "
                          "contain a NUL character"));
}

TEST(ParseLogDirsJson, RejectsDeepNestingQuickly) {
  // Valid JSON; protobuf alone would take minutes on it.
  const std::string deep =
      "[" + std::string(100000, '[') + std::string(100000, ']') + "]";
  EXPECT_THAT(ParseLogDirsJson(deep),
              ConfigError("log dirs: JSON nested deeper than 10 levels"));
}

TEST(ParseLogDirsJson, BracketsInsideStringsDoNotCountAsNesting) {
  const std::string path = "/" + std::string(20, '[') + std::string(20, '{');
  const std::string json =
      R"([{"name": "a", "path": ")" + path + R"(", "labels": {"k": "\"[{"}}])";
  ASSERT_OK_AND_ASSIGN(std::vector<LogDirInfo> dirs, ParseLogDirsJson(json));
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_EQ(dirs[0].path, path);
  EXPECT_EQ(dirs[0].labels.at("k"), "\"[{");
}

TEST(ParseLogDirsJson, HostileInputsFailCleanly) {
  // Truncations of a valid document at every byte: errors, never crashes
  // (ASan checks the reads).
  const std::string valid =
      R"([{"name": "a", "path": "/a\"b", "labels": {"k": "v"}}])";
  for (size_t n = 1; n < valid.size(); ++n) {
    EXPECT_FALSE(ParseLogDirsJson(valid.substr(0, n)).ok()) << n;
  }
  EXPECT_FALSE(ParseLogDirsJson("[\"\\").ok());
  EXPECT_FALSE(ParseLogDirsJson(std::string("[\0]", 3)).ok());
}

TEST(LogDirsToJson, EmptyListIsEmptyArray) {
  EXPECT_EQ(LogDirsToJson({}), "[]");
}

TEST(LogDirsToJson, IsCompactAndDeterministic) {
  LogDirInfo fast;
  fast.name = "fast";
  fast.path = "/vols/fast";
  fast.default_eligible = false;
  for (const char* key : {"zone", "tier", "b", "a", "rack"}) {
    fast.labels[key] = "v";
  }
  LogDirInfo bulk;
  bulk.name = "bulk";
  bulk.path = "/vols/bulk";
  EXPECT_EQ(LogDirsToJson({fast, bulk}),
            R"([{"name":"fast","path":"/vols/fast","defaultEligible":false,)"
            R"("cordoned":false,"labels":{"a":"v","b":"v","rack":"v",)"
            R"("tier":"v","zone":"v"}},)"
            R"({"name":"bulk","path":"/vols/bulk","defaultEligible":true,)"
            R"("cordoned":false}])");
}

TEST(LogDirsToJson, RoundTripsThroughParse) {
  LogDirInfo fast;
  fast.name = "fast";
  fast.path = "/vols/\"f\\a\"st\n";
  fast.default_eligible = false;
  fast.cordoned = true;
  fast.labels = {
      {"tier", "ssd"}, {"zone", "eu-1"}, {"note", "\xc3\xa9t\xc3\xa9"}};
  LogDirInfo bulk;
  bulk.name = "bulk";
  bulk.path = "/vols/bulk";
  const std::vector<LogDirInfo> dirs = {fast, bulk};
  EXPECT_THAT(ParseLogDirsJson(LogDirsToJson(dirs)), IsOkAndHolds(dirs));
}

}  // namespace
}  // namespace kaas::placement
