// File: examples/broker/broker_epoch.cc

#include "examples/broker/broker_epoch.h"

#include <optional>

#include "examples/broker/broker_state_file.h"

namespace kaas::broker {

absl::StatusOr<int64_t> NextBrokerEpoch(const std::string& data_dir) {
  absl::StatusOr<std::optional<int64_t>> previous =
      ReadStateNumber(data_dir, kBrokerEpochFileName, INT32_MAX - 2);
  if (!previous.ok()) return previous.status();
  const int64_t next = previous->value_or(0) + 1;
  absl::Status status = WriteStateNumber(data_dir, kBrokerEpochFileName, next);
  if (!status.ok()) return status;
  return next;
}

}  // namespace kaas::broker
