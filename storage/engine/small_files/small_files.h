// File: storage/engine/small_files/small_files.h
//
// The engine's own small files and partition copies: the one place of the
// engine layer that opens files (the capability of fs/file_opener.h; the
// rest of the engine, like the partition layer, has directory operations
// only). What goes through here:
//   * the topic files (<topic>/.config.json, <topic>/.topic-id.json),
//     operator-written or (the config) written by SetTopicConfig: read,
//     written, and carried by a move;
//   * the topic identity stamp, written when a topic is stamped;
//   * the move marker (.moving-to): written and read;
//   * the durable copy of a partition dir during a move.
//
// Errors: as fs/file_util.h's; a missing file is not an error (nullopt).
//
// Thread-safety: as the FileSystem's.

#ifndef KAAS_STORAGE_ENGINE_SMALL_FILES_SMALL_FILES_H_
#define KAAS_STORAGE_ENGINE_SMALL_FILES_SMALL_FILES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::small_files {

// The largest small file the engine reads (topic JSON, the move marker).
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t{1} << 20;

// The content of the regular file `path`, read by the bytes that arrive;
// nullopt if it is missing. A larger file than `max_bytes` is kOutOfRange
// (unread), a link or special file kPermissionDenied (fs/file_system.h).
absl::StatusOr<std::optional<std::string>> ReadSmallFile(
    fs::FileSystem& fs, const std::string& path,
    uint64_t max_bytes = kMaxSmallFileBytes);

// Replaces `path` with `contents` durably and all or nothing
// (fs::AtomicReplaceFile). REQUIRES: the parent directory exists.
absl::Status WriteSmallFile(fs::FileSystem& fs, const std::string& path,
                            absl::string_view contents);

// Copies the partition dir `from` to the new path `to`, durably
// (fs::CopyTree: every file and dir synced; links refused).
absl::Status CopyPartitionDir(fs::FileSystem& fs, const std::string& from,
                              const std::string& to);

}  // namespace kaas::small_files

#endif  // KAAS_STORAGE_ENGINE_SMALL_FILES_SMALL_FILES_H_
