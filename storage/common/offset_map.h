// File: storage/common/offset_map.h
//
// Compaction's key -> latest offset map (Kafka's SkimpyOffsetMap), of a
// bounded memory size: log.cleaner.dedupe.buffer.size divided among the
// cleaner threads. The table starts small and doubles in place as keys
// arrive, up to that size: a pass over a few keys probes a table that
// stays in the CPU's caches instead of a random slot of the whole buffer,
// and the buffer's pages are reserved but only touched as the table grows. Keys
// are not stored, only a 128-bit hash of each (two independent 64-bit hashes),
// so a map of N MiB holds N MiB / 24 bytes of entries whatever the key sizes; a
// collision would make two keys one, and with 128 bits it is as unlikely as in
// Kafka's MD5-keyed map (below 2^-64 for a billion keys). Filling stops at 90%
// of the slots (Kafka's dedupe.buffer.load.factor) so probes stay short.
//
// Thread-safety: thread-compatible (one cleaner thread owns a map).

#ifndef KAAS_STORAGE_COMMON_OFFSET_MAP_H_
#define KAAS_STORAGE_COMMON_OFFSET_MAP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace kaas {

class OffsetMap {
 public:
  // Bytes one entry takes.
  static constexpr size_t kEntryBytes = 24;

  // A map of at most `memory_bytes` (at least one entry).
  explicit OffsetMap(size_t memory_bytes);

  OffsetMap(const OffsetMap&) = delete;
  OffsetMap& operator=(const OffsetMap&) = delete;

  // A key's 128-bit hash: what the map stores instead of the key.
  struct KeyHash {
    uint64_t high = 0;
    uint64_t low = 0;
  };
  static KeyHash Hash(absl::string_view key);

  // Records `offset` as the latest of `key`; offsets are put in increasing
  // order. REQUIRES: free_entries() > 0 or `key` already present.
  void Put(absl::string_view key, int64_t offset) { Put(Hash(key), offset); }
  void Put(const KeyHash& hash, int64_t offset);

  // The latest offset put for `key`, if any.
  std::optional<int64_t> Get(absl::string_view key) const {
    return Get(Hash(key));
  }
  std::optional<int64_t> Get(const KeyHash& hash) const;

  // Starts loading the slot where `hash` would be looked up into the CPU's
  // cache. A batch's keys are hashed and prefetched before any is looked
  // up, so that their cache misses overlap instead of queueing.
  void Prefetch(const KeyHash& hash) const {
    __builtin_prefetch(&slots_[hash.high % slots_.size()]);
  }

  // Entries that can still be added before the map counts as full (at its
  // largest size).
  size_t free_entries() const { return max_entries_ - size_; }
  size_t size() const { return size_; }
  size_t capacity() const { return max_entries_; }
  // The table's current size (at most the size given at construction).
  size_t memory_bytes() const { return slots_.size() * kEntryBytes; }

  // Empties the map and shrinks the table to its initial size (the memory
  // stays reserved).
  void Clear();

 private:
  struct Slot {
    uint64_t hash_high = 0;
    uint64_t hash_low = 0;
    int64_t offset = -1;  // -1: empty
  };
  static_assert(sizeof(Slot) == kEntryBytes, "an entry is 24 bytes");

  // Entries a table of `slots` slots holds before it counts as full.
  static size_t FillLimit(size_t slots);

  // The slot holding `key`'s hash, or the empty slot where it would go.
  size_t Find(uint64_t high, uint64_t low) const;

  // Doubles the table (at most to max_slots_) and moves every entry to
  // its place in the larger table, in place.
  void Grow();

  std::vector<Slot> slots_;  // capacity reserved for max_slots_ up front
  size_t max_slots_ = 0;
  size_t max_entries_ = 0;
  size_t size_ = 0;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_OFFSET_MAP_H_
