#include "storage/batch/varint.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace kaas {
namespace {

// Decodes unsigned LEB128 of at most kMaxBytes bytes into an Unsigned.
// `name` ("varint"/"varlong") only appears in error messages.
template <typename Unsigned, size_t kMaxBytes>
absl::Status ConsumeUnsigned(absl::string_view* input, Unsigned* value,
                             absl::string_view name) {
  constexpr int kBits = std::numeric_limits<Unsigned>::digits;
  // Value bits the last permitted byte may carry: 32 - 4 * 7 = 4 for a
  // varint, 64 - 9 * 7 = 1 for a varlong.
  constexpr int kLastByteBits = kBits - 7 * static_cast<int>(kMaxBytes - 1);
  Unsigned result = 0;
  for (size_t i = 0; i < kMaxBytes; ++i) {
    if (i == input->size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("truncated ", name, ": input ends after ", i, " bytes"));
    }
    const auto byte = static_cast<unsigned char>((*input)[i]);
    if (i == kMaxBytes - 1) {
      if ((byte & 0x80) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " longer than ", kMaxBytes, " bytes"));
      }
      if ((byte >> kLastByteBits) != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " overflows ", kBits, " bits"));
      }
    }
    result |= static_cast<Unsigned>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      input->remove_prefix(i + 1);
      *value = result;
      return absl::OkStatus();
    }
  }
  // Unreachable: the last permitted byte either terminates or errors.
  return absl::InternalError(absl::StrCat(name, " decoder fell through"));
}

template <typename Unsigned>
void AppendUnsigned(Unsigned value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

template <typename Unsigned>
size_t UnsignedSize(Unsigned value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

// Zigzag maps 0, -1, 1, -2, ... to 0, 1, 2, 3, ... so that small negative
// numbers stay short.
uint32_t ZigZag(int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  return v < 0 ? ~(u << 1) : u << 1;
}
uint64_t ZigZag(int64_t v) {
  const auto u = static_cast<uint64_t>(v);
  return v < 0 ? ~(u << 1) : u << 1;
}
int32_t UnZigZag(uint32_t u) {
  return static_cast<int32_t>((u >> 1) ^ (0u - (u & 1)));
}
int64_t UnZigZag(uint64_t u) {
  return static_cast<int64_t>((u >> 1) ^ (uint64_t{0} - (u & 1)));
}

}  // namespace

absl::Status ConsumeVarint(absl::string_view* input, int32_t* value) {
  uint32_t raw;
  absl::Status status =
      ConsumeUnsigned<uint32_t, kMaxVarintBytes>(input, &raw, "varint");
  if (status.ok()) *value = UnZigZag(raw);
  return status;
}

absl::Status ConsumeVarlong(absl::string_view* input, int64_t* value) {
  uint64_t raw;
  absl::Status status =
      ConsumeUnsigned<uint64_t, kMaxVarlongBytes>(input, &raw, "varlong");
  if (status.ok()) *value = UnZigZag(raw);
  return status;
}

void AppendVarint(int32_t value, std::string* out) {
  AppendUnsigned(ZigZag(value), out);
}

void AppendVarlong(int64_t value, std::string* out) {
  AppendUnsigned(ZigZag(value), out);
}

size_t VarintSize(int32_t value) { return UnsignedSize(ZigZag(value)); }

size_t VarlongSize(int64_t value) { return UnsignedSize(ZigZag(value)); }

}  // namespace kaas
