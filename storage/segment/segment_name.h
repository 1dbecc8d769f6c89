// File: storage/segment/segment_name.h
//
// Naming of segment files. A segment is identified by the leader epoch that
// created it and its base offset (the offset of its first batch):
//
//   {epoch:08x}-{base_offset:020d}.log        the batches, verbatim
//   {epoch:08x}-{base_offset:020d}.index      sparse offset index
//   {epoch:08x}-{base_offset:020d}.timeindex  sparse time index
//
// e.g. epoch 5, base 123 -> "00000005-00000000000000000123.log". The epoch in
// the name fences a deposed leader: a new leader always appends to a file of
// its own epoch, so a late write by the old one never lands in its log.
//
// A segment set aside by recovery (a deposed leader's, or one that does not
// fit the log; damaged indexes are rebuilt, never set aside) keeps its name
// with the suffix ".quarantined"; such files are never parsed as segments
// again.
//
// Thread-safety: pure functions.

#ifndef KAAS_STORAGE_SEGMENT_SEGMENT_NAME_H_
#define KAAS_STORAGE_SEGMENT_SEGMENT_NAME_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace kaas::segment {

struct SegmentId {
  int64_t base_offset = 0;
  uint32_t epoch = 0;

  friend bool operator==(const SegmentId& a, const SegmentId& b) {
    return a.base_offset == b.base_offset && a.epoch == b.epoch;
  }
  friend bool operator!=(const SegmentId& a, const SegmentId& b) {
    return !(a == b);
  }
};

enum class SegmentFileKind { kLog, kOffsetIndex, kTimeIndex };

// "00000005-00000000000000000123". REQUIRES: id.base_offset >= 0
// (CHECK-fails otherwise: offsets are never negative).
std::string SegmentStem(const SegmentId& id);
// Stem plus ".log", ".index" or ".timeindex".
std::string SegmentFileName(const SegmentId& id, SegmentFileKind kind);

struct ParsedSegmentFile {
  SegmentId id;
  SegmentFileKind kind;
};

// Parses a directory entry name. Returns nullopt for anything that is not
// exactly a name SegmentFileName writes: wrong field lengths, an epoch that is
// not 8 lowercase hex digits (or above 7fffffff: Kafka epochs are int32), a
// base offset that is not 20 decimal digits or
// does not fit in int64 (so never negative), other suffixes (including
// ".quarantined", ".cleaned" and atomic temp files).
std::optional<ParsedSegmentFile> ParseSegmentFileName(absl::string_view name);

inline constexpr absl::string_view kQuarantineSuffix = ".quarantined";

// Compaction writes a segment's cleaned replacement beside it as
// "<stem>.log.cleaned" (storage/segment/cleaned_segment.h); never parsed as
// a segment until a swap renames it.
inline constexpr absl::string_view kCleanedSuffix = ".cleaned";

// "<stem>.log.cleaned".
std::string CleanedFileName(const SegmentId& id);
// The segment a cleaned file's name stands for, if `name` is one.
std::optional<SegmentId> ParseCleanedFileName(absl::string_view name);

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_SEGMENT_NAME_H_
