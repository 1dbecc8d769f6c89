#include "base/storage_error.h"

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(StorageError, CarriesCodeAndCanonicalStatus) {
  absl::Status s = StorageError(StorageErrorCode::kNotLeader, "epoch 3 < 5");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "epoch 3 < 5");
  EXPECT_EQ(GetStorageErrorCode(s), StorageErrorCode::kNotLeader);
  EXPECT_EQ(KafkaErrorCode(GetStorageErrorCode(s)), 6);
  EXPECT_EQ(KafkaErrorName(StorageErrorCode::kNotLeader),
            "NOT_LEADER_OR_FOLLOWER");
}

TEST(StorageError, OkIsNoneAndPlainErrorsAreStorageErrors) {
  EXPECT_EQ(GetStorageErrorCode(absl::OkStatus()), StorageErrorCode::kNone);
  EXPECT_EQ(GetStorageErrorCode(absl::InternalError("EIO")),
            StorageErrorCode::kStorageError);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kStorageError), 56);
}

TEST(StorageError, EveryCodeRoundTripsThroughAStatus) {
  for (int i = 1; i <= static_cast<int>(StorageErrorCode::kInvalidRequest);
       ++i) {
    auto code = static_cast<StorageErrorCode>(i);
    absl::Status s = StorageError(code, "x");
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(GetStorageErrorCode(s), code) << StorageErrorCodeName(code);
    EXPECT_GT(KafkaErrorCode(code), 0) << StorageErrorCodeName(code);
  }
}

TEST(StorageError, MappingOfTheKafkaTable) {
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kOffsetOutOfRange), 1);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kCorruptMessage), 2);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kUnknownTopicOrPartition), 3);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kMigrating), 5);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kRecordListTooLarge), 18);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kOutOfOrderSequence), 45);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kInvalidProducerEpoch), 47);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kStalled), 56);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kLogDirNotFound), 57);
  EXPECT_EQ(KafkaErrorCode(StorageErrorCode::kInvalidRecord), 87);
  EXPECT_TRUE(IsRetriable(StorageErrorCode::kStalled));
  EXPECT_FALSE(IsRetriable(StorageErrorCode::kOffsetOutOfRange));
}

TEST(EnsureStorageError, TypesAnUntypedErrorAndKeepsATypedOne) {
  absl::Status io = absl::ResourceExhaustedError("write: No space left");
  absl::Status typed = EnsureStorageError(io);
  EXPECT_EQ(GetStorageErrorCode(typed), StorageErrorCode::kStorageError);
  EXPECT_EQ(typed.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(typed.message(), "write: No space left");
  absl::Status not_leader = StorageError(StorageErrorCode::kNotLeader, "x");
  EXPECT_EQ(EnsureStorageError(not_leader), not_leader);
  EXPECT_TRUE(EnsureStorageError(absl::OkStatus()).ok());
  absl::StatusOr<int> value = 3;
  EXPECT_EQ(*EnsureStorageError(value), 3);
}

}  // namespace
}  // namespace kaas
