// libFuzzer target: the topic files an operator writes, `.config.json` and
// `.topic-id.json`. The first input byte picks the file, the rest is its
// content. Beyond "no crash, a typed error for anything invalid", it checks
// that what is accepted survives its canonical form: a config re-parsed
// from TopicConfigToJson equals the parsed one, and a stamp written back
// with WriteTopicIdStamp reads back the same id.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "glog/logging.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"

namespace kaas {
namespace {

void CheckTypedConfigError(const absl::Status& status) {
  CHECK(GetStorageErrorCode(status) == StorageErrorCode::kInvalidConfig)
      << status;
}

void FuzzConfig(absl::string_view json) {
  absl::StatusOr<TopicConfigOverrides> parsed =
      ParseTopicConfigJson(json, "fuzz/.config.json");
  if (!parsed.ok()) {
    CheckTypedConfigError(parsed.status());
    return;
  }
  const std::string canonical = TopicConfigToJson(*parsed);
  absl::StatusOr<TopicConfigOverrides> again =
      ParseTopicConfigJson(canonical, "fuzz/.config.json");
  CHECK(again.ok()) << again.status() << " for " << canonical;
  CHECK(*again == *parsed) << canonical;
}

void FuzzStamp(absl::string_view json) {
  static fs::ScopedTempDir* dir = new fs::ScopedTempDir();
  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  const std::string path = fs::JoinPath(dir->path(), kTopicIdFileName);
  CHECK(fs::WriteStringToFile(fs, path, json).ok());
  absl::StatusOr<std::optional<std::string>> stamp =
      ReadTopicIdStamp(fs, dir->path());
  if (!stamp.ok()) {
    CheckTypedConfigError(stamp.status());
    return;
  }
  if (!stamp->has_value()) return;
  CHECK(WriteTopicIdStamp(fs, dir->path(), **stamp).ok());
  absl::StatusOr<std::optional<std::string>> again =
      ReadTopicIdStamp(fs, dir->path());
  CHECK(again.ok()) << again.status();
  CHECK(*again == *stamp);
}

}  // namespace
}  // namespace kaas

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view json(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  if (data[0] % 2 == 0) {
    kaas::FuzzConfig(json);
  } else {
    kaas::FuzzStamp(json);
  }
  return 0;
}
