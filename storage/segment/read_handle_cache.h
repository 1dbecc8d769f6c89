// File: storage/segment/read_handle_cache.h
//
// A bounded, engine-wide LRU cache of what reading a closed segment needs:
// its open read handle and its loaded offset and time indexes. A partition
// with thousands of closed segments therefore holds at most `capacity`
// descriptors and indexes in memory across the whole engine; an evicted
// segment is reopened (and its indexes reloaded) on its next read.
//
// An entry handed out stays valid while the caller holds it, even if it is
// evicted meanwhile: the descriptor closes when the last holder lets go.
// Segments call Erase() before unlinking their files, so no descriptor of a
// deleted segment stays open in the cache (its space is freed at once).
//
// Thread-safety: thread-safe.

#ifndef KAAS_STORAGE_SEGMENT_READ_HANDLE_CACHE_H_
#define KAAS_STORAGE_SEGMENT_READ_HANDLE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "fs/file_system.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/time_index.h"

namespace kaas::segment {

// Everything needed to read one segment. Immutable once built.
struct SegmentReadState {
  std::shared_ptr<const fs::ReadableFile> file;
  std::shared_ptr<const OffsetIndex> index;
  std::shared_ptr<const TimeIndex> time_index;
};

class ReadHandleCache {
 public:
  explicit ReadHandleCache(size_t capacity);

  ReadHandleCache(const ReadHandleCache&) = delete;
  ReadHandleCache& operator=(const ReadHandleCache&) = delete;

  // The cached state of segment `key`, refreshed as most recently used, or
  // null.
  std::shared_ptr<const SegmentReadState> Find(uint64_t key);

  // Inserts (or replaces) the state of `key`, evicting the least recently
  // used entries beyond capacity.
  void Insert(uint64_t key, std::shared_ptr<const SegmentReadState> state);

  // Forgets `key` (no-op if absent).
  void Erase(uint64_t key);

  size_t size() const;
  size_t capacity() const { return capacity_; }

  // Counters for stats and tests.
  uint64_t hits() const;
  uint64_t misses() const;

 private:
  using Entry = std::pair<uint64_t, std::shared_ptr<const SegmentReadState>>;

  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<uint64_t, std::list<Entry>::iterator> entries_
      ABSL_GUARDED_BY(mu_);
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_READ_HANDLE_CACHE_H_
