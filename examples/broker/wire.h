// File: examples/broker/wire.h
//
// Kafka's wire primitives (the "Protocol Primitive Types" of the Kafka
// protocol guide): big-endian integers, unsigned varints, strings and byte
// arrays with int16/int32 lengths or, in flexible versions, "compact" ones
// (unsigned varint of length + 1), arrays, and tagged fields.
//
// WireReader reads a request frame it does not own. Every read is bounds
// checked and fails with kInvalidArgument naming the field ("truncated",
// "negative length", ...); an array length is accepted only if that many
// elements of their minimum encoded size fit in the bytes left, so a hostile
// length can never size an allocation. Strings and byte arrays come back as
// views into the frame (a Produce request's record batches are not copied).
//
// WireWriter appends to a std::string.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_EXAMPLES_BROKER_WIRE_H_
#define KAAS_EXAMPLES_BROKER_WIRE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "examples/broker/response_frame.h"
#include "storage/common/record_regions.h"

namespace kaas::broker {

class WireReader {
 public:
  explicit WireReader(absl::string_view bytes) : rest_(bytes) {}

  size_t remaining() const { return rest_.size(); }

  absl::StatusOr<int8_t> Int8(absl::string_view field);
  absl::StatusOr<bool> Bool(absl::string_view field);
  absl::StatusOr<int16_t> Int16(absl::string_view field);
  absl::StatusOr<int32_t> Int32(absl::string_view field);
  absl::StatusOr<int64_t> Int64(absl::string_view field);
  absl::StatusOr<uint32_t> UnsignedVarint(absl::string_view field);

  // STRING (int16 length, not null) and NULLABLE_STRING (-1: nullopt).
  absl::StatusOr<absl::string_view> String(absl::string_view field);
  absl::StatusOr<std::optional<absl::string_view>> NullableString(
      absl::string_view field);
  // COMPACT_STRING / COMPACT_NULLABLE_STRING.
  absl::StatusOr<absl::string_view> CompactString(absl::string_view field);
  absl::StatusOr<std::optional<absl::string_view>> CompactNullableString(
      absl::string_view field);
  // NULLABLE_BYTES / RECORDS (int32 length, -1: nullopt).
  absl::StatusOr<std::optional<absl::string_view>> NullableBytes(
      absl::string_view field);

  // ARRAY length (int32; -1, null, only if `nullable`: returned as -1), or
  // COMPACT_ARRAY (unsigned varint of length + 1; 0 is null). Fails unless
  // `length * min_element_bytes` fit in what is left.
  absl::StatusOr<int32_t> ArrayLength(absl::string_view field,
                                      size_t min_element_bytes,
                                      bool nullable = false);
  absl::StatusOr<int32_t> CompactArrayLength(absl::string_view field,
                                             size_t min_element_bytes,
                                             bool nullable = false);

  // Skips a TAGGED_FIELDS section (flexible versions): every tag's bytes are
  // bounds checked and ignored (no tag is understood here).
  absl::Status SkipTaggedFields(absl::string_view field);

 private:
  absl::Status Truncated(absl::string_view field) const;
  absl::StatusOr<absl::string_view> Take(size_t n, absl::string_view field);

  absl::string_view rest_;
};

class WireWriter {
 public:
  // Writes into `out`; regions (Records) go to `splices`, which may be null
  // for a writer that writes none.
  explicit WireWriter(std::string* out,
                      std::vector<RegionSplice>* splices = nullptr)
      : out_(*out), splices_(splices) {}

  void Int8(int8_t v);
  void Bool(bool v) { Int8(v ? 1 : 0); }
  void Int16(int16_t v);
  void Int32(int32_t v);
  void Int64(int64_t v);
  void UnsignedVarint(uint32_t v);
  void String(absl::string_view s);
  void NullableString(const std::optional<std::string>& s);
  void CompactString(absl::string_view s);
  // NULLABLE_BYTES / RECORDS with an int32 length.
  void Bytes(absl::string_view bytes);
  void NullBytes() { Int32(-1); }
  // RECORDS with an int32 length whose bytes are `regions`: spliced in at
  // this position when the frame is written (response_frame.h), not copied
  // here. REQUIRES: the writer has a splice list.
  void Records(RecordRegions regions);
  // Bytes with no length (the body of a length written before).
  void Raw(absl::string_view bytes) { out_.append(bytes.data(), bytes.size()); }
  void ArrayLength(int32_t n) { Int32(n); }
  void CompactArrayLength(int32_t n) { UnsignedVarint(n + 1); }
  // An empty TAGGED_FIELDS section.
  void EmptyTaggedFields() { UnsignedVarint(0); }

  // Where the next byte goes: for patching a length written before.
  size_t position() const { return out_.size(); }
  void PatchInt32(size_t position, int32_t v);

 private:
  std::string& out_;
  std::vector<RegionSplice>* const splices_;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_WIRE_H_
