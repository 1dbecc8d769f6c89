#include "placement/static_placement.h"

namespace kaas::placement {

void StaticPlacement::Assign(absl::string_view topic, int32_t partition,
                             absl::string_view log_dir) {
  absl::MutexLock lock(&mu_);
  log_dirs_[topic][partition] = std::string(log_dir);
}

void StaticPlacement::Unassign(absl::string_view topic, int32_t partition) {
  absl::MutexLock lock(&mu_);
  auto topic_it = log_dirs_.find(topic);
  if (topic_it == log_dirs_.end()) return;
  topic_it->second.erase(partition);
  if (topic_it->second.empty()) log_dirs_.erase(topic_it);
}

std::optional<std::string> StaticPlacement::LogDirOf(absl::string_view topic,
                                                     int32_t partition) const {
  absl::ReaderMutexLock lock(&mu_);
  auto topic_it = log_dirs_.find(topic);
  if (topic_it == log_dirs_.end()) return std::nullopt;
  auto partition_it = topic_it->second.find(partition);
  if (partition_it == topic_it->second.end()) return std::nullopt;
  return partition_it->second;
}

}  // namespace kaas::placement
