// File: storage/batch/crc32c.h
//
// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka
// v2 RecordBatches. Same semantics as LevelDB's crc32c::Extend/Value: the
// standard CRC-32C with initial value and final xor 0xFFFFFFFF, so
//
//   Extend(Value(a), b) == Value(a + b)
//
// Two implementations:
//  - ExtendPortable: slicing-by-8 tables, any CPU (~1-2 GB/s).
//  - ExtendHardware: the SSE4.2 `crc32` instruction on x86-64. Long inputs are
//    split into three interleaved streams whose CRCs are combined with
//    precomputed "shift by a fixed length" tables, because one stream is
//    bound by the instruction's 3-cycle latency. The recovery scan CRCs every
//    batch of a segment, so this is its throughput limit.
// Extend/Value pick the hardware path at run time when the CPU supports it;
// the rest of the build does not need -msse4.2.
//
// Thread-safety: every function is a pure function and thread-safe.

#ifndef KAAS_STORAGE_BATCH_CRC32C_H_
#define KAAS_STORAGE_BATCH_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace kaas::crc32c {

// Returns the CRC32C of A + data[0, n), where `crc` is the CRC32C of some
// string A. Extend(0, data, n) == Value(data, n).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

// Returns the CRC32C of data[0, n).
inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

// True if Extend uses ExtendHardware on this CPU.
bool IsHardwareAccelerated();

// The implementations behind Extend, exposed for tests and benchmarks. Both
// have Extend's contract.
uint32_t ExtendPortable(uint32_t crc, const char* data, size_t n);
// REQUIRES: IsHardwareAccelerated() (the instruction faults otherwise). On
// non-x86-64 builds this is ExtendPortable.
uint32_t ExtendHardware(uint32_t crc, const char* data, size_t n);

}  // namespace kaas::crc32c

#endif  // KAAS_STORAGE_BATCH_CRC32C_H_
