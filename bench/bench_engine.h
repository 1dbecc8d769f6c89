// File: bench/bench_engine.h
//
// The engine set-up common to every scenario of the standard workload
// (../shared/bench/workload.md, "Engine set-up"): the production disk engine
// with the default partition config except the flush interval, one topic
// per scenario, partition 0 created and taken over at leader epoch 1.
//
// Thread-safety: thread-safe (no state).

#ifndef KAAS_BENCH_BENCH_ENGINE_H_
#define KAAS_BENCH_BENCH_ENGINE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/common/api_types.h"
#include "storage/engine/disk_engine.h"

namespace kaas::bench {

// The partition every scenario uses.
inline constexpr int32_t kBenchPartition = 0;
// The epoch producers append at; readers and reopeners take over at the
// next one.
inline constexpr int64_t kWriterEpoch = 1;
inline constexpr int64_t kReopenEpoch = 2;

// A DiskEngine on `data_dir` (created if missing) whose partitions have the
// default config with `flush_interval_messages` (<= 0: never), writing
// active segments with direct I/O if `direct_io`
// (DiskEngine::Options::direct_io).
absl::StatusOr<std::unique_ptr<DiskEngine>> OpenBenchEngine(
    const std::string& data_dir, int64_t flush_interval_messages,
    bool validate_records = false, bool direct_io = false);

// Creates `tp` and takes it over at kWriterEpoch.
absl::Status StartTopic(StorageEngine& engine, const TopicPartition& tp);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_BENCH_ENGINE_H_
