#include "storage/batch/record.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "storage/batch/varint.h"

namespace kaas {
namespace {

absl::Status InvalidRecord(absl::string_view message) {
  return StorageError(StorageErrorCode::kInvalidRecord, message);
}

// A varint decoding error as a kInvalidRecord error naming the field.
absl::Status FieldError(absl::string_view field, const absl::Status& status) {
  if (status.ok()) return status;
  return InvalidRecord(absl::StrCat(field, ": ", status.message()));
}

// Reads a varint length named `length_field` and that many bytes. Length -1
// is a null (nullopt) when `nullable`; any other negative length is an error.
absl::Status ReadBytes(absl::string_view* input, absl::string_view length_field,
                       bool nullable,
                       absl::optional<absl::string_view>* bytes) {
  int32_t length;
  KAAS_RETURN_IF_ERROR(FieldError(length_field, ConsumeVarint(input, &length)));
  if (length == -1 && nullable) {
    *bytes = absl::nullopt;
    return absl::OkStatus();
  }
  if (length < 0) {
    return InvalidRecord(absl::StrCat("invalid ", length_field, " ", length));
  }
  if (static_cast<size_t>(length) > input->size()) {
    return InvalidRecord(absl::StrCat(length_field, " ", length,
                                      " exceeds the ", input->size(),
                                      " bytes left in the record"));
  }
  *bytes = input->substr(0, static_cast<size_t>(length));
  input->remove_prefix(static_cast<size_t>(length));
  return absl::OkStatus();
}

// Decodes the fields of a record whose body (the bytes after `length`) is
// exactly `*body`.
absl::Status DecodeBody(absl::string_view* body, Record* record) {
  if (body->empty()) return InvalidRecord("empty record: no attributes byte");
  record->attributes = static_cast<int8_t>((*body)[0]);
  body->remove_prefix(1);
  KAAS_RETURN_IF_ERROR(FieldError(
      "timestampDelta", ConsumeVarlong(body, &record->timestamp_delta)));
  KAAS_RETURN_IF_ERROR(
      FieldError("offsetDelta", ConsumeVarint(body, &record->offset_delta)));
  KAAS_RETURN_IF_ERROR(ReadBytes(body, "keyLength", true, &record->key));
  KAAS_RETURN_IF_ERROR(ReadBytes(body, "valueLength", true, &record->value));
  int32_t header_count;
  KAAS_RETURN_IF_ERROR(
      FieldError("headers count", ConsumeVarint(body, &header_count)));
  if (header_count < 0) {
    return InvalidRecord(absl::StrCat("invalid headers count ", header_count));
  }
  // No reserve(header_count): the count is untrusted. Every header takes at
  // least two bytes, so a lying count runs out of input quickly.
  record->headers.clear();
  for (int32_t i = 0; i < header_count; ++i) {
    absl::optional<absl::string_view> key;
    absl::optional<absl::string_view> value;
    absl::Status status = ReadBytes(body, "headerKeyLength", false, &key);
    if (status.ok()) {
      status = ReadBytes(body, "headerValueLength", true, &value);
    }
    if (!status.ok()) {
      return InvalidRecord(absl::StrCat("header ", i, " of ", header_count,
                                        ": ", status.message()));
    }
    record->headers.push_back(RecordHeader{*key, value});
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ConsumeRecord(absl::string_view* input, Record* record) {
  int32_t length;
  KAAS_RETURN_IF_ERROR(
      FieldError("record length", ConsumeVarint(input, &length)));
  if (length < 0) {
    return InvalidRecord(absl::StrCat("invalid record length ", length));
  }
  if (static_cast<size_t>(length) > input->size()) {
    return InvalidRecord(absl::StrCat("record length ", length, " exceeds the ",
                                      input->size(), " bytes left"));
  }
  absl::string_view body = input->substr(0, static_cast<size_t>(length));
  input->remove_prefix(static_cast<size_t>(length));
  KAAS_RETURN_IF_ERROR(DecodeBody(&body, record));
  if (!body.empty()) {
    return InvalidRecord(
        absl::StrCat("record length ", length, " but its fields end after ",
                     length - static_cast<int32_t>(body.size()), " bytes"));
  }
  return absl::OkStatus();
}

namespace {

void AppendBytes(const absl::optional<absl::string_view>& bytes,
                 std::string* out) {
  if (!bytes.has_value()) {
    AppendVarint(-1, out);
    return;
  }
  AppendVarint(static_cast<int32_t>(bytes->size()), out);
  out->append(bytes->data(), bytes->size());
}

}  // namespace

void AppendRecord(const Record& record, int64_t timestamp_delta,
                  std::string* out) {
  // The body's size first, so that the record is written in place (no
  // temporary copy of a value that may be large).
  auto bytes_size = [](const absl::optional<absl::string_view>& bytes) {
    return bytes.has_value()
               ? VarintSize(static_cast<int32_t>(bytes->size())) + bytes->size()
               : VarintSize(-1);
  };
  size_t body = 1 + VarlongSize(timestamp_delta) +
                VarintSize(record.offset_delta) + bytes_size(record.key) +
                bytes_size(record.value) +
                VarintSize(static_cast<int32_t>(record.headers.size()));
  for (const RecordHeader& header : record.headers) {
    body += bytes_size(header.key) + bytes_size(header.value);
  }
  out->reserve(out->size() + VarintSize(static_cast<int32_t>(body)) + body);
  AppendVarint(static_cast<int32_t>(body), out);
  out->push_back(static_cast<char>(record.attributes));
  AppendVarlong(timestamp_delta, out);
  AppendVarint(record.offset_delta, out);
  AppendBytes(record.key, out);
  AppendBytes(record.value, out);
  AppendVarint(static_cast<int32_t>(record.headers.size()), out);
  for (const RecordHeader& header : record.headers) {
    AppendBytes(header.key, out);
    AppendBytes(header.value, out);
  }
}

}  // namespace kaas
