// File: storage/partition/batch_cleaner.h
//
// Compaction's decisions, batch by batch, without any I/O (Kafka's
// Cleaner.shouldRetainRecord / cleanInto and KIP-534's delete horizon):
//
//   * KeysIntoMap reads the keys of the dirty part of the log into the
//     OffsetMap (key -> latest offset) until it holds no more.
//   * BatchCleaner then walks the log from its start, in offset order, and
//     says for each batch whether it stays as it is, is rewritten with
//     fewer records (or a delete horizon), or goes.
//
// What a pass keeps (`map_end`: the offset the map was read up to; records
// at or past it are newer than anything the map knows and all stay):
//   * a record with a key, unless the map holds a later offset for the key;
//   * a tombstone (null value) that is its key's latest, until the delete
//     horizon stamped on its batch has passed: the first pass that keeps it
//     stamps now + delete.retention.ms (attributes bit 0x40, the horizon in
//     baseTimestamp);
//   * nothing of an aborted transaction (the aborted ranges of the
//     transaction index say which data is aborted);
//   * a transaction marker while data of its transaction remains before it
//     in the log (a batch of it kept emptied counts: replaying it reopens
//     the transaction, which only the marker closes); after that, until its
//     own delete horizon has passed (the first pass that finds it alone
//     stamps it);
//   * every batch a producer's idempotence window holds (their offsets are
//     given), emptied if none of its records stay: producer state and
//     duplicate detection survive compaction and recovery;
//   * an empty batch without a producer (what an earlier pass left where
//     it removed whole batches) merges into the run of removed batches
//     around it;
//   * records without a key below map_end are dropped (a compacted topic
//     refuses them on append: these predate the policy), as Kafka does.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_STORAGE_PARTITION_BATCH_CLEANER_H_
#define KAAS_STORAGE_PARTITION_BATCH_CLEANER_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/batch/record_batch.h"
#include "storage/common/api_types.h"
#include "storage/common/offset_map.h"
#include "txn/aborted_txn_list.h"

namespace kaas::partition {

// Which transactional data is aborted, by producer.
class AbortedRanges {
 public:
  explicit AbortedRanges(const std::vector<txn::AbortedTxn>& aborted);
  // Whether `offset` of producer `producer_id` lies in an aborted
  // transaction.
  bool Contains(int64_t producer_id, int64_t offset) const;

 private:
  // Per producer, [first, last] ranges sorted by first offset.
  absl::flat_hash_map<int64_t, std::vector<std::pair<int64_t, int64_t>>>
      ranges_;
};

// Adds the keys of `batch` (a data batch that is not aborted; others add
// nothing) to `map`. Returns false, adding nothing, if the map has no room
// for all of the batch's records. Errors: the batch's records do not decode
// (kCorruptMessage / kInvalidRecord).
absl::StatusOr<bool> KeysIntoMap(const RecordBatchView& batch,
                                 const AbortedRanges& aborted, OffsetMap* map);

class BatchCleaner {
 public:
  struct Context {
    const OffsetMap* map = nullptr;
    int64_t map_end = 0;
    int64_t now_ms = 0;
    int64_t delete_retention_ms = 0;
    const AbortedRanges* aborted = nullptr;
    // Base offsets of the batches producers' windows hold.
    absl::flat_hash_set<int64_t> producer_batches;
  };

  enum class Verdict { kKeep, kRewrite, kRemove };
  struct Decision {
    Verdict verdict = Verdict::kKeep;
    std::string rewritten;  // kRewrite: the new batch
  };

  explicit BatchCleaner(Context context) : context_(std::move(context)) {}

  // The decision for the next batch of the log (batches in offset order,
  // from the log start). Errors: the batch's records do not decode.
  absl::StatusOr<Decision> Clean(const RecordBatchView& batch);

  const CompactionCounts& counts() const { return counts_; }
  // The earliest delete horizon of what the walk kept (tombstones, lone
  // markers), INT64_MAX if none: a pass after it has something to remove
  // even when nothing is dirty.
  int64_t earliest_horizon_ms() const { return earliest_horizon_ms_; }

 private:
  absl::StatusOr<Decision> CleanMarker(const RecordBatchView& batch);
  int64_t Horizon() const {
    return context_.now_ms > INT64_MAX - context_.delete_retention_ms
               ? INT64_MAX
               : context_.now_ms + context_.delete_retention_ms;
  }
  // Whether the batch's stamped horizon (if any) has passed.
  bool HorizonPassed(const RecordBatchView& batch) const {
    return batch.has_delete_horizon() &&
           batch.base_timestamp() <= context_.now_ms;
  }

  void NoteHorizon(int64_t horizon_ms) {
    earliest_horizon_ms_ = std::min(earliest_horizon_ms_, horizon_ms);
  }

  const Context context_;
  // Producers whose current transaction kept data in this pass (so its
  // marker must stay).
  absl::flat_hash_set<int64_t> transactions_with_data_;
  CompactionCounts counts_;
  int64_t earliest_horizon_ms_ = INT64_MAX;
};

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_BATCH_CLEANER_H_
