// File: storage/batch/varint.h
//
// Kafka's variable-length integers, used inside v2 records: "varint" is a
// zigzag-encoded int32 and "varlong" a zigzag-encoded int64, each written as
// unsigned LEB128 (7 bits per byte, least significant group first, high bit
// set on every byte but the last). At most 5 bytes for a varint and 10 for a
// varlong.
//
// Decoding is written for hostile input: it never reads past the input and
// rejects encodings longer than the maximum or carrying bits beyond 32 (64).
// Like Kafka's ByteUtils, it accepts non-minimal encodings such as 0x80 0x00
// for 0: the record format does not forbid them, and being stricter than the
// reference decoder would reject batches Kafka accepts.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_BATCH_VARINT_H_
#define KAAS_STORAGE_BATCH_VARINT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kaas {

inline constexpr size_t kMaxVarintBytes = 5;
inline constexpr size_t kMaxVarlongBytes = 10;

// Decodes the varint (varlong) at the front of `*input` into `*value` and
// removes its bytes from `*input`. On error `*input` and `*value` are
// unchanged and the status is InvalidArgument, without a storage error code
// (callers add context and the code), with one of the messages
//   "truncated varint: input ends after 2 bytes"
//   "varint longer than 5 bytes"
//   "varint overflows 32 bits"
// ("varlong", 10 bytes, 64 bits for ConsumeVarlong).
absl::Status ConsumeVarint(absl::string_view* input, int32_t* value);
absl::Status ConsumeVarlong(absl::string_view* input, int64_t* value);

// Appends the minimal encoding of `value` to `*out`.
void AppendVarint(int32_t value, std::string* out);
void AppendVarlong(int64_t value, std::string* out);

// Length in bytes of the minimal encoding of `value`.
size_t VarintSize(int32_t value);
size_t VarlongSize(int64_t value);

}  // namespace kaas

#endif  // KAAS_STORAGE_BATCH_VARINT_H_
