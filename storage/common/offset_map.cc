#include "storage/common/offset_map.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include "absl/hash/hash.h"
#include "glog/logging.h"

namespace kaas {
namespace {

// Two hashes from different algorithms (Abseil's and libstdc++'s
// murmur-based one), so that a collision of both is as improbable as one of
// a 128-bit hash.
void HashKey(absl::string_view key, uint64_t* high, uint64_t* low) {
  *high = absl::Hash<absl::string_view>{}(key);
  *low =
      std::hash<std::string_view>{}(std::string_view(key.data(), key.size()));
}

}  // namespace

OffsetMap::OffsetMap(size_t memory_bytes)
    : slots_(std::max<size_t>(memory_bytes / kEntryBytes, 2)) {
  max_entries_ = std::max<size_t>(slots_.size() * 9 / 10, 1);
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

void OffsetMap::Put(absl::string_view key, int64_t offset) {
  uint64_t high, low;
  HashKey(key, &high, &low);
  Slot& slot = slots_[Find(high, low)];
  if (slot.offset < 0) {
    CHECK_LT(size_, max_entries_) << "OffsetMap::Put on a full map";
    ++size_;
    slot.hash_high = high;
    slot.hash_low = low;
  }
  slot.offset = offset;
}

std::optional<int64_t> OffsetMap::Get(absl::string_view key) const {
  uint64_t high, low;
  HashKey(key, &high, &low);
  const Slot& slot = slots_[Find(high, low)];
  if (slot.offset < 0) return std::nullopt;
  return slot.offset;
}

void OffsetMap::Clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  size_ = 0;
}

}  // namespace kaas
