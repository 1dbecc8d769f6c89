#include "placement/log_dir_set.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "placement/log_dir_info.h"
#include "testing/status_matchers.h"

namespace kaas::placement {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using RootChoice = LogDirSet::RootChoice;

LogDirInfo Dir(std::string name, std::string path) {
  LogDirInfo dir;
  dir.name = std::move(name);
  dir.path = std::move(path);
  return dir;
}

// /data plus extra dirs fast (/vols/fast), bulk (/vols/bulk) and cold
// (/vols/cold, cordoned).
LogDirSet ThreeExtraDirs() {
  LogDirInfo cold = Dir("cold", "/vols/cold");
  cold.cordoned = true;
  absl::StatusOr<LogDirSet> set = LogDirSet::Create(
      "/data", {Dir("fast", "/vols/fast"), Dir("bulk", "/vols/bulk"), cold});
  EXPECT_OK(set);
  return *std::move(set);
}

// A has_partition_data predicate over a fixed set of roots holding data,
// recording the order in which roots were asked.
class FakeDisk {
 public:
  explicit FakeDisk(std::set<std::string> roots_with_data)
      : roots_with_data_(std::move(roots_with_data)) {}

  absl::StatusOr<bool> operator()(const std::string& root) const {
    asked_.push_back(root);
    return roots_with_data_.count(root) > 0;
  }

  const std::vector<std::string>& asked() const { return asked_; }

 private:
  std::set<std::string> roots_with_data_;
  // Recording is a side effect of a const query, as FunctionRef requires.
  mutable std::vector<std::string> asked_;
};

std::vector<std::string> Names(const std::vector<LogDirInfo>& dirs) {
  std::vector<std::string> names;
  for (const LogDirInfo& dir : dirs) names.push_back(dir.name);
  return names;
}

TEST(LogDirSet, DataDirAloneIsTheDefaultDir) {
  ASSERT_OK_AND_ASSIGN(LogDirSet set, LogDirSet::Create("/data", {}));
  ASSERT_EQ(set.All().size(), 1u);
  const LogDirInfo& data_dir = set.DefaultDir();
  EXPECT_EQ(&data_dir, &set.All()[0]);
  EXPECT_EQ(data_dir.name, "default");
  EXPECT_EQ(data_dir.path, "/data");
  EXPECT_TRUE(data_dir.default_eligible);
  EXPECT_FALSE(data_dir.cordoned);
  EXPECT_TRUE(data_dir.labels.empty());
}

TEST(LogDirSet, AllListsTheDataDirFirstThenDeclarationOrder) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_THAT(Names(set.All()), ElementsAre("default", "fast", "bulk", "cold"));
  EXPECT_EQ(set.All()[2].path, "/vols/bulk");
  EXPECT_TRUE(set.All()[3].cordoned);
}

TEST(LogDirSet, CreateValidatesTheExtraDirs) {
  EXPECT_THAT(LogDirSet::Create("/data", {Dir("default", "/vols/d")}),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kInvalidConfig,
                  HasSubstr("entry 0: name \"default\" is reserved")));
  EXPECT_THAT(LogDirSet::Create("/data", {Dir("a", "/x"), Dir("a", "/y")}),
              HasStorageError(StorageErrorCode::kInvalidConfig));
}

TEST(LogDirSet, CreateRejectsAnExtraDirAtTheDataDirPath) {
  EXPECT_THAT(
      LogDirSet::Create("/data", {Dir("a", "/x"), Dir("b", "/data/")}),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          "log dirs entry 1: path \"/data/\" is the data dir (\"/data\")"));
}

TEST(LogDirSet, CreateRejectsAnExtraDirNestedWithTheDataDir) {
  EXPECT_THAT(
      LogDirSet::Create("/data", {Dir("a", "/x"), Dir("fast", "/data/fast")}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "log dirs entry 1: path \"/data/fast\" and the data dir "
               "(\"/data\") lie inside one another; log dirs must not nest"));
  EXPECT_THAT(LogDirSet::Create("/vols/data", {Dir("vols", "/vols")}),
              HasStorageError(StorageErrorCode::kInvalidConfig));
}

TEST(LogDirSet, CreateRejectsAnEmptyDataDirPath) {
  EXPECT_THAT(LogDirSet::Create("", {}),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("data dir path is empty")));
}

TEST(LogDirSet, FindByName) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_EQ(set.Find("default"), &set.DefaultDir());
  ASSERT_NE(set.Find("bulk"), nullptr);
  EXPECT_EQ(set.Find("bulk")->path, "/vols/bulk");
  EXPECT_EQ(set.Find("nope"), nullptr);
  EXPECT_EQ(set.Find(""), nullptr);
}

TEST(LogDirSet, AssignedRootWithoutAnswerIsTheDataDir) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_EQ(&set.AssignedRoot(std::nullopt), &set.DefaultDir());
}

TEST(LogDirSet, AssignedRootFollowsAKnownName) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_EQ(&set.AssignedRoot("bulk"), set.Find("bulk"));
  EXPECT_EQ(&set.AssignedRoot("default"), &set.DefaultDir());
  // A cordoned dir still serves what it holds.
  EXPECT_EQ(&set.AssignedRoot("cold"), set.Find("cold"));
}

TEST(LogDirSet, AssignedRootOfAnUnknownNameFallsBackToTheDataDir) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_EQ(&set.AssignedRoot("premium"), &set.DefaultDir());
  EXPECT_EQ(&set.AssignedRoot(""), &set.DefaultDir());
}

TEST(ResolvePartitionRoot, AssignedRootWithDataWins) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({"/data", "/vols/fast"});  // a stale copy on /data too
  ASSERT_OK_AND_ASSIGN(LogDirSet::PartitionRoot root,
                       set.ResolvePartitionRoot(*set.Find("fast"), disk));
  EXPECT_EQ(root.dir, set.Find("fast"));
  EXPECT_EQ(root.choice, RootChoice::kAssignedHasData);
  EXPECT_FALSE(root.deviates_from_placement());
  EXPECT_THAT(disk.asked(), ElementsAre("/vols/fast"));
}

TEST(ResolvePartitionRoot, DataOnlyOnTheDataDirOutranksTheRecord) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({"/data"});
  ASSERT_OK_AND_ASSIGN(LogDirSet::PartitionRoot root,
                       set.ResolvePartitionRoot(*set.Find("fast"), disk));
  EXPECT_EQ(root.dir, &set.DefaultDir());
  EXPECT_EQ(root.choice, RootChoice::kDataElsewhere);
  EXPECT_TRUE(root.deviates_from_placement());
  EXPECT_THAT(disk.asked(), ElementsAre("/vols/fast", "/data"));
}

TEST(ResolvePartitionRoot, FindsDataOnAnotherExtraDir) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({"/vols/bulk"});
  ASSERT_OK_AND_ASSIGN(LogDirSet::PartitionRoot root,
                       set.ResolvePartitionRoot(*set.Find("fast"), disk));
  EXPECT_EQ(root.dir, set.Find("bulk"));
  EXPECT_TRUE(root.deviates_from_placement());
  EXPECT_THAT(disk.asked(), ElementsAre("/vols/fast", "/data", "/vols/bulk"));
}

TEST(ResolvePartitionRoot, FirstOtherRootInOrderWins) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({"/vols/fast", "/vols/cold"});
  ASSERT_OK_AND_ASSIGN(LogDirSet::PartitionRoot root,
                       set.ResolvePartitionRoot(*set.Find("bulk"), disk));
  EXPECT_EQ(root.dir, set.Find("fast"));
  EXPECT_EQ(root.choice, RootChoice::kDataElsewhere);
  EXPECT_THAT(disk.asked(), ElementsAre("/vols/bulk", "/data", "/vols/fast"));
}

TEST(ResolvePartitionRoot, NoDataAnywhereMeansTheAssignedRoot) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({});
  ASSERT_OK_AND_ASSIGN(LogDirSet::PartitionRoot root,
                       set.ResolvePartitionRoot(*set.Find("bulk"), disk));
  EXPECT_EQ(root.dir, set.Find("bulk"));
  EXPECT_EQ(root.choice, RootChoice::kNoDataAnywhere);
  EXPECT_FALSE(root.deviates_from_placement());
  // Every root asked exactly once, the assigned one first.
  EXPECT_THAT(disk.asked(),
              ElementsAre("/vols/bulk", "/data", "/vols/fast", "/vols/cold"));
}

TEST(ResolvePartitionRoot, UnknownAssignedNameResolvesOnTheDataDir) {
  LogDirSet set = ThreeExtraDirs();
  FakeDisk disk({});
  ASSERT_OK_AND_ASSIGN(
      LogDirSet::PartitionRoot root,
      set.ResolvePartitionRoot(set.AssignedRoot("premium"), disk));
  EXPECT_EQ(root.dir, &set.DefaultDir());
  EXPECT_EQ(root.choice, RootChoice::kNoDataAnywhere);
  EXPECT_EQ(disk.asked().front(), "/data");
}

TEST(ResolvePartitionRoot, AnErrorOnTheAssignedRootStopsResolution) {
  LogDirSet set = ThreeExtraDirs();
  std::vector<std::string> asked;
  auto failing = [&](const std::string& root) -> absl::StatusOr<bool> {
    asked.push_back(root);
    if (root == "/vols/fast") return absl::DataLossError("EIO on /vols/fast");
    return true;
  };
  EXPECT_THAT(set.ResolvePartitionRoot(*set.Find("fast"), failing),
              StatusIs(absl::StatusCode::kDataLoss, "EIO on /vols/fast"));
  EXPECT_THAT(asked, ElementsAre("/vols/fast"));
}

TEST(ResolvePartitionRoot, AnErrorOnAnotherRootIsNotTakenAsNoData) {
  LogDirSet set = ThreeExtraDirs();
  auto failing = [](const std::string& root) -> absl::StatusOr<bool> {
    if (root == "/data") return absl::DataLossError("EIO on /data");
    return false;
  };
  EXPECT_THAT(set.ResolvePartitionRoot(*set.Find("fast"), failing),
              StatusIs(absl::StatusCode::kDataLoss, "EIO on /data"));
}

TEST(ResolvePartitionRootDeathTest, RejectsADirFromElsewhere) {
  LogDirSet set = ThreeExtraDirs();
  const LogDirInfo copy = *set.Find("fast");
  FakeDisk disk({});
  EXPECT_DEATH(set.ResolvePartitionRoot(copy, disk).IgnoreError(),
               "not a dir of this LogDirSet");
}

TEST(ResolveMoveTarget, KnownDirsIncludingTheDataDir) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_THAT(set.ResolveMoveTarget("bulk"),
              ::kaas::test::IsOkAndHolds(set.Find("bulk")));
  EXPECT_THAT(set.ResolveMoveTarget("default"),
              ::kaas::test::IsOkAndHolds(&set.DefaultDir()));
}

TEST(ResolveMoveTarget, UnknownDirIsLogDirNotFound) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_THAT(set.ResolveMoveTarget("premium"),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kLogDirNotFound,
                  "unknown log dir \"premium\" (this broker has: default, "
                  "fast, bulk, cold)"));
}

TEST(ResolveMoveTarget, CordonedDirIsAnInvalidRequest) {
  LogDirSet set = ThreeExtraDirs();
  EXPECT_THAT(set.ResolveMoveTarget("cold"),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidRequest,
                                         HasSubstr("\"cold\" is cordoned")));
}

}  // namespace
}  // namespace kaas::placement
