// File: storage/segment/log_chunk_pool_test.cc

#include "storage/segment/log_chunk_pool.h"

#include <cstdint>
#include <vector>

#include "fs/file_system.h"
#include "gtest/gtest.h"

namespace kaas::segment {
namespace {

constexpr size_t kBlock = fs::kDirectIoAlignment;

TEST(LogChunkPoolTest, ChunksAreAlignedForDirectIo) {
  LogChunkPool pool(1 << 20);
  for (size_t bytes : {kBlock, 3 * kBlock, 64 * kBlock}) {
    LogChunk chunk = pool.Take(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(chunk.get()) % kBlock, 0u);
  }
  LogChunk odd = LogChunkPool::Allocate(5 * kBlock);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(odd.get()) % kBlock, 0u);
}

TEST(LogChunkPoolTest, AReturnedChunkIsHandedOutAgain) {
  LogChunkPool pool(1 << 20);
  char* first = nullptr;
  {
    LogChunk chunk = pool.Take(2 * kBlock);
    first = chunk.get();
  }
  EXPECT_EQ(pool.CachedBytes(), 2 * kBlock);
  LogChunk again = pool.Take(2 * kBlock);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(pool.CachedBytes(), 0u);
  // A chunk of another size is not that one.
  LogChunk other = pool.Take(kBlock);
  EXPECT_NE(other.get(), first);
}

TEST(LogChunkPoolTest, FreeChunksPastTheCapAreFreed) {
  LogChunkPool pool(3 * kBlock);
  {
    std::vector<LogChunk> chunks;
    for (int i = 0; i < 5; ++i) chunks.push_back(pool.Take(kBlock));
  }
  EXPECT_EQ(pool.CachedBytes(), 3 * kBlock);
  { LogChunk unpooled = LogChunkPool::Allocate(kBlock); }
  EXPECT_EQ(pool.CachedBytes(), 3 * kBlock);
}

}  // namespace
}  // namespace kaas::segment
