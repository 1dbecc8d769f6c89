#include "placement/log_dir_info.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::placement {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

LogDirInfo Dir(std::string name, std::string path) {
  LogDirInfo dir;
  dir.name = std::move(name);
  dir.path = std::move(path);
  return dir;
}

TEST(LogDirInfo, DefaultsAreEligibleUncordonedUnlabelled) {
  LogDirInfo dir;
  EXPECT_TRUE(dir.default_eligible);
  EXPECT_FALSE(dir.cordoned);
  EXPECT_TRUE(dir.labels.empty());
}

TEST(LogDirInfo, EqualityComparesEveryField) {
  LogDirInfo a = Dir("fast", "/vols/fast");
  a.labels["tier"] = "ssd";
  LogDirInfo b = a;
  EXPECT_EQ(a, b);
  b.default_eligible = false;
  EXPECT_NE(a, b);
  b = a;
  b.cordoned = true;
  EXPECT_NE(a, b);
  b = a;
  b.labels["tier"] = "hdd";
  EXPECT_NE(a, b);
  b = a;
  b.path = "/vols/other";
  EXPECT_NE(a, b);
}

TEST(LogDirInfo, PrintsEveryFieldEscaped) {
  LogDirInfo dir = Dir("fast", "/vols/f\nast");
  dir.labels["tier"] = "ssd";
  std::ostringstream os;
  os << dir;
  EXPECT_EQ(os.str(),
            "{name: \"fast\", path: \"/vols/f\\nast\", default_eligible: true, "
            "cordoned: false, labels: {\"tier\": \"ssd\"}}");
}

TEST(IsValidLogDirName, AcceptsDnsLabels) {
  for (const char* name :
       {"a", "0", "fast", "fast-1", "1-fast", "a--b", "default"}) {
    EXPECT_TRUE(IsValidLogDirName(name)) << name;
  }
  EXPECT_TRUE(IsValidLogDirName(std::string(kMaxLogDirNameLength, 'a')));
}

TEST(IsValidLogDirName, RejectsEverythingElse) {
  for (const char* name : {"", "Fast", "FAST", "fast_1", "-fast", "fast-", "-",
                           "fa.st", "fa st", "fast/1", "\xc3\xa9t\xc3\xa9"}) {
    EXPECT_FALSE(IsValidLogDirName(name)) << name;
  }
  EXPECT_FALSE(IsValidLogDirName(std::string(kMaxLogDirNameLength + 1, 'a')));
  EXPECT_FALSE(IsValidLogDirName(std::string("fa\0st", 5)));
}

TEST(LogDirPathsEqual, IgnoresRepeatedAndTrailingSlashes) {
  EXPECT_TRUE(LogDirPathsEqual("/vols/a", "/vols/a"));
  EXPECT_TRUE(LogDirPathsEqual("/vols/a", "/vols/a/"));
  EXPECT_TRUE(LogDirPathsEqual("/vols//a", "/vols/a///"));
  EXPECT_TRUE(LogDirPathsEqual("/", "//"));
  EXPECT_FALSE(LogDirPathsEqual("/vols/a", "/vols/ab"));
  EXPECT_FALSE(LogDirPathsEqual("/vols/a", "/vols/a/."));
  EXPECT_FALSE(LogDirPathsEqual("/vols/a", "vols/a"));
}

TEST(ValidateLogDirs, AcceptsEmptyAndValidLists) {
  EXPECT_OK(ValidateLogDirs({}));
  EXPECT_OK(ValidateLogDirs({Dir("fast", "/vols/fast"), Dir("bulk", "/bulk")}));
}

TEST(ValidateLogDirs, ErrorsAreInvalidConfig) {
  absl::Status status = ValidateLogDirs({Dir("Fast", "/vols/fast")});
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Fast")));
  EXPECT_THAT(status, HasStorageError(StorageErrorCode::kInvalidConfig));
}

TEST(ValidateLogDirs, NamesIndexFieldAndValueOfABadName) {
  EXPECT_THAT(
      ValidateLogDirs(
          {Dir("fast", "/a"), Dir("bulk", "/b"), Dir("Fast_1", "/c")}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "log dirs entry 2: name \"Fast_1\" must match "
               "[a-z0-9]([-a-z0-9]*[a-z0-9])? (lower-case letters, digits "
               "and '-', at most 63 characters)"));
}

TEST(ValidateLogDirs, RejectsTooLongAndEmptyNames) {
  const std::string too_long(64, 'a');
  EXPECT_THAT(ValidateLogDirs({Dir(too_long, "/a")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 0: name \"" + too_long + "\"")));
  EXPECT_THAT(ValidateLogDirs({Dir("", "/a")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 0: name \"\" must match")));
}

TEST(ValidateLogDirs, RejectsTheReservedName) {
  EXPECT_THAT(ValidateLogDirs({Dir("fast", "/a"), Dir("default", "/b")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "log dirs entry 1: name \"default\" is reserved for "
                       "the data dir"));
}

TEST(ValidateLogDirs, RejectsDuplicateNames) {
  EXPECT_THAT(
      ValidateLogDirs(
          {Dir("fast", "/a"), Dir("bulk", "/b"), Dir("fast", "/c")}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "log dirs entry 2: name \"fast\" is already used by entry 0"));
}

TEST(ValidateLogDirs, RejectsDuplicatePathsSpelledDifferently) {
  EXPECT_THAT(ValidateLogDirs({Dir("a", "/vols/x"), Dir("b", "/vols//x/")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "log dirs entry 1: path \"/vols//x/\" is already used "
                       "by entry 0 (\"/vols/x\")"));
}

// A log dir inside another would be listed as one of its topic dirs.
TEST(ValidateLogDirs, RejectsNestedPathsEitherWay) {
  EXPECT_THAT(
      ValidateLogDirs({Dir("a", "/vols/a"), Dir("b", "/vols/a//b/")}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "log dirs entry 1: path \"/vols/a//b/\" and the path of entry "
               "0 (\"/vols/a\") lie inside one another; log dirs must not "
               "nest"));
  EXPECT_THAT(ValidateLogDirs({Dir("a", "/vols/a/b"), Dir("b", "/vols/a")}),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("must not nest")));
  EXPECT_THAT(ValidateLogDirs({Dir("a", "/vols/a"), Dir("root", "/")}),
              HasStorageError(StorageErrorCode::kInvalidConfig));
  // A shared prefix is not nesting.
  EXPECT_OK(ValidateLogDirs({Dir("a", "/vols/a"), Dir("b", "/vols/ab")}));
}

TEST(LogDirPathsOverlap, EqualOrNestedLexically) {
  EXPECT_TRUE(LogDirPathsOverlap("/data", "/data//"));
  EXPECT_TRUE(LogDirPathsOverlap("/data", "/data/fast"));
  EXPECT_TRUE(LogDirPathsOverlap("/data/fast/", "/data"));
  EXPECT_TRUE(LogDirPathsOverlap("/", "/data"));
  EXPECT_FALSE(LogDirPathsOverlap("/data", "/data2"));
  EXPECT_FALSE(LogDirPathsOverlap("/data/a", "/data/b"));
}

TEST(ValidateLogDirs, RejectsRelativeAndEmptyPaths) {
  EXPECT_THAT(ValidateLogDirs({Dir("a", "vols/a")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "log dirs entry 0: path \"vols/a\" must be absolute "
                       "(start with '/')"));
  EXPECT_THAT(ValidateLogDirs({Dir("a", "")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 0: path \"\" must be absolute")));
}

TEST(ValidateLogDirs, RejectsNulInPathAndEscapesIt) {
  EXPECT_THAT(ValidateLogDirs({Dir("a", std::string("/vols/a\0b", 9))}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "log dirs entry 0: path \"/vols/a\\000b\" must not "
                       "contain a NUL character"));
}

}  // namespace
}  // namespace kaas::placement
