// Tests of FaultInjectingFileSystem::Crash(): what survives a simulated power
// loss. Each test writes through the wrapper, crashes, and looks at the base
// filesystem directly.

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/fault_injecting_file_system_test_fixture.h"
#include "testing/status_matchers.h"

namespace kaas::test {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Optional;
using CrashTest = FaultInjectingFileSystemTest;

// --- File content -----------------------------------------------------------

TEST_F(CrashTest, SyncedPrefixSurvivesAndUnsyncedTailIsDropped) {
  CreateDurableFile("log", "synced");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+unsynced"));
  EXPECT_THAT(Content("log"), Optional(std::string("synced+unsynced")));

  fs_.Crash();

  EXPECT_THAT(Content("log"), Optional(std::string("synced")));
}

// The length of the unsynced tail that survives a kKeepRandomPrefix crash of
// a fresh wrapper with `seed` (the tail itself is checked too).
uint64_t SurvivingTailLength(fs::FileSystem* base, const std::string& path,
                             uint64_t seed) {
  const std::string tail(1000, 't');
  FaultInjectingFileSystem fs(base, seed);
  auto file = fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kTruncate);
  EXPECT_OK(file.status());
  EXPECT_OK((*file)->WriteAt(0, "head"));
  EXPECT_OK((*file)->DataSync());
  EXPECT_OK((*file)->Append(tail));
  fs.Crash({UnsyncedTail::kKeepRandomPrefix, TailContent::kWritten});
  const std::string content = fs::ReadFileToString(*base, path).value();
  EXPECT_EQ(content, "head" + tail.substr(0, content.size() - 4));
  return content.size() - 4;
}

TEST_F(CrashTest, TornTailKeepsASeededRandomPrefix) {
  // The file's directory entry is durable before each wrapper starts.
  CreateDurableFile("log", "");
  const uint64_t first = SurvivingTailLength(&posix_, Path("log"), 1);
  EXPECT_EQ(SurvivingTailLength(&posix_, Path("log"), 1), first);
  EXPECT_NE(SurvivingTailLength(&posix_, Path("log"), 2), first);
}

TEST_F(CrashTest, KeepAllKeepsTheWholeUnsyncedTail) {
  CreateDurableFile("log", "synced");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+tail"));

  fs_.Crash({UnsyncedTail::kKeepAll, TailContent::kWritten});

  EXPECT_THAT(Content("log"), Optional(std::string("synced+tail")));
}

TEST_F(CrashTest, KeptTailCanBeZerosOrGarbage) {
  const std::string tail(64, 'x');
  for (TailContent content : {TailContent::kZeros, TailContent::kGarbage}) {
    CreateDurableFile("log", "synced");
    ASSERT_OK_AND_ASSIGN(
        auto file, fs::FileOpener::OpenForWrite(fs_, Path("log"),
                                                fs::OpenMode::kMustExist));
    ASSERT_OK(file->Append(tail));

    fs_.Crash({UnsyncedTail::kKeepAll, content});

    const std::string expected_tail = content == TailContent::kZeros
                                          ? std::string(tail.size(), '\0')
                                          : Content("log")->substr(6);
    EXPECT_THAT(Content("log"), Optional("synced" + expected_tail));
    EXPECT_NE(expected_tail, tail);
  }
}

TEST_F(CrashTest, UnsyncedOverwriteInsideTheSyncedRegionIsUndone) {
  CreateDurableFile("log", "aaaaaa");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->WriteAt(2, "XX"));
  ASSERT_OK(file->Append("tail"));

  fs_.Crash({UnsyncedTail::kKeepAll, TailContent::kWritten});

  // Only bytes past the durable size may survive unsynced.
  EXPECT_THAT(Content("log"), Optional(std::string("aaaaaatail")));
}

TEST_F(CrashTest, TruncateIsDurableOnlyAfterASync) {
  CreateDurableFile("a", "abcdef");
  CreateDurableFile("b", "abcdef");
  ASSERT_OK(fs::TruncateFile(fs_, Path("a"), 2));
  ASSERT_OK_AND_ASSIGN(auto b, fs::FileOpener::OpenForWrite(
                                   fs_, Path("b"), fs::OpenMode::kMustExist));
  ASSERT_OK(b->Truncate(2));
  ASSERT_OK(b->DataSync());

  fs_.Crash();

  EXPECT_THAT(Content("a"), Optional(std::string("abcdef")));
  EXPECT_THAT(Content("b"), Optional(std::string("ab")));
}

TEST_F(CrashTest, FailedSyncMakesNothingDurable) {
  CreateDurableFile("log", "synced");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+lost"));
  fs_.InjectFault(Fault(FsOp::kDataSync, EIO));
  EXPECT_THAT(file->DataSync(), StatusIs(absl::StatusCode::kInternal, _));

  fs_.Crash();

  EXPECT_THAT(Content("log"), Optional(std::string("synced")));
}

// --- Directory entries ------------------------------------------------------

TEST_F(CrashTest, UnsyncedCreateDisappears) {
  CreateFile("new", "data", /*sync_data=*/false, /*sync_dir=*/false);
  fs_.Crash();
  EXPECT_FALSE(Exists("new"));
}

TEST_F(CrashTest, SyncedFileWhoseDirectoryWasNotSyncedDisappears) {
  CreateFile("new", "data", /*sync_data=*/true, /*sync_dir=*/false);
  fs_.Crash();
  EXPECT_FALSE(Exists("new"));
}

TEST_F(CrashTest, SyncDirMakesTheCreateDurable) {
  CreateFile("synced", "data", /*sync_data=*/true, /*sync_dir=*/true);
  CreateFile("entry_only", "data", /*sync_data=*/false, /*sync_dir=*/true);

  fs_.Crash();

  EXPECT_THAT(Content("synced"), Optional(std::string("data")));
  // The entry is durable, the bytes never were.
  EXPECT_THAT(Content("entry_only"), Optional(std::string("")));
}

TEST_F(CrashTest, AtomicReplaceKeepsOldContentUntilTheDirectoryIsSynced) {
  CreateDurableFile("meta", "old");
  // The final SyncDir of AtomicReplaceFile fails: the rename is not durable.
  fs_.InjectFault(Fault(FsOp::kSyncDir, EIO));
  EXPECT_THAT(fs::AtomicReplaceFile(fs_, Path("meta"), "new"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("(injected)")));
  EXPECT_THAT(Content("meta"), Optional(std::string("new")));

  fs_.Crash();

  EXPECT_THAT(Content("meta"), Optional(std::string("old")));
  // The temp file's create was not durable either.
  EXPECT_THAT(posix_.ListDir(root_),
              IsOkAndHolds(::testing::ElementsAre("meta")));

  ASSERT_OK(fs::AtomicReplaceFile(fs_, Path("meta"), "new"));
  fs_.Crash();
  EXPECT_THAT(Content("meta"), Optional(std::string("new")));
}

TEST_F(CrashTest, UnsyncedUnlinkIsUndoneWithTheDurableContent) {
  CreateDurableFile("log", "synced");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+unsynced"));
  ASSERT_OK(fs_.Unlink(Path("log")));

  fs_.Crash();

  EXPECT_THAT(Content("log"), Optional(std::string("synced")));
}

TEST_F(CrashTest, SyncedUnlinkIsDurable) {
  CreateDurableFile("log", "synced");
  ASSERT_OK(fs_.Unlink(Path("log")));
  ASSERT_OK(fs_.SyncDir(root_));

  fs_.Crash();

  EXPECT_FALSE(Exists("log"));
}

TEST_F(CrashTest, UnsyncedRenameIsUndoneAndTheReplacedTargetRestored) {
  CreateDurableFile("target", "old");
  CreateDurableFile("source", "new");
  ASSERT_OK(fs_.Rename(Path("source"), Path("target")));

  fs_.Crash();

  EXPECT_THAT(Content("source"), Optional(std::string("new")));
  EXPECT_THAT(Content("target"), Optional(std::string("old")));
}

TEST_F(CrashTest, UnsyncedSwapByRenamesIsUndone) {
  CreateDurableFile("a", "A");
  CreateDurableFile("b", "B");
  ASSERT_OK(fs_.Rename(Path("a"), Path("tmp")));
  ASSERT_OK(fs_.Rename(Path("b"), Path("a")));
  ASSERT_OK(fs_.Rename(Path("tmp"), Path("b")));

  fs_.Crash();

  EXPECT_THAT(Content("a"), Optional(std::string("A")));
  EXPECT_THAT(Content("b"), Optional(std::string("B")));
  EXPECT_FALSE(Exists("tmp"));
}

TEST_F(CrashTest, RenameOfADirectoryIsUndoneWithItsContent) {
  ASSERT_OK(fs_.CreateDirs(Path("d1")));
  ASSERT_OK(fs_.SyncDir(root_));
  CreateDurableFile("d1/f", "data");
  ASSERT_OK(fs_.Rename(Path("d1"), Path("d2")));
  ASSERT_OK(fs_.Unlink(Path("d2/f")));

  fs_.Crash();

  EXPECT_FALSE(Exists("d2"));
  EXPECT_THAT(Content("d1/f"), Optional(std::string("data")));
}

TEST_F(CrashTest, RenameBetweenDirectoriesNeedsBothDirectorySyncs) {
  ASSERT_OK(fs::CreateDirsDurably(fs_, Path("a")));
  ASSERT_OK(fs::CreateDirsDurably(fs_, Path("b")));
  struct Case {
    bool sync_source;
    bool sync_target;
    bool in_source;
    bool in_target;
  };
  for (const Case& c :
       {Case{false, false, true, false},
        // Durable at both names: survives once, at the new one.
        Case{false, true, false, true}, Case{true, true, false, true},
        // Removed from the source, never added to the target.
        Case{true, false, false, false}}) {
    // Both directions, so that no traversal order can fake the result.
    for (const auto& [source, target] :
         {std::make_pair("a", "b"), std::make_pair("b", "a")}) {
      SCOPED_TRACE(absl::StrCat(source, " -> ", target, ", sync source ",
                                c.sync_source, ", sync target ",
                                c.sync_target));
      const std::string from = absl::StrCat(source, "/f");
      const std::string to = absl::StrCat(target, "/f");
      CreateDurableFile(from, "data");
      ASSERT_OK(fs_.Rename(Path(from), Path(to)));
      if (c.sync_source) {
        ASSERT_OK(fs_.SyncDir(Path(source)));
      }
      if (c.sync_target) {
        ASSERT_OK(fs_.SyncDir(Path(target)));
      }

      fs_.Crash();

      EXPECT_EQ(Exists(from), c.in_source);
      EXPECT_EQ(Exists(to), c.in_target);
      // Clean up behind the (freshly crashed) wrapper's back: it has not
      // looked at these paths since.
      (void)posix_.Unlink(Path(from));
      (void)posix_.Unlink(Path(to));
    }
  }
}

TEST_F(CrashTest, CreateDirsIsDurableLevelByLevel) {
  ASSERT_OK(fs::CreateDirsDurably(fs_, Path("kept/x/y")));
  ASSERT_OK(fs_.CreateDirs(Path("half/x")));
  ASSERT_OK(fs_.SyncDir(root_));  // "half" is durable, "half/x" is not.
  ASSERT_OK(fs_.CreateDirs(Path("lost/x")));

  fs_.Crash();

  EXPECT_FALSE(Exists("lost"));
  EXPECT_TRUE(Exists("half"));
  EXPECT_FALSE(Exists("half/x"));
  EXPECT_TRUE(Exists("kept/x/y"));
}

TEST_F(CrashTest, FilesInANewDirectoryDisappearWithItUnlessItsParentIsSynced) {
  ASSERT_OK(fs_.CreateDirs(Path("partition")));
  CreateDurableFile("partition/00000.log", "data");  // Syncs "partition".

  fs_.Crash();

  EXPECT_FALSE(Exists("partition"));
}

TEST_F(CrashTest, UnsyncedRemoveDirIsUndoneWithItsDurableEntries) {
  ASSERT_OK(fs::CreateDirsDurably(fs_, Path("d")));
  CreateDurableFile("d/f", "data");
  ASSERT_OK(fs_.Unlink(Path("d/f")));
  ASSERT_OK(fs_.RemoveDir(Path("d")));

  fs_.Crash();

  EXPECT_THAT(Content("d/f"), Optional(std::string("data")));
}

// --- The machine after the crash -------------------------------------------

TEST_F(CrashTest, HandlesFromBeforeTheCrashAreDead) {
  CreateDurableFile("log", "data");
  ASSERT_OK_AND_ASSIGN(
      auto writer,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK_AND_ASSIGN(auto reader,
                       fs::FileOpener::OpenForRead(fs_, Path("log")));

  fs_.Crash();

  const auto dead = StatusIs(absl::StatusCode::kFailedPrecondition,
                             HasSubstr("from before the simulated crash"));
  char buffer[4];
  EXPECT_THAT(reader->ReadAt(0, 4, buffer), dead);
  EXPECT_THAT(reader->Size(), dead);
  EXPECT_THAT(writer->ReadAt(0, 4, buffer), dead);
  EXPECT_THAT(writer->WriteAt(0, "x"), dead);
  EXPECT_THAT(writer->Append("x"), dead);
  EXPECT_THAT(writer->Truncate(0), dead);
  EXPECT_THAT(writer->DataSync(), dead);
  EXPECT_THAT(writer->Sync(), dead);
  EXPECT_THAT(writer->Close(), dead);
  // New handles work on the restored state.
  ASSERT_OK_AND_ASSIGN(auto fresh,
                       fs::FileOpener::OpenForRead(fs_, Path("log")));
  EXPECT_THAT(fresh->ReadAt(0, 4, buffer), IsOkAndHolds(4u));
}

TEST_F(CrashTest, FilesFoundInTheBaseFileSystemAreDurable) {
  // Written behind the wrapper's back before it first looks at them.
  ASSERT_OK(posix_.CreateDirs(Path("dir")));
  for (const char* name : {"dir/appended", "dir/unlinked", "dir/renamed"}) {
    ASSERT_OK(fs::WriteStringToFile(posix_, Path(name), "found"));
  }
  ASSERT_OK_AND_ASSIGN(auto file,
                       fs::FileOpener::OpenForWrite(fs_, Path("dir/appended"),
                                                    fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+more"));
  ASSERT_OK(fs_.Unlink(Path("dir/unlinked")));
  ASSERT_OK(fs_.Rename(Path("dir/renamed"), Path("moved")));

  fs_.Crash();

  EXPECT_THAT(Content("dir/appended"), Optional(std::string("found")));
  EXPECT_THAT(Content("dir/unlinked"), Optional(std::string("found")));
  EXPECT_THAT(Content("dir/renamed"), Optional(std::string("found")));
  EXPECT_FALSE(Exists("moved"));
}

TEST_F(CrashTest, TrackingRestartsWithEverythingDurable) {
  CreateDurableFile("log", "synced");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+kept"));
  fs_.Crash({UnsyncedTail::kKeepAll, TailContent::kWritten});

  // What the first crash kept is durable now; new changes are tracked again.
  ASSERT_OK_AND_ASSIGN(file, fs::FileOpener::OpenForWrite(
                                 fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("+dropped"));
  CreateFile("new", "x", /*sync_data=*/true, /*sync_dir=*/false);
  fs_.Crash();

  EXPECT_THAT(Content("log"), Optional(std::string("synced+kept")));
  EXPECT_FALSE(Exists("new"));
}

TEST_F(CrashTest, UnsyncedBytesCountsFromTheFirstUndurableChange) {
  CreateDurableFile("log", "0123456789");
  EXPECT_THAT(fs_.UnsyncedBytes(Path("log")), IsOkAndHolds(0u));
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("abc"));
  EXPECT_THAT(fs_.UnsyncedBytes(Path("log")), IsOkAndHolds(3u));
  ASSERT_OK(file->WriteAt(4, "x"));
  EXPECT_THAT(fs_.UnsyncedBytes(Path("log")), IsOkAndHolds(9u));
  ASSERT_OK(file->DataSync());
  EXPECT_THAT(fs_.UnsyncedBytes(Path("log")), IsOkAndHolds(0u));
  EXPECT_THAT(fs_.UnsyncedBytes(Path("missing")),
              StatusIs(absl::StatusCode::kNotFound, _));
}

}  // namespace
}  // namespace kaas::test
