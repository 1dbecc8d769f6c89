// File: idempotence/producer_state_map.h
//
// ProducerStateMap: the idempotent-producer state of one partition, keyed by
// producer id. The partition layer, holding its lock, asks Check() before an
// append, Record()s the batch once it is written, applies fences, expires
// idle producers and persists the state via ToProto()/FromProto().
//
//   Verdict v = producers.Check(info);
//   switch (v.kind) { ... kDuplicate: answer v.duplicate_of ... }
//   ... write the batch at base_offset ...
//   KAAS_RETURN_IF_ERROR(producers.Record(info, base_offset));
//
// Every mutator keeps the invariants documented on ProducerEntry and refuses
// (leaving the state unchanged) input that would break them, so a snapshot
// this class writes is always one FromProto accepts.
//
// Thread-safety: thread-compatible (the partition lock serialises access).

#ifndef KAAS_IDEMPOTENCE_PRODUCER_STATE_MAP_H_
#define KAAS_IDEMPOTENCE_PRODUCER_STATE_MAP_H_

#include <cstddef>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "idempotence/classify.h"
#include "idempotence/producer_entry.h"
#include "idempotence/producer_state.pb.h"

namespace kaas {
namespace idempotence {

// Kafka's producer.id.expiration.ms default: one day.
inline constexpr int64_t kDefaultProducerIdExpirationMs = 86400000;

class ProducerStateMap {
 public:
  ProducerStateMap() = default;
  ProducerStateMap(const ProducerStateMap&) = default;
  ProducerStateMap& operator=(const ProducerStateMap&) = default;
  ProducerStateMap(ProducerStateMap&&) = default;
  ProducerStateMap& operator=(ProducerStateMap&&) = default;

  // Classifies `batch` against the state of its producer (see classify.h).
  Verdict Check(const BatchInfo& batch) const {
    return Classify(Get(batch.producer_id), batch);
  }

  // Records `batch`, just written at `base_offset`. Call it for every
  // written batch; batches without a producer id are ignored.
  //
  // Data batch: a newer epoch is adopted (clearing the window), the batch is
  // cached as the newest (the oldest is dropped beyond kMaxCachedBatches).
  // Control batch: never cached; a newer epoch is adopted and clears the
  // window. Both set last_timestamp to batch.max_timestamp (as Kafka does, so
  // a producer's expiry restarts with each batch).
  //
  // Sequences are NOT checked, so replaying the log's batch headers rebuilds
  // the state that appending them built (Kafka's log recovery does the same).
  // Refused with InvalidArgument: the producer fields Classify calls
  // kInvalidRecord, a negative base_offset, or last offset overflow.
  // Refused with FailedPrecondition: an epoch older than the producer's, or
  // a data batch not after the producer's newest cached batch (e.g. a
  // duplicate). A refused call changes nothing.
  absl::Status Record(const BatchInfo& batch, int64_t base_offset);

  // Fences `producer_id` at `epoch` (InitProducerId / a peer's fence log):
  // creates the producer if unknown; adopts `epoch` if newer and clears the
  // window, so the producer's next batch must be at >= `epoch` starting at
  // sequence 0, and older epochs are rejected. An equal or older `epoch`
  // changes only the timestamp. last_timestamp becomes at least `now_ms`, so
  // the fence lives for the expiration period instead of expiring at the next
  // sweep. InvalidArgument if producer_id or epoch is negative.
  absl::Status Fence(int64_t producer_id, int16_t epoch, int64_t now_ms);

  // Removes producers idle for at least `expiration_ms`
  // (now_ms - last_timestamp >= expiration_ms), except those for which
  // `has_ongoing_transaction(producer_id)` is true: a producer in a
  // transaction never expires (Kafka). Returns how many were removed.
  // REQUIRES: expiration_ms >= 0.
  size_t RemoveExpired(
      int64_t now_ms, int64_t expiration_ms,
      absl::FunctionRef<bool(int64_t producer_id)> has_ongoing_transaction);

  // The state of `producer_id`, or nullptr if unknown. The pointer is valid
  // until the next call of a non-const method.
  const ProducerEntry* Get(int64_t producer_id) const;

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // Calls `visit` for every producer, in producer id order.
  void ForEachSorted(
      absl::FunctionRef<void(int64_t producer_id, const ProducerEntry& entry)>
          visit) const;

  // The snapshot of the whole map, producers sorted by id (so equal states
  // give equal bytes).
  ProducerStateSnapshot ToProto() const;

  // Rebuilds a map from a snapshot. DataLossError naming the producer, the
  // field and the value if the snapshot breaks an invariant of
  // ProducerEntry, holds a producer id twice or a negative producer id.
  static absl::StatusOr<ProducerStateMap> FromProto(
      const ProducerStateSnapshot& snapshot);

 private:
  absl::flat_hash_map<int64_t, ProducerEntry> entries_;
};

}  // namespace idempotence
}  // namespace kaas

#endif  // KAAS_IDEMPOTENCE_PRODUCER_STATE_MAP_H_
