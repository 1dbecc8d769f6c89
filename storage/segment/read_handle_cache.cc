#include "storage/segment/read_handle_cache.h"

#include <memory>
#include <utility>

namespace kaas::segment {

ReadHandleCache::ReadHandleCache(size_t capacity)
    : capacity_(capacity == 0 ? 1 : capacity) {}

std::shared_ptr<const SegmentReadState> ReadHandleCache::Find(uint64_t key) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void ReadHandleCache::Insert(uint64_t key,
                             std::shared_ptr<const SegmentReadState> state) {
  // Evicted states are released after the lock is dropped: closing a
  // descriptor is a syscall.
  std::list<Entry> evicted;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      it->second->second = std::move(state);
      lru_.splice(lru_.begin(), lru_, it->second);
      return;
    }
    lru_.emplace_front(key, std::move(state));
    entries_[key] = lru_.begin();
    while (lru_.size() > capacity_) {
      entries_.erase(lru_.back().first);
      evicted.splice(evicted.begin(), lru_, std::prev(lru_.end()));
    }
  }
}

void ReadHandleCache::Erase(uint64_t key) {
  std::list<Entry> erased;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  erased.splice(erased.begin(), lru_, it->second);
  entries_.erase(it);
}

size_t ReadHandleCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

uint64_t ReadHandleCache::hits() const {
  absl::MutexLock lock(&mu_);
  return hits_;
}

uint64_t ReadHandleCache::misses() const {
  absl::MutexLock lock(&mu_);
  return misses_;
}

}  // namespace kaas::segment
