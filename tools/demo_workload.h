// File: tools/demo_workload.h
//
// The deterministic workload of `kaaslog demo`: the bytes of the n-th batch
// of demo producer p are a pure function of (shape, p, n, base timestamp).
// That is what lets the demo check, byte for byte, the batches a crashed
// child process acknowledged: the parent regenerates them from the child's
// "acknowledged" lines alone.
//
// Producer p is an idempotent producer (id kDemoFirstProducerId + p, epoch
// 0) writing to partition p % partitions; its n-th batch has base sequence
// n * records_per_batch, base timestamp base_timestamp_ms + n, and records
// whose keys and values are printable text (so `kaaslog dump --records`
// shows them readably).
//
// Thread-safety: pure functions.

#ifndef KAAS_TOOLS_DEMO_WORKLOAD_H_
#define KAAS_TOOLS_DEMO_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>

#include "storage/batch/record_batch.h"

namespace kaas::tools {

inline constexpr int64_t kDemoFirstProducerId = 1000;

struct DemoShape {
  int records_per_batch = 10;
  int value_bytes = 100;
};

// The n-th batch of demo producer `producer`, with baseOffset 0.
// REQUIRES: shape.records_per_batch >= 1, shape.value_bytes >= 0.
std::string DemoBatch(const DemoShape& shape, int producer, int64_t n,
                      int64_t base_timestamp_ms);

// Which (producer, n) a stored demo batch claims to be, from its producer id
// and base sequence; nullopt if it is not a demo batch.
struct DemoBatchId {
  int producer = 0;
  int64_t n = 0;
};
std::optional<DemoBatchId> IdentifyDemoBatch(const DemoShape& shape,
                                             const RecordBatchView& batch);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_DEMO_WORKLOAD_H_
