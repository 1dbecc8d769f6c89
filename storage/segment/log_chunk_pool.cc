// File: storage/segment/log_chunk_pool.cc

#include "storage/segment/log_chunk_pool.h"

#include <cstdlib>

#include "fs/file_system.h"
#include "glog/logging.h"

namespace kaas::segment {

void ChunkReturn::operator()(char* chunk) const {
  if (chunk == nullptr) return;
  if (pool_ == nullptr) {
    std::free(chunk);
    return;
  }
  pool_->Give(chunk, bytes_);
}

LogChunkPool::LogChunkPool(size_t max_cached_bytes)
    : max_cached_bytes_(max_cached_bytes) {}

LogChunkPool::~LogChunkPool() {
  absl::MutexLock lock(&mu_);
  for (auto& [bytes, chunks] : free_) {
    for (char* chunk : chunks) std::free(chunk);
  }
}

LogChunkPool& LogChunkPool::Default() {
  static LogChunkPool* const pool = new LogChunkPool(size_t{64} << 20);
  return *pool;
}

namespace {

char* AllocateAligned(size_t bytes) {
  CHECK(bytes > 0 && bytes % fs::kDirectIoAlignment == 0)
      << "a log chunk of " << bytes << " bytes";
  char* chunk =
      static_cast<char*>(std::aligned_alloc(fs::kDirectIoAlignment, bytes));
  CHECK(chunk != nullptr) << "out of memory for a " << bytes
                          << "-byte log chunk";
  return chunk;
}

}  // namespace

LogChunk LogChunkPool::Allocate(size_t bytes) {
  return LogChunk(AllocateAligned(bytes), ChunkReturn());
}

LogChunk LogChunkPool::Take(size_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(bytes);
    if (it != free_.end() && !it->second.empty()) {
      char* chunk = it->second.back();
      it->second.pop_back();
      cached_bytes_ -= bytes;
      return LogChunk(chunk, ChunkReturn(this, bytes));
    }
  }
  return LogChunk(AllocateAligned(bytes), ChunkReturn(this, bytes));
}

size_t LogChunkPool::CachedBytes() const {
  absl::MutexLock lock(&mu_);
  return cached_bytes_;
}

void LogChunkPool::Give(char* chunk, size_t bytes) {
  {
    absl::MutexLock lock(&mu_);
    if (cached_bytes_ + bytes <= max_cached_bytes_) {
      free_[bytes].push_back(chunk);
      cached_bytes_ += bytes;
      return;
    }
  }
  std::free(chunk);
}

}  // namespace kaas::segment
