// File: examples/broker/response_frame.cc

#include "examples/broker/response_frame.h"

#include <string>

#include "absl/strings/cord.h"

namespace kaas::broker {

uint64_t ResponseFrame::size() const {
  uint64_t total = bytes.size();
  for (const RegionSplice& splice : splices) total += splice.regions.size();
  return total;
}

absl::StatusOr<std::string> ResponseFrame::Flatten() const {
  std::string out;
  size_t done = 0;
  for (const RegionSplice& splice : splices) {
    out.append(bytes, done, splice.at - done);
    done = splice.at;
    absl::StatusOr<absl::Cord> records = splice.regions.ToCord();
    if (!records.ok()) return records.status();
    for (absl::string_view chunk : records->Chunks()) {
      out.append(chunk.data(), chunk.size());
    }
  }
  out.append(bytes, done, std::string::npos);
  return out;
}

}  // namespace kaas::broker
