// File: examples/broker/broker_epoch.h
//
// The leader epoch kaas-broker leads every partition at: one more than at
// its previous start, kept in <data dir>/kaas-broker.epoch (decimal text,
// replaced atomically and durably before the broker leads anything), so the
// epochs stamped into batches and the OffsetForLeaderEpoch answers stay
// consistent across restarts and crashes.
//
// Thread-safety: not for concurrent use on one data dir (one broker per
// data dir; the engine's partition locks refuse a second one anyway).

#ifndef KAAS_EXAMPLES_BROKER_BROKER_EPOCH_H_
#define KAAS_EXAMPLES_BROKER_BROKER_EPOCH_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace kaas::broker {

inline constexpr char kBrokerEpochFileName[] = "kaas-broker.epoch";

// Reads the previous epoch (0 if the file does not exist), stores it + 1
// durably and returns it. Errors: kDataLoss if the file is not a regular
// file holding an epoch in [0, 2^31 - 1); kInternal for I/O errors.
absl::StatusOr<int64_t> NextBrokerEpoch(const std::string& data_dir);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_BROKER_EPOCH_H_
