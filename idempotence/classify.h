// File: idempotence/classify.h
//
// The idempotent-producer rules: given what is known about a producer id
// (or nothing) and the header of an incoming batch, decide whether the batch
// is appended, is a retry of a cached batch, or is rejected. These are
// Kafka's rules (ProducerAppendInfo, ProducerStateEntry.findDuplicateBatch,
// LogValidator), in this order:
//
//   1. producer_id < 0                        -> kNotIdempotent
//   2. producer_epoch < 0                     -> kInvalidRecord
//   3. control batch (transaction marker):
//        epoch < current                      -> kInvalidProducerEpoch
//        otherwise                            -> kAccept (D-25)
//      Markers carry no sequence (-1) and never take a window slot; a marker
//      with a newer epoch bumps the producer's epoch (Kafka's legacy, pre-TV2
//      marker rule "marker epoch >= current").
//   4. base_sequence < 0 or last_offset_delta < 0
//                                             -> kInvalidRecord (Kafka's
//                                                LogValidator INVALID_RECORD)
//   5. unknown producer id                    -> kAccept, whatever the sequence
//   6. epoch < current                        -> kInvalidProducerEpoch
//   7. same epoch, a cached batch has the same first AND last sequence
//                                             -> kDuplicate (its offsets)
//   8. epoch > current                        -> base_sequence == 0 ? kAccept
//                                                : kOutOfOrderSequence
//   9. same epoch, empty window               -> base_sequence == 0 ? kAccept
//                                                : kOutOfOrderSequence
//  10. same epoch                             -> base_sequence follows the
//                                                newest cached batch (with the
//                                                wrap INT32_MAX -> 0) ? kAccept
//                                                : kOutOfOrderSequence
//
// Rule 5 is the D-10 decision: like Kafka, a producer without state (never
// seen, expired after producer.id.expiration.ms, or whose batches were all
// deleted) may continue at any sequence. The original engine demanded 0,
// which fails a long-lived producer after its state expired. A retry of a
// batch older than the window (rule 10) is out of order, as in Kafka.
//
// Thread-safety: pure function.

#ifndef KAAS_IDEMPOTENCE_CLASSIFY_H_
#define KAAS_IDEMPOTENCE_CLASSIFY_H_

#include <string>

#include "absl/strings/string_view.h"
#include "idempotence/producer_entry.h"

namespace kaas {
namespace idempotence {

enum class VerdictKind {
  // No producer id: append without idempotence bookkeeping.
  kNotIdempotent,
  // Append, then ProducerStateMap::Record the batch.
  kAccept,
  // A retry of a batch already in the log: answer with its offsets
  // (Verdict::duplicate_of) and append nothing.
  kDuplicate,
  // Kafka OUT_OF_ORDER_SEQUENCE_NUMBER.
  kOutOfOrderSequence,
  // Kafka INVALID_PRODUCER_EPOCH: the producer was fenced by a newer epoch.
  kInvalidProducerEpoch,
  // Kafka INVALID_RECORD: producer fields no producer sends (a negative
  // epoch or base sequence with a producer id, a negative lastOffsetDelta).
  kInvalidRecord,
};

// "kAccept" etc., for logs and test output.
absl::string_view VerdictKindName(VerdictKind kind);

struct Verdict {
  VerdictKind kind = VerdictKind::kNotIdempotent;
  // kDuplicate only: the cached batch the incoming one repeats.
  CachedBatch duplicate_of;
  // Empty for kAccept and kNotIdempotent. Otherwise a sentence naming the
  // producer and the expected versus received sequence or epoch.
  std::string reason;
};

// Classifies `batch` against `entry`, the state of batch.producer_id
// (nullptr: the producer id is unknown). REQUIRES: entry is nullptr or
// describes batch.producer_id.
Verdict Classify(const ProducerEntry* entry, const BatchInfo& batch);

}  // namespace idempotence
}  // namespace kaas

#endif  // KAAS_IDEMPOTENCE_CLASSIFY_H_
