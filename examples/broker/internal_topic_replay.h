// File: examples/broker/internal_topic_replay.h
//
// How the broker's coordinators rebuild their state at start: a replay of
// the keyed records of their internal topic partition (`__consumer_offsets`,
// `__transaction_state`), from its log start to its high watermark, in
// offset order. Control batches and records without a key carry no state
// and are skipped.
//
// Thread-safety: a pure function of the engine's state; the caller's
// callback runs on the calling thread.

#ifndef KAAS_EXAMPLES_BROKER_INTERNAL_TOPIC_REPLAY_H_
#define KAAS_EXAMPLES_BROKER_INTERNAL_TOPIC_REPLAY_H_

#include <cstdint>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "storage/common/api_types.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {

// Calls `apply` with each keyed record of `tp` (its offset, key, and value
// or nullopt for a tombstone). A batch that does not parse, or an error
// from `apply`, stops the replay with kDataLoss naming `what` (the topic,
// for the message) and the record's offset; engine errors are returned as
// they are.
absl::Status ReplayInternalTopic(
    StorageEngine& engine, const TopicPartition& tp, absl::string_view what,
    absl::FunctionRef<absl::Status(int64_t offset, absl::string_view key,
                                   std::optional<absl::string_view> value)>
        apply);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_INTERNAL_TOPIC_REPLAY_H_
