// File: examples/broker/response_frame.h
//
// A response as it goes to the client: its bytes, with fetched records
// spliced in as engine record regions (storage/common/record_regions.h) at
// byte positions. The server writes the bytes with asio and the regions
// with RecordRegions::SendTo (sendfile inside the engine), so fetched
// records go from the segment files to the socket without passing through
// the broker's memory, as Kafka's FileRecords.writeTo does.
//
// Holding a frame holds its regions' segment files open: the server drops
// each frame once it is written (or its connection closes).
//
// Thread-safety: a value; moved between threads, never shared.

#ifndef KAAS_EXAMPLES_BROKER_RESPONSE_FRAME_H_
#define KAAS_EXAMPLES_BROKER_RESPONSE_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/common/record_regions.h"

namespace kaas::broker {

// Regions that go out right before byte `at` of the frame's bytes.
struct RegionSplice {
  size_t at = 0;
  RecordRegions regions;
};

struct ResponseFrame {
  ResponseFrame() = default;
  // Implicit: most responses are bytes only.
  ResponseFrame(std::string frame_bytes)  // NOLINT(runtime/explicit)
      : bytes(std::move(frame_bytes)) {}

  std::string bytes;
  std::vector<RegionSplice> splices;  // in ascending `at`

  // Bytes on the wire: the bytes and every region.
  uint64_t size() const;

  // The frame as one string, regions read in (for tests and fuzzers).
  // Errors: the regions' (kDataLoss, I/O).
  absl::StatusOr<std::string> Flatten() const;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_RESPONSE_FRAME_H_
