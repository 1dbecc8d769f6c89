// Tests of FaultInjectingFileSystem: injected errors, blocked and slow syncs,
// counters, and crashes racing with writers. (What a crash keeps is tested in
// fault_injecting_file_system_crash_test.cc.)

#include "testing/fault_injecting_file_system.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/random/distributions.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fault_injecting_file_system_test_fixture.h"
#include "testing/status_matchers.h"

namespace kaas::test {
namespace {

using ::testing::_;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Optional;

using FaultTest = FaultInjectingFileSystemTest;

// --- Direct I/O -------------------------------------------------------------

TEST_F(FaultTest, DirectIoIsGrantedOnlyWhenAskedAndEnforcesAlignment) {
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<fs::WritableFile> buffered,
      fs::FileOpener::OpenForWrite(fs_, Path("a"), fs::OpenMode::kTruncate));
  EXPECT_FALSE(buffered->TryDirectIo());
  ASSERT_OK(buffered->WriteAt(3, "unaligned is fine"));

  fs_.GrantDirectIo(true);
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<fs::WritableFile> direct,
      fs::FileOpener::OpenForWrite(fs_, Path("b"), fs::OpenMode::kTruncate));
  ASSERT_TRUE(direct->TryDirectIo());
  constexpr size_t kBlock = fs::kDirectIoAlignment;
  std::unique_ptr<char, decltype(&std::free)> block(
      static_cast<char*>(std::aligned_alloc(kBlock, 2 * kBlock)), &std::free);
  std::memset(block.get(), 'x', 2 * kBlock);
  const absl::string_view aligned(block.get(), kBlock);
  ASSERT_OK(direct->WriteAt(kBlock, aligned));
  // A misaligned offset, length or address is refused, as O_DIRECT does.
  EXPECT_THAT(direct->WriteAt(1, aligned),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not aligned for direct I/O")));
  EXPECT_THAT(direct->WriteAt(0, aligned.substr(0, 100)),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_THAT(direct->WriteAt(0, absl::string_view(block.get() + 1, kBlock)),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  const absl::string_view parts[] = {aligned, aligned.substr(0, 512)};
  EXPECT_THAT(direct->WriteAtV(0, parts),
              StatusIs(absl::StatusCode::kInvalidArgument, _));
  EXPECT_EQ(Content("b"), std::string(kBlock, '\0') + std::string(aligned));
}

// --- Injected errors --------------------------------------------------------

TEST_F(FaultTest, InjectedErrnoGivesThePosixStatusCodeAndTheMarker) {
  CreateDurableFile("log", "");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  struct Case {
    int error;
    absl::StatusCode code;
  };
  for (const Case& c : {Case{EIO, absl::StatusCode::kInternal},
                        Case{ENOSPC, absl::StatusCode::kResourceExhausted},
                        Case{ENOENT, absl::StatusCode::kNotFound},
                        Case{EROFS, absl::StatusCode::kPermissionDenied},
                        Case{EDQUOT, absl::StatusCode::kResourceExhausted}}) {
    fs_.InjectFault(Fault(FsOp::kDataSync, c.error));
    EXPECT_THAT(file->DataSync(),
                StatusIs(c.code, absl::StrCat("fdatasync \"", Path("log"),
                                              "\": ", std::strerror(c.error),
                                              " (injected)")));
  }
}

// The injected error of each operation reads like the real one.
TEST_F(FaultTest, InjectedErrorLooksLikeThePosixError) {
  const std::string missing = Path("missing");
  const std::vector<
      std::pair<FsOp, std::function<absl::Status(fs::FileSystem&)>>>
      ops = {
          {FsOp::kOpenForRead,
           [&](fs::FileSystem& fs) {
             return fs::FileOpener::OpenForRead(fs, missing).status();
           }},
          {FsOp::kOpenForWrite,
           [&](fs::FileSystem& fs) {
             return fs::FileOpener::OpenForWrite(fs, missing,
                                                 fs::OpenMode::kMustExist)
                 .status();
           }},
          {FsOp::kRename,
           [&](fs::FileSystem& fs) { return fs.Rename(missing, Path("x")); }},
          {FsOp::kUnlink,
           [&](fs::FileSystem& fs) { return fs.Unlink(missing); }},
          {FsOp::kRemoveDir,
           [&](fs::FileSystem& fs) { return fs.RemoveDir(missing); }},
          {FsOp::kListDir,
           [&](fs::FileSystem& fs) { return fs.ListDir(missing).status(); }},
          {FsOp::kStat,
           [&](fs::FileSystem& fs) { return fs.Stat(missing).status(); }},
          {FsOp::kVolumeSpace,
           [&](fs::FileSystem& fs) {
             return fs.GetVolumeSpace(missing).status();
           }},
      };
  for (const auto& [op, call] : ops) {
    SCOPED_TRACE(FsOpName(op));
    const absl::Status real = call(posix_);
    ASSERT_EQ(real.code(), absl::StatusCode::kNotFound) << real;
    fs_.InjectFault(Fault(op, ENOENT));
    EXPECT_THAT(call(fs_),
                StatusIs(absl::StatusCode::kNotFound,
                         absl::StrCat(real.message(), " (injected)")));
  }
}

TEST_F(FaultTest, EveryOperationKindCanFail) {
  CreateDurableFile("f", "data");
  ASSERT_OK(fs_.CreateDirs(Path("d")));
  ASSERT_OK_AND_ASSIGN(auto reader,
                       fs::FileOpener::OpenForRead(fs_, Path("f")));
  ASSERT_OK_AND_ASSIGN(
      auto writer,
      fs::FileOpener::OpenForWrite(fs_, Path("f"), fs::OpenMode::kMustExist));
  char buffer[4];
  const std::vector<std::pair<FsOp, std::function<absl::Status()>>> ops = {
      {FsOp::kOpenForRead,
       [&] { return fs::FileOpener::OpenForRead(fs_, Path("f")).status(); }},
      {FsOp::kOpenForWrite,
       [&] {
         return fs::FileOpener::OpenForWrite(fs_, Path("f"),
                                             fs::OpenMode::kMustExist)
             .status();
       }},
      {FsOp::kRead, [&] { return reader->ReadAt(0, 4, buffer).status(); }},
      {FsOp::kRead, [&] { return writer->ReadAt(0, 4, buffer).status(); }},
      {FsOp::kWrite, [&] { return writer->WriteAt(0, "x"); }},
      {FsOp::kWrite,
       [&] {
         return writer->WriteAtV(0, {"x", "y"});
       }},
      {FsOp::kAppend, [&] { return writer->Append("x"); }},
      {FsOp::kTruncate, [&] { return writer->Truncate(1); }},
      {FsOp::kDataSync, [&] { return writer->DataSync(); }},
      {FsOp::kSync, [&] { return writer->Sync(); }},
      {FsOp::kSyncDir, [&] { return fs_.SyncDir(root_); }},
      {FsOp::kRename, [&] { return fs_.Rename(Path("f"), Path("g")); }},
      {FsOp::kUnlink, [&] { return fs_.Unlink(Path("f")); }},
      {FsOp::kRemoveDir, [&] { return fs_.RemoveDir(Path("d")); }},
      {FsOp::kListDir, [&] { return fs_.ListDir(root_).status(); }},
      {FsOp::kListDir, [&] { return fs_.ListDirEntries(root_).status(); }},
      {FsOp::kLock,
       [&] { return fs::FileOpener::LockFile(fs_, Path("lock")).status(); }},
      {FsOp::kStat, [&] { return fs_.Stat(Path("f")).status(); }},
      {FsOp::kStat, [&] { return fs_.Exists(Path("f")).status(); }},
      {FsOp::kStat, [&] { return reader->Size().status(); }},
      {FsOp::kCreateDirs, [&] { return fs_.CreateDirs(Path("e")); }},
      {FsOp::kVolumeSpace, [&] { return fs_.GetVolumeSpace(root_).status(); }},
  };
  for (const auto& [op, call] : ops) {
    SCOPED_TRACE(FsOpName(op));
    fs_.InjectFault(Fault(op, ENOSPC));
    EXPECT_THAT(call(), StatusIs(absl::StatusCode::kResourceExhausted,
                                 EndsWith("(injected)")));
  }
  // A failed call has no effect.
  EXPECT_THAT(Content("f"), Optional(std::string("data")));
  EXPECT_TRUE(Exists("d"));
  EXPECT_FALSE(Exists("e"));
  EXPECT_FALSE(Exists("lock"));
  fs_.InjectFault(Fault(FsOp::kClose, EIO));
  EXPECT_THAT(writer->Close(),
              StatusIs(absl::StatusCode::kInternal, EndsWith("(injected)")));
}

TEST_F(FaultTest, FaultMatchesOnlyItsOperationKindUnlessAny) {
  CreateDurableFile("f", "");
  fs_.InjectFault(Fault(FsOp::kUnlink, EIO));
  EXPECT_OK(fs_.Stat(Path("f")).status());
  EXPECT_THAT(fs_.Unlink(Path("f")), StatusIs(absl::StatusCode::kInternal, _));

  fs_.InjectFault(Fault(FsOp::kAny, EIO));
  EXPECT_THAT(fs_.Stat(Path("f")), StatusIs(absl::StatusCode::kInternal, _));
  EXPECT_OK(fs_.Stat(Path("f")).status());
}

TEST_F(FaultTest, CountFailsTheNextMatchingCalls) {
  Fault fault(FsOp::kStat, EIO);
  fault.count = 2;
  fs_.InjectFault(fault);
  EXPECT_FALSE(fs_.Stat(root_).ok());
  EXPECT_FALSE(fs_.Stat(root_).ok());
  EXPECT_OK(fs_.Stat(root_).status());
}

TEST_F(FaultTest, SkipLetsTheFirstMatchingCallsThrough) {
  Fault fault(FsOp::kStat, EIO);
  fault.skip = 2;
  fs_.InjectFault(fault);
  EXPECT_OK(fs_.Stat(root_).status());
  EXPECT_OK(fs_.Stat(root_).status());
  EXPECT_FALSE(fs_.Stat(root_).ok());
  EXPECT_OK(fs_.Stat(root_).status());
}

TEST_F(FaultTest, ForeverFailsEveryMatchingCallUntilCleared) {
  Fault fault(FsOp::kStat, EIO);
  fault.count = Fault::kForever;
  fs_.InjectFault(fault);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(fs_.Stat(root_).ok());
  fs_.ClearFaults();
  EXPECT_OK(fs_.Stat(root_).status());
}

TEST_F(FaultTest, PathPatternsSelectThePathsThatFail) {
  CreateDurableFile("00000.log", "");
  CreateDurableFile("00000.index", "");
  CreateDurableFile("12345.log", "");
  Fault by_substring(FsOp::kStat, EIO);
  by_substring.path = PathPattern::Substring(".index");
  by_substring.count = Fault::kForever;
  fs_.InjectFault(by_substring);
  Fault by_regex(FsOp::kStat, EIO);
  by_regex.path = PathPattern::Regex("/0+\\.log$");
  by_regex.count = Fault::kForever;
  fs_.InjectFault(by_regex);

  EXPECT_FALSE(fs_.Stat(Path("00000.index")).ok());
  EXPECT_FALSE(fs_.Stat(Path("00000.log")).ok());
  EXPECT_OK(fs_.Stat(Path("12345.log")).status());
}

// The hook runs once, for the first matching open only, after the file was
// opened and holding no lock (it may use the filesystem itself).
TEST_F(FaultTest, OnNextOpenForReadRunsOnceForTheFirstMatchingOpen) {
  CreateDurableFile("a.log", "a");
  CreateDurableFile("b.index", "b");
  int runs = 0;
  fs_.OnNextOpenForRead(PathPattern::Substring(".log"), [&] {
    ++runs;
    EXPECT_OK(fs_.Stat(Path("b.index")).status());
  });
  ASSERT_OK(fs::FileOpener::OpenForRead(fs_, Path("b.index")).status());
  EXPECT_EQ(runs, 0);
  ASSERT_OK_AND_ASSIGN(auto file,
                       fs::FileOpener::OpenForRead(fs_, Path("a.log")));
  EXPECT_EQ(runs, 1);
  char byte = 0;
  EXPECT_THAT(file->ReadAt(0, 1, &byte), IsOkAndHolds(1));
  ASSERT_OK(fs::FileOpener::OpenForRead(fs_, Path("a.log")).status());
  EXPECT_EQ(runs, 1);
}

// The observer sees every sync (file and directory) on the syncing thread,
// holding no lock (it may use the filesystem itself).
TEST_F(FaultTest, OnSyncObservesEverySyncOnTheSyncingThread) {
  CreateDurableFile("a.log", "");
  ASSERT_OK_AND_ASSIGN(auto file,
                       fs::FileOpener::OpenForWrite(fs_, Path("a.log"),
                                                    fs::OpenMode::kMustExist));
  std::vector<std::string> synced;
  std::thread::id observed_thread;
  fs_.OnSync([&](const std::string& path) {
    synced.push_back(path);
    observed_thread = std::this_thread::get_id();
    EXPECT_OK(fs_.Stat(Path("a.log")).status());
  });
  std::thread syncer([&] { EXPECT_OK(file->DataSync()); });
  const std::thread::id syncer_id = syncer.get_id();
  syncer.join();
  EXPECT_EQ(observed_thread, syncer_id);
  ASSERT_OK(fs_.SyncDir(root_));
  EXPECT_THAT(synced, ::testing::ElementsAre(EndsWith("a.log"), root_));
  fs_.OnSync(nullptr);
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(synced.size(), 2u);
}

TEST_F(FaultTest, RenameMatchesEitherPath) {
  CreateDurableFile("a", "");
  Fault fault(FsOp::kRename, EIO);
  fault.path = PathPattern::Substring("target");
  fs_.InjectFault(fault);
  EXPECT_FALSE(fs_.Rename(Path("a"), Path("target")).ok());
  EXPECT_OK(fs_.Rename(Path("a"), Path("b")));
}

TEST_F(FaultTest, FailedWriteCanApplyATornPrefix) {
  CreateDurableFile("log", "");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  Fault fault(FsOp::kAppend, ENOSPC);
  fault.torn_write_bytes = 3;
  fs_.InjectFault(fault);
  EXPECT_THAT(file->Append("abcdef"),
              StatusIs(absl::StatusCode::kResourceExhausted, _));
  EXPECT_THAT(Content("log"), Optional(std::string("abc")));
  // The model saw the torn bytes: they are unsynced.
  EXPECT_THAT(fs_.UnsyncedBytes(Path("log")), IsOkAndHolds(3u));
}

// --- Blocked and slow syncs -------------------------------------------------

TEST_F(FaultTest, BlockedSyncWaitsForReleaseWithoutBlockingOthers) {
  CreateDurableFile("a.log", "");
  CreateDurableFile("b.index", "");
  ASSERT_OK_AND_ASSIGN(auto log,
                       fs::FileOpener::OpenForWrite(fs_, Path("a.log"),
                                                    fs::OpenMode::kMustExist));
  ASSERT_OK_AND_ASSIGN(auto index,
                       fs::FileOpener::OpenForWrite(fs_, Path("b.index"),
                                                    fs::OpenMode::kMustExist));
  ASSERT_OK(log->Append("record"));
  fs_.BlockSyncs(PathPattern::Substring(".log"));

  absl::Notification synced;
  absl::Status status;
  std::thread syncer([&] {
    status = log->DataSync();
    synced.Notify();
  });
  fs_.WaitUntilBlockedSyncs(1);
  EXPECT_EQ(fs_.BlockedSyncs(), 1);
  EXPECT_FALSE(synced.HasBeenNotified());
  // Other operations, including syncs of other paths, go on meanwhile.
  EXPECT_OK(index->DataSync());
  EXPECT_OK(fs_.Stat(Path("a.log")).status());

  fs_.ReleaseSyncs();
  syncer.join();
  EXPECT_OK(status);
  EXPECT_EQ(fs_.BlockedSyncs(), 0);
  fs_.Crash();
  EXPECT_THAT(Content("a.log"), Optional(std::string("record")));
}

TEST_F(FaultTest, SyncMakesDurableOnlyWhatWasWrittenBeforeItStarted) {
  CreateDurableFile("log", "");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("before"));
  fs_.BlockSyncs(PathPattern::Any());
  absl::Status status;
  std::thread syncer([&] { status = file->DataSync(); });
  fs_.WaitUntilBlockedSyncs(1);
  ASSERT_OK(file->Append("+during"));  // The group committer's race.
  fs_.ReleaseSyncs();
  syncer.join();
  ASSERT_OK(status);

  fs_.Crash();

  EXPECT_THAT(Content("log"), Optional(std::string("before")));
}

TEST_F(FaultTest, SyncBlockedAcrossACrashFailsAfterRelease) {
  CreateDurableFile("log", "");
  ASSERT_OK(fs_.CreateDirs(Path("d")));
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("record"));
  fs_.BlockSyncs(PathPattern::Any());
  absl::Status data_sync;
  absl::Status dir_sync;
  std::thread data_syncer([&] { data_sync = file->DataSync(); });
  std::thread dir_syncer([&] { dir_sync = fs_.SyncDir(root_); });
  fs_.WaitUntilBlockedSyncs(2);

  fs_.Crash();
  fs_.ReleaseSyncs();
  data_syncer.join();
  dir_syncer.join();

  const auto from_before = StatusIs(absl::StatusCode::kFailedPrecondition,
                                    HasSubstr("before the simulated crash"));
  EXPECT_THAT(data_sync, from_before);
  EXPECT_THAT(dir_sync, from_before);
  // Their late completion made nothing durable.
  fs_.Crash();
  EXPECT_THAT(Content("log"), Optional(std::string("")));
  EXPECT_FALSE(Exists("d"));
}

TEST_F(FaultTest, SyncDelaySlowsEverySync) {
  CreateDurableFile("log", "");
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  const absl::Duration delay = absl::Milliseconds(20);
  fs_.SetSyncDelay(delay);
  // A lower bound only: SleepFor never returns early, so this cannot flake.
  const absl::Time start = absl::Now();
  ASSERT_OK(file->DataSync());
  ASSERT_OK(fs_.SyncDir(root_));
  EXPECT_GE(absl::Now() - start, 2 * delay);
}

// --- Counters ---------------------------------------------------------------

TEST_F(FaultTest, CountersCountCallsPerOperationKind) {
  CreateDurableFile("log", "");  // Open, write, datasync, close, syncdir.
  fs_.ResetCounts();
  ASSERT_OK_AND_ASSIGN(
      auto file,
      fs::FileOpener::OpenForWrite(fs_, Path("log"), fs::OpenMode::kMustExist));
  ASSERT_OK(file->Append("a"));
  ASSERT_OK(file->Append("b"));
  fs_.InjectFault(Fault(FsOp::kAppend, EIO));
  EXPECT_FALSE(file->Append("c").ok());  // Failures count too.
  ASSERT_OK(fs_.Stat(Path("log")).status());

  EXPECT_EQ(fs_.Count(FsOp::kOpenForWrite), 1);
  EXPECT_EQ(fs_.Count(FsOp::kAppend), 3);
  EXPECT_EQ(fs_.Count(FsOp::kStat), 1);
  EXPECT_EQ(fs_.Count(FsOp::kDataSync), 0);
  EXPECT_EQ(fs_.Count(FsOp::kAny), 5);
  fs_.ResetCounts();
  EXPECT_EQ(fs_.Count(FsOp::kAny), 0);
}

// --- Concurrency ------------------------------------------------------------

// Writers append and sync their own files while a crash comes at a random
// point: every byte whose DataSync returned OK before the crash survives.
TEST_F(FaultTest, BytesSyncedBeforeAConcurrentCrashSurviveIt) {
  constexpr int kWriters = 4;
  constexpr int kMaxRecords = 500;
  struct Writer {
    std::string name;
    std::string written;  // What the thread wrote, in order.
    uint64_t acked = 0;   // Bytes covered by a DataSync that returned OK.
  };
  std::vector<Writer> writers(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    writers[i].name = absl::StrCat("log", i);
    CreateDurableFile(writers[i].name, "");
  }
  std::mt19937_64 random(kSeed);
  const int crash_after_syncs = absl::Uniform(random, 5, 60);

  absl::Mutex mu;
  int syncs = 0;           // Guarded by mu.
  int running = kWriters;  // Guarded by mu.
  std::vector<std::thread> threads;
  for (Writer& writer : writers) {
    threads.emplace_back([&] {
      auto file = fs::FileOpener::OpenForWrite(fs_, Path(writer.name),
                                               fs::OpenMode::kMustExist);
      for (int i = 0; file.ok() && i < kMaxRecords; ++i) {
        const std::string record = absl::StrCat(writer.name, ":", i, ";");
        if (!(*file)->Append(record).ok()) break;
        writer.written += record;
        if (i % 2 == 0) continue;  // Leave every other record unsynced.
        if (!(*file)->DataSync().ok()) break;
        writer.acked = writer.written.size();
        absl::MutexLock lock(&mu);
        ++syncs;
      }
      absl::MutexLock lock(&mu);
      --running;
    });
  }
  {
    absl::MutexLock lock(&mu);
    auto time_to_crash = [&] {
      return syncs >= crash_after_syncs || running == 0;
    };
    mu.Await(absl::Condition(&time_to_crash));
  }
  fs_.Crash({UnsyncedTail::kKeepRandomPrefix, TailContent::kWritten});
  for (std::thread& thread : threads) thread.join();

  for (const Writer& writer : writers) {
    SCOPED_TRACE(writer.name);
    const std::string content = Content(writer.name).value_or("<missing>");
    EXPECT_GE(content.size(), writer.acked);
    EXPECT_EQ(content, writer.written.substr(0, content.size()));
  }
}

// A rebooted machine holds no locks: a partition locked before a simulated
// power loss can be opened again after it, as after a real one.
TEST_F(FaultTest, CrashReleasesTheLocksTakenBeforeIt) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::FileLock> before,
                       fs::FileOpener::LockFile(fs_, Path("leader.lock")));
  EXPECT_THAT(fs::FileOpener::LockFile(fs_, Path("leader.lock")).status(),
              StatusIs(absl::StatusCode::kUnavailable, _));
  fs_.Crash();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::FileLock> after,
                       fs::FileOpener::LockFile(fs_, Path("leader.lock")));
  before.reset();  // releasing a dead lock leaves the new one alone
  EXPECT_THAT(fs::FileOpener::LockFile(fs_, Path("leader.lock")).status(),
              StatusIs(absl::StatusCode::kUnavailable, _));
}

// Write-handle locks behave as the POSIX ones (one holder; released by
// Unlock or Close), and a power loss or a lost lease drops them while the
// handles live on.
TEST_F(FaultTest, WriteHandleLocksHaveOneHolderAndGoWithACrashOrBreakLocks) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> first,
                       fs::FileOpener::OpenForWrite(
                           fs_, Path("a.log"), fs::OpenMode::kCreateIfMissing));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> second,
                       fs::FileOpener::OpenForWrite(fs_, Path("a.log"),
                                                    fs::OpenMode::kMustExist));
  ASSERT_OK(first->TryLock());
  EXPECT_THAT(second->TryLock(), StatusIs(absl::StatusCode::kUnavailable, _));
  first->Unlock();
  ASSERT_OK(second->TryLock());
  EXPECT_THAT(first->TryLock(), StatusIs(absl::StatusCode::kUnavailable, _));
  fs_.BreakLocks();
  EXPECT_OK(first->TryLock());
  ASSERT_OK(second->Close());
  fs_.Crash();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> after,
                       fs::FileOpener::OpenForWrite(
                           fs_, Path("a.log"), fs::OpenMode::kCreateIfMissing));
  EXPECT_OK(after->TryLock());
  first.reset();  // a dead handle leaves the new lock alone
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<fs::WritableFile> other,
                       fs::FileOpener::OpenForWrite(fs_, Path("a.log"),
                                                    fs::OpenMode::kMustExist));
  EXPECT_THAT(other->TryLock(), StatusIs(absl::StatusCode::kUnavailable, _));
}

}  // namespace
}  // namespace kaas::test
