// File: examples/broker/internal_batches.h
//
// The RecordBatches the broker itself writes: the records of its internal
// topics (`__consumer_offsets`, `__transaction_state`) and the transaction
// markers (control batches) the transaction coordinator appends to data
// partitions. testing/batch_builder.h builds the same bytes but is
// testonly; its tests pin these to it.
//
// Both are uncompressed v2 batches with base offset 0 and a valid CRC; the
// engine assigns offsets and stamps the leader epoch on append.
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_INTERNAL_BATCHES_H_
#define KAAS_EXAMPLES_BROKER_INTERNAL_BATCHES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "storage/batch/record_batch.h"

namespace kaas::broker {

// One batch of `records` (key, value or nullopt for a tombstone), no
// producer id, every record at `timestamp`. REQUIRES: records not empty.
std::string BuildRecordBatch(
    const std::vector<std::pair<std::string, std::optional<std::string>>>&
        records,
    int64_t timestamp);

// A transaction marker as Kafka's MemoryRecords.withEndTransactionMarker
// writes it: attributes transactional | control, the producer's id and
// epoch, base sequence -1, one record whose key is {version 0, type} and
// value {version 0, coordinator_epoch} (big-endian int16s and an int32).
std::string BuildControlBatch(ControlType type, int64_t producer_id,
                              int16_t producer_epoch, int32_t coordinator_epoch,
                              int64_t timestamp);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_INTERNAL_BATCHES_H_
