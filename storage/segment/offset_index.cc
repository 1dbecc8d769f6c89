// File: storage/segment/offset_index.cc

#include "storage/segment/offset_index.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"
#include "storage/batch/record_batch.h"

namespace kaas::segment {

OffsetIndex::OffsetIndex(const OffsetIndex& other)
    : base_offset_(other.base_offset_) {
  absl::ReaderMutexLock lock(&other.mu_);
  relative_offsets_ = other.relative_offsets_;
  positions_ = other.positions_;
}

OffsetIndex& OffsetIndex::operator=(const OffsetIndex& other) {
  if (this == &other) return *this;
  CHECK_EQ(base_offset_, other.base_offset_)
      << "an index belongs to one segment";
  // Copy out under the source's lock, then install under ours: never holding
  // both locks means `a = b` and `b = a` running concurrently cannot deadlock.
  std::vector<int32_t> relative_offsets;
  std::vector<uint32_t> positions;
  {
    absl::ReaderMutexLock lock(&other.mu_);
    relative_offsets = other.relative_offsets_;
    positions = other.positions_;
  }
  absl::MutexLock lock(&mu_);
  relative_offsets_ = std::move(relative_offsets);
  positions_ = std::move(positions);
  return *this;
}

OffsetIndexEntry OffsetIndex::Lookup(int64_t offset) const {
  if (offset <= base_offset_) return {base_offset_, 0};
  // Compare in int64: `offset - base` may not fit in int32 (a target far past
  // this segment), and then every entry is below it.
  const int64_t relative = offset - base_offset_;
  absl::ReaderMutexLock lock(&mu_);
  auto it = std::upper_bound(
      relative_offsets_.begin(), relative_offsets_.end(), relative,
      [](int64_t target, int32_t entry) { return target < entry; });
  if (it == relative_offsets_.begin()) return {base_offset_, 0};
  const size_t i = (it - relative_offsets_.begin()) - 1;
  return {base_offset_ + relative_offsets_[i], positions_[i]};
}

void OffsetIndex::Append(int64_t offset, uint64_t position) {
  absl::MutexLock lock(&mu_);
  // The segment start {base, 0} acts as the entry before the first one.
  const int64_t last_offset = relative_offsets_.empty()
                                  ? base_offset_
                                  : base_offset_ + relative_offsets_.back();
  const uint64_t last_position = positions_.empty() ? 0 : positions_.back();
  CHECK_GT(offset, last_offset) << "offset index entries must increase";
  CHECK_LE(offset - base_offset_, std::numeric_limits<int32_t>::max())
      << "relative offset overflows int32 (segment base " << base_offset_
      << ")";
  CHECK_GT(position, last_position) << "offset index positions must increase";
  CHECK_LE(position, std::numeric_limits<uint32_t>::max())
      << "position overflows uint32";
  relative_offsets_.push_back(static_cast<int32_t>(offset - base_offset_));
  positions_.push_back(static_cast<uint32_t>(position));
}

void OffsetIndex::TruncateToPosition(uint64_t position) {
  absl::MutexLock lock(&mu_);
  const size_t keep =
      std::lower_bound(positions_.begin(), positions_.end(), position,
                       [](uint32_t entry, uint64_t p) { return entry < p; }) -
      positions_.begin();
  relative_offsets_.resize(keep);
  positions_.resize(keep);
}

size_t OffsetIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return positions_.size();
}

std::optional<OffsetIndexEntry> OffsetIndex::last() const {
  absl::ReaderMutexLock lock(&mu_);
  if (positions_.empty()) return std::nullopt;
  return OffsetIndexEntry{base_offset_ + relative_offsets_.back(),
                          positions_.back()};
}

std::vector<OffsetIndexEntry> OffsetIndex::entries() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<OffsetIndexEntry> result;
  result.reserve(positions_.size());
  for (size_t i = 0; i < positions_.size(); ++i) {
    result.push_back({base_offset_ + relative_offsets_[i], positions_[i]});
  }
  return result;
}

std::string OffsetIndex::Encode(size_t from_entry) const {
  return Encode(from_entry, size());
}

std::string OffsetIndex::Encode(size_t from_entry, size_t to_entry) const {
  absl::ReaderMutexLock lock(&mu_);
  CHECK_LE(from_entry, to_entry);
  CHECK_LE(to_entry, positions_.size());
  std::string bytes((to_entry - from_entry) * kOffsetIndexEntrySize, '\0');
  char* p = bytes.data();
  for (size_t i = from_entry; i < to_entry; ++i) {
    WriteBigEndian32(p, relative_offsets_[i]);
    WriteBigEndian32(p + 4, static_cast<int32_t>(positions_[i]));
    p += kOffsetIndexEntrySize;
  }
  return bytes;
}

size_t OffsetIndex::CountBelowPosition(uint64_t position) const {
  absl::ReaderMutexLock lock(&mu_);
  return std::lower_bound(
             positions_.begin(), positions_.end(), position,
             [](uint32_t entry, uint64_t bound) { return entry < bound; }) -
         positions_.begin();
}

OffsetIndex::Decoded OffsetIndex::Decode(int64_t base_offset,
                                         absl::string_view bytes,
                                         uint64_t log_size) {
  std::string problem;
  std::vector<int32_t> relative_offsets;
  std::vector<uint32_t> positions;
  const size_t whole_entries = bytes.size() / kOffsetIndexEntrySize;
  relative_offsets.reserve(whole_entries);
  positions.reserve(whole_entries);
  int32_t previous_relative = 0;  // the segment start {base, 0}
  uint32_t previous_position = 0;
  for (size_t i = 0; i < whole_entries && problem.empty(); ++i) {
    const char* entry = bytes.data() + i * kOffsetIndexEntrySize;
    const int32_t relative = ReadBigEndian32(entry);
    const uint32_t position = static_cast<uint32_t>(ReadBigEndian32(entry + 4));
    const int64_t offset = base_offset + relative;
    if (relative <= previous_relative) {
      problem = i == 0 ? absl::StrFormat(
                             "entry 0: offset %d is not above the segment "
                             "base %d",
                             offset, base_offset)
                       : absl::StrFormat(
                             "entry %d: offset %d is not above the previous "
                             "entry's %d",
                             i, offset, base_offset + previous_relative);
    } else if (position <= previous_position) {
      problem = i == 0 ? absl::StrFormat(
                             "entry 0: position %d is not above the segment "
                             "start",
                             position)
                       : absl::StrFormat(
                             "entry %d: position %d is not above the previous "
                             "entry's %d",
                             i, position, previous_position);
    } else if (position >= log_size) {
      problem = absl::StrFormat(
          "entry %d: position %d is at or past the end of the log (%d bytes)",
          i, position, log_size);
    } else {
      relative_offsets.push_back(relative);
      positions.push_back(position);
      previous_relative = relative;
      previous_position = position;
    }
  }
  if (problem.empty() && bytes.size() % kOffsetIndexEntrySize != 0) {
    problem = absl::StrFormat("index size %d is not a multiple of %d",
                              bytes.size(), kOffsetIndexEntrySize);
  }
  Decoded decoded{OffsetIndex(base_offset), std::move(problem)};
  {
    absl::MutexLock lock(&decoded.index.mu_);
    decoded.index.relative_offsets_ = std::move(relative_offsets);
    decoded.index.positions_ = std::move(positions);
  }
  return decoded;
}

}  // namespace kaas::segment
