// File: testing/torture/torture_check.h
//
// The torture run's invariant, checked on a recovered engine: every
// acknowledged unit of every writer (testing/torture/torture_workload.h) is
// in the log byte for byte at the offset it was acknowledged at; offsets are
// contiguous from the log start to the high watermark; every batch is a unit
// its writer sent, in the writer's order, at most once; a writer's unit in
// doubt (sent, never acknowledged) may be there or not, nothing past it may;
// and the producer and transaction state the engine reports (producers'
// last sequences, open transactions, the last stable offset, aborted
// transactions) is what the recovered log implies.
//
//   absl::StatusOr<LogContents> contents =
//       CheckRecoveredLog(engine, writers, ledgers, partitions);
//   // !ok(): kDataLoss naming the partition, offset, writer and unit.
//
// Thread-safety: thread-compatible (reads through the engine's thread-safe
// calls only).

#ifndef KAAS_TESTING_TORTURE_TORTURE_CHECK_H_
#define KAAS_TESTING_TORTURE_TORTURE_CHECK_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "storage/engine/storage_engine.h"
#include "testing/torture/torture_workload.h"

namespace kaas::torture {

// What the run knows of one writer: unit n was acknowledged at offset
// acked[n]; if `in_doubt`, unit acked.size() was sent and never
// acknowledged (the crash came first).
struct WriterLedger {
  std::vector<int64_t> acked;
  bool in_doubt = false;
};

// What the recovered log holds of one writer: unit n at offsets[n].
struct WriterInLog {
  std::vector<int64_t> offsets;
};

struct LogContents {
  std::vector<WriterInLog> writers;  // by writer index
  int64_t batches = 0;
  // Units in doubt that the crash kept (sent, stored, never acknowledged).
  int64_t in_doubt_kept = 0;
};

// Reads partitions 0 .. partitions - 1 of kTortureTopic through `engine`
// (led by it) and checks them against `ledgers` (by writer index). Errors:
// kDataLoss for a broken invariant; the engine's errors for a failed read.
absl::StatusOr<LogContents> CheckRecoveredLog(
    StorageEngine& engine, const std::vector<Writer>& writers,
    const std::vector<WriterLedger>& ledgers, int partitions);

}  // namespace kaas::torture

#endif  // KAAS_TESTING_TORTURE_TORTURE_CHECK_H_
