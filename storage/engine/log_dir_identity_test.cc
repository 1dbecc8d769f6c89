#include "storage/engine/log_dir_identity.h"

#include <string>

#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

using ::kaas::test::HasStorageError;
using ::kaas::test::HasStorageErrorWithMessage;
using ::kaas::test::IsOkAndHolds;
using ::testing::HasSubstr;

class LogDirIdentityTest : public ::testing::Test {
 protected:
  fs::FileSystem& fs() { return *fs::PosixFileSystem::Default(); }
  std::string Dir(absl::string_view name) {
    return fs::JoinPath(temp_.path(), name);
  }
  std::string Marker(absl::string_view dir) {
    return fs::JoinPath(Dir(dir), kLogDirMarkerFileName);
  }

  fs::ScopedTempDir temp_;
};

TEST_F(LogDirIdentityTest, AMissingDirIsCreatedAndFormattedOnce) {
  ASSERT_OK_AND_ASSIGN(LogDirIdentity first,
                       EnsureLogDirIdentity(fs(), "default", Dir("data"), "",
                                            FormatPolicy::kNewOrLegacyOnly));
  EXPECT_EQ(first.directory_id.size(), 22u);
  // Never rewritten: the next start reads the same identity.
  ASSERT_OK_AND_ASSIGN(LogDirIdentity again,
                       EnsureLogDirIdentity(fs(), "default", Dir("data"), "",
                                            FormatPolicy::kNewOrLegacyOnly));
  EXPECT_EQ(again.directory_id, first.directory_id);
}

// An unmounted volume leaves an empty mount point: refused, nothing written.
TEST_F(LogDirIdentityTest, AnExistingEmptyDirIsRefusedUnlessToldToFormat) {
  ASSERT_OK(fs().CreateDirs(Dir("mnt")));
  EXPECT_THAT(EnsureLogDirIdentity(fs(), "bulk", Dir("mnt"), "",
                                   FormatPolicy::kNewOrLegacyOnly)
                  .status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("not mounted")));
  EXPECT_THAT(fs().Exists(Marker("mnt")), IsOkAndHolds(false));
  EXPECT_OK(
      EnsureLogDirIdentity(fs(), "bulk", Dir("mnt"), "", FormatPolicy::kAlways)
          .status());
  EXPECT_THAT(fs().Exists(Marker("mnt")), IsOkAndHolds(true));
}

// A data dir written before markers existed is adopted, data untouched.
TEST_F(LogDirIdentityTest, ADirWithDataButNoMarkerIsAdopted) {
  ASSERT_OK(fs().CreateDirs(fs::JoinPath(Dir("old"), "orders")));
  ASSERT_OK(EnsureLogDirIdentity(fs(), "default", Dir("old"), "",
                                 FormatPolicy::kNewOrLegacyOnly)
                .status());
  EXPECT_THAT(fs().Exists(Marker("old")), IsOkAndHolds(true));
  EXPECT_THAT(fs().Exists(fs::JoinPath(Dir("old"), "orders")),
              IsOkAndHolds(true));
}

TEST_F(LogDirIdentityTest, AnotherClustersDirIsRefused) {
  ASSERT_OK(EnsureLogDirIdentity(fs(), "default", Dir("data"), "blue",
                                 FormatPolicy::kNewOrLegacyOnly)
                .status());
  EXPECT_THAT(EnsureLogDirIdentity(fs(), "default", Dir("data"), "green",
                                   FormatPolicy::kAlways)
                  .status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("belongs to cluster")));
  // No cluster id given: any marker is accepted.
  EXPECT_OK(EnsureLogDirIdentity(fs(), "default", Dir("data"), "",
                                 FormatPolicy::kNewOrLegacyOnly)
                .status());
}

// What the marker says is validated, not only read; a damaged marker is
// never overwritten (the operator decides).
TEST_F(LogDirIdentityTest, AnInvalidMarkerIsRefusedAndKept) {
  ASSERT_OK(fs().CreateDirs(Dir("data")));
  for (const std::string& text :
       {std::string("version=2\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\n"),
        std::string("version=1\ndirectory.id=short\n"),
        std::string("version=1\n"),
        std::string("version=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA\nx=1\n"),
        std::string(
            "version=1\nversion=1\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAA"),
        std::string("garbage")}) {
    ASSERT_OK(fs::WriteStringToFile(fs(), Marker("data"), text));
    EXPECT_THAT(EnsureLogDirIdentity(fs(), "default", Dir("data"), "",
                                     FormatPolicy::kAlways)
                    .status(),
                HasStorageError(StorageErrorCode::kInvalidConfig))
        << text;
    EXPECT_THAT(fs::ReadWholeFile(fs(), Marker("data")), IsOkAndHolds(text));
  }
}

TEST_F(LogDirIdentityTest, AFileWhereTheDirBelongsIsRefused) {
  ASSERT_OK(fs::WriteStringToFile(fs(), Dir("file"), "x"));
  EXPECT_THAT(EnsureLogDirIdentity(fs(), "default", Dir("file"), "",
                                   FormatPolicy::kAlways)
                  .status(),
              HasStorageErrorWithMessage(StorageErrorCode::kInvalidConfig,
                                         HasSubstr("not a directory")));
}

TEST_F(LogDirIdentityTest, TheMarkerRoundTrips) {
  const LogDirIdentity identity{"Jk3hWJ0bQpKsyYUVTsPLFw", "orders-cluster"};
  ASSERT_OK_AND_ASSIGN(LogDirIdentity parsed,
                       ParseLogDirMarker(LogDirMarkerText(identity), "m"));
  EXPECT_EQ(parsed.directory_id, identity.directory_id);
  EXPECT_EQ(parsed.cluster_id, identity.cluster_id);
}

}  // namespace
}  // namespace kaas
