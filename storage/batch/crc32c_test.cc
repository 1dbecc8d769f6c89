#include "storage/batch/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace kaas::crc32c {
namespace {

using ExtendFunction = uint32_t (*)(uint32_t, const char*, size_t);

struct Implementation {
  const char* name;
  ExtendFunction extend;
};

// Every implementation usable on this machine.
std::vector<Implementation> Implementations() {
  std::vector<Implementation> result = {{"Extend", &Extend},
                                        {"ExtendPortable", &ExtendPortable}};
  if (IsHardwareAccelerated()) {
    result.push_back({"ExtendHardware", &ExtendHardware});
  }
  return result;
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, StandardVectors) {
  std::string zeros(32, '\0');
  std::string ones(32, '\xff');
  std::string ascending(32, '\0');
  std::string descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  const std::string check = "123456789";
  for (const Implementation& impl : Implementations()) {
    SCOPED_TRACE(impl.name);
    EXPECT_EQ(impl.extend(0, zeros.data(), zeros.size()), 0x8A9136AAu);
    EXPECT_EQ(impl.extend(0, ones.data(), ones.size()), 0x62A8AB43u);
    EXPECT_EQ(impl.extend(0, ascending.data(), ascending.size()), 0x46DD794Eu);
    EXPECT_EQ(impl.extend(0, descending.data(), descending.size()),
              0x113FDB5Cu);
    EXPECT_EQ(impl.extend(0, check.data(), check.size()), 0xE3069283u);
    EXPECT_EQ(impl.extend(0, nullptr, 0), 0u);
  }
}

TEST(Crc32c, ValueIsExtendOfZero) {
  const std::string s = "hello world";
  EXPECT_EQ(Value(s.data(), s.size()), Extend(0, s.data(), s.size()));
  EXPECT_NE(Value(s.data(), s.size()), Value(s.data(), s.size() - 1));
}

TEST(Crc32c, ExtendComposesLikeConcatenation) {
  std::mt19937 rng(7);
  std::string data(100000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  // Split points around the hardware path's block sizes (3 * 256, 3 * 8192).
  const size_t splits[] = {0, 1, 7, 8, 9, 767, 768, 769, 24575, 24576, 50001};
  for (const Implementation& impl : Implementations()) {
    SCOPED_TRACE(impl.name);
    const uint32_t whole = impl.extend(0, data.data(), data.size());
    for (size_t split : splits) {
      const uint32_t head = impl.extend(0, data.data(), split);
      EXPECT_EQ(impl.extend(head, data.data() + split, data.size() - split),
                whole)
          << "split at " << split;
    }
  }
}

TEST(Crc32c, HardwareMatchesPortableOnRandomInputs) {
  if (!IsHardwareAccelerated()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::mt19937 rng(20240601);
  // 16 spare bytes so every alignment offset 0..15 can be tested.
  std::string buffer(72 * 1024 + 16, '\0');
  for (char& c : buffer) c = static_cast<char>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 64; ++n) lengths.push_back(n);
  for (size_t n : {255, 256, 257, 767, 768, 769, 1023, 1024, 1537, 16383, 16384,
                   16385, 24575, 24576, 24577, 49152, 65536, 70001}) {
    lengths.push_back(n);
  }
  auto expect_same = [&](size_t n, size_t offset) {
    const char* p = buffer.data() + offset;
    const auto seed = static_cast<uint32_t>(rng());
    ASSERT_EQ(ExtendHardware(seed, p, n), ExtendPortable(seed, p, n))
        << "length " << n << ", offset " << offset << ", seed " << seed;
  };
  // Every boundary length at every alignment offset.
  for (size_t n : lengths) {
    for (size_t offset = 0; offset < 16; ++offset) expect_same(n, offset);
  }
  // Random lengths at random offsets.
  std::uniform_int_distribution<size_t> random_length(0, 70 * 1024);
  std::uniform_int_distribution<size_t> random_offset(0, 15);
  for (int i = 0; i < 300; ++i) {
    const size_t n = random_length(rng);
    expect_same(n, random_offset(rng));
  }
}

TEST(Crc32c, DetectsEverySingleBitFlip) {
  std::string data(300, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  const uint32_t original = Value(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_NE(Value(data.data(), data.size()), original) << "bit " << bit;
    data[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  }
}

}  // namespace
}  // namespace kaas::crc32c
