// File: storage/segment/direct_log_file_test.cc
//
// DirectLogFile (storage/segment/direct_log_file.h) over the fault-injecting
// filesystem with direct I/O granted (so every write is checked for the
// alignment O_DIRECT demands, and power loss is modelled), and once over a
// real O_DIRECT file: what readers see before and after flushes, the file's
// bytes (whole blocks, the partial last block rewritten, the padding cut
// once sealed), memory kept by an idle log, rewrites and truncations, sends
// across the written part and memory, power loss, and a writer racing syncs
// and readers.

#include "storage/segment/direct_log_file.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::segment {
namespace {

using ::kaas::test::FaultInjectingFileSystem;
using ::kaas::test::StatusIs;

constexpr uint64_t kBlock = fs::kDirectIoAlignment;

// `n` bytes that differ from position to position (from `seed`).
std::string Bytes(size_t n, int seed) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<char>('a' + (i * 7 + seed * 13) % 26);
  }
  return out;
}

// Small chunks, so that appends, flushes and reads cross chunk boundaries.
DirectLogFileOptions SmallChunks() {
  DirectLogFileOptions options;
  options.chunk_bytes = 2 * kBlock;
  return options;
}

class DirectLogFileTest : public ::testing::Test {
 protected:
  DirectLogFileTest() { faults_.GrantDirectIo(true); }

  std::string Path() const { return temp_dir_.path() + "/00000.log"; }

  std::unique_ptr<DirectLogFile> Open(
      DirectLogFileOptions options = SmallChunks(),
      fs::OpenMode mode = fs::OpenMode::kTruncate) {
    return OpenOn(faults_, options, mode);
  }

  std::unique_ptr<DirectLogFile> OpenOn(fs::FileSystem& fs,
                                        DirectLogFileOptions options,
                                        fs::OpenMode mode) {
    auto base = fs::FileOpener::OpenForWrite(fs, Path(), mode);
    EXPECT_OK(base.status());
    if (!base.ok() || !(*base)->TryDirectIo()) return nullptr;
    auto reader = fs::FileOpener::OpenForRead(fs, Path());
    EXPECT_OK(reader.status());
    auto file =
        DirectLogFile::Open(std::move(*base), std::move(*reader), options);
    EXPECT_OK(file.status());
    return file.ok() ? std::move(*file) : nullptr;
  }

  // The file's bytes, read past the DirectLogFile.
  std::string OnDisk() {
    auto bytes = fs::ReadWholeFile(posix(), Path());
    EXPECT_OK(bytes.status());
    return bytes.ok() ? *bytes : "";
  }

  static std::string ReadAll(const DirectLogFile& file, uint64_t from = 0) {
    std::string out(1 << 20, '\0');
    auto got = file.ReadAt(from, out.size(), out.data());
    EXPECT_OK(got.status());
    out.resize(got.ok() ? *got : 0);
    return out;
  }

  static fs::FileSystem& posix() { return *fs::PosixFileSystem::Default(); }

  fs::ScopedTempDir temp_dir_;
  FaultInjectingFileSystem faults_{fs::PosixFileSystem::Default(), 1};
};

TEST_F(DirectLogFileTest, ReadersSeeEveryAppendedByteBeforeAndAfterSyncs) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  std::string expected;
  for (int i = 0; i < 40; ++i) {
    const std::string piece = Bytes(1000 + 97 * i, i);
    ASSERT_OK(file->Append(piece));
    expected += piece;
    EXPECT_EQ(ReadAll(*file), expected);
    if (i % 7 == 6) {
      ASSERT_OK(file->DataSync());
    }
    // A read from the middle spans the file and memory.
    EXPECT_EQ(ReadAll(*file, expected.size() / 3),
              expected.substr(expected.size() / 3));
  }
  EXPECT_EQ(*file->Size(), expected.size());
}

TEST_F(DirectLogFileTest, ASyncWritesWholeBlocksAndRewritesThePartialOne) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  ASSERT_OK(file->Append(Bytes(100, 1)));
  EXPECT_EQ(OnDisk(), "");  // nothing is written before a sync
  ASSERT_OK(file->DataSync());
  std::string disk = OnDisk();
  ASSERT_EQ(disk.size(), kBlock);  // padded to the block
  EXPECT_EQ(disk.substr(0, 100), Bytes(100, 1));
  EXPECT_EQ(disk.substr(100), std::string(kBlock - 100, '\0'));

  ASSERT_OK(file->Append(Bytes(5000, 2)));
  ASSERT_OK(file->DataSync());
  disk = OnDisk();
  ASSERT_EQ(disk.size(), 2 * kBlock);
  EXPECT_EQ(disk.substr(0, 5100), Bytes(100, 1) + Bytes(5000, 2));
  EXPECT_EQ(disk.substr(5100), std::string(2 * kBlock - 5100, '\0'));
}

TEST_F(DirectLogFileTest, ASealedSyncCutsThePadding) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(3 * kBlock + 17, 3);
  ASSERT_OK(file->Append(data));
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk().size(), 4 * kBlock);
  file->Seal();
  // Nothing is pending: the sync only cuts.
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), data);
  EXPECT_EQ(ReadAll(*file), data);
}

TEST_F(DirectLogFileTest, ASealedLogIsWrittenAndCutByOneSync) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(2 * kBlock + 5, 4);
  ASSERT_OK(file->Append(data));
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), data);
}

TEST_F(DirectLogFileTest, AnIdleLogKeepsOnlyItsPartialLastBlockInMemory) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(5 * kBlock + 300, 5);
  ASSERT_OK(file->Append(data));
  EXPECT_GE(file->MemoryBytes(), data.size());
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(file->MemoryBytes(), kBlock);
  ASSERT_OK(file->Append(std::string(kBlock - 300, 'z')));
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(file->MemoryBytes(), 0u);  // ends on a block boundary
  EXPECT_EQ(ReadAll(*file), data + std::string(kBlock - 300, 'z'));
  // Appends go on from there.
  ASSERT_OK(file->Append("more"));
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk().substr(0, data.size() + kBlock - 300 + 4),
            data + std::string(kBlock - 300, 'z') + "more");
}

// While appends keep coming, readers that follow the end find the bytes
// written last in memory; older ones come from the file.
TEST_F(DirectLogFileTest, RecentlyWrittenBytesAreReadFromMemory) {
  DirectLogFileOptions options = SmallChunks();
  options.flush_bytes = 8 * kBlock;
  options.keep_written_bytes = 4 * kBlock;
  std::unique_ptr<DirectLogFile> file = Open(options);
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(8 * kBlock + 100, 13);
  ASSERT_OK(file->Append(data));  // writes the 8 whole blocks
  ASSERT_EQ(OnDisk(), data.substr(0, 8 * kBlock));
  faults_.ResetCounts();
  EXPECT_EQ(ReadAll(*file, 4 * kBlock), data.substr(4 * kBlock));
  EXPECT_EQ(faults_.Count(test::FsOp::kRead), 0);
  EXPECT_EQ(ReadAll(*file), data);
  EXPECT_EQ(faults_.Count(test::FsOp::kRead), 1);
}

TEST_F(DirectLogFileTest, AppendsWriteWholeBlocksOncePastFlushBytes) {
  DirectLogFileOptions options = SmallChunks();
  options.flush_bytes = 2 * kBlock;
  std::unique_ptr<DirectLogFile> file = Open(options);
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(2 * kBlock + 500, 4);
  ASSERT_OK(file->Append(data.substr(0, kBlock)));
  EXPECT_EQ(OnDisk().size(), 0u);  // below flush_bytes: all in memory
  ASSERT_OK(file->Append(data.substr(kBlock)));
  // Only whole blocks are written; the last 500 bytes stay in memory.
  EXPECT_EQ(OnDisk(), data.substr(0, 2 * kBlock));
  EXPECT_EQ(ReadAll(*file), data);
}

TEST_F(DirectLogFileTest, RewritesOfWrittenBytesReachTheFileAtTheNextSync) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  std::string data = Bytes(5 * kBlock, 5);
  ASSERT_OK(file->Append(data));
  ASSERT_OK(file->DataSync());
  ASSERT_OK(file->Append("tail"));
  data += "tail";
  ASSERT_OK(file->WriteAt(100, "XYZ"));
  data.replace(100, 3, "XYZ");
  EXPECT_EQ(ReadAll(*file), data);
  EXPECT_NE(OnDisk().substr(0, 103), data.substr(0, 103));
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk().substr(0, data.size()), data);
}

TEST_F(DirectLogFileTest, TruncationCutsTheFileAndAppendsContinueThere) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(6 * kBlock + 300, 6);
  ASSERT_OK(file->Append(data));
  ASSERT_OK(file->DataSync());
  ASSERT_OK(file->Truncate(1000));
  EXPECT_EQ(OnDisk(), data.substr(0, 1000));
  EXPECT_EQ(ReadAll(*file), data.substr(0, 1000));
  ASSERT_OK(file->Append("more"));
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), data.substr(0, 1000) + "more");
}

TEST_F(DirectLogFileTest, TruncationOfUnwrittenBytesNeedsNoFileChange) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  ASSERT_OK(file->Append(Bytes(kBlock + 10, 7)));
  ASSERT_OK(file->DataSync());
  ASSERT_OK(file->Append(Bytes(3 * kBlock, 8)));  // a failed append's bytes
  ASSERT_OK(file->Truncate(kBlock + 10));
  ASSERT_OK(file->Append("next"));
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), Bytes(kBlock + 10, 7) + "next");
}

// A flush that failed part way may have written past what it then reports;
// truncating the rejected bytes cuts the file there too.
TEST_F(DirectLogFileTest, ATruncationAfterAFailedFlushCutsWhatItWrote) {
  DirectLogFileOptions options = SmallChunks();
  options.flush_bytes = 2 * kBlock;
  std::unique_ptr<DirectLogFile> file = Open(options);
  ASSERT_NE(file, nullptr);
  const std::string kept = Bytes(kBlock, 14);
  ASSERT_OK(file->Append(kept));
  test::Fault torn(test::FsOp::kWrite, EIO);
  torn.torn_write_bytes = 3 * kBlock + 100;
  faults_.InjectFault(torn);
  EXPECT_FALSE(file->Append(Bytes(3 * kBlock, 15)).ok());  // its flush fails
  ASSERT_OK(file->Truncate(kept.size()));  // as a failed append is undone
  EXPECT_EQ(OnDisk(), kept.substr(0, OnDisk().size()));
  EXPECT_LE(OnDisk().size(), kept.size());
  EXPECT_EQ(ReadAll(*file), kept);
}

TEST_F(DirectLogFileTest, AWritePastTheEndIsRefused) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  ASSERT_OK(file->Append("abc"));
  EXPECT_THAT(file->WriteAt(10, "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("no holes")));
  EXPECT_EQ(ReadAll(*file), "abc");
}

TEST_F(DirectLogFileTest, AnExistingFileIsContinuedWithItsLastBlockRewritten) {
  const std::string old = Bytes(kBlock + 123, 7);
  ASSERT_OK(fs::WriteStringToFile(posix(), Path(), old));
  std::unique_ptr<DirectLogFile> file =
      Open(SmallChunks(), fs::OpenMode::kMustExist);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(*file->Size(), old.size());
  EXPECT_EQ(ReadAll(*file), old);
  ASSERT_OK(file->Append("new"));
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), old + "new");
}

TEST_F(DirectLogFileTest, SendToCoversTheFileAndMemory) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  const std::string data = Bytes(5 * kBlock + 10, 8);
  ASSERT_OK(file->Append(data.substr(0, 4 * kBlock + 5)));
  ASSERT_OK(file->DataSync());
  ASSERT_OK(file->Append(data.substr(4 * kBlock + 5)));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  auto sent = file->SendTo(7, data.size(), fds[1]);
  ASSERT_OK(sent.status());
  EXPECT_EQ(*sent, data.size() - 7);
  ::close(fds[1]);
  EXPECT_EQ(fs::ReadUpTo(fds[0], data.size()), data.substr(7));
  ::close(fds[0]);
}

TEST_F(DirectLogFileTest, SyncedBytesSurvivePowerLossAndUnsyncedOnesDoNot) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  ASSERT_OK(faults_.SyncDir(temp_dir_.path()));
  const std::string synced = Bytes(kBlock + 700, 9);
  ASSERT_OK(file->Append(synced));
  ASSERT_OK(file->DataSync());
  ASSERT_OK(file->Append(Bytes(3000, 10)));  // never synced
  faults_.Crash(test::CrashOptions{test::UnsyncedTail::kKeepAll});
  // What the sync made durable is there, followed by the padding of its
  // last block: the unsynced append never reached the file.
  EXPECT_EQ(OnDisk(), synced + std::string(2 * kBlock - synced.size(), '\0'));
}

// The last block is rewritten by every sync; power lost during the rewrite
// keeps the bytes the earlier sync made durable.
TEST_F(DirectLogFileTest, PowerLossDuringARewriteKeepsTheSyncedPrefix) {
  std::unique_ptr<DirectLogFile> file = Open();
  ASSERT_NE(file, nullptr);
  ASSERT_OK(faults_.SyncDir(temp_dir_.path()));
  const std::string synced = Bytes(700, 11);
  ASSERT_OK(file->Append(synced));
  ASSERT_OK(file->DataSync());
  test::Fault fault(test::FsOp::kDataSync, EIO);
  faults_.InjectFault(fault);
  ASSERT_OK(file->Append(Bytes(600, 12)));
  EXPECT_FALSE(file->DataSync().ok());  // written, not durable
  faults_.Crash(test::CrashOptions{test::UnsyncedTail::kKeepRandomPrefix,
                                   test::TailContent::kGarbage});
  EXPECT_EQ(OnDisk().substr(0, synced.size()), synced);
}

TEST_F(DirectLogFileTest, RealDirectIoWritesWhatWasAppended) {
  std::unique_ptr<DirectLogFile> file =
      OpenOn(posix(), DirectLogFileOptions(), fs::OpenMode::kTruncate);
  if (file == nullptr) {
    GTEST_SKIP() << "the test's temp dir refuses direct I/O";
  }
  std::string data;
  for (int i = 0; i < 50; ++i) {
    const std::string piece = Bytes(16000 + i, i);
    ASSERT_OK(file->Append(piece));
    data += piece;
    if (i % 9 == 0) {
      ASSERT_OK(file->DataSync());
    }
  }
  EXPECT_EQ(ReadAll(*file), data);
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), data);
}

// A writer appends while a syncer syncs and a reader reads: every read is a
// prefix of what was appended, and the file ends up holding all of it.
TEST_F(DirectLogFileTest, AWriterRacesSyncsAndReaders) {
  DirectLogFileOptions options = SmallChunks();
  options.flush_bytes = 3 * kBlock;
  std::unique_ptr<DirectLogFile> file = Open(options);
  ASSERT_NE(file, nullptr);
  std::string expected;
  for (int i = 0; i < 400; ++i) expected += Bytes(97 + i % 300, i);
  std::atomic<bool> done{false};
  std::thread syncer([&] {
    while (!done.load()) ASSERT_OK(file->DataSync());
  });
  std::thread reader([&] {
    while (!done.load()) {
      const std::string seen = ReadAll(*file);
      ASSERT_EQ(seen, expected.substr(0, seen.size()));
    }
  });
  size_t at = 0;
  for (int i = 0; i < 400; ++i) {
    const size_t n = 97 + i % 300;
    ASSERT_OK(file->Append(expected.substr(at, n)));
    at += n;
  }
  done.store(true);
  syncer.join();
  reader.join();
  file->Seal();
  ASSERT_OK(file->DataSync());
  EXPECT_EQ(OnDisk(), expected);
}

}  // namespace
}  // namespace kaas::segment
