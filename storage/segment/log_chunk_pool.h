// File: storage/segment/log_chunk_pool.h
//
// Aligned memory chunks for the direct-I/O log (direct_log_file.h), handed
// out and taken back through a free list, so that a busy log reuses memory it
// has touched before instead of faulting in fresh pages for every sync cycle
// (on the VMs the benchmarks run on, a fresh page costs several microseconds
// at first touch: more than copying it).
//
// One pool serves the whole process (Default()); it keeps at most
// `max_cached_bytes` of free chunks and frees the rest, so an engine whose
// partitions fall idle gives its memory back.
//
// Thread-safety: thread-safe.

#ifndef KAAS_STORAGE_SEGMENT_LOG_CHUNK_POOL_H_
#define KAAS_STORAGE_SEGMENT_LOG_CHUNK_POOL_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"

namespace kaas::segment {

class LogChunkPool;

// Returns a chunk to the pool it came from.
class ChunkReturn {
 public:
  ChunkReturn() = default;
  ChunkReturn(LogChunkPool* pool, size_t bytes) : pool_(pool), bytes_(bytes) {}
  void operator()(char* chunk) const;

 private:
  LogChunkPool* pool_ = nullptr;
  size_t bytes_ = 0;
};

// A chunk: fs::kDirectIoAlignment-aligned memory of the size asked for,
// uninitialised.
using LogChunk = std::unique_ptr<char, ChunkReturn>;

class LogChunkPool {
 public:
  explicit LogChunkPool(size_t max_cached_bytes);
  ~LogChunkPool();

  LogChunkPool(const LogChunkPool&) = delete;
  LogChunkPool& operator=(const LogChunkPool&) = delete;

  // The process's pool (64 MiB of free chunks at most); never destroyed.
  static LogChunkPool& Default();

  // A chunk of `bytes` (a positive multiple of fs::kDirectIoAlignment).
  // Dies if memory is exhausted, as operator new would.
  LogChunk Take(size_t bytes);

  // A chunk that is freed, not pooled, when released (for odd sizes).
  static LogChunk Allocate(size_t bytes);

  // Free chunks held, in bytes.
  size_t CachedBytes() const;

 private:
  friend class ChunkReturn;
  void Give(char* chunk, size_t bytes);

  const size_t max_cached_bytes_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<char*>> free_ ABSL_GUARDED_BY(mu_);
  size_t cached_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_LOG_CHUNK_POOL_H_
