#include "base/process_stats.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

namespace kaas {
namespace {

TEST(ProcessStatsTest, ResidentBytesGrowWithTouchedMemory) {
  const int64_t before = CurrentResidentBytes();
  ASSERT_GT(before, 0);
  constexpr size_t kBytes = 64 << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  // Every page touched, so the kernel backs all of it.
  for (size_t i = 0; i < kBytes; i += 4096) block[i] = static_cast<char>(i);
  const int64_t after = CurrentResidentBytes();
  EXPECT_GE(after - before, int64_t{32} << 20) << before << " -> " << after;
  EXPECT_NE(block[4096], 1);  // keeps the block alive past the measurement
}

TEST(ProcessStatsTest, ThreadsAndDescriptorsAreCounted) {
  const int threads = CurrentThreadCount();
  ASSERT_GT(threads, 0);
  // At least one more (a sanitizer's runtime may start a helper thread
  // of its own at the first thread creation).
  std::thread extra([&] { EXPECT_GT(CurrentThreadCount(), threads); });
  extra.join();

  const int descriptors = CurrentOpenFileDescriptors();
  ASSERT_GE(descriptors, 0);
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(CurrentOpenFileDescriptors(), descriptors + 1);
  std::fclose(file);
}

}  // namespace
}  // namespace kaas
