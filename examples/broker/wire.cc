// File: examples/broker/wire.cc

#include "examples/broker/wire.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace kaas::broker {
namespace {

uint64_t LoadBigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void StoreBigEndian(uint64_t v, int bytes, char* p) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v);
}

}  // namespace

absl::Status WireReader::Truncated(absl::string_view field) const {
  return absl::InvalidArgumentError(absl::StrCat(
      "truncated request: ", field, " (", rest_.size(), " bytes left)"));
}

absl::StatusOr<absl::string_view> WireReader::Take(size_t n,
                                                   absl::string_view field) {
  if (n > rest_.size()) return Truncated(field);
  absl::string_view taken = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return taken;
}

absl::StatusOr<int8_t> WireReader::Int8(absl::string_view field) {
  absl::StatusOr<absl::string_view> b = Take(1, field);
  if (!b.ok()) return b.status();
  return static_cast<int8_t>((*b)[0]);
}

absl::StatusOr<bool> WireReader::Bool(absl::string_view field) {
  absl::StatusOr<int8_t> v = Int8(field);
  if (!v.ok()) return v.status();
  return *v != 0;
}

absl::StatusOr<int16_t> WireReader::Int16(absl::string_view field) {
  absl::StatusOr<absl::string_view> b = Take(2, field);
  if (!b.ok()) return b.status();
  return static_cast<int16_t>(LoadBigEndian(b->data(), 2));
}

absl::StatusOr<int32_t> WireReader::Int32(absl::string_view field) {
  absl::StatusOr<absl::string_view> b = Take(4, field);
  if (!b.ok()) return b.status();
  return static_cast<int32_t>(LoadBigEndian(b->data(), 4));
}

absl::StatusOr<int64_t> WireReader::Int64(absl::string_view field) {
  absl::StatusOr<absl::string_view> b = Take(8, field);
  if (!b.ok()) return b.status();
  return static_cast<int64_t>(LoadBigEndian(b->data(), 8));
}

absl::StatusOr<uint32_t> WireReader::UnsignedVarint(absl::string_view field) {
  uint32_t value = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (rest_.empty()) return Truncated(field);
    const uint8_t byte = static_cast<uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    if (shift == 28 && (byte & 0xf0) != 0) break;  // more than 32 bits
    value |= static_cast<uint32_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "malformed request: ", field, ": varint longer than 32 bits"));
}

absl::StatusOr<absl::string_view> WireReader::String(absl::string_view field) {
  absl::StatusOr<std::optional<absl::string_view>> s = NullableString(field);
  if (!s.ok()) return s.status();
  if (!s->has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, " is null"));
  }
  return **s;
}

absl::StatusOr<std::optional<absl::string_view>> WireReader::NullableString(
    absl::string_view field) {
  absl::StatusOr<int16_t> length = Int16(field);
  if (!length.ok()) return length.status();
  if (*length == -1) return std::optional<absl::string_view>();
  if (*length < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, ": negative length"));
  }
  absl::StatusOr<absl::string_view> s = Take(*length, field);
  if (!s.ok()) return s.status();
  return std::optional<absl::string_view>(*s);
}

absl::StatusOr<absl::string_view> WireReader::CompactString(
    absl::string_view field) {
  absl::StatusOr<std::optional<absl::string_view>> s =
      CompactNullableString(field);
  if (!s.ok()) return s.status();
  if (!s->has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, " is null"));
  }
  return **s;
}

absl::StatusOr<std::optional<absl::string_view>>
WireReader::CompactNullableString(absl::string_view field) {
  absl::StatusOr<uint32_t> length_plus_one = UnsignedVarint(field);
  if (!length_plus_one.ok()) return length_plus_one.status();
  if (*length_plus_one == 0) return std::optional<absl::string_view>();
  absl::StatusOr<absl::string_view> s = Take(*length_plus_one - 1, field);
  if (!s.ok()) return s.status();
  return std::optional<absl::string_view>(*s);
}

absl::StatusOr<std::optional<absl::string_view>> WireReader::NullableBytes(
    absl::string_view field) {
  absl::StatusOr<int32_t> length = Int32(field);
  if (!length.ok()) return length.status();
  if (*length == -1) return std::optional<absl::string_view>();
  if (*length < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, ": negative length"));
  }
  absl::StatusOr<absl::string_view> b = Take(*length, field);
  if (!b.ok()) return b.status();
  return std::optional<absl::string_view>(*b);
}

namespace {

absl::StatusOr<int32_t> CheckedArrayLength(int64_t length,
                                           absl::string_view field,
                                           size_t min_element_bytes,
                                           bool nullable, size_t remaining) {
  if (length == -1 && nullable) return -1;
  if (length < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, ": array length ", length));
  }
  if (static_cast<uint64_t>(length) * min_element_bytes > remaining) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed request: ", field, ": ", length,
                     " elements cannot fit in the ", remaining, " bytes left"));
  }
  return static_cast<int32_t>(length);
}

}  // namespace

absl::StatusOr<int32_t> WireReader::ArrayLength(absl::string_view field,
                                                size_t min_element_bytes,
                                                bool nullable) {
  absl::StatusOr<int32_t> length = Int32(field);
  if (!length.ok()) return length.status();
  return CheckedArrayLength(*length, field, min_element_bytes, nullable,
                            rest_.size());
}

absl::StatusOr<int32_t> WireReader::CompactArrayLength(absl::string_view field,
                                                       size_t min_element_bytes,
                                                       bool nullable) {
  absl::StatusOr<uint32_t> length_plus_one = UnsignedVarint(field);
  if (!length_plus_one.ok()) return length_plus_one.status();
  return CheckedArrayLength(static_cast<int64_t>(*length_plus_one) - 1, field,
                            min_element_bytes, nullable, rest_.size());
}

absl::Status WireReader::SkipTaggedFields(absl::string_view field) {
  absl::StatusOr<uint32_t> tags = UnsignedVarint(field);
  if (!tags.ok()) return tags.status();
  // Each tag takes at least two bytes (its number and its size).
  if (uint64_t{*tags} * 2 > rest_.size()) return Truncated(field);
  for (uint32_t i = 0; i < *tags; ++i) {
    absl::StatusOr<uint32_t> tag = UnsignedVarint(field);
    if (!tag.ok()) return tag.status();
    absl::StatusOr<uint32_t> size = UnsignedVarint(field);
    if (!size.ok()) return size.status();
    absl::StatusOr<absl::string_view> skipped = Take(*size, field);
    if (!skipped.ok()) return skipped.status();
  }
  return absl::OkStatus();
}

void WireWriter::Int8(int8_t v) { out_.push_back(static_cast<char>(v)); }

void WireWriter::Int16(int16_t v) {
  char b[2];
  StoreBigEndian(static_cast<uint16_t>(v), 2, b);
  out_.append(b, 2);
}

void WireWriter::Int32(int32_t v) {
  char b[4];
  StoreBigEndian(static_cast<uint32_t>(v), 4, b);
  out_.append(b, 4);
}

void WireWriter::Int64(int64_t v) {
  char b[8];
  StoreBigEndian(static_cast<uint64_t>(v), 8, b);
  out_.append(b, 8);
}

void WireWriter::UnsignedVarint(uint32_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void WireWriter::String(absl::string_view s) {
  Int16(static_cast<int16_t>(s.size()));
  out_.append(s.data(), s.size());
}

void WireWriter::NullableString(const std::optional<std::string>& s) {
  if (!s.has_value()) {
    Int16(-1);
    return;
  }
  String(*s);
}

void WireWriter::CompactString(absl::string_view s) {
  UnsignedVarint(static_cast<uint32_t>(s.size()) + 1);
  out_.append(s.data(), s.size());
}

void WireWriter::Bytes(absl::string_view bytes) {
  Int32(static_cast<int32_t>(bytes.size()));
  out_.append(bytes.data(), bytes.size());
}

void WireWriter::Records(RecordRegions regions) {
  CHECK(splices_ != nullptr) << "a WireWriter without a splice list";
  Int32(static_cast<int32_t>(regions.size()));
  if (regions.empty()) return;
  splices_->push_back(RegionSplice{out_.size(), std::move(regions)});
}

void WireWriter::PatchInt32(size_t position, int32_t v) {
  StoreBigEndian(static_cast<uint32_t>(v), 4, out_.data() + position);
}

}  // namespace kaas::broker
