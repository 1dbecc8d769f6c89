// A disk that really fills up: the engine on a 3 MiB tmpfs mounted for the
// test, through the real filesystem (no fault injection). It proves what the
// injected ENOSPC of disk_engine_disk_full_test.cc cannot: that the kernel's
// own behaviour on a full volume (a short write, then ENOSPC, from whichever
// call runs out first) ends in typed, retriable errors only, never a crash;
// that every acknowledged batch is still served byte for byte; that no
// metadata file is left half-written (an engine restarted while the disk is
// still full starts and serves everything acknowledged); and that once space
// is freed the partition takes appends again by itself.
//
// Mounting needs root with CAP_SYS_ADMIN in a mount namespace that allows
// it; where that is missing (a normal user, a sandbox) the test skips and
// says why.
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/common/api_types.h"
#include "storage/engine/disk_engine.h"
#include "storage/partition/partition.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"
#include "testing/stored_records.h"

namespace kaas {
namespace {

const TopicPartition kTp{"orders", 0};

class RealDiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_point_ = fs::JoinPath(temp_dir_.path(), "tmpfs");
    ASSERT_EQ(::mkdir(mount_point_.c_str(), 0700), 0) << std::strerror(errno);
    if (::mount("tmpfs", mount_point_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                "size=3m") != 0) {
      GTEST_SKIP() << "cannot mount a 3 MiB tmpfs at " << mount_point_ << " ("
                   << std::strerror(errno)
                   << "): this needs root with CAP_SYS_ADMIN, in a mount "
                      "namespace that allows mounts (Bazel's linux-sandbox "
                      "does for root; --spawn_strategy=standalone runs "
                      "outside any sandbox). It would prove that a really "
                      "full disk ends in retriable errors only, loses "
                      "nothing acknowledged, leaves whole metadata files and "
                      "that appends resume once space is freed.";
    }
    mounted_ = true;
    data_dir_ = fs::JoinPath(mount_point_, "data");
  }

  void TearDown() override {
    if (mounted_) {
      EXPECT_EQ(::umount2(mount_point_.c_str(), MNT_DETACH), 0)
          << std::strerror(errno);
    }
  }

  std::unique_ptr<DiskEngine> Engine() {
    DiskEngine::Options options;
    options.data_dir = data_dir_;
    options.default_config.segment_bytes = 256 << 10;
    options.default_config.index_interval_bytes = 4096;
    options.default_config.checkpoint_interval_bytes = 64 << 10;
    options.io_threads = 2;
    options.rearm_interval = absl::Milliseconds(10);
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  static std::string Batch(size_t value_size) {
    return test::BatchBuilder()
        .BaseTimestamp(1000)
        .AddRandomRecords(1, value_size)
        .Build();
  }

  // Appends acks=all batches until 20 have failed (the disk is full):
  // each failure must be retriable. Returns how many were acknowledged.
  int FillUp(DiskEngine& engine, int64_t epoch, size_t value_size) {
    int acked = 0;
    int failures = 0;
    absl::Status first_error;
    // Far more than the volume holds.
    for (int i = 0; i < 20000 && failures < 20; ++i) {
      const std::string batch = Batch(value_size);
      absl::StatusOr<AppendResult> result =
          engine.AppendAndWait(kTp, epoch, Acks::kAll, batch);
      if (result.ok()) {
        ++acked;
        acked_[result->base_offset] = batch;
      } else {
        if (failures++ == 0) first_error = result.status();
        ExpectRetriable(result.status(), "append");
      }
    }
    EXPECT_EQ(failures, 20) << "the volume never filled up";
    std::cout << acked << " appends acknowledged, then: " << first_error
              << "\n";
    return acked;
  }

  // A retriable KAFKA_STORAGE_ERROR: an I/O failure or a stalled partition.
  static void ExpectRetriable(const absl::Status& status,
                              absl::string_view what) {
    const StorageErrorCode code = GetStorageErrorCode(status);
    EXPECT_TRUE(code == StorageErrorCode::kStorageError ||
                code == StorageErrorCode::kStalled)
        << what << ": " << status;
  }

  // Reads with `read` from `log_start` to the end: every acknowledged batch
  // must be there, byte for byte (but for the fields the leader stamps).
  void ExpectAckedServed(
      int64_t log_start,
      absl::FunctionRef<absl::StatusOr<ReadResult>(int64_t offset)> read,
      const std::string& when) {
    std::map<int64_t, std::string> served;
    for (int64_t offset = log_start;;) {
      absl::StatusOr<ReadResult> result = read(offset);
      ASSERT_OK(result.status()) << when << ": read at " << offset;
      if (result->batches == 0) break;
      absl::StatusOr<std::map<int64_t, std::string>> batches =
          test::BatchesOf(std::string(result->records));
      ASSERT_OK(batches.status()) << when;
      served.insert(batches->begin(), batches->end());
      offset = result->next_offset;
    }
    for (const auto& [offset, batch] : acked_) {
      auto found = served.find(offset);
      ASSERT_NE(found, served.end())
          << when << ": acknowledged batch at offset " << offset << " lost";
      EXPECT_TRUE(SameBatchButForLeaderFields(found->second, batch))
          << when << ": batch at " << offset << " differs";
    }
  }

  void ExpectAckedServed(DiskEngine& engine, const std::string& when) {
    absl::StatusOr<int64_t> start = engine.LogStartOffset(kTp);
    ASSERT_OK(start.status()) << when;
    ExpectAckedServed(
        *start,
        [&](int64_t offset) {
          return engine.Read(kTp, offset, 1 << 20, Isolation::kReadUncommitted);
        },
        when);
  }

  // Waits until the partition is not stalled (its probe re-arms it once an
  // fsync succeeds); a generous deadline fails the test instead of hanging.
  void WaitUntilNotStalled(DiskEngine& engine) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (true) {
      absl::StatusOr<PartitionStats> stats = engine.PartitionStatsOf(kTp);
      ASSERT_OK(stats.status());
      if (!stats->stalled) return;
      ASSERT_LT(absl::Now(), deadline) << "still stalled after a minute";
      std::this_thread::yield();
    }
  }

  fs::ScopedTempDir temp_dir_;
  std::string mount_point_;
  std::string data_dir_;
  bool mounted_ = false;
  std::map<int64_t, std::string> acked_;
};

TEST_F(RealDiskFullTest, AFullVolumeFailsAppendsRetriablyAndLosesNothing) {
  fs::FileSystem& posix = *fs::PosixFileSystem::Default();
  const std::string partition_dir = fs::JoinPath(data_dir_, "orders", "0");
  const std::string first_filler = fs::JoinPath(mount_point_, "filler-1");
  const std::string second_filler = fs::JoinPath(mount_point_, "filler-2");
  // Batch sizes that make the volume run out at different places (a batch,
  // an index or checkpoint write, a snapshot, a roll).
  for (const size_t value_size : {size_t{8} << 10, size_t{3001}, size_t{777}}) {
    SCOPED_TRACE(absl::StrCat(value_size, "-byte records"));
    // A third of the volume, to free in two steps.
    ASSERT_OK(fs::WriteStringToFile(posix, first_filler,
                                    std::string(512 << 10, 'f')));
    ASSERT_OK(fs::WriteStringToFile(posix, second_filler,
                                    std::string(512 << 10, 'f')));
    {
      auto engine = Engine();
      ASSERT_OK(engine->TakeOver(kTp, 1).status());
      ASSERT_GT(FillUp(*engine, 1, value_size), 100);
      ExpectAckedServed(*engine, "on the full disk");
      // Space comes back while the engine runs: the partition takes appends
      // again once its probe has re-armed it (if the full disk stalled it).
      ASSERT_OK(posix.Unlink(first_filler));
      WaitUntilNotStalled(*engine);
      ASSERT_GT(FillUp(*engine, 1, value_size), 0);
      ExpectAckedServed(*engine, "full again");
    }

    // Restarted while the disk is still full: whatever the shutdown managed
    // to write is whole, so the engine starts and recovers the partition.
    {
      auto engine = Engine();
      ASSERT_NE(engine, nullptr);
      partition::OpenReport report;
      ASSERT_OK_AND_ASSIGN(std::shared_ptr<partition::Partition> read_only,
                           engine->OpenReadOnly(kTp, &report));
      // Nothing to set aside or to complain about: every metadata file is
      // whole (an old or a new one), and no torn append was left.
      EXPECT_TRUE(report.quarantined.empty());
      EXPECT_TRUE(report.problems.empty()) << report.problems.front();
      ExpectAckedServed(
          read_only->LogStartOffset(),
          [&](int64_t offset) {
            return read_only->Read(offset, 1 << 20,
                                   Isolation::kReadUncommitted);
          },
          "read-only, restarted on the full disk");
      read_only->Abandon();
      // No temp file of an interrupted metadata replace is left behind.
      ASSERT_OK_AND_ASSIGN(std::vector<std::string> names,
                           posix.ListDir(partition_dir));
      for (const std::string& name : names) {
        EXPECT_FALSE(fs::IsAtomicTempFileName(name)) << name;
      }
      // Leading needs a new segment and a manifest: it may fail, retriably.
      absl::StatusOr<int64_t> taken = engine->TakeOver(kTp, 2);
      std::cout << "take-over on the full disk: " << taken.status() << "\n";
      if (taken.ok()) {
        ExpectAckedServed(*engine, "led, restarted on the full disk");
      } else {
        ExpectRetriable(taken.status(), "take-over on the full disk");
      }

      ASSERT_OK(posix.Unlink(second_filler));
      if (!taken.ok()) {
        ASSERT_OK(engine->TakeOver(kTp, 2).status());
      }
      WaitUntilNotStalled(*engine);
      const std::string batch = Batch(value_size);
      ASSERT_OK_AND_ASSIGN(AppendResult result,
                           engine->AppendAndWait(kTp, 2, Acks::kAll, batch));
      acked_[result.base_offset] = batch;
      ExpectAckedServed(*engine, "with space again");
    }
    {
      auto engine = Engine();
      ASSERT_OK(engine->TakeOver(kTp, 3).status());
      ExpectAckedServed(*engine, "restarted with space");
    }
    ASSERT_OK(fs::RemoveTree(posix, data_dir_));
    acked_.clear();
  }
}

}  // namespace
}  // namespace kaas
