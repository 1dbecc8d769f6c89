// File: testing/fault_injecting_file_system_test_fixture.h
//
// The fixture shared by the tests of FaultInjectingFileSystem: a fresh temp
// directory (created before the wrapper, so it is durable as found), the
// wrapper over PosixFileSystem, and helpers that write through the wrapper
// and look at the base filesystem directly.

#ifndef KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_TEST_FIXTURE_H_
#define KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_TEST_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas::test {

class FaultInjectingFileSystemTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSeed = 20240601;

  FaultInjectingFileSystemTest() : fs_(&posix_, kSeed) {}

  std::string Path(absl::string_view relative) const {
    return fs::JoinPath(root_, relative);
  }

  // Creates (or truncates) `name` through the wrapper with `content`, then
  // DataSyncs it and syncs its directory if asked.
  void CreateFile(absl::string_view name, absl::string_view content,
                  bool sync_data, bool sync_dir) {
    const std::string path = Path(name);
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<fs::WritableFile> file,
        fs::FileOpener::OpenForWrite(fs_, path, fs::OpenMode::kTruncate));
    ASSERT_OK(file->WriteAt(0, content));
    if (sync_data) {
      ASSERT_OK(file->DataSync());
    }
    ASSERT_OK(file->Close());
    if (sync_dir) {
      ASSERT_OK(fs_.SyncDir(fs::Dirname(path)));
    }
  }

  // A file that survives a crash: data and directory entry synced.
  void CreateDurableFile(absl::string_view name, absl::string_view content) {
    CreateFile(name, content, /*sync_data=*/true, /*sync_dir=*/true);
  }

  // What the base filesystem holds at `name`; nullopt if nothing.
  absl::optional<std::string> Content(absl::string_view name) {
    absl::StatusOr<std::string> content =
        fs::ReadFileToString(posix_, Path(name));
    if (absl::IsNotFound(content.status())) return absl::nullopt;
    EXPECT_OK(content.status());
    return content.value_or("<error>");
  }

  bool Exists(absl::string_view name) {
    absl::StatusOr<bool> exists = posix_.Exists(Path(name));
    EXPECT_OK(exists.status());
    return exists.value_or(false);
  }

  fs::FileSystem& posix_ = *fs::PosixFileSystem::Default();
  const fs::ScopedTempDir temp_dir_;
  const std::string root_ = temp_dir_.path();
  FaultInjectingFileSystem fs_;
};

}  // namespace kaas::test

#endif  // KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_TEST_FIXTURE_H_
