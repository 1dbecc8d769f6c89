// File: testing/torture/torture_workload.h
//
// The writers of the torture run (testing/torture/torture_main.cc) and the
// bytes they send. Everything here is a pure function of a writer and a unit
// number, which is what lets the checker (torture_check.h) tell, for every
// batch a recovered log holds, who sent it, whether it is byte for byte what
// was sent, and whether it is in the writer's order, without keeping the
// sent bytes anywhere.
//
// A writer sends its units 0, 1, 2, ... one at a time with acks=all, and
// sends unit n + 1 only once unit n was acknowledged. So after a crash at
// most one unit of each writer is in doubt (sent, never acknowledged), and a
// recovered log must hold, for each writer, exactly its units 0 .. k - 1 in
// order, where k is the number acknowledged or one more.
//
// Three kinds of writers, cycling with the writer index:
//   * plain: no producer id (duplicates are the writer's problem, so it
//     never resends a unit the log already holds);
//   * idempotent: producer id kFirstProducerId + index, epoch 0, sequences
//     counting records;
//   * transactional: like idempotent with the transactional bit, and every
//     kTransactionBatches data units are followed by a transaction marker
//     unit (commit, or abort for every third transaction).
// Writer w appends to partition w % partitions of kTortureTopic, so several
// writers share each partition's group commit.
//
// Thread-safety: pure functions.

#ifndef KAAS_TESTING_TORTURE_TORTURE_WORKLOAD_H_
#define KAAS_TESTING_TORTURE_TORTURE_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "storage/batch/record_batch.h"
#include "storage/common/api_types.h"

namespace kaas::torture {

inline constexpr absl::string_view kTortureTopic = "torture";
inline constexpr int64_t kFirstProducerId = 5000;
inline constexpr int kTransactionBatches = 3;

enum class WriterKind { kPlain, kIdempotent, kTransactional };

absl::string_view WriterKindName(WriterKind kind);

struct Writer {
  int index = 0;
  WriterKind kind = WriterKind::kPlain;
  int partition = 0;
  // Records in each of its data batches (1..4, by index).
  int records = 1;

  TopicPartition tp() const { return {std::string(kTortureTopic), partition}; }
  // -1 for a plain writer.
  int64_t producer_id() const;
};

// `count` writers over `partitions` partitions, kinds cycling plain,
// idempotent, transactional. REQUIRES: count >= 1, partitions >= 1.
std::vector<Writer> MakeWriters(int count, int partitions);

// What unit n of a writer is. Only transactional writers have markers.
struct Unit {
  bool marker = false;
  ControlType marker_type = ControlType::kCommit;  // when `marker`
  // Data units before this one (its place in the sequence numbers).
  int64_t data_index = 0;
};
Unit UnitOf(const Writer& writer, int64_t n);

// The bytes of unit n as the writer sends them (baseOffset 0, partition
// leader epoch -1). Data batches carry records keyed "w<index>.<n>.<i>"
// with pseudo-random values of a size that varies with (writer, n).
std::string UnitBytes(const Writer& writer, int64_t n);

// Which (writer index, unit) a stored data batch claims to be, read from
// its first record's key; nullopt if it is not a torture data batch (a
// control batch, a batch that does not decode, a foreign key).
struct UnitId {
  int writer = 0;
  int64_t n = 0;
};
std::optional<UnitId> IdentifyDataBatch(const RecordBatchView& batch);

}  // namespace kaas::torture

#endif  // KAAS_TESTING_TORTURE_TORTURE_WORKLOAD_H_
