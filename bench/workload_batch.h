// File: bench/workload_batch.h
//
// The batches of the standard benchmark workload (../shared/bench/
// workload.md, "Batches"): Kafka v2 RecordBatches, uncompressed, with a
// valid CRC32C, R records each with a null key and V incompressible value
// bytes. Built once per producer and submitted verbatim on every append.
//
// This is a small production encoder (the benchmark is a production binary
// and may not use the testonly //testing:batch_builder).
//
// Thread-safety: pure functions.

#ifndef KAAS_BENCH_WORKLOAD_BATCH_H_
#define KAAS_BENCH_WORKLOAD_BATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace kaas::bench {

// The shape of a workload batch: R records of V value bytes.
struct BatchShape {
  absl::string_view name;   // "1KiB" or "16KiB", as the workload names it
  int32_t records = 0;      // R
  int32_t value_bytes = 0;  // V
};

// The two shapes of the workload: 1029 and 16333 bytes per batch.
inline constexpr BatchShape kBatch1KiB{"1KiB", 8, 112};
inline constexpr BatchShape kBatch16KiB{"16KiB", 16, 1008};

// `size` bytes of the xorshift64* stream seeded with `seed` (a zero seed is
// replaced by a fixed non-zero one, since xorshift never leaves zero): fast
// to make and incompressible.
std::string IncompressibleBytes(size_t size, uint64_t seed);

// The exact encoded size of a batch of `shape`.
size_t WorkloadBatchSize(const BatchShape& shape);

// Encodes one batch of `shape`: baseOffset 0, partitionLeaderEpoch -1,
// magic 2, attributes 0, lastOffsetDelta R - 1, baseTimestamp
// `base_timestamp_ms`, maxTimestamp base + R - 1, producer id/epoch/sequence
// -1, record i with timestampDelta i, offsetDelta i, a null key, V value
// bytes and no headers. The values are consecutive parts of
// IncompressibleBytes(R * V, seed). REQUIRES: shape.records >= 1,
// shape.value_bytes >= 0.
std::string BuildWorkloadBatch(const BatchShape& shape, uint64_t seed,
                               int64_t base_timestamp_ms);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_WORKLOAD_BATCH_H_
