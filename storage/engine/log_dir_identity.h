// File: storage/engine/log_dir_identity.h
//
// A log dir's identity marker, "<log dir>/~meta.properties", after Kafka's
// meta.properties (KIP-858's directory id):
//
//   # kaas-storage log dir identity: written once, when the dir is formatted
//   version=1
//   directory.id=Jk3hWJ0bQpKsyYUVTsPLFw
//   cluster.id=orders-cluster          (only when the engine was given one)
//
// Why: a volume that is not mounted leaves an empty directory at its mount
// point, which looks like a new, empty log dir. An engine that served it
// would take partitions over there as new and empty, and producers would
// write into a log that has nothing of what they acknowledged before. With
// a marker, the engine refuses a dir that should hold one and does not.
//
// The rule at start-up (DiskEngine::Create, for each log dir):
//   marker present and valid, cluster id agreeing  -> serve it
//   marker present but invalid, or another cluster -> refuse (kInvalidConfig)
//   no marker, dir did not exist                   -> create it, format it
//   no marker, dir holds entries (a data dir of a
//     build before markers)                        -> format it (adopt)
//   no marker, dir exists and is empty             -> refuse (kInvalidConfig)
//                                                     unless told to format
// The name starts with '~', which no Kafka topic name can contain, so no
// topic dir can stand where the marker belongs. The marker is never
// rewritten once present.
//
// Thread-safety: pure functions over the given filesystem.

#ifndef KAAS_STORAGE_ENGINE_LOG_DIR_IDENTITY_H_
#define KAAS_STORAGE_ENGINE_LOG_DIR_IDENTITY_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas {

inline constexpr absl::string_view kLogDirMarkerFileName = "~meta.properties";

struct LogDirIdentity {
  // 22 characters of URL-safe base64 (a random 128-bit id, as Kafka's).
  std::string directory_id;
  std::string cluster_id;  // empty: none recorded
};

// Parses a marker's text. Errors: kInvalidConfig naming `file_name` and what
// is wrong (a missing or unknown version, a malformed directory id, an
// unknown or repeated key).
absl::StatusOr<LogDirIdentity> ParseLogDirMarker(absl::string_view text,
                                                 absl::string_view file_name);

// The marker's text for `identity`.
std::string LogDirMarkerText(const LogDirIdentity& identity);

// What to do with a log dir that has no marker.
enum class FormatPolicy {
  kNewOrLegacyOnly,  // format one that did not exist or holds entries
  kAlways,           // also an existing empty one (the operator said so)
};

// Applies the start-up rule above to the log dir `path` named `name`:
// creates the dir if it is missing, formats it where the rule says, and
// returns its identity. `cluster_id` empty accepts any marker's (and
// records none in a new one). Errors: kInvalidConfig (refused: the message
// says why and how to format), kStorageError (I/O).
absl::StatusOr<LogDirIdentity> EnsureLogDirIdentity(
    fs::FileSystem& fs, absl::string_view name, const std::string& path,
    absl::string_view cluster_id, FormatPolicy policy);

// Reads the marker of `path` without creating or writing anything: nullopt
// if it has none. Errors as ParseLogDirMarker, kStorageError for I/O.
absl::StatusOr<std::optional<LogDirIdentity>> ReadLogDirIdentity(
    fs::FileSystem& fs, const std::string& path);

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_LOG_DIR_IDENTITY_H_
