// File: idempotence/sequence.h
//
// Producer sequence-number arithmetic, as Kafka defines it: sequences live in
// [0, INT32_MAX] and the successor of INT32_MAX is 0 (Kafka's
// DefaultRecordBatch.incrementSequence). A batch with base sequence `b` and
// lastOffsetDelta `d` covers sequences b .. NextSequence(b, d).
//
// Note (D-10): the original engine used two's-complement wrapping, so a batch
// crossing INT32_MAX got a negative last sequence that no retry could match.
//
// Thread-safety: pure functions.

#ifndef KAAS_IDEMPOTENCE_SEQUENCE_H_
#define KAAS_IDEMPOTENCE_SEQUENCE_H_

#include <cstdint>

namespace kaas {
namespace idempotence {

// Returns (seq + increment) mod 2^31, computed without overflow. This is
// Kafka's incrementSequence for seq >= 0 and increment >= 0, the only inputs
// that are meaningful; other inputs still give a defined value in
// [0, INT32_MAX].
inline int32_t NextSequence(int32_t seq, int32_t increment) {
  constexpr int64_t kModulus = int64_t{1} << 31;
  int64_t next = (int64_t{seq} + increment) % kModulus;
  if (next < 0) next += kModulus;
  return static_cast<int32_t>(next);
}

// True if a batch starting at `next_seq` directly follows one ending at
// `last_seq` (Kafka's ProducerAppendInfo.inSequence, including the wrap from
// INT32_MAX to 0). With last_seq == -1 ("no sequence yet") only 0 follows.
inline bool IsNextSequence(int32_t last_seq, int32_t next_seq) {
  return next_seq == NextSequence(last_seq, 1);
}

}  // namespace idempotence
}  // namespace kaas

#endif  // KAAS_IDEMPOTENCE_SEQUENCE_H_
