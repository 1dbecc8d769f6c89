#include "idempotence/producer_state_map.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kaas {
namespace idempotence {
namespace {

// now_ms - last_timestamp >= expiration_ms, without signed overflow for any
// timestamps (producer-supplied maxTimestamps can be anything).
bool IsIdleFor(int64_t now_ms, int64_t last_timestamp, int64_t expiration_ms) {
  if (last_timestamp > now_ms) return false;  // A timestamp in the future.
  const uint64_t idle_ms =
      static_cast<uint64_t>(now_ms) - static_cast<uint64_t>(last_timestamp);
  return idle_ms >= static_cast<uint64_t>(expiration_ms);
}

absl::Status SnapshotError(int64_t producer_id, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("producer state snapshot: producer ",
                                          producer_id, ": ", what));
}

absl::StatusOr<ProducerEntry> EntryFromProto(
    const ProducerEntrySnapshot& proto) {
  const int64_t producer_id = proto.producer_id();
  if (proto.epoch() < 0 ||
      proto.epoch() > std::numeric_limits<int16_t>::max()) {
    return SnapshotError(producer_id, absl::StrCat("epoch ", proto.epoch(),
                                                   " is outside [0, 32767]"));
  }
  if (static_cast<size_t>(proto.window_size()) > kMaxCachedBatches) {
    return SnapshotError(
        producer_id,
        absl::StrCat("window holds ", proto.window_size(), " batches, at most ",
                     kMaxCachedBatches, " are kept"));
  }
  ProducerEntry entry;
  entry.epoch = static_cast<int16_t>(proto.epoch());
  entry.last_timestamp = proto.last_timestamp();
  for (int i = 0; i < proto.window_size(); ++i) {
    const CachedBatchSnapshot& batch = proto.window(i);
    const auto batch_error = [&](absl::string_view what) {
      return SnapshotError(producer_id,
                           absl::StrCat("window[", i, "]: ", what));
    };
    if (batch.first_seq() < 0 || batch.last_seq() < 0) {
      return batch_error(absl::StrCat("negative sequence ", batch.first_seq(),
                                      "..", batch.last_seq()));
    }
    if (batch.base_offset() < 0 || batch.last_offset() < batch.base_offset()) {
      return batch_error(absl::StrCat("invalid offsets ", batch.base_offset(),
                                      "..", batch.last_offset()));
    }
    // Offsets cannot overflow here: both are in [0, INT64_MAX].
    const int64_t offset_delta = batch.last_offset() - batch.base_offset();
    if (offset_delta > std::numeric_limits<int32_t>::max() ||
        batch.last_seq() != NextSequence(batch.first_seq(),
                                         static_cast<int32_t>(offset_delta))) {
      return batch_error(
          absl::StrCat("sequences ", batch.first_seq(), "..", batch.last_seq(),
                       " do not match offsets ", batch.base_offset(), "..",
                       batch.last_offset()));
    }
    if (!entry.window.empty() &&
        batch.base_offset() <= entry.window.back().last_offset) {
      return batch_error(absl::StrCat(
          "offsets ", batch.base_offset(), "..", batch.last_offset(),
          " do not follow the previous batch's last offset ",
          entry.window.back().last_offset, " (the window is oldest first)"));
    }
    entry.window.push_back(CachedBatch{batch.first_seq(), batch.last_seq(),
                                       batch.base_offset(),
                                       batch.last_offset()});
  }
  return entry;
}

}  // namespace

absl::Status ProducerStateMap::Record(const BatchInfo& batch,
                                      int64_t base_offset) {
  const int64_t producer_id = batch.producer_id;
  if (producer_id < 0) return absl::OkStatus();
  if (batch.producer_epoch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot record a batch of producer ", producer_id,
                     " with negative epoch ", batch.producer_epoch));
  }
  if (!batch.is_control &&
      (batch.base_sequence < 0 || batch.last_offset_delta < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot record a batch of producer ", producer_id,
                     " with base sequence ", batch.base_sequence,
                     " and lastOffsetDelta ", batch.last_offset_delta));
  }
  if (base_offset < 0 ||
      (!batch.is_control && base_offset > std::numeric_limits<int64_t>::max() -
                                              batch.last_offset_delta)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot record a batch of producer ", producer_id, " at base offset ",
        base_offset, " with lastOffsetDelta ", batch.last_offset_delta));
  }

  auto it = entries_.find(producer_id);
  const ProducerEntry* existing = it == entries_.end() ? nullptr : &it->second;
  if (existing != nullptr && batch.producer_epoch < existing->epoch) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot record a batch of producer ", producer_id, " at epoch ",
        batch.producer_epoch, ": the producer is at epoch ", existing->epoch));
  }
  const bool new_epoch =
      existing == nullptr || batch.producer_epoch > existing->epoch;
  if (!batch.is_control && !new_epoch && existing->newest() != nullptr &&
      base_offset <= existing->newest()->last_offset) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot record a batch of producer ", producer_id, " at offset ",
        base_offset, ": its newest cached batch ends at offset ",
        existing->newest()->last_offset));
  }

  ProducerEntry& entry = entries_[producer_id];
  if (new_epoch) {
    entry.epoch = batch.producer_epoch;
    entry.window.clear();
  }
  entry.last_timestamp = batch.max_timestamp;
  if (batch.is_control) return absl::OkStatus();
  if (entry.window.size() == kMaxCachedBatches) {
    entry.window.erase(entry.window.begin());
  }
  entry.window.push_back(CachedBatch{batch.base_sequence, batch.last_sequence(),
                                     base_offset,
                                     base_offset + batch.last_offset_delta});
  return absl::OkStatus();
}

absl::Status ProducerStateMap::Fence(int64_t producer_id, int16_t epoch,
                                     int64_t now_ms) {
  if (producer_id < 0 || epoch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot fence producer ", producer_id, " at epoch ", epoch,
                     ": both must be >= 0"));
  }
  auto [it, inserted] = entries_.try_emplace(producer_id);
  ProducerEntry& entry = it->second;
  if (inserted || epoch > entry.epoch) {
    entry.epoch = epoch;
    entry.window.clear();
  }
  entry.last_timestamp =
      inserted ? now_ms : std::max(entry.last_timestamp, now_ms);
  return absl::OkStatus();
}

size_t ProducerStateMap::RemoveExpired(
    int64_t now_ms, int64_t expiration_ms,
    absl::FunctionRef<bool(int64_t producer_id)> has_ongoing_transaction) {
  size_t removed = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (IsIdleFor(now_ms, it->second.last_timestamp, expiration_ms) &&
        !has_ongoing_transaction(it->first)) {
      entries_.erase(it++);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

const ProducerEntry* ProducerStateMap::Get(int64_t producer_id) const {
  auto it = entries_.find(producer_id);
  return it == entries_.end() ? nullptr : &it->second;
}

void ProducerStateMap::ForEachSorted(
    absl::FunctionRef<void(int64_t producer_id, const ProducerEntry& entry)>
        visit) const {
  std::vector<int64_t> producer_ids;
  producer_ids.reserve(entries_.size());
  for (const auto& [producer_id, entry] : entries_) {
    producer_ids.push_back(producer_id);
  }
  std::sort(producer_ids.begin(), producer_ids.end());
  for (int64_t producer_id : producer_ids) {
    visit(producer_id, entries_.at(producer_id));
  }
}

ProducerStateSnapshot ProducerStateMap::ToProto() const {
  ProducerStateSnapshot snapshot;
  snapshot.mutable_producers()->Reserve(static_cast<int>(entries_.size()));
  ForEachSorted([&](int64_t producer_id, const ProducerEntry& entry) {
    ProducerEntrySnapshot* proto = snapshot.add_producers();
    proto->set_producer_id(producer_id);
    proto->set_epoch(entry.epoch);
    proto->set_last_timestamp(entry.last_timestamp);
    for (const CachedBatch& batch : entry.window) {
      CachedBatchSnapshot* batch_proto = proto->add_window();
      batch_proto->set_first_seq(batch.first_seq);
      batch_proto->set_last_seq(batch.last_seq);
      batch_proto->set_base_offset(batch.base_offset);
      batch_proto->set_last_offset(batch.last_offset);
    }
  });
  return snapshot;
}

absl::StatusOr<ProducerStateMap> ProducerStateMap::FromProto(
    const ProducerStateSnapshot& snapshot) {
  ProducerStateMap map;
  map.entries_.reserve(static_cast<size_t>(snapshot.producers_size()));
  for (const ProducerEntrySnapshot& proto : snapshot.producers()) {
    if (proto.producer_id() < 0) {
      return SnapshotError(proto.producer_id(), "negative producer id");
    }
    KAAS_ASSIGN_OR_RETURN(ProducerEntry entry, EntryFromProto(proto));
    if (!map.entries_.emplace(proto.producer_id(), std::move(entry)).second) {
      return SnapshotError(proto.producer_id(), "listed more than once");
    }
  }
  return map;
}

}  // namespace idempotence
}  // namespace kaas
