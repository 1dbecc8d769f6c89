// File: storage/engine/topic_identity.cc

#include "storage/engine/topic_identity.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "re2/re2.h"
#include "storage/engine/small_files/small_files.h"
#include "storage/engine/topic_identity.pb.h"
#include "storage/engine/topic_json.h"

namespace kaas {
namespace {

// The canonical textual UUID (RFC 4122): 8-4-4-4-12 hex digits. Hex digits
// of either case are accepted, as RFC 4122 asks of readers (Kubernetes and
// Java print lowercase); ids are therefore compared case-insensitively.
bool IsUuid(absl::string_view id) {
  static const LazyRE2 kUuid = {
      "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
      "[0-9a-fA-F]{12}"};
  return RE2::FullMatch(re2::StringPiece(id.data(), id.size()), *kUuid);
}

absl::Status CheckStampId(absl::string_view topic_id,
                          absl::string_view file_name) {
  if (topic_id.empty() || IsUuid(topic_id)) return absl::OkStatus();
  return TopicFileError(
      file_name,
      absl::StrCat("field topicId: ", QuoteForMessage(topic_id),
                   " is not a UUID (8-4-4-4-12 hex digits) nor empty"));
}

absl::Status StaleTopicDir(absl::string_view topic, absl::string_view stamp,
                           absl::string_view current) {
  return StorageError(
      StorageErrorCode::kStaleTopicDir,
      absl::StrCat("topic ", QuoteForMessage(topic),
                   ": the directory belongs to incarnation ", stamp,
                   " but the current incarnation ", current,
                   "; waiting for the operator to reclaim it"));
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ReadTopicIdStamp(
    fs::FileSystem& fs, const std::string& topic_dir) {
  const std::string path = fs::JoinPath(topic_dir, kTopicIdFileName);
  KAAS_ASSIGN_OR_RETURN(std::optional<std::string> json,
                        ReadTopicFile(fs, path));
  if (!json.has_value()) return std::nullopt;
  engine::TopicIdStamp stamp;
  KAAS_RETURN_IF_ERROR(ParseTopicJsonFile(*json, path, stamp));
  KAAS_RETURN_IF_ERROR(CheckStampId(stamp.topic_id(), path));
  if (stamp.topic_id().empty()) return std::nullopt;
  return stamp.topic_id();
}

absl::Status WriteTopicIdStamp(fs::FileSystem& fs, const std::string& topic_dir,
                               absl::string_view topic_id) {
  const std::string path = fs::JoinPath(topic_dir, kTopicIdFileName);
  // Never write what ReadTopicIdStamp would refuse.
  KAAS_RETURN_IF_ERROR(CheckStampId(topic_id, path));
  return small_files::WriteSmallFile(
      fs, path,
      absl::StrCat("{\"topicId\":", JsonStringLiteral(topic_id), "}"));
}

absl::Status CheckTopicIdentity(
    absl::string_view topic, const TopicIncarnation& incarnation,
    const absl::StatusOr<std::optional<std::string>>& stamp) {
  // An unreadable stamp must not wedge the partition: the operator's
  // reclaim, not this gate, is what resolves a stale directory.
  if (!stamp.ok()) return absl::OkStatus();
  // Unstamped directories are always adopted.
  if (!stamp->has_value() || (*stamp)->empty()) return absl::OkStatus();
  const std::string& stamped_id = **stamp;
  switch (incarnation.kind) {
    case TopicIncarnation::Kind::kUnknown:
      return absl::OkStatus();
    case TopicIncarnation::Kind::kKnown:
      if (absl::EqualsIgnoreCase(stamped_id, incarnation.topic_id)) {
        return absl::OkStatus();
      }
      return StaleTopicDir(topic, stamped_id,
                           absl::StrCat("is ", incarnation.topic_id));
    case TopicIncarnation::Kind::kPending:
      return StaleTopicDir(
          topic, stamped_id,
          "has no id yet (a new topic, or absent from the control plane's "
          "listing)");
  }
  return absl::OkStatus();  // unreachable: the switch covers every Kind
}

}  // namespace kaas
