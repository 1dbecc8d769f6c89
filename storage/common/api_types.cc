#include "storage/common/api_types.h"

#include "absl/strings/str_cat.h"

namespace kaas {

std::string TopicPartition::ToString() const {
  return absl::StrCat(topic, "-", partition);
}

}  // namespace kaas
