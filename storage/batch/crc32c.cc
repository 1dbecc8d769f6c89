#include "storage/batch/crc32c.h"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace kaas::crc32c {
namespace {

// Registers below are "raw" CRC states (no initial/final inversion) in the
// reflected representation: bit 31 is the coefficient of x^0, bit 0 that of
// x^31. Feeding a byte is linear in the state, which is what lets the
// hardware path combine independently computed streams.
constexpr uint32_t kPolynomial = 0x82F63B78;

// kSlicing.table[k][b]: the raw state after feeding byte b to state 0 and then
// k zero bytes. table[0] is the classic byte-at-a-time table.
struct SlicingTables {
  uint32_t table[8][256];
};

constexpr SlicingTables MakeSlicingTables() {
  SlicingTables tables{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t state = b;
    for (int bit = 0; bit < 8; ++bit) {
      state = (state >> 1) ^ ((state & 1) != 0 ? kPolynomial : 0);
    }
    tables.table[0][b] = state;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      const uint32_t previous = tables.table[k - 1][b];
      tables.table[k][b] = (previous >> 8) ^ tables.table[0][previous & 0xff];
    }
  }
  return tables;
}

constexpr SlicingTables kSlicing = MakeSlicingTables();

// Little-endian loads through memcpy: no alignment or aliasing requirements,
// and a single mov on x86.
inline uint32_t LoadLittleEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | (static_cast<uint32_t>(u[1]) << 8) |
         (static_cast<uint32_t>(u[2]) << 16) |
         (static_cast<uint32_t>(u[3]) << 24);
}

#if defined(__x86_64__)

// ---------------------------------------------------------------------------
// Combining streams: the raw state S after a block B0 followed by a block B1
// of n bytes is Shift_n(S0) ^ S1, where S0 is the state after B0, S1 the state
// after feeding B1 to state 0, and Shift_n(S) = S * x^(8n) mod P (what feeding
// n zero bytes does). Shift_n is linear, so for a fixed n it is four table
// lookups, one per byte of S.
// ---------------------------------------------------------------------------

// a * b mod P, both reflected.
constexpr uint32_t MultiplyModP(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t mask = 1u << 31; mask != 0; mask >>= 1) {
    if ((a & mask) != 0) product ^= b;
    b = (b & 1) != 0 ? (b >> 1) ^ kPolynomial : b >> 1;  // b *= x
  }
  return product;
}

// x^(8n) mod P, by square-and-multiply.
constexpr uint32_t XPow8N(size_t n) {
  uint32_t result = 1u << 31;  // x^0
  uint32_t power = 1u << 23;   // x^8
  for (; n != 0; n >>= 1) {
    if ((n & 1) != 0) result = MultiplyModP(result, power);
    power = MultiplyModP(power, power);
  }
  return result;
}

struct ShiftTable {
  uint32_t table[4][256];
};

constexpr ShiftTable MakeShiftTable(size_t n) {
  ShiftTable shift{};
  const uint32_t x_pow = XPow8N(n);
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      shift.table[k][b] = MultiplyModP(b << (8 * k), x_pow);
    }
  }
  return shift;
}

inline uint32_t Shift(const ShiftTable& shift, uint32_t state) {
  return shift.table[0][state & 0xff] ^ shift.table[1][(state >> 8) & 0xff] ^
         shift.table[2][(state >> 16) & 0xff] ^ shift.table[3][state >> 24];
}

// Two block lengths: long blocks amortise the combine on big buffers, short
// ones keep three streams busy for batches of a few KiB.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;
constexpr ShiftTable kLongShift = MakeShiftTable(kLongBlock);
constexpr ShiftTable kShortShift = MakeShiftTable(kShortBlock);

#define KAAS_CRC32C_SSE42 __attribute__((target("sse4.2")))

inline uint64_t Load64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Feeds the 3 * kBlock bytes at p to `state` as three interleaved streams:
// each crc32q has a 3-cycle latency but a throughput of one per cycle.
template <size_t kBlock>
KAAS_CRC32C_SSE42 inline uint32_t ThreeStreams(uint32_t state, const char* p,
                                               const ShiftTable& shift) {
  uint64_t s0 = state;
  uint64_t s1 = 0;
  uint64_t s2 = 0;
  for (size_t i = 0; i < kBlock; i += 8) {
    s0 = _mm_crc32_u64(s0, Load64(p + i));
    s1 = _mm_crc32_u64(s1, Load64(p + kBlock + i));
    s2 = _mm_crc32_u64(s2, Load64(p + 2 * kBlock + i));
  }
  const uint32_t s01 =
      Shift(shift, static_cast<uint32_t>(s0)) ^ static_cast<uint32_t>(s1);
  return Shift(shift, s01) ^ static_cast<uint32_t>(s2);
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}

#endif  // defined(__x86_64__)

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n) {
  const auto& t = kSlicing.table;
  uint32_t state = ~crc;
  const char* p = data;
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = LoadLittleEndian32(p) ^ state;
    const uint32_t hi = LoadLittleEndian32(p + 4);
    state = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
            t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
            t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) {
    state =
        t[0][(state ^ static_cast<unsigned char>(*p)) & 0xff] ^ (state >> 8);
  }
  return ~state;
}

#if defined(__x86_64__)

KAAS_CRC32C_SSE42 uint32_t ExtendHardware(uint32_t crc, const char* data,
                                          size_t n) {
  uint32_t state = ~crc;
  const char* p = data;
  const char* const end = data + n;
  // Head: single bytes up to 8-byte alignment, so the word loads below never
  // straddle a cache line.
  while (p != end && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    state = _mm_crc32_u8(state, static_cast<unsigned char>(*p++));
  }
  while (static_cast<size_t>(end - p) >= 3 * kLongBlock) {
    state = ThreeStreams<kLongBlock>(state, p, kLongShift);
    p += 3 * kLongBlock;
  }
  while (static_cast<size_t>(end - p) >= 3 * kShortBlock) {
    state = ThreeStreams<kShortBlock>(state, p, kShortShift);
    p += 3 * kShortBlock;
  }
  uint64_t state64 = state;
  for (; end - p >= 8; p += 8) state64 = _mm_crc32_u64(state64, Load64(p));
  state = static_cast<uint32_t>(state64);
  for (; p != end; ++p) {
    state = _mm_crc32_u8(state, static_cast<unsigned char>(*p));
  }
  return ~state;
}

bool IsHardwareAccelerated() {
  static const bool kAccelerated = DetectHardware();
  return kAccelerated;
}

#else  // !defined(__x86_64__)

uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n) {
  return ExtendPortable(crc, data, n);
}

bool IsHardwareAccelerated() { return false; }

#endif  // defined(__x86_64__)

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
  return IsHardwareAccelerated() ? ExtendHardware(crc, data, n)
                                 : ExtendPortable(crc, data, n);
}

}  // namespace kaas::crc32c
