// File: storage/engine/topic_identity.h
//
// The topic identity stamp and the gate that keeps a recreated topic from
// adopting its previous incarnation's directory.
//
// The operator writes `<root>/<topic>/.topic-id.json` ({"topicId": "<uuid>"})
// once the topic's id is durable in its control plane. The broker tells the
// engine what it knows of the current incarnation through a
// TopicIdentityResolver:
//   * Unknown  - no knowledge (dev mode, control plane unreachable, first
//                listing incomplete): adopt whatever is on disk;
//   * Pending  - the topic exists but has no id yet, or is absent from a
//                complete listing: must not adopt a STAMPED directory;
//   * Known(id)- the current incarnation's id.
// Before a partition is opened (nothing is created first, since opening
// creates the directory) the gate decides:
//   unstamped dir (no file, or an empty id)        -> allow
//   unreadable stamp                               -> allow (never wedge)
//   Unknown                                        -> allow
//   Known(id) and stamp == id (hex case ignored)   -> allow
//   Known(id) with another stamp, Pending + stamp  -> refuse: kStaleTopicDir
//                                                     (retriable)
//
// Thread-safety: pure functions; resolvers must be thread-safe.

#ifndef KAAS_STORAGE_ENGINE_TOPIC_IDENTITY_H_
#define KAAS_STORAGE_ENGINE_TOPIC_IDENTITY_H_

#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas {

inline constexpr absl::string_view kTopicIdFileName = ".topic-id.json";

struct TopicIncarnation {
  enum class Kind { kUnknown, kPending, kKnown };
  Kind kind = Kind::kUnknown;
  std::string topic_id;  // kKnown only

  static TopicIncarnation Unknown() { return {Kind::kUnknown, ""}; }
  static TopicIncarnation Pending() { return {Kind::kPending, ""}; }
  static TopicIncarnation Known(std::string id) {
    return {Kind::kKnown, std::move(id)};
  }
};

// What the broker knows of each topic's current incarnation. Called
// concurrently by the engine; must be thread-safe and not block on I/O.
class TopicIdentityResolver {
 public:
  virtual ~TopicIdentityResolver() = default;
  virtual TopicIncarnation IncarnationOf(absl::string_view topic) const = 0;
};

// Reads `<topic_dir>/.topic-id.json`: nullopt when the directory is
// unstamped (no file, or an empty id). A malformed file or an id that is not
// a UUID (8-4-4-4-12 hex digits, either case; returned as written) is
// kInvalidConfig naming the file and the field; I/O errors are
// kStorageError.
absl::StatusOr<std::optional<std::string>> ReadTopicIdStamp(
    fs::FileSystem& fs, const std::string& topic_dir);

// Writes the stamp atomically (used by operators' tools and tests). An empty
// `topic_id` unstamps; anything else but a UUID is kInvalidConfig and writes
// nothing. REQUIRES: `topic_dir` exists.
absl::Status WriteTopicIdStamp(fs::FileSystem& fs, const std::string& topic_dir,
                               absl::string_view topic_id);

// The gate above: OK to open, or kStaleTopicDir explaining why not.
// `stamp` is ReadTopicIdStamp's result for the partition's topic dir.
absl::Status CheckTopicIdentity(
    absl::string_view topic, const TopicIncarnation& incarnation,
    const absl::StatusOr<std::optional<std::string>>& stamp);

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_TOPIC_IDENTITY_H_
