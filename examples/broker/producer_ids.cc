// File: examples/broker/producer_ids.cc

#include "examples/broker/producer_ids.h"

#include <optional>

#include "examples/broker/broker_state_file.h"

namespace kaas::broker {

absl::StatusOr<int64_t> ProducerIdAllocator::Next() {
  absl::MutexLock lock(&mu_);
  if (!loaded_ && !data_dir_.empty()) {
    absl::StatusOr<std::optional<int64_t>> stored =
        ReadStateNumber(data_dir_, kProducerIdsFileName, int64_t{1} << 62);
    if (!stored.ok()) return stored.status();
    // Ids below the stored block end may have been handed out before.
    next_ = block_end_ = stored->value_or(0);
  }
  loaded_ = true;
  if (next_ == block_end_) {
    const int64_t end = block_end_ + kProducerIdBlock;
    if (!data_dir_.empty()) {
      absl::Status status =
          WriteStateNumber(data_dir_, kProducerIdsFileName, end);
      if (!status.ok()) return status;
    }
    block_end_ = end;
  }
  return next_++;
}

}  // namespace kaas::broker
