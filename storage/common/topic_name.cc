#include "storage/common/topic_name.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/storage_error.h"

namespace kaas {
namespace {

bool IsLegal(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

}  // namespace

absl::Status ValidateTopicName(absl::string_view topic) {
  auto invalid = [&](absl::string_view why) {
    return StorageError(
        StorageErrorCode::kInvalidRequest,
        absl::StrCat("invalid topic name \"",
                     absl::CEscape(topic.substr(0, 300)), "\": ", why));
  };
  if (topic.empty()) return invalid("it is empty");
  if (topic.size() > kMaxTopicNameLength) {
    return invalid(absl::StrCat("it is ", topic.size(),
                                " characters long, the limit is 249"));
  }
  if (topic == "." || topic == "..") return invalid("it is a path component");
  for (char c : topic) {
    if (!IsLegal(c)) {
      return invalid(
          "only ASCII letters, digits, '.', '_' and '-' are allowed");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePartition(int32_t partition) {
  if (partition < 0) {
    return StorageError(StorageErrorCode::kInvalidRequest,
                        absl::StrCat("invalid partition ", partition,
                                     ": partitions are numbered from 0"));
  }
  return absl::OkStatus();
}

}  // namespace kaas
