#include "storage/metadata/producer_fences.h"

#include <cerrno>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/topic_name.h"
#include "storage/metadata/metadata_file.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::metadata {
namespace {

using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

class ProducerFencesTest : public ::testing::Test {
 protected:
  fs::FileSystem& fs() { return *fs::PosixFileSystem::Default(); }
  const std::string& dir() {
    return dir_override_.empty() ? dir_.path() : dir_override_;
  }
  std::string PathOf(absl::string_view name) {
    return fs::JoinPath(dir(), name);
  }
  // The fences of a store loaded from dir(), as producer id -> epoch.
  std::map<int64_t, int32_t> Loaded() {
    absl::StatusOr<std::unique_ptr<ProducerFenceStore>> store =
        ProducerFenceStore::Load(&fs(), dir());
    EXPECT_OK(store.status());
    std::map<int64_t, int32_t> out;
    if (!store.ok()) return out;
    const ProducerFences snapshot = (*store)->Snapshot();
    for (const ProducerFences::Fence& fence : snapshot.fences()) {
      out[fence.producer_id()] = fence.epoch();
    }
    return out;
  }

  fs::ScopedTempDir dir_;
  std::string dir_override_;
};

TEST_F(ProducerFencesTest, MissingFileIsAnEmptyStore) {
  EXPECT_TRUE(Loaded().empty());
}

TEST_F(ProducerFencesTest, FencesPersistAndKeepTheHighestEpoch) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK(store->Fence(7, 3, /*now_ms=*/1000, /*expiration_ms=*/60000));
  ASSERT_OK(store->Fence(7, 2, 1001, 60000));
  ASSERT_OK(store->Fence(8, 1, 1002, 60000));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}, {8, 1}}));
}

// Two engines sharing one data dir (brokers on a shared volume), each with
// the store it loaded: neither's write drops the other's fences.
TEST_F(ProducerFencesTest, StoresSharingADirKeepEachOthersFences) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> a,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> b,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK(a->Fence(7, 3, /*now_ms=*/1000, /*expiration_ms=*/60000));
  ASSERT_OK(b->Fence(8, 1, 1001, 60000));
  ASSERT_OK(a->Fence(9, 2, 1002, 60000));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}, {8, 1}, {9, 2}}));
}

TEST_F(ProducerFencesTest, RefreshSeesAnotherStoresFences) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> a,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> b,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK(a->Fence(7, 3, 1000, 60000));
  EXPECT_EQ(b->Snapshot().fences_size(), 0);
  ASSERT_OK(b->Refresh());
  ASSERT_EQ(b->Snapshot().fences_size(), 1);
  EXPECT_EQ(b->Snapshot().fences(0).epoch(), 3);
}

// The lock is an flock: while another engine holds it for longer than any
// rewrite takes, a fence fails loudly rather than write without it.
TEST_F(ProducerFencesTest, AFenceFailsWhileAnotherEngineHoldsTheLock) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<fs::FileLock> held,
      fs::FileOpener::LockFile(fs(), PathOf(kProducerFencesLockFileName)));
  EXPECT_THAT(store->Fence(7, 3, 1000, 60000),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("held by another engine")));
  held.reset();
  EXPECT_OK(store->Fence(7, 3, 1000, 60000));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
}

// The data dir also holds the topic dirs: the file's name must be one no
// topic can have, or a topic named like it would be a directory in its way.
TEST_F(ProducerFencesTest, TheFileNameIsNoLegalTopicName) {
  EXPECT_FALSE(ValidateTopicName(kProducerFencesFileName).ok());
  ASSERT_OK(fs::CreateDirsDurably(fs(), PathOf("producer-fences")));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK(store->Fence(7, 3, 1000, 60000));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
}

// A damaged copy costs no fence: the other one has them all, and both are
// whole again afterwards.
TEST_F(ProducerFencesTest, ACorruptCopyIsRebuiltFromTheOther) {
  for (absl::string_view damaged :
       {kProducerFencesFileName, kProducerFencesCopyFileName}) {
    SCOPED_TRACE(damaged);
    fs::ScopedTempDir scratch;
    dir_override_ = scratch.path();
    {
      ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                           ProducerFenceStore::Load(&fs(), dir()));
      ASSERT_OK(store->Fence(7, 3, 1000, 60000));
    }
    ASSERT_OK(fs::AtomicReplaceFile(fs(), PathOf(damaged), "\x01garbage"));
    EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
    EXPECT_THAT(fs().Exists(PathOf(absl::StrCat(damaged, ".corrupt"))),
                IsOkAndHolds(true));
    // Rewritten: either copy alone now has the fence.
    ASSERT_OK(fs().Unlink(PathOf(kProducerFencesCopyFileName)));
    EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
    dir_override_.clear();
  }
}

// Losing every copy must fail safe: no start that would let a fenced
// producer epoch write again.
TEST_F(ProducerFencesTest, EveryCopyCorruptRefusesToStartAndChangesNothing) {
  ASSERT_OK(fs::AtomicReplaceFile(fs(), PathOf(kProducerFencesFileName),
                                  "\x01garbage"));
  EXPECT_THAT(ProducerFenceStore::Load(&fs(), dir()).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("corrupt in every copy")));
  ASSERT_OK(fs::AtomicReplaceFile(fs(), PathOf(kProducerFencesCopyFileName),
                                  "\x02garbage"));
  EXPECT_THAT(ProducerFenceStore::Load(&fs(), dir()).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("refusing to start")));
  EXPECT_THAT(fs::ReadFileToString(fs(), PathOf(kProducerFencesFileName)),
              IsOkAndHolds("\x01garbage"));
}

// A checksum-valid file whose fences no engine could write is corrupt too.
TEST_F(ProducerFencesTest, OutOfRangeFencesAreCorrupt) {
  ProducerFences bad;
  ProducerFences::Fence* fence = bad.add_fences();
  fence->set_producer_id(7);
  fence->set_epoch(70000);  // producer epochs are int16
  ASSERT_OK(
      fs::AtomicReplaceFile(fs(), PathOf(kProducerFencesFileName),
                            EncodeMetadataFile(MetadataKind::kProducerFences,
                                               kProducerFencesVersion, bad)));
  EXPECT_THAT(ProducerFenceStore::Load(&fs(), dir()).status(),
              HasStorageErrorWithMessage(StorageErrorCode::kStorageError,
                                         HasSubstr("out of range")));
}

// Only kDataLoss is corruption: an I/O or permission error must fail the
// load, not silently drop every fence by setting the file aside.
TEST_F(ProducerFencesTest, UnreadableFileFailsTheLoadAndIsKept) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                         ProducerFenceStore::Load(&fs(), dir()));
    ASSERT_OK(store->Fence(7, 3, 1000, 60000));
  }
  test::FaultInjectingFileSystem faulty(&fs(), /*seed=*/1);
  for (test::FsOp op : {test::FsOp::kOpenForRead, test::FsOp::kRead}) {
    for (int error : {EIO, EACCES, EMFILE}) {
      SCOPED_TRACE(absl::StrCat(test::FsOpName(op), " errno ", error));
      test::Fault fault(op, error);
      fault.path = test::PathPattern::Substring(kProducerFencesFileName);
      faulty.InjectFault(fault);
      EXPECT_THAT(ProducerFenceStore::Load(&faulty, dir()).status(),
                  HasStorageErrorWithMessage(
                      StorageErrorCode::kStorageError,
                      HasSubstr(PathOf(kProducerFencesFileName))));
      faulty.ClearFaults();
    }
  }
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
}

TEST_F(ProducerFencesTest, NewerFormatFailsTheLoadAndIsKept) {
  const std::string newer =
      EncodeMetadataFile(MetadataKind::kProducerFences,
                         kProducerFencesVersion + 1, ProducerFences());
  ASSERT_OK(
      fs::AtomicReplaceFile(fs(), PathOf(kProducerFencesFileName), newer));
  EXPECT_THAT(ProducerFenceStore::Load(&fs(), dir()).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(PathOf(kProducerFencesFileName))));
  ASSERT_OK_AND_ASSIGN(
      std::string kept,
      fs::ReadFileToString(fs(), PathOf(kProducerFencesFileName)));
  EXPECT_EQ(kept, newer);
}

// Fences written by a build that used the old name survive the upgrade.
TEST_F(ProducerFencesTest, TheLegacyFileIsReadWhenTheNewOneIsAbsent) {
  ProducerFences legacy;
  ProducerFences::Fence* fence = legacy.add_fences();
  fence->set_producer_id(7);
  fence->set_epoch(3);
  fence->set_fenced_at_ms(1000);
  ASSERT_OK(fs::AtomicReplaceFile(
      fs(), PathOf(kLegacyProducerFencesFileName),
      EncodeMetadataFile(MetadataKind::kProducerFences, kProducerFencesVersion,
                         legacy)));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}}));
  // The next fence writes the new file, which alone counts from then on.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ProducerFenceStore> store,
                       ProducerFenceStore::Load(&fs(), dir()));
  ASSERT_OK(store->Fence(8, 1, 1000, 60000));
  ASSERT_OK(fs::AtomicReplaceFile(fs(), PathOf(kLegacyProducerFencesFileName),
                                  "\x01garbage"));
  EXPECT_EQ(Loaded(), (std::map<int64_t, int32_t>{{7, 3}, {8, 1}}));
}

}  // namespace
}  // namespace kaas::metadata
