// File: storage/engine/disk_engine_topics.cc
//
// DiskEngine: a topic's config file, read, written and applied
// (disk_engine.h).

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/common/topic_name.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/small_files/small_files.h"
#include "storage/engine/topic_config.h"

namespace kaas {

using ::kaas::partition::Partition;

absl::StatusOr<std::optional<TopicConfigOverrides>> DiskEngine::GetTopicConfig(
    absl::string_view topic) {
  KAAS_ASSIGN_OR_RETURN(Resolved where,
                        EnsureStorageError(Resolve({std::string(topic), 0})));
  return EnsureStorageError(ReadTopicConfig(*fs_, fs::Dirname(where.dir)));
}

absl::Status DiskEngine::SetTopicConfig(absl::string_view topic,
                                        const TopicConfigOverrides& overrides) {
  KAAS_RETURN_IF_ERROR(ValidateTopicName(topic));
  KAAS_RETURN_IF_ERROR(CheckWritable("SetTopicConfig"));
  // Validated as the file will be read back: what is written is always a
  // file the engine accepts.
  KAAS_RETURN_IF_ERROR(ValidateTopicConfig(topic, overrides));
  const std::string json = TopicConfigToJson(overrides);
  for (const placement::LogDirInfo& dir : log_dirs_->All()) {
    const std::string topic_dir = fs::JoinPath(dir.path, std::string(topic));
    absl::Status status = fs::CreateDirsDurably(*fs_, topic_dir);
    if (status.ok()) {
      status = small_files::WriteSmallFile(
          *fs_, fs::JoinPath(topic_dir, kTopicConfigFileName), json);
    }
    if (!status.ok()) {
      return EnsureStorageError(fs::WithContext(
          status, absl::StrCat("writing the config of topic ", topic,
                               " in log dir ", dir.name)));
    }
  }
  std::vector<TopicPartition> led;
  {
    absl::ReaderMutexLock lock(&map_mu_);
    for (const auto& [tp, partition] : led_) {
      if (tp.topic == topic) led.push_back(tp);
    }
  }
  std::vector<std::string> failures;
  for (const TopicPartition& tp : led) {
    absl::Status status = ReloadTopicConfig(tp);
    // Relinquished meanwhile: it applies the file at its next take-over.
    if (!status.ok() &&
        !HasStorageErrorCode(status, StorageErrorCode::kNotLeader)) {
      failures.push_back(absl::StrCat(tp.ToString(), ": ", status.message()));
    }
  }
  if (failures.empty()) return absl::OkStatus();
  return StorageError(
      StorageErrorCode::kStorageError,
      absl::StrCat("topic ", topic, " config written; applying it failed on ",
                   absl::StrJoin(failures, "; ")));
}

absl::Status DiskEngine::ReloadTopicConfig(const TopicPartition& tp) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<Partition> partition, Led(tp));
  KAAS_ASSIGN_OR_RETURN(PartitionConfig config, EffectiveConfig(tp));
  if (config != partition->config()) {
    LOG(INFO) << tp.ToString() << ": topic config changed; applying it";
    return partition->SetConfig(config);
  }
  return absl::OkStatus();
}

}  // namespace kaas
