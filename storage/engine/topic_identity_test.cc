#include "storage/engine/topic_identity.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::StartsWith;

constexpr char kOldId[] = "11111111-2222-4333-8444-555555555555";
constexpr char kNewId[] = "22222222-3333-4444-8555-666666666666";

// A kInvalidConfig error whose message matches `message_matcher`.
template <typename M>
auto ConfigError(M message_matcher) {
  return AllOf(StatusIs(absl::StatusCode::kInvalidArgument, message_matcher),
               HasStorageError(StorageErrorCode::kInvalidConfig));
}

class TopicIdStampTest : public ::testing::Test {
 protected:
  std::string StampPath() const {
    return fs::JoinPath(dir_.path(), kTopicIdFileName);
  }

  absl::StatusOr<std::optional<std::string>> ReadStampFile(
      absl::string_view contents) {
    const absl::Status written =
        fs::WriteStringToFile(fs_, StampPath(), contents);
    if (!written.ok()) return written;
    return ReadTopicIdStamp(fs_, dir_.path());
  }

  fs::PosixFileSystem fs_;
  fs::ScopedTempDir dir_;
};

// ---- ReadTopicIdStamp ------------------------------------------------------

TEST_F(TopicIdStampTest, AbsentFileIsUnstamped) {
  EXPECT_THAT(ReadTopicIdStamp(fs_, dir_.path()), IsOkAndHolds(std::nullopt));
}

TEST_F(TopicIdStampTest, AbsentTopicDirIsUnstamped) {
  EXPECT_THAT(ReadTopicIdStamp(fs_, fs::JoinPath(dir_.path(), "missing")),
              IsOkAndHolds(std::nullopt));
}

TEST_F(TopicIdStampTest, EmptyIdIsUnstamped) {
  EXPECT_THAT(ReadStampFile(R"({"topicId": ""})"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(ReadStampFile("{}"), IsOkAndHolds(std::nullopt));
}

TEST_F(TopicIdStampTest, ReadsTheId) {
  EXPECT_THAT(ReadStampFile(absl::StrCat(R"({"topicId": ")", kOldId, "\"}")),
              IsOkAndHolds(Optional(std::string(kOldId))));
}

TEST_F(TopicIdStampTest, AcceptsUppercaseHexVerbatim) {
  EXPECT_THAT(
      ReadStampFile(R"({"topicId": "ABCDEF01-2345-4678-9ABC-DEF012345678"})"),
      IsOkAndHolds(
          Optional(std::string("ABCDEF01-2345-4678-9ABC-DEF012345678"))));
}

TEST_F(TopicIdStampTest, NonUuidIdIsInvalidConfig) {
  for (const char* id : {
           "11111111222243338444555555555555",        // no hyphens
           "{11111111-2222-4333-8444-555555555555}",  // braces
           "11111111-2222-4333-8444-55555555555",     // last group short
           "1111111-12222-4333-8444-555555555555",    // groups misplaced
           "g1111111-2222-4333-8444-555555555555",    // not hex
           " 11111111-2222-4333-8444-555555555555",   // padded
           "11111111-2222-4333-8444-555555555555\n",  // trailing newline
           "orders",
       }) {
    SCOPED_TRACE(id);
    EXPECT_THAT(
        ReadStampFile(absl::StrCat(
            R"({"topicId": )", ::testing::PrintToString(std::string(id)), "}")),
        ConfigError(StartsWith(StampPath() + ": field topicId: ")));
  }
  EXPECT_THAT(
      ReadStampFile(R"({"topicId": "orders"})"),
      ConfigError(StampPath() + ": field topicId: \"orders\" is not a UUID "
                                "(8-4-4-4-12 hex digits) nor empty"));
}

TEST_F(TopicIdStampTest, MalformedFileIsInvalidConfigNamingThePath) {
  for (const char* contents : {"", "{\"topicId\": ", "[]", "not json"}) {
    SCOPED_TRACE(contents);
    EXPECT_THAT(ReadStampFile(contents),
                ConfigError(StartsWith(StampPath() + ": ")));
  }
}

TEST_F(TopicIdStampTest, UnknownFieldIsInvalidConfigNamingTheField) {
  EXPECT_THAT(
      ReadStampFile(absl::StrCat(R"({"topicID": ")", kOldId, "\"}")),
      ConfigError(StartsWith(StampPath() + ": unknown field \"topicID\"")));
}

TEST_F(TopicIdStampTest, WrongTypeIsInvalidConfigNamingTheField) {
  EXPECT_THAT(
      ReadStampFile(R"({"topicId": 7})"),
      ConfigError(StampPath() + ": field topicId: expected a string, got 7"));
}

TEST_F(TopicIdStampTest, IdGivenTwiceIsInvalidConfig) {
  EXPECT_THAT(ReadStampFile(absl::StrCat(R"({"topicId": ")", kOldId,
                                         R"(", "topicId": ")", kNewId, "\"}")),
              ConfigError(StampPath() + ": field topicId: set twice"));
}

TEST_F(TopicIdStampTest, ADirectoryInPlaceOfTheStampIsAnInvalidConfig) {
  ASSERT_OK(fs_.CreateDirs(StampPath()));
  EXPECT_THAT(ReadTopicIdStamp(fs_, dir_.path()),
              HasStorageError(StorageErrorCode::kInvalidConfig));
}

// ---- WriteTopicIdStamp -----------------------------------------------------

TEST_F(TopicIdStampTest, WriteThenReadRoundTrips) {
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), kOldId));
  EXPECT_THAT(ReadTopicIdStamp(fs_, dir_.path()),
              IsOkAndHolds(Optional(std::string(kOldId))));
  EXPECT_THAT(fs::ReadWholeFile(fs_, StampPath()),
              IsOkAndHolds(absl::StrCat(R"({"topicId":")", kOldId, "\"}")));
}

TEST_F(TopicIdStampTest, WriteReplacesTheStampAndLeavesNoTempFile) {
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), kOldId));
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), kNewId));
  EXPECT_THAT(ReadTopicIdStamp(fs_, dir_.path()),
              IsOkAndHolds(Optional(std::string(kNewId))));
  EXPECT_THAT(fs_.ListDir(dir_.path()),
              IsOkAndHolds(ElementsAre(std::string(kTopicIdFileName))));
}

TEST_F(TopicIdStampTest, WritingAnEmptyIdUnstamps) {
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), kOldId));
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), ""));
  EXPECT_THAT(ReadTopicIdStamp(fs_, dir_.path()), IsOkAndHolds(std::nullopt));
}

TEST_F(TopicIdStampTest, WritingANonUuidFailsAndWritesNothing) {
  EXPECT_THAT(
      WriteTopicIdStamp(fs_, dir_.path(), "orders"),
      ConfigError(HasSubstr("field topicId: \"orders\" is not a UUID")));
  EXPECT_THAT(fs_.ListDir(dir_.path()), IsOkAndHolds(::testing::IsEmpty()));
}

// ---- CheckTopicIdentity: the gate ------------------------------------------

using Stamp = absl::StatusOr<std::optional<std::string>>;

Stamp Unstamped() { return std::optional<std::string>(); }
Stamp StampedOld() { return std::optional<std::string>(kOldId); }

std::vector<TopicIncarnation> AllIncarnationKinds() {
  return {TopicIncarnation::Unknown(), TopicIncarnation::Pending(),
          TopicIncarnation::Known(kOldId), TopicIncarnation::Known(kNewId)};
}

TEST(CheckTopicIdentity, UnstampedDirIsAlwaysAdopted) {
  const Stamp empty_id = std::optional<std::string>("");
  for (const TopicIncarnation& incarnation : AllIncarnationKinds()) {
    SCOPED_TRACE(incarnation.topic_id);
    EXPECT_OK(CheckTopicIdentity("orders", incarnation, Unstamped()));
    EXPECT_OK(CheckTopicIdentity("orders", incarnation, empty_id));
  }
}

TEST(CheckTopicIdentity, UnreadableStampIsAdopted) {
  const Stamp unreadable = StorageError(StorageErrorCode::kInvalidConfig,
                                        "/d/orders/.topic-id.json: bad");
  const Stamp io_error = absl::InternalError("read: Input/output error");
  for (const TopicIncarnation& incarnation : AllIncarnationKinds()) {
    SCOPED_TRACE(incarnation.topic_id);
    EXPECT_OK(CheckTopicIdentity("orders", incarnation, unreadable));
    EXPECT_OK(CheckTopicIdentity("orders", incarnation, io_error));
  }
}

TEST(CheckTopicIdentity, UnknownIncarnationAdoptsAStampedDir) {
  EXPECT_OK(
      CheckTopicIdentity("orders", TopicIncarnation::Unknown(), StampedOld()));
}

TEST(CheckTopicIdentity, MatchingStampIsAdopted) {
  EXPECT_OK(CheckTopicIdentity("orders", TopicIncarnation::Known(kOldId),
                               StampedOld()));
}

TEST(CheckTopicIdentity, StampMatchesRegardlessOfHexCase) {
  const Stamp upper =
      std::optional<std::string>("ABCDEF01-2345-4678-9ABC-DEF012345678");
  EXPECT_OK(CheckTopicIdentity(
      "orders", TopicIncarnation::Known("abcdef01-2345-4678-9abc-def012345678"),
      upper));
}

TEST(CheckTopicIdentity, OtherIncarnationsStampIsStale) {
  const absl::Status status = CheckTopicIdentity(
      "orders", TopicIncarnation::Known(kNewId), StampedOld());
  EXPECT_THAT(
      status,
      HasStorageErrorWithMessage(
          StorageErrorCode::kStaleTopicDir,
          absl::StrCat("topic \"orders\": the directory belongs to "
                       "incarnation ",
                       kOldId, " but the current incarnation is ", kNewId,
                       "; waiting for the operator to reclaim it")));
  EXPECT_TRUE(IsRetriable(GetStorageErrorCode(status)));
}

TEST(CheckTopicIdentity, PendingIncarnationRefusesAStampedDir) {
  EXPECT_THAT(
      CheckTopicIdentity("orders", TopicIncarnation::Pending(), StampedOld()),
      HasStorageErrorWithMessage(
          StorageErrorCode::kStaleTopicDir,
          AllOf(StartsWith(absl::StrCat(
                    "topic \"orders\": the directory belongs to incarnation ",
                    kOldId, " but the current incarnation has no id yet")),
                HasSubstr("waiting for the operator to reclaim it"))));
}

// The gate fed by the reader, as the engine uses them together.
TEST_F(TopicIdStampTest, GateAdoptsADirWhoseStampCannotBeParsed) {
  ASSERT_OK(fs::WriteStringToFile(fs_, StampPath(), "{garbage"));
  const Stamp stamp = ReadTopicIdStamp(fs_, dir_.path());
  ASSERT_THAT(stamp, HasStorageError(StorageErrorCode::kInvalidConfig));
  EXPECT_OK(
      CheckTopicIdentity("orders", TopicIncarnation::Known(kNewId), stamp));
}

TEST_F(TopicIdStampTest, GateRefusesADirStampedByAnotherIncarnation) {
  ASSERT_OK(WriteTopicIdStamp(fs_, dir_.path(), kOldId));
  EXPECT_THAT(CheckTopicIdentity("orders", TopicIncarnation::Known(kNewId),
                                 ReadTopicIdStamp(fs_, dir_.path())),
              HasStorageError(StorageErrorCode::kStaleTopicDir));
  EXPECT_OK(CheckTopicIdentity("orders", TopicIncarnation::Known(kOldId),
                               ReadTopicIdStamp(fs_, dir_.path())));
}

}  // namespace
}  // namespace kaas
