// File: storage/engine/topic_json.cc

#include "storage/engine/topic_json.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "re2/re2.h"
#include "storage/engine/small_files/small_files.h"

namespace kaas {
namespace {

namespace pb = google::protobuf;

absl::string_view ToAbsl(pb::StringPiece s) {
  return absl::string_view(s.data(), s.size());
}

// The field that the JSON key `key` sets, or null. Like protobuf's parser,
// accepts a field's JSON name and its proto name.
const pb::FieldDescriptor* FieldForKey(const pb::Descriptor& schema,
                                       absl::string_view key) {
  for (int i = 0; i < schema.field_count(); ++i) {
    const pb::FieldDescriptor* field = schema.field(i);
    if (key == field->json_name() || key == field->name()) return field;
  }
  return nullptr;
}

std::string KnownKeys(const pb::Descriptor& schema) {
  std::vector<std::string> keys;
  keys.reserve(schema.field_count());
  for (int i = 0; i < schema.field_count(); ++i) {
    keys.push_back(schema.field(i)->json_name());
  }
  return absl::StrJoin(keys, ", ");
}

// What the JSON value of `field` must be, for "expected ..." messages.
std::string ExpectedValue(const pb::FieldDescriptor& field) {
  switch (field.cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return "a 32-bit integer";
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return "a 64-bit integer";
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return "a non-negative 32-bit integer";
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return "a non-negative 64-bit integer";
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return "true or false";
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return "a string";
    default:
      return absl::StrCat("a value of type ", field.type_name());
  }
}

// A value as protobuf's messages print it (JSON: strings in double quotes,
// unescaped inside), made safe for a message.
std::string QuoteProtobufValue(absl::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return QuoteForMessage(value.substr(1, value.size() - 2));
  }
  if (value.size() > kMaxQuotedBytes) {
    return absl::StrCat(absl::CEscape(value.substr(0, kMaxQuotedBytes)), "...(",
                        value.size(), " bytes)");
  }
  return absl::CEscape(value);
}

// Rewrites protobuf's description of a failed parse into `file_name`'s
// error naming the JSON key. The patterns are the messages of protobuf 3.21's
// JSON parser (the version in use); a message that matches none of them is
// passed on verbatim after "invalid JSON: ", so a protobuf upgrade degrades
// the wording but never hides an error (and the tests that pin the wording
// fail, pointing here).
absl::Status RewriteParseError(const pb::Descriptor& schema,
                               absl::string_view file_name,
                               absl::string_view protobuf_message) {
  // `{"retentionMx": 1}`
  static const LazyRE2 kUnknownField = {R"((?s)(.*): Cannot find field\.)"};
  // `{"retentionMs": "abc"}`; the value is printed as JSON.
  static const LazyRE2 kInvalidValue = {
      R"((?s)\((\w+)\): invalid value (.*) for type \w+)"};
  // `{"retentionMs": [1]}`
  static const LazyRE2 kList = {
      R"((\w+): Proto field is not repeating, cannot start list\.)"};
  // `{"retentionMs": {}}`
  static const LazyRE2 kObject = {
      R"(: invalid value Starting an object on a scalar field for type (\w+))"};
  // `{"retentionMs": 1, "retentionMs": 2}`: proto3 `optional` fields are
  // one-field oneofs, which the parser refuses to set twice.
  static const LazyRE2 kSetTwice = {
      R"(: invalid value oneof field '\w+' is already set\. )"
      R"(Cannot set '(\w+)' for type oneof)"};

  const re2::StringPiece text(protobuf_message.data(), protobuf_message.size());
  std::string key;
  if (RE2::FullMatch(text, *kUnknownField, &key)) {
    return TopicFileError(
        file_name, absl::StrCat("unknown field ", QuoteForMessage(key),
                                " (known fields: ", KnownKeys(schema), ")"));
  }

  // The other patterns name a known field (by its proto or JSON name).
  std::string value;
  std::string got;  // what the file has where a value of the field belongs
  bool set_twice = false;
  if (RE2::FullMatch(text, *kInvalidValue, &key, &value)) {
    got = QuoteProtobufValue(value);
  } else if (RE2::FullMatch(text, *kList, &key)) {
    got = "a list";
  } else if (RE2::FullMatch(text, *kObject, &key)) {
    got = "an object";
  } else if (RE2::FullMatch(text, *kSetTwice, &key)) {
    set_twice = true;
  }
  const pb::FieldDescriptor* field =
      key.empty() ? nullptr : FieldForKey(schema, key);
  if (field == nullptr) {
    // Protobuf's description may quote the file at length.
    absl::string_view description = protobuf_message;
    std::string cut;
    if (description.size() > 4 * kMaxQuotedBytes) {
      cut = absl::StrCat(
          absl::CEscape(description.substr(0, 4 * kMaxQuotedBytes)), "...");
      description = cut;
    }
    return TopicFileError(file_name,
                          absl::StrCat("invalid JSON: ", description));
  }
  if (set_twice) {
    return TopicFileError(
        file_name, absl::StrCat("field ", field->json_name(), ": set twice"));
  }
  return TopicFileError(
      file_name, absl::StrCat("field ", field->json_name(), ": expected ",
                              ExpectedValue(*field), ", got ", got));
}

}  // namespace

absl::Status ParseTopicJsonFile(absl::string_view json,
                                absl::string_view file_name,
                                pb::Message& message) {
  // Checked here rather than left to protobuf, whose words for it ("Root
  // element must be a message", "Unexpected end of string") would puzzle an
  // operator.
  const absl::string_view text = absl::StripLeadingAsciiWhitespace(json);
  if (text.empty() || text.front() != '{') {
    return TopicFileError(
        file_name, text.empty() ? "expected a JSON object, the file is empty"
                                : "expected a JSON object");
  }
  message.Clear();
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;  // a typo must not pass unnoticed
  const pb::util::Status status = pb::util::JsonStringToMessage(
      pb::StringPiece(json.data(), json.size()), &message, options);
  if (status.ok()) return absl::OkStatus();
  return RewriteParseError(*message.GetDescriptor(), file_name,
                           ToAbsl(status.message()));
}

absl::Status TopicFileError(absl::string_view file_name,
                            absl::string_view message) {
  return StorageError(StorageErrorCode::kInvalidConfig,
                      absl::StrCat(file_name, ": ", message));
}

std::string JsonStringLiteral(absl::string_view value) {
  std::string literal = "\"";
  for (const char c : value) {
    switch (c) {
      case '"':
        literal += "\\\"";
        break;
      case '\\':
        literal += "\\\\";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppendFormat(&literal, "\\u%04x",
                                static_cast<unsigned char>(c));
        } else {
          literal += c;
        }
        break;
    }
  }
  literal += '"';
  return literal;
}

std::string QuoteForMessage(absl::string_view value) {
  if (value.size() <= kMaxQuotedBytes) {
    return absl::StrCat("\"", absl::CEscape(value), "\"");
  }
  return absl::StrCat("\"", absl::CEscape(value.substr(0, kMaxQuotedBytes)),
                      "\"...(", value.size(), " bytes)");
}

absl::StatusOr<std::optional<std::string>> ReadTopicFile(
    fs::FileSystem& fs, const std::string& path) {
  absl::StatusOr<std::optional<std::string>> content =
      small_files::ReadSmallFile(fs, path, kMaxTopicFileBytes);
  if (absl::IsPermissionDenied(content.status())) {
    // The seam refuses links and special files with kPermissionDenied, as
    // the OS refuses a file its mode does not let us read: the first is a
    // bad config (the operator's to fix), the second an I/O error.
    absl::StatusOr<fs::FileInfo> info = fs.Stat(path);
    const bool not_a_file =
        info.ok() && (info->is_symlink || !info->is_regular);
    return StorageError(not_a_file ? StorageErrorCode::kInvalidConfig
                                   : StorageErrorCode::kStorageError,
                        content.status().message());
  }
  if (absl::IsOutOfRange(content.status())) {
    // Far too large: the operator's to fix.
    return StorageError(StorageErrorCode::kInvalidConfig,
                        content.status().message());
  }
  if (!content.ok()) {
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat("cannot read ", path, ": ", content.status().message()));
  }
  return *std::move(content);
}

}  // namespace kaas
