#include "storage/partition/batch_cleaner.h"

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "storage/batch/batch_rewrite.h"
#include "storage/batch/records.h"

namespace kaas::partition {

AbortedRanges::AbortedRanges(const std::vector<txn::AbortedTxn>& aborted) {
  for (const txn::AbortedTxn& txn : aborted) {
    ranges_[txn.producer_id].emplace_back(txn.first_offset, txn.last_offset);
  }
  for (auto& [producer, ranges] : ranges_) {
    std::sort(ranges.begin(), ranges.end());
  }
}

bool AbortedRanges::Contains(int64_t producer_id, int64_t offset) const {
  auto it = ranges_.find(producer_id);
  if (it == ranges_.end()) return false;
  const auto& ranges = it->second;
  // The last range starting at or before `offset`.
  auto after = std::upper_bound(
      ranges.begin(), ranges.end(), offset,
      [](int64_t value, const std::pair<int64_t, int64_t>& range) {
        return value < range.first;
      });
  if (after == ranges.begin()) return false;
  return std::prev(after)->second >= offset;
}

namespace {

bool IsAbortedData(const RecordBatchView& batch, const AbortedRanges& aborted) {
  return batch.is_transactional() && !batch.is_control() &&
         aborted.Contains(batch.producer_id(), batch.base_offset());
}

}  // namespace

absl::StatusOr<bool> KeysIntoMap(const RecordBatchView& batch,
                                 const AbortedRanges& aborted, OffsetMap* map) {
  if (batch.is_control() || IsAbortedData(batch, aborted)) return true;
  if (batch.record_count() < 0 ||
      static_cast<size_t>(batch.record_count()) > map->free_entries()) {
    return false;
  }
  KAAS_ASSIGN_OR_RETURN(RecordReader reader, RecordReader::Create(batch));
  // The batch's keys are hashed and their slots prefetched before the
  // first Put, so that the cache misses overlap.
  struct Keyed {
    OffsetMap::KeyHash hash;
    int64_t offset;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(static_cast<size_t>(batch.record_count()));
  Record record;
  while (reader.Next(&record)) {
    if (!record.key.has_value()) continue;
    keyed.push_back({OffsetMap::Hash(*record.key),
                     batch.base_offset() + record.offset_delta});
    map->Prefetch(keyed.back().hash);
  }
  KAAS_RETURN_IF_ERROR(reader.status());
  for (const Keyed& key : keyed) map->Put(key.hash, key.offset);
  return true;
}

absl::StatusOr<BatchCleaner::Decision> BatchCleaner::CleanMarker(
    const RecordBatchView& batch) {
  const bool had_data = transactions_with_data_.erase(batch.producer_id()) > 0;
  const bool protected_batch =
      context_.producer_batches.contains(batch.base_offset());
  if (had_data || protected_batch) return Decision{};
  if (HorizonPassed(batch)) {
    ++counts_.markers_removed;
    return Decision{Verdict::kRemove, {}};
  }
  if (batch.has_delete_horizon()) {
    NoteHorizon(batch.base_timestamp());
    return Decision{};
  }
  // Alone from now on: it goes once the horizon passes.
  NoteHorizon(Horizon());
  KAAS_ASSIGN_OR_RETURN(DecodedRecords records, DecodeRecords(batch));
  KAAS_ASSIGN_OR_RETURN(std::string rewritten,
                        RewriteBatch(batch, records.records, Horizon()));
  return Decision{Verdict::kRewrite, std::move(rewritten)};
}

absl::StatusOr<BatchCleaner::Decision> BatchCleaner::Clean(
    const RecordBatchView& batch) {
  ++counts_.batches_read;
  counts_.records_read += std::max(batch.record_count(), 0);
  Decision decision;
  if (batch.is_control()) {
    if (!batch.is_transactional()) return decision;
    KAAS_ASSIGN_OR_RETURN(decision, CleanMarker(batch));
  } else if (batch.record_count() == 0 && !batch.has_producer_id()) {
    // An empty batch an earlier pass left for removed records: it joins
    // the run of removed batches around it (one empty batch for them all).
    decision.verdict = Verdict::kRemove;
    return decision;
  } else {
    const bool aborted = IsAbortedData(batch, *context_.aborted);
    KAAS_ASSIGN_OR_RETURN(DecodedRecords records, DecodeRecords(batch));
    // Hashed and prefetched up front, as in KeysIntoMap.
    std::vector<OffsetMap::KeyHash> hashes(records.size());
    if (!aborted) {
      for (size_t i = 0; i < records.size(); ++i) {
        if (!records[i].key.has_value()) continue;
        hashes[i] = OffsetMap::Hash(*records[i].key);
        context_.map->Prefetch(hashes[i]);
      }
    }
    std::vector<Record> kept;
    kept.reserve(records.size());
    bool needs_horizon = false;
    bool kept_tombstone = false;
    for (size_t i = 0; i < records.size(); ++i) {
      const Record& record = records[i];
      const int64_t offset = batch.base_offset() + record.offset_delta;
      if (aborted) continue;
      if (offset >= context_.map_end) {
        kept.push_back(record);
        continue;
      }
      if (!record.key.has_value()) {
        ++counts_.null_key_records_removed;
        continue;
      }
      std::optional<int64_t> latest = context_.map->Get(hashes[i]);
      if (latest.has_value() && *latest > offset) continue;
      if (!record.value.has_value()) {
        if (HorizonPassed(batch)) {
          ++counts_.tombstones_removed;
          continue;
        }
        if (!batch.has_delete_horizon()) needs_horizon = true;
        kept_tombstone = true;
      }
      kept.push_back(record);
    }
    if (kept_tombstone) {
      NoteHorizon(batch.has_delete_horizon() ? batch.base_timestamp()
                                             : Horizon());
    }
    counts_.records_removed +=
        static_cast<int64_t>(records.size() - kept.size());
    const bool protected_batch =
        context_.producer_batches.contains(batch.base_offset());
    // A transactional batch that stays, even emptied, opens its transaction
    // again when recovery replays the log: its marker must stay too, or the
    // transaction would look open forever (and hold the last stable offset
    // back).
    if (batch.is_transactional() && (!kept.empty() || protected_batch)) {
      transactions_with_data_.insert(batch.producer_id());
    }
    if (kept.size() == records.size() && !needs_horizon) {
      decision.verdict = Verdict::kKeep;
    } else if (kept.empty() && !protected_batch) {
      decision.verdict = Verdict::kRemove;
    } else {
      decision.verdict = Verdict::kRewrite;
      KAAS_ASSIGN_OR_RETURN(
          decision.rewritten,
          RewriteBatch(batch, kept,
                       needs_horizon ? std::optional<int64_t>(Horizon())
                                     : std::nullopt));
    }
  }
  if (decision.verdict == Verdict::kRemove) ++counts_.batches_removed;
  if (decision.verdict == Verdict::kRewrite) ++counts_.batches_rewritten;
  return decision;
}

}  // namespace kaas::partition
