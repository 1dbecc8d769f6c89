// File: examples/broker/request_header.cc

#include "examples/broker/request_header.h"

#include "base/status_macros.h"
#include "examples/broker/api_keys.h"

namespace kaas::broker {

absl::StatusOr<RequestHeader> ReadRequestHeader(WireReader& reader) {
  RequestHeader header;
  KAAS_ASSIGN_OR_RETURN(header.api_key, reader.Int16("api_key"));
  KAAS_ASSIGN_OR_RETURN(header.api_version, reader.Int16("api_version"));
  KAAS_ASSIGN_OR_RETURN(header.correlation_id, reader.Int32("correlation_id"));
  // client_id keeps its int16 length even in header v2.
  KAAS_ASSIGN_OR_RETURN(std::optional<absl::string_view> client_id,
                        reader.NullableString("client_id"));
  if (client_id.has_value()) header.client_id = std::string(*client_id);
  // An ApiVersions request of a version newer than any served is answered
  // in v0 form whatever its header holds, so its tags are not read.
  const bool newer_api_versions =
      header.api_key == kApiVersions && header.api_version > 3;
  if (IsFlexible(header.api_key, header.api_version) && !newer_api_versions) {
    KAAS_RETURN_IF_ERROR(reader.SkipTaggedFields("request header tags"));
  }
  return header;
}

void StartResponse(const RequestHeader& header, WireWriter& writer) {
  writer.Int32(0);  // the frame size, patched by FinishResponse
  writer.Int32(header.correlation_id);
  if (header.api_key != kApiVersions &&
      IsFlexible(header.api_key, header.api_version)) {
    writer.EmptyTaggedFields();
  }
}

void FinishResponse(std::string& frame) {
  WireWriter(&frame).PatchInt32(0, static_cast<int32_t>(frame.size() - 4));
}

void FinishResponse(ResponseFrame& frame) {
  WireWriter(&frame.bytes)
      .PatchInt32(0, static_cast<int32_t>(frame.size() - 4));
}

}  // namespace kaas::broker
