// File: storage/engine/topic_json.h
//
// The JSON side of the operator-written files of a topic directory
// (`.config.json`, topic_config.h; `.topic-id.json`, topic_identity.h):
// strict parsing into their proto3 schema through protobuf's JSON mapping,
// and the error and quoting conventions both files share.
//
// Protobuf reports problems in its own words, naming proto fields
// ("(retention_ms): invalid value "abc" for type TYPE_INT64"); the errors
// here are rewritten for the operator who wrote the file: they start with
// the file name and name the JSON key, e.g.
//   /data/orders/.config.json: unknown field "retentionMx" (known fields: ...)
//   /data/orders/.config.json: field retentionMs: expected an integer, got "1d"
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_ENGINE_TOPIC_JSON_H_
#define KAAS_STORAGE_ENGINE_TOPIC_JSON_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "google/protobuf/message.h"

namespace kaas {

// Parses `json`, which must be one JSON object, into `message` (cleared
// first). Every failure is a TopicFileError:
//   * not an object (including an empty file): "expected a JSON object";
//   * a key that is not a field of the schema: `unknown field "<key>"`, with
//     the list of known keys (a typo is never silently ignored);
//   * a value of the wrong JSON type, or an integer out of the field's
//     range: "field <key>: expected an integer, got <value>";
//   * a key given twice (proto3 `optional` fields): "field <key>: set twice";
//   * anything else (syntax): "invalid JSON: " and protobuf's description,
//     which shows the position.
// As in protobuf's mapping, `null` leaves a field unset, integers may also
// be written as strings ("12"), and a field's proto name (retention_ms) is
// accepted besides its JSON name (retentionMs).
// REQUIRES: the fields of `message` are singular scalars (no messages,
// repeated fields or maps).
absl::Status ParseTopicJsonFile(absl::string_view json,
                                absl::string_view file_name,
                                google::protobuf::Message& message);

// An invalid-content error of a topic file: InvalidArgument carrying
// StorageErrorCode::kInvalidConfig, with the message
// "<file_name>: <message>".
absl::Status TopicFileError(absl::string_view file_name,
                            absl::string_view message);

// `value` as a JSON string literal: in double quotes, with '"', '\\' and
// control characters escaped (other bytes are copied, so UTF-8 stays
// readable).
std::string JsonStringLiteral(absl::string_view value);

// `value` in double quotes and C-escaped, for error messages: control
// characters and other bytes from a hostile file cannot garble a log line.
// Values longer than kMaxQuotedBytes are cut there and marked with their
// size ("...(10485760 bytes)"): a file must not flood a log.
inline constexpr size_t kMaxQuotedBytes = 64;
std::string QuoteForMessage(absl::string_view value);

// The largest topic file read (an operator's JSON of a few fields).
inline constexpr uint64_t kMaxTopicFileBytes = 1 << 20;

// The content of the topic file `path`, nullopt if there is none. Errors:
// kInvalidConfig when it is not a regular file (a link, a FIFO: never
// followed or waited on) or larger than kMaxTopicFileBytes; kStorageError
// when it cannot be read.
absl::StatusOr<std::optional<std::string>> ReadTopicFile(
    fs::FileSystem& fs, const std::string& path);

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_TOPIC_JSON_H_
