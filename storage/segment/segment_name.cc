// File: storage/segment/segment_name.cc

#include "storage/segment/segment_name.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "glog/logging.h"

namespace kaas::segment {
namespace {

constexpr size_t kEpochDigits = 8;
constexpr size_t kBaseOffsetDigits = 20;
constexpr size_t kStemLength = kEpochDigits + 1 + kBaseOffsetDigits;

absl::string_view Suffix(SegmentFileKind kind) {
  switch (kind) {
    case SegmentFileKind::kLog:
      return ".log";
    case SegmentFileKind::kOffsetIndex:
      return ".index";
    case SegmentFileKind::kTimeIndex:
      return ".timeindex";
  }
  LOG(FATAL) << "unknown SegmentFileKind " << static_cast<int>(kind);
}

std::optional<SegmentFileKind> ParseSuffix(absl::string_view suffix) {
  for (SegmentFileKind kind :
       {SegmentFileKind::kLog, SegmentFileKind::kOffsetIndex,
        SegmentFileKind::kTimeIndex}) {
    if (suffix == Suffix(kind)) return kind;
  }
  return std::nullopt;
}

// Exactly kEpochDigits lowercase hex digits (the writer's format; uppercase
// or short fields are not names this code wrote).
std::optional<uint32_t> ParseEpoch(absl::string_view field) {
  if (field.size() != kEpochDigits) return std::nullopt;
  uint32_t epoch = 0;
  for (char c : field) {
    uint32_t digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    epoch = epoch << 4 | digit;  // 8 digits never overflow 32 bits
  }
  // Kafka leader epochs are int32: a larger one is no name this engine
  // writes.
  if (epoch > 0x7fffffffu) return std::nullopt;
  return epoch;
}

// Exactly kBaseOffsetDigits decimal digits whose value fits in int64 (20
// digits can spell values up to 10^20 - 1, above INT64_MAX).
std::optional<int64_t> ParseBaseOffset(absl::string_view field) {
  if (field.size() != kBaseOffsetDigits) return std::nullopt;
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  uint64_t value = 0;
  for (char c : field) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = c - '0';
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return static_cast<int64_t>(value);
}

}  // namespace

std::string SegmentStem(const SegmentId& id) {
  CHECK_GE(id.base_offset, 0) << "segment base offsets are non-negative";
  return absl::StrFormat("%08x-%020d", id.epoch, id.base_offset);
}

std::string SegmentFileName(const SegmentId& id, SegmentFileKind kind) {
  return absl::StrCat(SegmentStem(id), Suffix(kind));
}

std::optional<ParsedSegmentFile> ParseSegmentFileName(absl::string_view name) {
  if (name.size() <= kStemLength || name[kEpochDigits] != '-') {
    return std::nullopt;
  }
  std::optional<uint32_t> epoch = ParseEpoch(name.substr(0, kEpochDigits));
  std::optional<int64_t> base_offset =
      ParseBaseOffset(name.substr(kEpochDigits + 1, kBaseOffsetDigits));
  std::optional<SegmentFileKind> kind = ParseSuffix(name.substr(kStemLength));
  if (!epoch || !base_offset || !kind) return std::nullopt;
  return ParsedSegmentFile{SegmentId{*base_offset, *epoch}, *kind};
}

std::string CleanedFileName(const SegmentId& id) {
  return absl::StrCat(SegmentFileName(id, SegmentFileKind::kLog),
                      kCleanedSuffix);
}

std::optional<SegmentId> ParseCleanedFileName(absl::string_view name) {
  if (!absl::ConsumeSuffix(&name, kCleanedSuffix)) return std::nullopt;
  std::optional<ParsedSegmentFile> parsed = ParseSegmentFileName(name);
  if (!parsed || parsed->kind != SegmentFileKind::kLog) return std::nullopt;
  return parsed->id;
}

}  // namespace kaas::segment
