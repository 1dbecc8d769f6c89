// DiskEngine: topic config overrides, the identity gate, persistent producer
// fences, corrupt metadata files.
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/partition_files.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::HasSubstr;

const TopicPartition kTp{"orders", 0};

class MetadataTest : public DiskEngineTest {
 protected:
  void WriteTopicFile(absl::string_view name, absl::string_view json) {
    DiskEngineTest::WriteTopicFile("orders", name, json);
  }
  void RemoveTopicFile(absl::string_view name) {
    DiskEngineTest::RemoveTopicFile("orders", name);
  }
};

TEST_F(MetadataTest, TopicOverridesApplyAtOpenAndReloadOverTheDefault) {
  WriteTopicFile(kTopicConfigFileName, R"({"segmentBytes": 4096})");
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(
        engine->AppendAndWait(kTp, 1, Acks::kAll, Batch(1, 1000)).status());
  }
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  EXPECT_GT(view.segments.size(), 2u);
  EXPECT_EQ(view.config.segment_bytes, 4096u);
  // D-17: a removed override reverts to the engine default, not the
  // partition's current value.
  RemoveTopicFile(kTopicConfigFileName);
  ASSERT_OK(engine->ReloadTopicConfig(kTp));
  ASSERT_OK_AND_ASSIGN(view, engine->DescribeForRetention(kTp));
  EXPECT_EQ(view.config.segment_bytes, SmallConfig().segment_bytes);
}

TEST_F(MetadataTest, InvalidTopicConfigIsALoudTypedError) {
  WriteTopicFile(kTopicConfigFileName, R"({"segmentByts": 4096})");
  auto engine = NewEngine();
  EXPECT_THAT(engine->TakeOver(kTp, 1).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("segmentByts")));
  EXPECT_THAT(engine->GetTopicConfig("orders").status(),
              HasStorageError(StorageErrorCode::kInvalidConfig));
  // Creating the partition reports it too, and creates nothing.
  EXPECT_THAT(engine->CreatePartition(kTp),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("segmentByts")));
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders", "0")),
              IsOkAndHolds(false));
  WriteTopicFile(kTopicConfigFileName, R"({"retentionMs": 60000})");
  ASSERT_OK_AND_ASSIGN(std::optional<TopicConfigOverrides> config,
                       engine->GetTopicConfig("orders"));
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->retention_ms, 60000);
  EXPECT_OK(engine->CreatePartition(kTp));
  EXPECT_OK(engine->TakeOver(kTp, 1).status());
}

TEST_F(MetadataTest, SetTopicConfigWritesEveryLogDirAndAppliesToLedPartitions) {
  auto engine = NewEngine({"fast", "bulk"});
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  TopicConfigOverrides overrides;
  overrides.segment_bytes = 4096;
  overrides.retention_ms = -1;
  ASSERT_OK(engine->SetTopicConfig("orders", overrides));
  // In every log dir, so a partition placed or moved anywhere reads it.
  for (const std::string& root :
       {data_dir(), ExtraDir("fast"), ExtraDir("bulk")}) {
    EXPECT_THAT(ReadTopicConfig(fs(), fs::JoinPath(root, "orders")),
                IsOkAndHolds(std::optional<TopicConfigOverrides>(overrides)))
        << root;
  }
  ASSERT_OK_AND_ASSIGN(RetentionView view, engine->DescribeForRetention(kTp));
  EXPECT_EQ(view.config.segment_bytes, 4096u);
  EXPECT_EQ(view.config.retention_ms, std::nullopt);
  // Empty overrides: back to the engine defaults (a recreated topic does
  // not inherit its predecessor's settings).
  ASSERT_OK(engine->SetTopicConfig("orders", TopicConfigOverrides()));
  ASSERT_OK_AND_ASSIGN(view, engine->DescribeForRetention(kTp));
  EXPECT_EQ(view.config.segment_bytes, SmallConfig().segment_bytes);
  EXPECT_EQ(view.config.retention_ms, SmallConfig().retention_ms);
  EXPECT_THAT(engine->GetTopicConfig("orders"),
              IsOkAndHolds(
                  std::optional<TopicConfigOverrides>(TopicConfigOverrides())));
}

TEST_F(MetadataTest, SetTopicConfigRefusesAnInvalidValueAndWritesNothing) {
  auto engine = NewEngine();
  TopicConfigOverrides overrides;
  overrides.segment_bytes = 100;  // below the minimum 1024
  EXPECT_THAT(engine->SetTopicConfig("orders", overrides),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("segmentBytes")));
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders")),
              IsOkAndHolds(false));
}

TEST_F(MetadataTest, SetTopicConfigRefusesALinkAndNeverWritesThroughIt) {
  const std::string outside = fs::JoinPath(ExtraDir("outside"), "victim");
  ASSERT_OK(fs::CreateDirsDurably(fs(), ExtraDir("outside")));
  ASSERT_OK(fs::WriteStringToFile(fs(), outside, "keep me"));
  ASSERT_OK(fs::CreateDirsDurably(fs(), fs::JoinPath(data_dir(), "orders")));
  ASSERT_EQ(
      symlink(outside.c_str(),
              fs::JoinPath(data_dir(), "orders", kTopicConfigFileName).c_str()),
      0);
  auto engine = NewEngine();
  TopicConfigOverrides overrides;
  overrides.retention_ms = 60000;
  EXPECT_THAT(engine->SetTopicConfig("orders", overrides),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("symbolic link")));
  EXPECT_THAT(fs::ReadWholeFile(fs(), outside), IsOkAndHolds("keep me"));
}

TEST_F(MetadataTest, IdentityGateRefusesAStaleDirectoryAndCreatesNothing) {
  const std::string old_id = "11111111-2222-4333-8444-555555555555";
  const std::string new_id = "66666666-7777-4888-9999-aaaaaaaaaaaa";
  ASSERT_OK(fs::CreateDirsDurably(fs(), fs::JoinPath(data_dir(), "orders")));
  ASSERT_OK(
      WriteTopicIdStamp(fs(), fs::JoinPath(data_dir(), "orders"), old_id));
  auto engine = NewEngine();
  engine->SetIdentityResolver(
      std::make_shared<FixedIdentity>(TopicIncarnation::Known(new_id)));
  EXPECT_THAT(engine->TakeOver(kTp, 1).status(),
              HasStorageError(StorageErrorCode::kStaleTopicDir));
  EXPECT_THAT(engine->CreatePartition(kTp),
              HasStorageError(StorageErrorCode::kStaleTopicDir));
  EXPECT_THAT(fs().Exists(fs::JoinPath(data_dir(), "orders", "0")),
              IsOkAndHolds(false));
  // Pending over a stamped dir waits too; the reclaim restamps and it opens.
  engine->SetIdentityResolver(
      std::make_shared<FixedIdentity>(TopicIncarnation::Pending()));
  EXPECT_THAT(engine->TakeOver(kTp, 1).status(),
              HasStorageError(StorageErrorCode::kStaleTopicDir));
  engine->SetIdentityResolver(
      std::make_shared<FixedIdentity>(TopicIncarnation::Known(new_id)));
  ASSERT_OK(
      WriteTopicIdStamp(fs(), fs::JoinPath(data_dir(), "orders"), new_id));
  EXPECT_OK(engine->TakeOver(kTp, 1).status());
}

TEST_F(MetadataTest, UnknownIncarnationAndUnstampedDirsAreAdopted) {
  auto engine = NewEngine();
  engine->SetIdentityResolver(std::make_shared<FixedIdentity>(
      TopicIncarnation::Known("11111111-2222-4333-8444-555555555555")));
  EXPECT_OK(engine->TakeOver(kTp, 1).status());  // unstamped
  ASSERT_OK(WriteTopicIdStamp(fs(), fs::JoinPath(data_dir(), "orders"),
                              "66666666-7777-4888-9999-aaaaaaaaaaaa"));
  engine->SetIdentityResolver(
      std::make_shared<FixedIdentity>(TopicIncarnation::Unknown()));
  EXPECT_OK(engine->TakeOver({"orders", 1}, 1).status());
}

// D-24: a fence recorded while a partition is not open still applies when it
// is taken over later, by this engine or a fresh one.
TEST_F(MetadataTest, ProducerFencesPersistForPartitionsOpenedLater) {
  auto engine = NewEngine();
  ASSERT_OK(engine->FenceProducerEpoch(/*producer_id=*/77, /*epoch=*/5));
  engine.reset();
  engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  test::BatchBuilder zombie;
  zombie.Producer(77, 4, 0).AddRecord(absl::nullopt, "x");
  EXPECT_THAT(engine->Append(kTp, 1, Acks::kAll, zombie.Build()).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  test::BatchBuilder fenced;
  fenced.Producer(77, 5, 0).AddRecord(absl::nullopt, "y");
  EXPECT_OK(engine->AppendAndWait(kTp, 1, Acks::kAll, fenced.Build()).status());
}

// A log dir whose volume is not mounted is an empty directory at the mount
// point: the engine refuses to start on it (it would take partitions over
// there as new and empty) until told to format it.
TEST_F(MetadataTest, AnUnformattedEmptyLogDirIsRefusedUntilFormatted) {
  {
    auto engine = NewEngine({"bulk"});
    ASSERT_OK(engine->TakeOver(kTp, 1).status());
    ASSERT_OK(engine->AppendAndWait(kTp, 1, Acks::kAll, Batch()).status());
  }
  // "Unmount" the extra log dir: its path is now an empty directory.
  ASSERT_OK(fs().Rename(ExtraDir("bulk"), ExtraDir("bulk-volume")));
  ASSERT_OK(fs().CreateDirs(ExtraDir("bulk")));
  EXPECT_THAT(DiskEngine::Create(MakeOptions({"bulk"})).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("bulk")));
  // "Mount" it again: served as before, nothing lost.
  ASSERT_OK(fs().RemoveDir(ExtraDir("bulk")));
  ASSERT_OK(fs().Rename(ExtraDir("bulk-volume"), ExtraDir("bulk")));
  auto engine = NewEngine({"bulk"});
  ASSERT_NE(engine, nullptr);
  EXPECT_THAT(engine->TakeOver(kTp, 2), IsOkAndHolds(1));
  // An operator who means the empty dir formats it.
  ASSERT_OK(fs().CreateDirs(ExtraDir("fresh")));
  DiskEngine::Options options = MakeOptions({"fresh"});
  EXPECT_FALSE(DiskEngine::Create(options).ok());
  options.format_log_dirs = true;
  EXPECT_OK(DiskEngine::Create(options).status());
}

TEST_F(MetadataTest, ALogDirOfAnotherClusterIsRefused) {
  DiskEngine::Options options = MakeOptions();
  options.cluster_id = "blue";
  ASSERT_OK(DiskEngine::Create(options).status());
  options.cluster_id = "green";
  EXPECT_THAT(DiskEngine::Create(options).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("belongs to cluster")));
}

// Two engines sharing a data dir (brokers on a shared volume): a fence one
// records reaches a partition the other takes over afterwards, and neither's
// fences overwrite the other's.
TEST_F(MetadataTest, EnginesSharingADataDirHonourEachOthersFences) {
  auto a = NewEngine();
  auto b = NewEngine();
  ASSERT_OK(a->FenceProducerEpoch(/*producer_id=*/77, /*epoch=*/5));
  ASSERT_OK(b->FenceProducerEpoch(/*producer_id=*/88, /*epoch=*/2));
  ASSERT_OK(b->TakeOver(kTp, 1).status());
  test::BatchBuilder zombie;
  zombie.Producer(77, 4, 0).AddRecord(absl::nullopt, "x");
  EXPECT_THAT(b->Append(kTp, 1, Acks::kAll, zombie.Build()).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
  // Both fences survive in the record a third engine loads.
  a.reset();
  b.reset();
  auto c = NewEngine();
  ASSERT_OK(c->TakeOver(kTp, 2).status());
  for (auto [producer, epoch] : {std::pair{77, 4}, std::pair{88, 1}}) {
    test::BatchBuilder fenced;
    fenced.Producer(producer, static_cast<int16_t>(epoch), 0)
        .AddRecord(absl::nullopt, "y");
    EXPECT_THAT(c->Append(kTp, 2, Acks::kAll, fenced.Build()).status(),
                HasStorageError(StorageErrorCode::kInvalidProducerEpoch))
        << producer;
  }
}

// The fences file lives in the data dir beside the topic dirs; a topic
// named like it once made FenceProducerEpoch fail (EISDIR) and the next
// start-up refuse to open the data dir.
TEST_F(MetadataTest, ATopicNamedProducerFencesCoexistsWithTheFences) {
  const TopicPartition tp{"producer-fences", 0};
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(tp, 1).status());
  ASSERT_OK(engine->AppendAndWait(tp, 1, Acks::kAll, Batch()).status());
  ASSERT_OK(engine->FenceProducerEpoch(/*producer_id=*/77, /*epoch=*/5));
  engine.reset();
  engine = NewEngine();
  ASSERT_NE(engine, nullptr);
  EXPECT_THAT(engine->PartitionsOnDisk(), ::testing::ElementsAre(tp));
  ASSERT_OK_AND_ASSIGN(int64_t log_end, engine->TakeOver(tp, 1));
  EXPECT_EQ(log_end, 1);
  test::BatchBuilder zombie;
  zombie.Producer(77, 4, 0).AddRecord(absl::nullopt, "x");
  EXPECT_THAT(engine->Append(tp, 1, Acks::kAll, zombie.Build()).status(),
              HasStorageError(StorageErrorCode::kInvalidProducerEpoch));
}

// D-21: no corrupt metadata file makes a partition unopenable.
TEST_F(MetadataTest, CorruptMetadataFilesAreSetAsideAndRebuilt) {
  std::string partition_dir = fs::JoinPath(data_dir(), "orders", "0");
  test::BatchBuilder producer;
  producer.Producer(9, 0, 0).AddRecord(absl::nullopt, "v");
  std::string idempotent = producer.Build();
  {
    auto engine = NewEngine();
    ASSERT_OK(engine->TakeOver(kTp, 3).status());
    ASSERT_OK(engine->AppendAndWait(kTp, 3, Acks::kAll, Batch(2)).status());
    ASSERT_OK(engine->AppendAndWait(kTp, 3, Acks::kAll, idempotent).status());
    ASSERT_OK(engine->Drain());
  }
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> names,
                       fs().ListDir(partition_dir));
  for (const std::string& name : names) {
    if (name == "manifest" || name == "recovery-checkpoint" ||
        absl::EndsWith(name, ".snapshot")) {
      ASSERT_OK(fs::ReplaceFileDurably(fs(), fs::JoinPath(partition_dir, name),
                                       "\x01garbage"));
    }
  }
  auto engine = NewEngine();
  ASSERT_OK_AND_ASSIGN(int64_t log_end, engine->TakeOver(kTp, 3));
  EXPECT_EQ(log_end, 3);
  // The producer state came back from the log: the retry is a duplicate.
  ASSERT_OK_AND_ASSIGN(AppendResult retry,
                       engine->AppendAndWait(kTp, 3, Acks::kAll, idempotent));
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.base_offset, 2);
  ASSERT_OK_AND_ASSIGN(names, fs().ListDir(partition_dir));
  EXPECT_THAT(names, ::testing::Contains("manifest.corrupt"));
}

}  // namespace
}  // namespace kaas
