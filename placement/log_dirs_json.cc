#include "placement/log_dirs_json.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "glog/logging.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver.h"
#include "google/protobuf/util/type_resolver_util.h"
#include "placement/error_messages.h"
#include "placement/log_dirs.pb.h"

namespace kaas::placement {
namespace {

namespace pb = google::protobuf;

// A valid document nests 3 deep (list, entry, labels). The limit leaves room
// for plausible mistakes, which then get a precise type error, and cuts off
// pathological input: protobuf 3.21 needs time quadratic in the depth of
// nested arrays (100k levels take minutes).
constexpr int kMaxNestingDepth = 10;

pb::StringPiece ToPb(absl::string_view s) {
  return pb::StringPiece(s.data(), s.size());
}

absl::string_view ToAbsl(pb::StringPiece s) {
  return absl::string_view(s.data(), s.size());
}

// Rejects JSON nested deeper than kMaxNestingDepth. Brackets inside strings do
// not count; malformed input is left for the parser to report.
absl::Status CheckNestingDepth(absl::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // skip the escaped character
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > kMaxNestingDepth) {
          return LogDirsConfigError(
              absl::StrCat("JSON nested deeper than ", kMaxNestingDepth,
                           " levels at byte ", i, " (the format needs 3)"));
        }
        break;
      case ']':
      case '}':
        --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

// `value` as JSON text, to quote it in an error message.
std::string ValueJson(const pb::Value& value) {
  std::string json;
  if (!pb::util::MessageToJsonString(value, &json).ok()) return "(unprintable)";
  return json;
}

std::vector<std::string> SortedKeys(const pb::Struct& object) {
  std::vector<std::string> keys;
  keys.reserve(object.fields_size());
  for (const auto& [key, value] : object.fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());  // Struct's map is unordered
  return keys;
}

// The LogDir field that the JSON key `key` sets, or null. Like the proto3
// JSON parser, accepts a field's JSON name and its proto name.
const pb::FieldDescriptor* FieldForKey(absl::string_view key) {
  const pb::Descriptor* descriptor = LogDir::descriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (key == field->json_name() || key == field->name()) return field;
  }
  return nullptr;
}

std::string KnownKeys() {
  const pb::Descriptor* descriptor = LogDir::descriptor();
  std::vector<std::string> keys;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    keys.push_back(descriptor->field(i)->json_name());
  }
  return absl::StrJoin(keys, ", ");
}

// Checks the value of `key` against what the JSON mapping expects for
// `field`. Protobuf would reject most mismatches too, but its messages name
// proto fields and map-entry indexes rather than what the user wrote, and
// protobuf 3.21 reads strings such as "yes" as booleans.
absl::Status CheckValue(size_t index, absl::string_view key,
                        const pb::FieldDescriptor& field,
                        const pb::Value& value) {
  if (value.kind_case() == pb::Value::kNullValue) return absl::OkStatus();
  auto must_be = [&](absl::string_view expected) {
    return LogDirsEntryError(
        index, absl::StrCat("field ", Quote(key), " must be ", expected,
                            ", got ", ValueJson(value)));
  };
  if (field.is_map()) {  // map<string, string>: an object of strings
    if (value.kind_case() != pb::Value::kStructValue) {
      return must_be("an object of strings");
    }
    for (const std::string& label : SortedKeys(value.struct_value())) {
      const pb::Value& label_value = value.struct_value().fields().at(label);
      if (label_value.kind_case() != pb::Value::kStringValue) {
        return LogDirsEntryError(
            index,
            absl::StrCat("field ", Quote(key), ": the value of ", Quote(label),
                         " must be a string, got ", ValueJson(label_value)));
      }
    }
    return absl::OkStatus();
  }
  switch (field.type()) {
    case pb::FieldDescriptor::TYPE_STRING:
      if (value.kind_case() != pb::Value::kStringValue) {
        return must_be("a string");
      }
      break;
    case pb::FieldDescriptor::TYPE_BOOL:
      if (value.kind_case() != pb::Value::kBoolValue) {
        return must_be("true or false");
      }
      break;
    default:  // no other types in LogDir; protobuf's parse checks them
      break;
  }
  return absl::OkStatus();
}

// Unknown keys first, all of them named, so that a typo is reported as such
// rather than as the missing field it was meant to set.
absl::Status CheckFields(size_t index, const pb::Struct& entry) {
  const std::vector<std::string> keys = SortedKeys(entry);
  std::vector<std::string> unknown;
  for (const std::string& key : keys) {
    if (FieldForKey(key) == nullptr) unknown.push_back(Quote(key));
  }
  if (!unknown.empty()) {
    return LogDirsEntryError(
        index,
        absl::StrCat(unknown.size() == 1 ? "unknown field " : "unknown fields ",
                     absl::StrJoin(unknown, ", "),
                     " (known fields: ", KnownKeys(), ")"));
  }
  for (const std::string& key : keys) {
    KAAS_RETURN_IF_ERROR(
        CheckValue(index, key, *FieldForKey(key), entry.fields().at(key)));
  }
  return absl::OkStatus();
}

absl::StatusOr<LogDirInfo> ParseEntry(size_t index, const pb::Value& value) {
  if (value.kind_case() != pb::Value::kStructValue) {
    return LogDirsEntryError(
        index, absl::StrCat("expected a JSON object, got ", ValueJson(value)));
  }
  KAAS_RETURN_IF_ERROR(CheckFields(index, value.struct_value()));

  // Protobuf has no Struct-to-message conversion; the JSON text is the way
  // through its mapping.
  std::string entry_json;
  pb::util::Status status =
      pb::util::MessageToJsonString(value.struct_value(), &entry_json);
  if (!status.ok()) return LogDirsEntryError(index, ToAbsl(status.message()));
  LogDir entry;
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  status = pb::util::JsonStringToMessage(entry_json, &entry, options);
  if (!status.ok()) return LogDirsEntryError(index, ToAbsl(status.message()));

  LogDirInfo dir;  // its member initializers are the JSON defaults
  dir.name = entry.name();
  dir.path = entry.path();
  if (entry.has_default_eligible()) {
    dir.default_eligible = entry.default_eligible();
  }
  if (entry.has_cordoned()) dir.cordoned = entry.cordoned();
  dir.labels.insert(entry.labels().begin(), entry.labels().end());
  return dir;
}

constexpr absl::string_view kTypeUrlPrefix = "type.googleapis.com";

pb::util::TypeResolver* GeneratedTypeResolver() {
  static pb::util::TypeResolver* const resolver =
      pb::util::NewTypeResolverForDescriptorPool(
          std::string(kTypeUrlPrefix), pb::DescriptorPool::generated_pool());
  return resolver;
}

std::string EntryToJson(const LogDirInfo& dir) {
  LogDir entry;
  entry.set_name(dir.name);
  entry.set_path(dir.path);
  entry.set_default_eligible(dir.default_eligible);
  entry.set_cordoned(dir.cordoned);
  entry.mutable_labels()->insert(dir.labels.begin(), dir.labels.end());

  // MessageToJsonString prints a map in hash order, which differs between
  // runs; a generated config must not change when its content does not.
  // Protobuf prints JSON in wire order, and deterministic serialization
  // writes map entries sorted by key.
  std::string binary;
  {
    pb::io::StringOutputStream stream(&binary);
    pb::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    CHECK(entry.SerializeToCodedStream(&coded));
  }
  std::string json;
  const pb::util::Status status = pb::util::BinaryToJsonString(
      GeneratedTypeResolver(),
      absl::StrCat(kTypeUrlPrefix, "/", LogDir::descriptor()->full_name()),
      binary, &json, pb::util::JsonPrintOptions());
  // Only a type-resolution bug can fail here: the binary is ours.
  CHECK(status.ok()) << status.ToString();
  return json;
}

}  // namespace

absl::StatusOr<std::vector<LogDirInfo>> ParseLogDirsJson(
    absl::string_view json) {
  const absl::string_view text = absl::StripAsciiWhitespace(json);
  if (text.empty()) return std::vector<LogDirInfo>();
  // ListValue's JSON mapping would also take its message form
  // {"values": [...]}, and what it says about other documents ("Root element
  // must be a message") would puzzle an operator.
  if (text.front() != '[') {
    return LogDirsConfigError(
        "expected a JSON array of log dir objects, e.g. "
        "[{\"name\": \"fast\", \"path\": \"/vols/fast\"}]");
  }
  KAAS_RETURN_IF_ERROR(CheckNestingDepth(text));

  // Parsing into a list of generic values, rather than wrapping the text in
  // {"dirs": ...} for a message with a repeated field, keeps the parser's
  // syntax errors pointing into the user's own text and gives each entry's
  // errors its index.
  pb::ListValue entries;
  const pb::util::Status status =
      pb::util::JsonStringToMessage(ToPb(text), &entries);
  if (!status.ok()) {
    return LogDirsConfigError(
        absl::StrCat("invalid JSON: ", ToAbsl(status.message())));
  }

  std::vector<LogDirInfo> dirs;
  dirs.reserve(entries.values_size());
  for (int i = 0; i < entries.values_size(); ++i) {
    KAAS_ASSIGN_OR_RETURN(LogDirInfo dir, ParseEntry(i, entries.values(i)));
    dirs.push_back(std::move(dir));
  }
  KAAS_RETURN_IF_ERROR(ValidateLogDirs(dirs));
  return dirs;
}

std::string LogDirsToJson(const std::vector<LogDirInfo>& dirs) {
  std::vector<std::string> entries;
  entries.reserve(dirs.size());
  for (const LogDirInfo& dir : dirs) entries.push_back(EntryToJson(dir));
  return absl::StrCat("[", absl::StrJoin(entries, ","), "]");
}

}  // namespace kaas::placement
