#include "placement/error_messages.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"

namespace kaas::placement {

std::string Quote(absl::string_view value) {
  return absl::StrCat("\"", absl::CEscape(value), "\"");
}

absl::Status LogDirsConfigError(absl::string_view message) {
  return StorageError(StorageErrorCode::kInvalidConfig,
                      absl::StrCat("log dirs: ", message));
}

absl::Status LogDirsEntryError(size_t index, absl::string_view message) {
  return StorageError(StorageErrorCode::kInvalidConfig,
                      absl::StrCat("log dirs entry ", index, ": ", message));
}

}  // namespace kaas::placement
