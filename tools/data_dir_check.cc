// File: tools/data_dir_check.cc

#include "tools/data_dir_check.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fs/fs_util.h"
#include "storage/common/topic_name.h"
#include "storage/engine/log_dir_identity.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/producer_fences.h"

namespace kaas::tools {
namespace {

// The engine's test for a partition dir name (disk_engine.cc).
bool IsCanonicalPartitionName(absl::string_view name) {
  int32_t partition = 0;
  return absl::SimpleAtoi(name, &partition) && partition >= 0 &&
         absl::StrCat(partition) == name;
}

void CheckTopicDir(DiskEngine& engine, const std::string& topic,
                   const std::string& topic_dir, DataDirCheck* check) {
  fs::FileSystem& fs = engine.fs();
  absl::StatusOr<std::optional<TopicConfigOverrides>> config =
      ReadTopicConfig(fs, topic_dir);
  if (!config.ok()) {
    check->findings.push_back({true,
                               fs::JoinPath(topic_dir, kTopicConfigFileName),
                               std::string(config.status().message())});
  }
  absl::StatusOr<std::optional<std::string>> stamp =
      ReadTopicIdStamp(fs, topic_dir);
  if (!stamp.ok()) {
    check->findings.push_back({true, fs::JoinPath(topic_dir, kTopicIdFileName),
                               std::string(stamp.status().message())});
  }
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(topic_dir);
  if (!names.ok()) {
    check->findings.push_back(
        {true, topic_dir,
         absl::StrCat("cannot list: ", names.status().message())});
    return;
  }
  for (const std::string& name : *names) {
    std::string path = fs::JoinPath(topic_dir, name);
    if (name == kTopicConfigFileName || name == kTopicIdFileName) continue;
    if (IsCanonicalPartitionName(name)) {
      int32_t partition = 0;
      (void)absl::SimpleAtoi(name, &partition);
      check->partitions.push_back(
          CheckPartition(engine, TopicPartition{topic, partition}, path));
    } else if (absl::StartsWith(name, ".")) {
      check->findings.push_back(
          {false, path,
           "hidden entry (e.g. the staging copy of an interrupted move); the "
           "engine cleans up its own"});
    } else {
      check->findings.push_back(
          {false, path, "not a partition dir; the engine ignores it"});
    }
  }
}

}  // namespace

int DataDirCheck::problems() const {
  int total = CountFindings(findings, true);
  for (const PartitionCheck& partition : partitions) {
    total += partition.problems();
  }
  return total;
}

int DataDirCheck::notes() const {
  int total = CountFindings(findings, false);
  for (const PartitionCheck& partition : partitions) total += partition.notes();
  return total;
}

DataDirCheck CheckDataDir(DiskEngine& engine, const std::string& data_dir) {
  fs::FileSystem& fs = engine.fs();
  DataDirCheck check;
  for (const std::string& problem : engine.StartUpProblems()) {
    check.findings.push_back({true, data_dir, problem});
  }
  absl::StatusOr<std::vector<std::string>> names = fs.ListDir(data_dir);
  if (!names.ok()) {
    check.findings.push_back(
        {true, data_dir,
         absl::StrCat("cannot list the data dir: ", names.status().message())});
    return check;
  }
  for (const std::string& name : *names) {
    std::string path = fs::JoinPath(data_dir, name);
    if (name == metadata::kProducerFencesFileName ||
        name == metadata::kProducerFencesCopyFileName) {
      continue;  // read by the engine's start-up (StartUpProblems above)
    }
    if (name == metadata::kProducerFencesLockFileName) continue;  // a lock
    if (name == kLogDirMarkerFileName) continue;  // checked at start-up
    absl::StatusOr<fs::FileInfo> info = fs.Stat(path);
    if (info.ok() && info->is_directory && ValidateTopicName(name).ok()) {
      CheckTopicDir(engine, name, path, &check);
    } else if (absl::EndsWith(name, ".corrupt")) {
      check.findings.push_back(
          {false, path, "an unreadable file set aside by the engine"});
    } else if (fs::IsAtomicTempFileName(name)) {
      check.findings.push_back(
          {false, path, "temp file of an interrupted atomic write"});
    } else {
      check.findings.push_back(
          {false, path, "not a topic dir; the engine ignores it"});
    }
  }
  return check;
}

}  // namespace kaas::tools
