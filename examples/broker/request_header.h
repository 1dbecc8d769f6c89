// File: examples/broker/request_header.h
//
// Kafka request and response headers. Request header v1 (api_key,
// api_version, correlation_id, client_id) for non-flexible requests, v2
// (v1 + tagged fields) for flexible ones; response header v0
// (correlation_id) for non-flexible responses and for every ApiVersions
// response (so that a client can read it whatever version it asked for), v1
// (+ tagged fields) for other flexible ones.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_REQUEST_HEADER_H_
#define KAAS_EXAMPLES_BROKER_REQUEST_HEADER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "examples/broker/response_frame.h"
#include "examples/broker/wire.h"

namespace kaas::broker {

struct RequestHeader {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;
};

// Reads the header at the front of a request frame; `reader` is left at the
// body. Errors: kInvalidArgument (truncated or malformed).
absl::StatusOr<RequestHeader> ReadRequestHeader(WireReader& reader);

// Starts a response frame: the 4-byte size (patched by FinishResponse) and
// the response header for `header`'s API and version.
void StartResponse(const RequestHeader& header, WireWriter& writer);
// Writes the frame's size; `frame` is what StartResponse began.
void FinishResponse(std::string& frame);
void FinishResponse(ResponseFrame& frame);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_REQUEST_HEADER_H_
