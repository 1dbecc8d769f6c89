// File: idempotence/producer_entry.h
//
// The values the idempotence layer works on:
//   BatchInfo     - the producer fields of one RecordBatch header, extracted by
//                   the partition layer (this library never parses batches);
//   CachedBatch   - what is remembered of an appended batch to recognise a
//                   retry of it and answer with its original offsets;
//   ProducerEntry - the state of one producer id on one partition: its epoch
//                   and the window of its last kMaxCachedBatches data batches.
//
// Whether a producer has an open transaction is NOT part of ProducerEntry:
// the transaction index (//txn) is the single source of truth for that.
//
// Thread-safety: plain values.

#ifndef KAAS_IDEMPOTENCE_PRODUCER_ENTRY_H_
#define KAAS_IDEMPOTENCE_PRODUCER_ENTRY_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "idempotence/sequence.h"

namespace kaas {
namespace idempotence {

// How many data batches are remembered per producer for duplicate detection:
// Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN, which matches the Java
// producer's max.in.flight.requests.per.connection limit for idempotence.
inline constexpr size_t kMaxCachedBatches = 5;

// The producer fields of one v2 RecordBatch header.
struct BatchInfo {
  // < 0 (Kafka's NO_PRODUCER_ID is -1): the batch is not idempotent.
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  // -1 on control batches (transaction markers).
  int32_t base_sequence = -1;
  // Record count - 1.
  int32_t last_offset_delta = 0;
  bool is_transactional = false;
  bool is_control = false;
  // The header's maxTimestamp; producer expiry is measured from it.
  int64_t max_timestamp = -1;

  // The sequence of the batch's last record, with Kafka's wrap.
  int32_t last_sequence() const {
    return NextSequence(base_sequence, last_offset_delta);
  }
};

// An appended data batch, remembered for duplicate detection.
struct CachedBatch {
  int32_t first_seq = 0;
  int32_t last_seq = 0;
  int64_t base_offset = 0;
  int64_t last_offset = 0;

  friend bool operator==(const CachedBatch& a, const CachedBatch& b) {
    return a.first_seq == b.first_seq && a.last_seq == b.last_seq &&
           a.base_offset == b.base_offset && a.last_offset == b.last_offset;
  }
  friend bool operator!=(const CachedBatch& a, const CachedBatch& b) {
    return !(a == b);
  }
};

// The state of one producer id.
//
// Invariants (kept by ProducerStateMap, checked by its FromProto):
//   epoch >= 0; window.size() <= kMaxCachedBatches; window is oldest-first
//   and its batches occupy increasing, disjoint offset ranges; every cached
//   batch has first_seq, last_seq >= 0, base_offset >= 0 and
//   last_seq == NextSequence(first_seq, last_offset - base_offset).
// An empty window with a known epoch means "the epoch began (bump, fence or
// marker) but no data batch of it is cached": the next one must start at 0.
struct ProducerEntry {
  int16_t epoch = 0;
  // maxTimestamp of the producer's last batch (data or marker), or the time
  // of its last fence; expiry is measured from it.
  int64_t last_timestamp = -1;
  absl::InlinedVector<CachedBatch, kMaxCachedBatches> window;

  // The newest cached batch, or nullptr if the window is empty.
  const CachedBatch* newest() const {
    return window.empty() ? nullptr : &window.back();
  }

  // The cached batch covering exactly [first_seq, last_seq], or nullptr.
  const CachedBatch* FindBatch(int32_t first_seq, int32_t last_seq) const {
    for (const CachedBatch& batch : window) {
      if (batch.first_seq == first_seq && batch.last_seq == last_seq) {
        return &batch;
      }
    }
    return nullptr;
  }
};

}  // namespace idempotence
}  // namespace kaas

#endif  // KAAS_IDEMPOTENCE_PRODUCER_ENTRY_H_
