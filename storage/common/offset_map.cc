#include "storage/common/offset_map.h"

#include <algorithm>
#include <functional>
#include <string_view>
#include <utility>

#include "absl/hash/hash.h"
#include "glog/logging.h"

namespace kaas {
namespace {

// A fresh or cleared table: 96 KiB, within any CPU's L2 cache.
constexpr size_t kInitialSlots = 4096;

}  // namespace

// Two hashes from different algorithms (Abseil's and libstdc++'s
// murmur-based one), so that a collision of both is as improbable as one of
// a 128-bit hash.
OffsetMap::KeyHash OffsetMap::Hash(absl::string_view key) {
  return KeyHash{
      absl::Hash<absl::string_view>{}(key),
      std::hash<std::string_view>{}(std::string_view(key.data(), key.size()))};
}

OffsetMap::OffsetMap(size_t memory_bytes)
    : max_slots_(std::max<size_t>(memory_bytes / kEntryBytes, 2)),
      max_entries_(FillLimit(max_slots_)) {
  // Reserving allocates without touching: the pages become resident only
  // as the table grows into them.
  slots_.reserve(max_slots_);
  slots_.resize(std::min(kInitialSlots, max_slots_));
}

size_t OffsetMap::FillLimit(size_t slots) {
  return std::max<size_t>(slots * 9 / 10, 1);
}

size_t OffsetMap::Find(uint64_t high, uint64_t low) const {
  const size_t n = slots_.size();
  size_t i = static_cast<size_t>(high % n);
  while (true) {
    const Slot& slot = slots_[i];
    if (slot.offset < 0 || (slot.hash_high == high && slot.hash_low == low)) {
      return i;
    }
    i = i + 1 == n ? 0 : i + 1;
  }
}

void OffsetMap::Grow() {
  const size_t old_slots = slots_.size();
  const size_t new_slots = std::min(old_slots * 2, max_slots_);
  slots_.resize(new_slots);  // within the reserved capacity: no copy
  // Every entry is moved to its home in the larger table, probing past
  // slots already holding moved entries only; an entry not yet moved that
  // sits where one goes is swapped out and placed next. Moved entries
  // never move again, so every probe sequence ends up unbroken.
  std::vector<bool> moved(new_slots, false);
  for (size_t start = 0; start < old_slots; ++start) {
    if (moved[start] || slots_[start].offset < 0) continue;
    Slot carried = std::exchange(slots_[start], Slot{});
    while (true) {
      size_t i = static_cast<size_t>(carried.hash_high % new_slots);
      while (moved[i]) i = i + 1 == new_slots ? 0 : i + 1;
      moved[i] = true;
      if (slots_[i].offset < 0) {
        slots_[i] = carried;
        break;
      }
      std::swap(carried, slots_[i]);
    }
  }
}

void OffsetMap::Put(const KeyHash& hash, int64_t offset) {
  const uint64_t high = hash.high, low = hash.low;
  size_t i = Find(high, low);
  if (slots_[i].offset < 0) {
    CHECK_LT(size_, max_entries_) << "OffsetMap::Put on a full map";
    if (size_ >= FillLimit(slots_.size())) {
      Grow();
      i = Find(high, low);
    }
    ++size_;
    slots_[i].hash_high = high;
    slots_[i].hash_low = low;
  }
  slots_[i].offset = offset;
}

std::optional<int64_t> OffsetMap::Get(const KeyHash& hash) const {
  const Slot& slot = slots_[Find(hash.high, hash.low)];
  if (slot.offset < 0) return std::nullopt;
  return slot.offset;
}

void OffsetMap::Clear() {
  slots_.resize(std::min(kInitialSlots, max_slots_));
  std::fill(slots_.begin(), slots_.end(), Slot{});
  size_ = 0;
}

}  // namespace kaas
