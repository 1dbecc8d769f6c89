// DiskEngine::ReadRegions: references to segment files, sent with sendfile,
// and what holding them means for Relinquish, deletion and descriptors.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine_testlib.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

const TopicPartition kOrders0{"orders", 0};

// Descriptors of this process open on files under `dir`.
int OpenFilesUnder(const std::string& dir) {
  int count = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd", error)) {
    std::error_code link_error;
    const std::filesystem::path target =
        std::filesystem::read_symlink(entry.path(), link_error);
    if (!link_error && absl::StartsWith(target.string(), dir)) ++count;
  }
  return count;
}

class DiskEngineRegionsTest : public DiskEngineTest {
 protected:
  void SetUp() override { ASSERT_EQ(::pipe(pipe_), 0); }
  void TearDown() override {
    ::close(pipe_[0]);
    ::close(pipe_[1]);
  }
  // Sends `regions` through the pipe and returns what came out (they must
  // fit the pipe's 64 KiB).
  std::string SendThroughPipe(const RecordRegions& regions) {
    absl::StatusOr<uint64_t> sent = regions.SendTo(pipe_[1]);
    EXPECT_THAT(sent, IsOkAndHolds(regions.size()));
    std::string out(sent.ok() ? *sent : 0, '\0');
    if (!out.empty()) {
      EXPECT_EQ(::read(pipe_[0], out.data(), out.size()),
                static_cast<ssize_t>(out.size()));
    }
    return out;
  }
  int pipe_[2];
};

TEST_F(DiskEngineRegionsTest, RegionsHeldAcrossRelinquishFinishWithTheirFile) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK(
        engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2, 100)).status());
  }
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine->Read(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  std::optional<RegionReadResult> regions;
  ASSERT_OK_AND_ASSIGN(
      regions,
      engine->ReadRegions(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  EXPECT_EQ(regions->batches, 3);

  ASSERT_OK(engine->Relinquish(kOrders0));
  EXPECT_THAT(
      engine->ReadRegions(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted),
      HasStorageError(StorageErrorCode::kNotLeader));
  // The regions read before keep their descriptor: the transfer finishes.
  EXPECT_GT(OpenFilesUnder(data_dir()), 0);
  EXPECT_EQ(SendThroughPipe(regions->records), std::string(read.records));
  // Dropping them closes it: a deposed leader holds nothing of its files.
  regions.reset();
  EXPECT_EQ(OpenFilesUnder(data_dir()), 0);
}

TEST_F(DiskEngineRegionsTest, RegionsOfADeletedSegmentStillSend) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  ASSERT_OK(
      engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2, 100)).status());
  ASSERT_OK(engine->TakeOver(kOrders0, 2).status());  // rolls a segment
  ASSERT_OK(
      engine->AppendAndWait(kOrders0, 2, Acks::kAll, Batch(2, 100)).status());
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine->Read(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  ASSERT_OK_AND_ASSIGN(
      RegionReadResult regions,
      engine->ReadRegions(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  // DeleteRecords frees the first segment while the regions refer to it.
  ASSERT_THAT(engine->DeleteRecords(kOrders0, 2), IsOkAndHolds(2));
  EXPECT_EQ(SendThroughPipe(regions.records), std::string(read.records));
}

TEST_F(DiskEngineRegionsTest, AReadErrorDuringTheSendFailsIt) {
  auto engine = NewEngine();
  ASSERT_OK(engine->TakeOver(kOrders0, 1).status());
  ASSERT_OK(
      engine->AppendAndWait(kOrders0, 1, Acks::kAll, Batch(2, 100)).status());
  ASSERT_OK_AND_ASSIGN(
      RegionReadResult regions,
      engine->ReadRegions(kOrders0, 0, 1 << 20, Isolation::kReadUncommitted));
  test::Fault fault(test::FsOp::kRead, EIO);
  fault.path = test::PathPattern::Regex(".*\\.log$");
  fs().InjectFault(fault);
  EXPECT_THAT(regions.records.SendTo(pipe_[1]),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("send")));
  fs().ClearFaults();
  EXPECT_THAT(regions.records.SendTo(pipe_[1]),
              IsOkAndHolds(regions.records.size()));
}

}  // namespace
}  // namespace kaas
