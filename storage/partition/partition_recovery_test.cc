// Recovery: torn tails, flipped bits, garbage, index damage, deposed
// leaders' segments, checkpoints and corrupt metadata files.
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/partition_testlib.h"
#include "testing/status_matchers.h"

namespace kaas::partition {
namespace {

using ::kaas::test::FsOp;
using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::PathPattern;
using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr absl::string_view kFirstStem = "00000001-00000000000000000000";
constexpr absl::string_view kFirstLog = "00000001-00000000000000000000.log";
constexpr absl::string_view kFirstIndex = "00000001-00000000000000000000.index";

class RecoveryTest : public PartitionTest {
 protected:
  // Writes `batches` single-record batches at epoch 1, then abandons (as a
  // crash would, without a final checkpoint) and removes the checkpoint so
  // that recovery verifies the whole log.
  void WriteLog(int batches, size_t value_size = 40) {
    auto partition = OpenLeader(1);
    for (int i = 0; i < batches; ++i) {
      AppendDurably(*partition, Batch(1, value_size));
    }
    batch_size_ = Batch(1, value_size).size();
    AbandonWithoutPadding(*partition);
    RemoveCheckpoint();
  }
  // The next write to a .log fails with EIO after writing 100 bytes.
  void InjectTornLogWrite() {
    test::Fault torn(FsOp::kWrite, EIO);
    torn.path = PathPattern::Substring(".log");
    torn.torn_write_bytes = 100;
    fs().InjectFault(torn);
  }
  void RemoveCheckpoint() {
    fs::PosixFileSystem::Default()
        ->Unlink(PathOf(metadata::kCheckpointFileName))
        .IgnoreError();
  }
  void RemoveSnapshots() {
    for (const std::string& name : ListDir()) {
      if (absl::EndsWith(name, ".snapshot")) {
        ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
      }
    }
  }
  std::string ReadFile(absl::string_view name) {
    return fs::ReadWholeFile(*fs::PosixFileSystem::Default(), PathOf(name))
        .value();
  }
  void WriteFile(absl::string_view name, absl::string_view content) {
    ASSERT_OK(fs::WriteStringToFile(*fs::PosixFileSystem::Default(),
                                    PathOf(name), content));
  }
  // Puts `log` back as the only segment (a reopen rolls on its first append
  // by segment.ms, the first batch being old by the manual clock).
  void RestoreFirstSegment(absl::string_view log) {
    for (const std::string& name : ListDir()) {
      if (!absl::StartsWith(name, kFirstStem) &&
          (absl::EndsWith(name, ".log") || absl::EndsWith(name, "index"))) {
        ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
      }
    }
    WriteFile(kFirstLog, log);
  }
  size_t batch_size_ = 0;
};

// D-11: torn tails of every length, including ones shorter than the 12-byte
// length prefix, are truncated; appends after recovery survive the next one.
TEST_F(RecoveryTest, TornTailsOfEveryLengthAreTruncated) {
  WriteLog(3);
  std::string clean = ReadFile(kFirstLog);
  std::string extra = Batch(1, 40);
  for (size_t cut = 1; cut < extra.size(); ++cut) {
    SCOPED_TRACE(absl::StrCat("tail of ", cut, " bytes"));
    WriteFile(kFirstLog, clean + extra.substr(0, cut));
    RemoveCheckpoint();
    OpenReport report;
    auto partition = OpenLeader(1, SmallConfig(), &report);
    EXPECT_EQ(partition->LogEndOffset(), 3);
    EXPECT_EQ(report.truncated_bytes, cut);
    EXPECT_EQ(AppendDurably(*partition, Batch(1, 40)), 3);
    partition->Abandon();
    RemoveCheckpoint();
    partition = Open();
    EXPECT_EQ(partition->LogEndOffset(), 4);
    partition->Abandon();
    RestoreFirstSegment(clean);
  }
}

TEST_F(RecoveryTest, AFlippedBitInTheLastBatchTruncatesIt) {
  WriteLog(3);
  std::string clean = ReadFile(kFirstLog);
  const size_t last = 2 * batch_size_;
  // Every header field's bytes (except partitionLeaderEpoch [12, 16), which
  // nothing covers) and some payload bytes.
  std::vector<size_t> positions;
  for (size_t i = 0; i < batch_layout::kHeaderSize; ++i) {
    if (i >= 12 && i < 16) continue;
    positions.push_back(i);
  }
  positions.push_back(batch_layout::kHeaderSize + 3);
  positions.push_back(batch_size_ - 1);
  for (size_t position : positions) {
    SCOPED_TRACE(absl::StrCat("byte ", position, " of the last batch"));
    std::string corrupt = clean;
    corrupt[last + position] ^= 0x10;
    WriteFile(kFirstLog, corrupt);
    RemoveCheckpoint();
    OpenReport report;
    auto partition = Open(SmallConfig(), &report);
    EXPECT_EQ(partition->LogEndOffset(), 2);
    EXPECT_EQ(ReadFile(kFirstLog).size(), last);
    EXPECT_FALSE(report.problems.empty());
    partition->Abandon();
    WriteFile(kFirstLog, clean);
  }
}

TEST_F(RecoveryTest, GarbageAfterACleanLogIsTruncated) {
  WriteLog(4);
  std::string clean = ReadFile(kFirstLog);
  WriteFile(kFirstLog, clean + std::string(1000, '\x5a'));
  OpenReport report;
  auto partition = Open(SmallConfig(), &report);
  EXPECT_EQ(partition->LogEndOffset(), 4);
  EXPECT_EQ(report.truncated_bytes, 1000u);
  EXPECT_EQ(ReadFile(kFirstLog), clean);
}

TEST_F(RecoveryTest, ZeroFilledTailIsTruncated) {
  WriteLog(2);
  std::string clean = ReadFile(kFirstLog);
  WriteFile(kFirstLog, clean + std::string(4096, '\0'));
  auto partition = Open();
  EXPECT_EQ(partition->LogEndOffset(), 2);
  EXPECT_EQ(ReadFile(kFirstLog), clean);
}

TEST_F(RecoveryTest, ACleanLogIsNotModified) {
  WriteLog(5);
  std::string clean = ReadFile(kFirstLog);
  OpenReport report;
  auto partition = Open(SmallConfig(), &report);
  EXPECT_EQ(report.truncated_bytes, 0u);
  EXPECT_TRUE(report.problems.empty()) << report.problems[0];
  EXPECT_EQ(ReadFile(kFirstLog), clean);
}

// D-22: a garbage length never makes recovery allocate it.
TEST_F(RecoveryTest, AHugeGarbageLengthIsCorruptionNotAnAllocation) {
  WriteLog(2);
  std::string clean = ReadFile(kFirstLog);
  std::string bogus(12, '\0');
  WriteBigEndian64(bogus.data(), 2);
  WriteBigEndian32(bogus.data() + 8, 0x7ffffff0);
  WriteFile(kFirstLog, clean + bogus + std::string(100, 'x'));
  auto partition = Open();
  EXPECT_EQ(partition->LogEndOffset(), 2);
}

// D-4: missing, truncated, unsorted or bogus index files never serve wrong
// data; they are rebuilt from the log.
TEST_F(RecoveryTest, DamagedIndexesAreRebuilt) {
  PartitionConfig config = SmallConfig();
  config.index_interval_bytes = 64;
  struct Case {
    const char* name;
    std::function<std::string(const std::string&)> damage;
  };
  std::vector<Case> cases = {
      {"missing", nullptr},
      {"truncated",
       [](const std::string& s) { return s.substr(0, s.size() - 3); }},
      {"unsorted",
       [](const std::string& s) {
         return s.substr(8, 8) + s.substr(0, 8) + s.substr(16);
       }},
      {"bogus positions",
       [](const std::string& s) { return std::string(s.size(), '\x7f'); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    {
      auto partition = OpenLeader(1, config);
      for (int i = 0; i < 30; ++i) AppendDurably(*partition, Batch(1, 40));
      ASSERT_OK(partition->Relinquish());
    }
    std::string index = ReadFile(kFirstIndex);
    ASSERT_GT(index.size(), 16u);
    if (c.damage == nullptr) {
      ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(kFirstIndex)));
    } else {
      WriteFile(kFirstIndex, c.damage(index));
    }
    RemoveCheckpoint();
    auto partition = OpenLeader(1, config);
    for (int64_t offset : {0, 7, 15, 29}) {
      ASSERT_OK_AND_ASSIGN(
          ReadResult read,
          partition->Read(offset, 1, Isolation::kReadUncommitted));
      ASSERT_EQ(read.batches, 1);
      EXPECT_EQ(ReadBigEndian64(std::string(read.records).data()), offset);
    }
    ASSERT_OK(partition->Relinquish());
    EXPECT_EQ(ReadFile(kFirstIndex), index);  // rewritten from the log
    partition.reset();
    ASSERT_OK(fs::RemoveTree(*fs::PosixFileSystem::Default(), dir()));
  }
}

// D-14: a segment written by a deposed leader after the take-over (lower
// epoch, higher base offset) is quarantined and never served.
TEST_F(RecoveryTest, DeposedLeadersSegmentIsQuarantined) {
  {
    auto partition = OpenLeader(1);
    AppendDurably(*partition, Batch(2), 1);
    ASSERT_OK(partition->TakeOver(2).status());
    AppendDurably(*partition, Batch(2), 2);
    ASSERT_OK(partition->Relinquish());
  }
  // The old leader rolled on its own at offset 4 (epoch 1 < 2).
  std::string zombie = Batch(3);
  WriteBigEndian64(zombie.data(), 4);
  WriteFile("00000001-00000000000000000004.log", zombie);
  OpenReport report;
  auto partition = OpenLeader(2, SmallConfig(), &report);
  EXPECT_EQ(partition->LogEndOffset(), 4);
  EXPECT_THAT(ListDir(),
              Contains("00000001-00000000000000000004.log.quarantined"));
  EXPECT_THAT(ListDir(), Not(Contains("00000001-00000000000000000004.log")));
  EXPECT_THAT(report.quarantined,
              Contains("00000001-00000000000000000004.log"));
  EXPECT_EQ(ReadAll(*partition).size(), 2 * Batch(2).size());
}

TEST_F(RecoveryTest, ValidCheckpointBoundsTheScan) {
  PartitionConfig config = SmallConfig();
  config.checkpoint_interval_bytes = 1024;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 40; ++i) AppendDurably(*partition, Batch(1, 100));
    partition->Abandon();  // a crash: no final checkpoint
  }
  OpenReport report;
  auto partition = Open(config, &report);
  EXPECT_TRUE(report.used_checkpoint);
  // (Plus, with direct I/O, the zero padding of the last block.)
  EXPECT_LT(report.scanned_bytes,
            2048u + (direct_io() ? fs::kDirectIoAlignment : 0));
  EXPECT_EQ(partition->LogEndOffset(), 40);
}

TEST_F(RecoveryTest, StaleOrCorruptCheckpointMeansAFullScan) {
  WriteLog(10);
  // A checkpoint naming another segment is ignored.
  metadata::RecoveryCheckpoint other;
  other.set_segment_base_offset(999);
  other.set_position(0);
  other.set_next_offset(12345);
  ASSERT_OK(metadata::WriteCheckpoint(fs(), dir(), other));
  OpenReport report;
  auto partition = Open(SmallConfig(), &report);
  EXPECT_FALSE(report.used_checkpoint);
  EXPECT_EQ(partition->LogEndOffset(), 10);
  EXPECT_EQ(report.scanned_bytes, 10 * batch_size_);
  partition->Abandon();
  // A position past the end of the file is ignored too.
  metadata::RecoveryCheckpoint past_end;
  past_end.set_segment_epoch(1);
  past_end.set_position(1 << 20);
  past_end.set_next_offset(99);
  ASSERT_OK(metadata::WriteCheckpoint(fs(), dir(), past_end));
  partition = Open(SmallConfig(), &report);
  EXPECT_EQ(partition->LogEndOffset(), 10);
  partition->Abandon();
  // A corrupt checkpoint is set aside and reported.
  WriteFile(metadata::kCheckpointFileName, "not a checkpoint");
  OpenReport corrupt;
  partition = Open(SmallConfig(), &corrupt);
  EXPECT_EQ(partition->LogEndOffset(), 10);
  EXPECT_THAT(corrupt.quarantined, Contains("recovery-checkpoint"));
  EXPECT_THAT(ListDir(), Contains("recovery-checkpoint.corrupt"));
}

// D-21: a corrupt manifest never makes the partition unopenable; the epoch
// comes back from the segment names (never lowered).
TEST_F(RecoveryTest, CorruptManifestIsSetAsideAndRebuilt) {
  {
    auto partition = OpenLeader(7);
    AppendDurably(*partition, Batch(3), 7);
    ASSERT_OK(partition->Relinquish());
  }
  WriteFile(metadata::kManifestFileName, "garbage");
  OpenReport report;
  auto partition = OpenLeader(7, SmallConfig(), &report);
  EXPECT_EQ(partition->LeaderEpoch(), 7);
  EXPECT_EQ(partition->LogEndOffset(), 3);
  EXPECT_THAT(ListDir(), Contains("manifest.corrupt"));
  EXPECT_THAT(report.problems, Contains(HasSubstr("corrupt manifest")));
  ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest,
                       metadata::ReadManifest(fs(), dir()));
  EXPECT_EQ(manifest.leader_epoch(), 7);
}

TEST_F(RecoveryTest, ManifestFromANewerVersionRefusesToOpen) {
  WriteLog(1);
  ASSERT_OK(metadata::WriteMetadataFile(
      fs(), PathOf(metadata::kManifestFileName),
      metadata::MetadataKind::kManifest, 99, metadata::PartitionManifest()));
  EXPECT_THAT(TryOpen().status(),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("newer than this build")));
}

TEST_F(RecoveryTest, StrayTempFilesAreRemoved) {
  WriteLog(1);
  WriteFile("manifest.0123456789abcdef.tmp", "half written");
  auto partition = Open();
  EXPECT_THAT(ListDir(), Not(Contains("manifest.0123456789abcdef.tmp")));
}

TEST_F(RecoveryTest, AnEmptyDirectoryNeverReusesOffsets) {
  {
    auto partition = OpenLeader(1);
    AppendDurably(*partition, Batch(5), 1);
    ASSERT_OK(partition->Relinquish());
  }
  // Every segment vanished (operator error); the manifest remembers.
  for (const std::string& name : ListDir()) {
    if (absl::EndsWith(name, ".log") || absl::EndsWith(name, "index")) {
      ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
    }
  }
  auto partition = OpenLeader(1);
  EXPECT_EQ(partition->LogEndOffset(), 5);
  EXPECT_EQ(AppendDurably(*partition, Batch()), 5);
}

// D-3: appends after a reopen extend the index in order instead of
// overwriting it from its start.
TEST_F(RecoveryTest, IndexEntriesAfterAReopenStayInOrder) {
  PartitionConfig config = SmallConfig();
  config.index_interval_bytes = 64;
  config.segment_ms = std::nullopt;  // one segment across the reopens
  for (int round = 0; round < 3; ++round) {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 10; ++i) AppendDurably(*partition, Batch(1, 40));
    ASSERT_OK(partition->Relinquish());
  }
  std::string index = ReadFile(kFirstIndex);
  ASSERT_EQ(index.size() % 8, 0u);
  ASSERT_GT(index.size(), 8u * 20);
  for (size_t i = 8; i < index.size(); i += 8) {
    EXPECT_LT(ReadBigEndian32(index.data() + i - 8),
              ReadBigEndian32(index.data() + i))
        << "entry " << i / 8;
  }
  auto partition = OpenLeader(1, config);
  for (int64_t offset = 0; offset < 30; offset += 7) {
    ASSERT_OK_AND_ASSIGN(
        ReadResult read,
        partition->Read(offset, 1, Isolation::kReadUncommitted));
    EXPECT_EQ(ReadBigEndian64(std::string(read.records).data()), offset);
  }
}

// A missing index below the recovery checkpoint is rebuilt from the batch
// headers, not left empty (reads would walk from the segment start).
TEST_F(RecoveryTest, AMissingIndexBelowTheCheckpointIsRebuiltWhole) {
  PartitionConfig config = SmallConfig();
  config.index_interval_bytes = 64;
  std::string index;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 30; ++i) AppendDurably(*partition, Batch(1, 40));
    ASSERT_OK(partition->Relinquish());  // checkpoint at the end
    index = ReadFile(kFirstIndex);
  }
  ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(kFirstIndex)));
  OpenReport report;
  auto partition = OpenLeader(1, config, &report);
  EXPECT_TRUE(report.used_checkpoint);
  ASSERT_OK(partition->Relinquish());
  EXPECT_EQ(ReadFile(kFirstIndex), index);
}

// D-13: recovery checkpoints keep coming after size rolls (the position is
// reset per segment), so a crash scans little of the newest segment.
TEST_F(RecoveryTest, CheckpointsContinueAfterRolls) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 8 << 10;
  config.checkpoint_interval_bytes = 1024;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 100; ++i) AppendDurably(*partition, Batch(1, 200));
    ASSERT_GT(partition->Segments().size(), 3u);
    partition->Abandon();  // crash-like: no final checkpoint
  }
  OpenReport report;
  auto partition = Open(config, &report);
  EXPECT_TRUE(report.used_checkpoint);
  // (Plus, with direct I/O, the zero padding of the last block.)
  EXPECT_LT(report.scanned_bytes,
            2048u + (direct_io() ? fs::kDirectIoAlignment : 0));
  EXPECT_EQ(partition->LogEndOffset(), 100);
}

// D-20: a new segment's data survives a power loss only because its
// directory entry was fsynced before its appends were acknowledged.
TEST_F(RecoveryTest, ANewSegmentSurvivesAPowerLossAfterItsAcks) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
  ASSERT_GT(partition->Segments().size(), 1u);
  int64_t acked_end = partition->LogEndOffset();
  fs().Crash();
  partition.reset();
  partition = Open(config);
  EXPECT_EQ(partition->LogEndOffset(), acked_end);
}

// A sync cycle persists the active segment's index only up to what its
// fdatasync made durable: appends that land while the fdatasync runs are
// indexed in memory, but a crash that drops them must not leave index
// entries pointing past the log.
TEST_F(RecoveryTest, ACycleNeverPersistsIndexEntriesPastWhatItMadeDurable) {
  PartitionConfig config = SmallConfig();
  config.flush_interval_messages = 0;  // only acks=all syncs
  config.index_interval_bytes = 1;     // every batch indexed
  config.checkpoint_interval_bytes = 1;
  auto partition = OpenLeader(1, config);
  fs().BlockSyncs(PathPattern::Substring(".log"));
  ASSERT_OK_AND_ASSIGN(AppendResult acked,
                       partition->Append(Batch(1, 100), 1, Acks::kAll));
  fs().WaitUntilBlockedSyncs(1);
  for (int i = 0; i < 10; ++i) {
    ASSERT_OK(partition->Append(Batch(1, 100), 1, Acks::kLeader).status());
  }
  fs().ReleaseSyncs();
  ASSERT_OK(acked.durable.Wait());  // the cycle has persisted its index
  fs().Crash();                     // drops the unsynced appends
  partition.reset();

  OpenReport report;
  partition = Open(config, &report);
  EXPECT_EQ(partition->LogEndOffset(), 1);
  if (direct_io()) {
    // The zero padding of the direct-I/O log's last block is truncated.
    EXPECT_THAT(report.problems, Each(HasSubstr("zero-filled: all")));
  } else {
    EXPECT_THAT(report.problems, IsEmpty());
  }
}

// A failed append leaves no bytes behind when the next event is a roll: a
// later recovery that verifies the closed segment (no checkpoint) finds it
// clean, and keeps the segments after it.
TEST_F(RecoveryTest, AFailedAppendBeforeARollLeavesNoTornBytesBehind) {
  if (direct_io()) {
    GTEST_SKIP() << "the direct-I/O log writes at the sync, not in the "
                    "append: a failed write stalls the partition instead "
                    "(FailedWriteIsReportedAndOverwritten)";
  }
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 4096;
  const std::string small = Batch(1, 100);
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 3; ++i) AppendDurably(*partition, small);
  InjectTornLogWrite();
  EXPECT_THAT(partition->Append(small, 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  AppendDurably(*partition, Batch(1, 3800));  // does not fit: rolls first
  ASSERT_EQ(partition->Segments().size(), 2u);
  AppendDurably(*partition, small);
  fs().Crash();
  partition.reset();
  ASSERT_OK(fs().Unlink(PathOf(metadata::kCheckpointFileName)));

  OpenReport report;
  partition = Open(config, &report);
  EXPECT_EQ(partition->LogEndOffset(), 5);
  EXPECT_EQ(report.truncated_bytes, 0u);
  EXPECT_THAT(report.problems, IsEmpty());
  EXPECT_EQ(ReadFile(kFirstLog).size(), 3 * small.size());
}

// If even cutting off the failed append's bytes fails, the roll's seal
// does it.
TEST_F(RecoveryTest, ASealCutsOffTornBytesTheFailedAppendCouldNot) {
  if (direct_io()) {
    GTEST_SKIP() << "the direct-I/O log writes at the sync, not in the "
                    "append: a failed write stalls the partition instead "
                    "(FailedWriteIsReportedAndOverwritten)";
  }
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 4096;
  const std::string small = Batch(1, 100);
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 3; ++i) AppendDurably(*partition, small);
  InjectTornLogWrite();
  test::Fault no_truncate(FsOp::kTruncate, EIO);
  no_truncate.path = PathPattern::Substring(".log");
  fs().InjectFault(no_truncate);
  EXPECT_THAT(partition->Append(small, 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kStorageError));
  AppendDurably(*partition, Batch(1, 3800));  // rolls: seals the first
  ASSERT_EQ(partition->Segments().size(), 2u);
  fs().Crash();
  partition.reset();
  ASSERT_OK(fs().Unlink(PathOf(metadata::kCheckpointFileName)));

  OpenReport report;
  partition = Open(config, &report);
  EXPECT_EQ(partition->LogEndOffset(), 4);
  EXPECT_EQ(report.truncated_bytes, 0u);
  EXPECT_EQ(ReadFile(kFirstLog).size(), 3 * small.size());
}

// Bytes past the last batch of a closed segment whose batches reach the
// next segment's base offset are only that segment's invalid tail: it is
// truncated, the later segments are kept.
TEST_F(RecoveryTest, AnInvalidTailWhereTheNextSegmentBeginsKeepsLaterOnes) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
    ASSERT_GT(partition->Segments().size(), 2u);
    ASSERT_OK(partition->Relinquish());
  }
  const std::string first = ReadFile(kFirstLog);
  const std::string torn = Batch(1, 300).substr(0, 100);
  for (const std::string& tail : {torn, std::string(50, '\x5a')}) {
    WriteFile(kFirstLog, first + tail);
    RemoveCheckpoint();
    OpenReport report;
    auto partition = Open(config, &report);
    EXPECT_EQ(partition->LogEndOffset(), 12);
    EXPECT_EQ(report.truncated_bytes, tail.size());
    EXPECT_EQ(report.deleted_segments, 0);
    EXPECT_THAT(report.problems,
                Contains(HasSubstr("the later segments are kept")));
    EXPECT_EQ(ReadFile(kFirstLog), first);
  }
}

// ... but an invalid batch before the end of a closed segment ends the log
// there when nothing proves the later segments durable (a crash's torn tail:
// they never were)...
TEST_F(RecoveryTest,
       AnInvalidBatchInAClosedSegmentPastTheDurableEndDropsLater) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  const std::string batch = Batch(1, 300);
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 12; ++i) AppendDurably(*partition, batch);
    ASSERT_GT(partition->Segments().size(), 2u);
    partition->Abandon();  // a crash: the manifest knows the take-over only
  }
  std::string first = ReadFile(kFirstLog);
  const int64_t batches_in_first = first.size() / batch.size();
  first[first.size() - 1] ^= 0x10;  // the last batch's CRC fails
  WriteFile(kFirstLog, first);
  RemoveCheckpoint();
  RemoveSnapshots();
  OpenReport report;
  auto partition = Open(config, &report);
  EXPECT_EQ(report.durable_floor, 0);
  EXPECT_EQ(partition->LogEndOffset(), batches_in_first - 1);
  EXPECT_EQ(partition->Segments().size(), 1u);
  EXPECT_GE(report.deleted_segments, 2);
}

// ... while damage below the durable end is damage, not a torn tail: the
// segments after it were acknowledged and stay, and the hole is reported.
TEST_F(RecoveryTest, AnInvalidBatchBelowTheDurableEndKeepsTheLaterSegments) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  const std::string batch = Batch(1, 300);
  {
    auto partition = OpenLeader(1, config);
    for (int i = 0; i < 12; ++i) AppendDurably(*partition, batch);
    ASSERT_GT(partition->Segments().size(), 2u);
    ASSERT_OK(partition->Relinquish());  // the manifest says 12 are durable
  }
  std::string first = ReadFile(kFirstLog);
  const int64_t batches_in_first = first.size() / batch.size();
  first[first.size() - 1] ^= 0x10;
  WriteFile(kFirstLog, first);
  RemoveCheckpoint();
  OpenReport report;
  auto partition = Open(config, &report);
  EXPECT_EQ(report.durable_floor, 12);
  EXPECT_EQ(partition->LogEndOffset(), 12);
  EXPECT_EQ(report.deleted_segments, 0);
  EXPECT_THAT(
      report.problems,
      Contains(HasSubstr(absl::StrCat("offsets ", batches_in_first - 1, "..",
                                      batches_in_first - 1, " are lost"))));
  // Everything else is served.
  EXPECT_EQ(ReadAll(*partition).size(), 11 * batch.size());
}

// ---- Damage that a listing alone shows (kaaslog's black-box findings) ------

// Twelve 1-record batches in segments of five (bases 0, 5, 10), cleanly
// relinquished at epoch 1.
class ListingDamageTest : public RecoveryTest {
 protected:
  static PartitionConfig Config() {
    PartitionConfig config = SmallConfig();
    config.segment_bytes = 2048;
    return config;
  }
  void SetUp() override {
    auto partition = OpenLeader(1, Config());
    for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
    ASSERT_EQ(partition->Segments().size(), 3u);
    ASSERT_EQ(partition->Segments()[1].base_offset, 5);
    all_ = ReadAll(*partition);
    ASSERT_OK(partition->Relinquish());
  }
  int64_t end_ = 12;
  // Opens as leader, checks that every batch is served and that the next
  // append continues the log, and returns the report.
  OpenReport OpenAndExpectEverything() {
    OpenReport report;
    auto partition = OpenLeader(1, Config(), &report);
    EXPECT_EQ(partition->LogEndOffset(), end_);
    EXPECT_EQ(partition->HighWatermark(), end_);
    const std::string read = ReadAll(*partition);
    EXPECT_EQ(read.size(), all_.size());
    EXPECT_TRUE(read == all_) << "other bytes than appended";
    EXPECT_EQ(AppendDurably(*partition, Batch(1, 300)), end_);
    ++end_;
    all_ = ReadAll(*partition);
    AbandonWithoutPadding(*partition);
    return report;
  }
  // Writes through the fault-injecting filesystem, which must see a file
  // that recovery deleted come back.
  void Put(absl::string_view name, absl::string_view content) {
    ASSERT_OK(fs::WriteStringToFile(fs(), PathOf(name), content));
  }
  std::string all_;
};

// A stray empty file whose base lies inside a segment (`touch`) shadowed the
// offsets after it; a repair then deleted intact segments.
TEST_F(ListingDamageTest, AStrayEmptySegmentInsideARangeShadowsNothing) {
  for (bool full_scan : {false, true}) {
    SCOPED_TRACE(full_scan ? "every segment verified" : "from the checkpoint");
    Put("00000001-00000000000000000002.log", "");
    if (full_scan) RemoveCheckpoint();
    OpenReport report = OpenAndExpectEverything();
    EXPECT_THAT(report.deleted,
                ElementsAre("00000001-00000000000000000002.log"));
    EXPECT_THAT(ListDir(), Not(Contains("00000001-00000000000000000002.log")));
    EXPECT_THAT(report.quarantined, IsEmpty());
  }
}

// An empty file with an epoch the history does not know made every later
// segment look like a deposed leader's (quarantined: offsets reassigned).
TEST_F(ListingDamageTest, AStrayEmptySegmentOfAnUnknownEpochCostsNothing) {
  for (const char* stray : {"00000009-00000000000000000003.log",
                            "00000009-00000000000000000005.log",
                            "00000009-00000000000000000040.log"}) {
    SCOPED_TRACE(stray);
    WriteFile(stray, "");
    OpenReport report = OpenAndExpectEverything();
    EXPECT_THAT(report.deleted, Contains(stray));
    EXPECT_THAT(report.quarantined, IsEmpty());
    ASSERT_OK_AND_ASSIGN(metadata::PartitionManifest manifest,
                         metadata::ReadManifest(fs(), dir()));
    EXPECT_EQ(manifest.leader_epoch(), 1);
  }
}

// A non-empty file of an epoch the manifest does not know, followed by the
// log's segments, is what does not fit: it alone is set aside.
TEST_F(ListingDamageTest, AMisfitSegmentOfAnUnknownEpochIsSetAsideAlone) {
  std::string data = Batch(1, 300);
  WriteBigEndian64(data.data(), 7);
  WriteFile("00000009-00000000000000000007.log", data);
  OpenReport report = OpenAndExpectEverything();
  EXPECT_THAT(report.quarantined,
              ElementsAre("00000009-00000000000000000007.log"));
  EXPECT_THAT(ListDir(),
              Contains("00000009-00000000000000000007.log.quarantined"));
}

// A closed segment emptied by damage: its offsets are gone, the segments
// after it are kept, and recovery says so instead of skipping silently.
TEST_F(ListingDamageTest, AnEmptiedClosedSegmentLeavesAReportedHole) {
  WriteFile("00000001-00000000000000000005.log", "");
  OpenReport report;
  auto partition = OpenLeader(1, Config(), &report);
  EXPECT_EQ(partition->LogEndOffset(), 12);
  EXPECT_THAT(report.problems, Contains(HasSubstr("offsets 5..9 are missing")));
  EXPECT_EQ(ReadAll(*partition).size(), all_.size() * 7 / 12);
}

// A checkpoint that does not agree with the log it names is ignored (every
// segment verified), never obeyed: one claiming offset 1000 at the end of the
// file made the high watermark jump and an append land there; one in the
// middle of a batch truncated good data.
TEST_F(ListingDamageTest, ACheckpointThatDisagreesWithTheLogIsIgnored) {
  const std::string active = "00000001-00000000000000000010.log";
  for (int lie = 0; lie < 4; ++lie) {
    const uint64_t size = ReadFile(active).size();
    metadata::RecoveryCheckpoint checkpoint;
    checkpoint.set_segment_base_offset(10);
    checkpoint.set_segment_epoch(1);
    switch (lie) {
      case 0:  // the end of the file, claiming offset 1000 there
        checkpoint.set_position(size);
        checkpoint.set_next_offset(1000);
        break;
      case 1:  // inside the last batch
        checkpoint.set_position(size - 100);
        checkpoint.set_next_offset(end_);
        break;
      case 2:  // inside the first batch
        checkpoint.set_position(7);
        checkpoint.set_next_offset(10);
        break;
      case 3:  // the end, one offset short
        checkpoint.set_position(size);
        checkpoint.set_next_offset(end_ - 1);
        break;
    }
    SCOPED_TRACE(absl::StrCat("position ", checkpoint.position(),
                              " next offset ", checkpoint.next_offset()));
    ASSERT_OK(metadata::WriteCheckpoint(fs(), dir(), checkpoint));
    OpenReport report = OpenAndExpectEverything();
    EXPECT_FALSE(report.used_checkpoint);
    EXPECT_EQ(report.truncated_bytes, 0u);
    EXPECT_THAT(report.problems,
                Contains(HasSubstr("does not agree with the log")));
  }
}

// A manifest whose checksums match but whose epoch history cannot be (not
// ascending) is treated as corrupt: set aside, and the log is served whole
// (it used to quarantine every segment).
TEST_F(ListingDamageTest, AManifestWithAnImpossibleHistoryIsSetAside) {
  metadata::PartitionManifest manifest;
  manifest.set_leader_epoch(5);
  for (auto [epoch, start] : {std::pair{5, 0}, std::pair{2, 3}}) {
    metadata::EpochStart* entry = manifest.add_epochs();
    entry->set_epoch(epoch);
    entry->set_start_offset(start);
  }
  ASSERT_OK(metadata::WriteMetadataFile(
      fs(), PathOf(metadata::kManifestFileName),
      metadata::MetadataKind::kManifest, metadata::kManifestVersion, manifest));
  OpenReport report = OpenAndExpectEverything();
  EXPECT_THAT(report.quarantined, ElementsAre("manifest"));
  EXPECT_THAT(report.problems, Contains(HasSubstr("not ascending")));
}

// A checksum-valid manifest whose log start lies past the log end it records
// is no manifest the engine writes: obeyed, it made recovery delete every
// intact segment below it. It is set aside and the log is served whole.
TEST_F(ListingDamageTest, AManifestWithItsLogStartPastItsLogEndIsSetAside) {
  metadata::PartitionManifest manifest;
  manifest.set_leader_epoch(1);
  manifest.set_log_start_offset(1000);
  manifest.set_log_end_offset(end_);
  ASSERT_OK(metadata::WriteMetadataFile(
      fs(), PathOf(metadata::kManifestFileName),
      metadata::MetadataKind::kManifest, metadata::kManifestVersion, manifest));
  OpenReport report = OpenAndExpectEverything();
  EXPECT_THAT(report.quarantined, ElementsAre("manifest"));
  EXPECT_THAT(report.problems, Contains(HasSubstr("log start 1000 is past")));
  EXPECT_EQ(report.deleted_segments, 0);
}

// A copy of a segment under another base name (its first batch is not at the
// offset its name says) is no segment of the log: it used to end the segment
// before it early, making intact acknowledged offsets unreadable. It is set
// aside and the log is served whole.
TEST_F(ListingDamageTest, ACopyOfASegmentUnderAnotherNameIsSetAside) {
  WriteFile("00000001-00000000000000000007.log",
            ReadFile("00000001-00000000000000000005.log"));
  OpenReport report = OpenAndExpectEverything();
  EXPECT_THAT(report.quarantined,
              ElementsAre("00000001-00000000000000000007.log"));
  EXPECT_THAT(report.problems,
              Contains(HasSubstr("its first batch is at offset 5")));
  EXPECT_THAT(ListDir(),
              Contains("00000001-00000000000000000007.log.quarantined"));
}

// A corrupt snapshot is set aside (it used to stay, reported at every open
// and by every verify, a repair unable to clear it); the state comes from an
// older one or a longer replay.
TEST_F(ListingDamageTest, ACorruptSnapshotIsSetAsideOnce) {
  std::string newest;
  for (const std::string& name : ListDir()) {
    if (absl::EndsWith(name, ".snapshot")) newest = name;
  }
  ASSERT_FALSE(newest.empty());
  WriteFile(newest, "garbage");
  OpenReport report = OpenAndExpectEverything();
  EXPECT_THAT(report.quarantined, ElementsAre(newest));
  EXPECT_THAT(ListDir(), Contains(newest + ".corrupt"));
  OpenReport again = OpenAndExpectEverything();
  EXPECT_THAT(again.quarantined, IsEmpty());
  EXPECT_THAT(again.problems, Not(Contains(HasSubstr(newest + ":"))));
}

// The epoch history follows the log's end: an epoch the manifest says began
// past where the log now ends wrote nothing that is left, and is forgotten
// (it used to answer OffsetForLeaderEpoch with an offset past the log end).
TEST_F(ListingDamageTest, EpochsThatBeganPastTheLogEndAreForgotten) {
  metadata::PartitionManifest manifest;
  manifest.set_leader_epoch(1);
  manifest.set_log_end_offset(end_);
  for (auto [epoch, start] : {std::pair{0, 0}, std::pair{1, 1000}}) {
    metadata::EpochStart* entry = manifest.add_epochs();
    entry->set_epoch(epoch);
    entry->set_start_offset(start);
  }
  ASSERT_OK(metadata::WriteMetadataFile(
      fs(), PathOf(metadata::kManifestFileName),
      metadata::MetadataKind::kManifest, metadata::kManifestVersion, manifest));
  OpenReport report;
  auto partition = OpenLeader(1, Config(), &report);
  EXPECT_THAT(report.problems,
              Contains(HasSubstr("forgets 1 epochs that began past")));
  EXPECT_EQ(partition->OffsetForLeaderEpoch(0).end_offset, end_);
  EXPECT_EQ(partition->OffsetForLeaderEpoch(1).end_offset, end_);
}

// Without a manifest the history comes from the epochs stamped in the
// batches (a follower's segments are named after its own take-overs, not
// after the leaders that wrote the batches).
TEST_F(ListingDamageTest, WithoutAManifestTheHistoryComesFromTheBatches) {
  // Batches from offset 7 on say leader epoch 2 wrote them.
  for (const char* name : {"00000001-00000000000000000005.log",
                           "00000001-00000000000000000010.log"}) {
    std::string log = ReadFile(name);
    for (size_t at = 0; at < log.size();) {
      const int64_t base = ReadBigEndian64(log.data() + at);
      if (base >= 7) {
        WriteBigEndian32(log.data() + at + batch_layout::kPartitionLeaderEpoch,
                         2);
      }
      at += batch_layout::kLogOverhead +
            ReadBigEndian32(log.data() + at + batch_layout::kBatchLength);
    }
    WriteFile(name, log);
  }
  ASSERT_OK(fs().Unlink(PathOf(metadata::kManifestFileName)));
  auto partition = OpenLeader(2, Config());
  EpochEndOffset first = partition->OffsetForLeaderEpoch(1);
  EXPECT_EQ(first.leader_epoch, 1);
  EXPECT_EQ(first.end_offset, 7);
}

// The engine never follows a link or opens a FIFO in a partition dir: the
// open is refused, naming the file, and the target is never touched.
TEST_F(ListingDamageTest, ALinkOrAFifoInPlaceOfAnEngineFileRefusesTheOpen) {
  const std::string outside = fs::JoinPath(fs::Dirname(dir()), "outside");
  WriteFile("../outside", ReadFile("00000001-00000000000000000010.log"));
  for (const char* name : {"00000001-00000000000000000010.log",
                           "00000001-00000000000000000005.index", "manifest"}) {
    SCOPED_TRACE(name);
    const std::string kept = ReadFile(name);
    ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
    ASSERT_EQ(::symlink(outside.c_str(), PathOf(name).c_str()), 0);
    EXPECT_THAT(TryOpen(Config()).status(),
                HasStorageErrorWithMessage(
                    StorageErrorCode::kStorageError,
                    AllOf(HasSubstr(name), HasSubstr("symbolic link"))));
    ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
    ASSERT_EQ(::mkfifo(PathOf(name).c_str(), 0644), 0);
    EXPECT_THAT(TryOpen(Config()).status(),
                HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                           HasSubstr("special file")));
    ASSERT_OK(fs::PosixFileSystem::Default()->Unlink(PathOf(name)));
    WriteFile(name, kept);
  }
  EXPECT_EQ(ReadFile("../outside"),
            ReadFile("00000001-00000000000000000010.log"));
  OpenAndExpectEverything();
}

// Only one open changes a partition at a time: a second leader's open fails
// while the first holds the partition's lock, and works once it closed.
TEST_F(ListingDamageTest, OneLeaderAtATime) {
  auto first = Open(Config());
  EXPECT_THAT(TryOpen(Config()).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("led by another")));
  ASSERT_OK(first->Relinquish());
  EXPECT_OK(TryOpen(Config()).status());
}

// The partition's lock file removed behind a running leader's back: a second
// leader's open takes a new lock file, but finds the first one's active
// segment locked and stops before changing anything; the first keeps
// appending, and nothing it acknowledged is overwritten.
TEST_F(ListingDamageTest, ASecondLeaderIsRefusedWhenTheLockFileWasRemoved) {
  auto first = OpenLeader(1, Config());
  ASSERT_OK(fs().Unlink(PathOf("leader.lock")));
  std::vector<std::pair<std::string, std::string>> before;
  for (const std::string& name : ListDir()) {
    before.emplace_back(name, ReadFile(name));
  }
  EXPECT_THAT(TryOpen(Config()).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kNotLeader,
                                         HasSubstr("written by another")));
  std::vector<std::pair<std::string, std::string>> after;
  for (const std::string& name : ListDir()) {
    if (name != "leader.lock") after.emplace_back(name, ReadFile(name));
  }
  EXPECT_TRUE(before == after) << "the refused open changed files";
  EXPECT_EQ(AppendDurably(*first, Batch(1, 300)), end_);
  ASSERT_OK(first->Relinquish());
  EXPECT_OK(TryOpen(Config()).status());
}

// ---- Read-only opens --------------------------------------------------------

// A read-only open decides what a leader's open would, changes nothing, and
// serves reads of the log as recovery sees it.
TEST_F(ListingDamageTest,
       AReadOnlyOpenDecidesAsTheLeaderWouldAndChangesNothing) {
  WriteFile("00000001-00000000000000000002.log", "");
  WriteFile("manifest.0123456789abcdef.tmp", "x");
  const std::string active = "00000001-00000000000000000010.log";
  WriteFile(active, ReadFile(active) + "torn");
  RemoveCheckpoint();
  std::vector<std::pair<std::string, std::string>> before;
  for (const std::string& name : ListDir()) {
    before.emplace_back(name, ReadFile(name));
  }

  OpenReport read_only;
  ASSERT_OK_AND_ASSIGN(
      std::shared_ptr<Partition> inspected,
      Partition::Open(runtime(), dir(), Config(), metadata::ProducerFences(),
                      &read_only, PartitionAccess::kReadOnly));
  EXPECT_TRUE(read_only.read_only);
  EXPECT_EQ(inspected->HighWatermark(), 12);
  EXPECT_EQ(ReadAll(*inspected), all_);
  EXPECT_THAT(inspected->Append(Batch(), 1, Acks::kAll).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  EXPECT_THAT(inspected->TakeOver(2).status(),
              HasStorageError(StorageErrorCode::kNotLeader));
  // Read-only opens take no lock: a leader may open meanwhile.
  {
    OpenReport unused;
    ASSERT_OK_AND_ASSIGN(
        std::shared_ptr<Partition> other,
        Partition::Open(runtime(), dir(), Config(), metadata::ProducerFences(),
                        &unused, PartitionAccess::kReadOnly));
    other->Abandon();
  }
  inspected->Abandon();
  std::vector<std::pair<std::string, std::string>> after;
  for (const std::string& name : ListDir()) {
    after.emplace_back(name, ReadFile(name));
  }
  EXPECT_EQ(after, before);

  OpenReport leader;
  auto partition = Open(Config(), &leader);
  EXPECT_EQ(leader.deleted, read_only.deleted);
  EXPECT_EQ(leader.quarantined, read_only.quarantined);
  ASSERT_EQ(leader.truncations.size(), 1u);
  ASSERT_EQ(read_only.truncations.size(), 1u);
  EXPECT_EQ(leader.truncations[0].position, read_only.truncations[0].position);
  EXPECT_EQ(leader.truncations[0].bytes, 4u);
  EXPECT_EQ(leader.problems, read_only.problems);
}

TEST_F(ListingDamageTest, AReadOnlyOpenOfAMissingDirCreatesNothing) {
  const std::string missing = fs::JoinPath(fs::Dirname(dir()), "7");
  OpenReport report;
  EXPECT_THAT(
      Partition::Open(runtime(), missing, Config(), metadata::ProducerFences(),
                      &report, PartitionAccess::kReadOnly)
          .status(),
      StatusIs(absl::StatusCode::kNotFound, ::testing::_));
  EXPECT_THAT(fs().Exists(missing), IsOkAndHolds(false));
}

// D-12 with a full scan: the segments below the durable log start that the
// verification opened are deleted, and not synced afterwards.
TEST_F(RecoveryTest, SegmentsBelowTheLogStartGoEvenWhenEverySegmentIsScanned) {
  PartitionConfig config = SmallConfig();
  config.segment_bytes = 2048;
  auto partition = OpenLeader(1, config);
  for (int i = 0; i < 12; ++i) AppendDurably(*partition, Batch(1, 300));
  test::Fault fault(FsOp::kUnlink, EIO);
  fault.path = PathPattern::Substring(".log");
  fault.count = test::Fault::kForever;
  fs().InjectFault(fault);
  ASSERT_OK(partition->DeleteRecords(8).status());
  fs().Crash();  // after the log start was persisted, before the unlinks
  fs().ClearFaults();
  partition.reset();
  ASSERT_OK(fs().Unlink(PathOf(metadata::kCheckpointFileName)));

  OpenReport report;
  ASSERT_OK_AND_ASSIGN(partition, TryOpen(config, &report));
  EXPECT_FALSE(report.used_checkpoint);
  EXPECT_GE(report.deleted_segments, 1);
  EXPECT_EQ(partition->LogStartOffset(), 8);
  EXPECT_EQ(partition->LogEndOffset(), 12);
}

// Only a corrupt manifest is set aside: one that cannot be read now (an
// I/O error, too many open files) may be fine on the next attempt, and
// setting it aside would lose the log start and the epoch history.
TEST_F(RecoveryTest, AnUnreadableManifestFailsTheOpenAndIsKept) {
  {
    auto partition = OpenLeader(7);
    AppendDurably(*partition, Batch(3), 7);
    ASSERT_OK(partition->DeleteRecords(1).status());
    ASSERT_OK(partition->Relinquish());
  }
  const std::string path = PathOf(metadata::kManifestFileName);
  for (const auto& [op, error] :
       {std::pair<FsOp, int>{FsOp::kOpenForRead, EMFILE}, {FsOp::kRead, EIO}}) {
    SCOPED_TRACE(test::FsOpName(op));
    test::Fault fault(op, error);
    fault.path = PathPattern::Regex("/manifest$");
    fs().InjectFault(fault);
    EXPECT_THAT(TryOpen().status(),
                HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                           HasSubstr(path)));
    fs().ClearFaults();
    EXPECT_THAT(ListDir(), Contains(std::string(metadata::kManifestFileName)));
    EXPECT_THAT(ListDir(), Not(Contains("manifest.corrupt")));
  }
  auto partition = Open();
  EXPECT_EQ(partition->LeaderEpoch(), 7);
  EXPECT_EQ(partition->LogStartOffset(), 1);
}

// The same for the recovery checkpoint; a checkpoint of a newer format is
// only an optimisation this build cannot use: set aside and rebuilt.
TEST_F(RecoveryTest, AnUnreadableCheckpointFailsTheOpenAndIsKept) {
  {
    auto partition = OpenLeader(1);
    for (int i = 0; i < 5; ++i) AppendDurably(*partition, Batch());
    ASSERT_OK(partition->Relinquish());
  }
  test::Fault fault(FsOp::kOpenForRead, EACCES);
  fault.path = PathPattern::Regex("/recovery-checkpoint$");
  fs().InjectFault(fault);
  EXPECT_THAT(TryOpen().status(),
              HasStorageErrorWithMessage(
                  StorageErrorCode::kStorageError,
                  HasSubstr(PathOf(metadata::kCheckpointFileName))));
  fs().ClearFaults();
  EXPECT_THAT(ListDir(), Not(Contains("recovery-checkpoint.corrupt")));
  OpenReport report;
  auto partition = Open(SmallConfig(), &report);
  EXPECT_TRUE(report.used_checkpoint);
  partition->Abandon();

  ASSERT_OK(
      metadata::WriteMetadataFile(fs(), PathOf(metadata::kCheckpointFileName),
                                  metadata::MetadataKind::kRecoveryCheckpoint,
                                  99, metadata::RecoveryCheckpoint()));
  OpenReport newer;
  partition = Open(SmallConfig(), &newer);
  EXPECT_FALSE(newer.used_checkpoint);
  EXPECT_EQ(partition->LogEndOffset(), 5);
  EXPECT_THAT(ListDir(), Contains("recovery-checkpoint.corrupt"));
}

}  // namespace
}  // namespace kaas::partition
