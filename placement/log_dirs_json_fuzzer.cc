// libFuzzer target: the log dirs JSON an operator writes. Beyond "no crash,
// a typed error for anything invalid", it checks the documented round trip:
// ParseLogDirsJson(LogDirsToJson(d)) == d for whatever was accepted.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/storage_error.h"
#include "glog/logging.h"
#include "placement/log_dir_info.h"
#include "placement/log_dirs_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view json(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<kaas::placement::LogDirInfo>> dirs =
      kaas::placement::ParseLogDirsJson(json);
  if (!dirs.ok()) {
    CHECK(kaas::GetStorageErrorCode(dirs.status()) ==
          kaas::StorageErrorCode::kInvalidConfig)
        << dirs.status();
    return 0;
  }
  const std::string canonical = kaas::placement::LogDirsToJson(*dirs);
  absl::StatusOr<std::vector<kaas::placement::LogDirInfo>> again =
      kaas::placement::ParseLogDirsJson(canonical);
  CHECK(again.ok()) << again.status() << " for " << canonical;
  CHECK(*again == *dirs) << canonical;
  return 0;
}
