// File: storage/segment/time_index.cc

#include "storage/segment/time_index.h"

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

TimeIndex::TimeIndex(const TimeIndex& other)
    : base_offset_(other.base_offset_) {
  absl::ReaderMutexLock lock(&other.mu_);
  timestamps_ = other.timestamps_;
  relative_offsets_ = other.relative_offsets_;
}

TimeIndex& TimeIndex::operator=(const TimeIndex& other) {
  if (this == &other) return *this;
  CHECK_EQ(base_offset_, other.base_offset_)
      << "an index belongs to one segment";
  // Never hold both locks (see OffsetIndex::operator=).
  std::vector<int64_t> timestamps;
  std::vector<int32_t> relative_offsets;
  {
    absl::ReaderMutexLock lock(&other.mu_);
    timestamps = other.timestamps_;
    relative_offsets = other.relative_offsets_;
  }
  absl::MutexLock lock(&mu_);
  timestamps_ = std::move(timestamps);
  relative_offsets_ = std::move(relative_offsets);
  return *this;
}

bool TimeIndex::MaybeAppend(int64_t timestamp, int64_t offset) {
  CHECK_GE(offset, base_offset_) << "offset below the segment base";
  CHECK_LE(offset - base_offset_, std::numeric_limits<int32_t>::max())
      << "relative offset overflows int32 (segment base " << base_offset_
      << ")";
  const int32_t relative = static_cast<int32_t>(offset - base_offset_);
  absl::MutexLock lock(&mu_);
  if (!timestamps_.empty() && (timestamp <= timestamps_.back() ||
                               relative <= relative_offsets_.back())) {
    return false;
  }
  timestamps_.push_back(timestamp);
  relative_offsets_.push_back(relative);
  return true;
}

std::optional<TimeIndexEntry> TimeIndex::LookupBelow(int64_t timestamp) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = std::lower_bound(timestamps_.begin(), timestamps_.end(), timestamp);
  if (it == timestamps_.begin()) return std::nullopt;
  const size_t i = (it - timestamps_.begin()) - 1;
  return TimeIndexEntry{timestamps_[i], base_offset_ + relative_offsets_[i]};
}

void TimeIndex::TruncateToOffset(int64_t offset) {
  absl::MutexLock lock(&mu_);
  if (offset <= base_offset_) {
    timestamps_.clear();
    relative_offsets_.clear();
    return;
  }
  // In int64: `offset` may lie far past this segment's int32 range.
  const int64_t relative = offset - base_offset_;
  const size_t keep =
      std::lower_bound(relative_offsets_.begin(), relative_offsets_.end(),
                       relative,
                       [](int32_t entry, int64_t r) { return entry < r; }) -
      relative_offsets_.begin();
  timestamps_.resize(keep);
  relative_offsets_.resize(keep);
}

size_t TimeIndex::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return timestamps_.size();
}

std::optional<TimeIndexEntry> TimeIndex::last() const {
  absl::ReaderMutexLock lock(&mu_);
  if (timestamps_.empty()) return std::nullopt;
  return TimeIndexEntry{timestamps_.back(),
                        base_offset_ + relative_offsets_.back()};
}

std::vector<TimeIndexEntry> TimeIndex::entries() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<TimeIndexEntry> result;
  result.reserve(timestamps_.size());
  for (size_t i = 0; i < timestamps_.size(); ++i) {
    result.push_back({timestamps_[i], base_offset_ + relative_offsets_[i]});
  }
  return result;
}

std::string TimeIndex::Encode(size_t from_entry) const {
  return Encode(from_entry, size());
}

std::string TimeIndex::Encode(size_t from_entry, size_t to_entry) const {
  absl::ReaderMutexLock lock(&mu_);
  CHECK_LE(from_entry, to_entry);
  CHECK_LE(to_entry, timestamps_.size());
  std::string bytes((to_entry - from_entry) * kTimeIndexEntrySize, '\0');
  char* p = bytes.data();
  for (size_t i = from_entry; i < to_entry; ++i) {
    WriteBigEndian64(p, timestamps_[i]);
    WriteBigEndian32(p + 8, relative_offsets_[i]);
    p += kTimeIndexEntrySize;
  }
  return bytes;
}

size_t TimeIndex::CountBelowOffset(int64_t offset) const {
  absl::ReaderMutexLock lock(&mu_);
  const int64_t relative = offset - base_offset_;
  return std::lower_bound(
             relative_offsets_.begin(), relative_offsets_.end(), relative,
             [](int32_t entry, int64_t bound) { return entry < bound; }) -
         relative_offsets_.begin();
}

TimeIndex::Decoded TimeIndex::Decode(int64_t base_offset,
                                     absl::string_view bytes,
                                     int64_t next_offset) {
  std::string problem;
  std::vector<int64_t> timestamps;
  std::vector<int32_t> relative_offsets;
  const size_t whole_entries = bytes.size() / kTimeIndexEntrySize;
  timestamps.reserve(whole_entries);
  relative_offsets.reserve(whole_entries);
  for (size_t i = 0; i < whole_entries && problem.empty(); ++i) {
    const char* entry = bytes.data() + i * kTimeIndexEntrySize;
    const int64_t timestamp = ReadBigEndian64(entry);
    const int32_t relative = ReadBigEndian32(entry + 8);
    const int64_t offset = base_offset + relative;
    if (relative < 0) {
      problem =
          absl::StrFormat("entry %d: offset %d is below the segment base %d", i,
                          offset, base_offset);
    } else if (offset >= next_offset) {
      problem = absl::StrFormat(
          "entry %d: offset %d is at or past the segment's next offset %d", i,
          offset, next_offset);
    } else if (i > 0 && timestamp <= timestamps.back()) {
      problem = absl::StrFormat(
          "entry %d: timestamp %d is not above the previous entry's %d", i,
          timestamp, timestamps.back());
    } else if (i > 0 && relative <= relative_offsets.back()) {
      problem = absl::StrFormat(
          "entry %d: offset %d is not above the previous entry's %d", i, offset,
          base_offset + relative_offsets.back());
    } else {
      timestamps.push_back(timestamp);
      relative_offsets.push_back(relative);
    }
  }
  if (problem.empty() && bytes.size() % kTimeIndexEntrySize != 0) {
    problem = absl::StrFormat("time index size %d is not a multiple of %d",
                              bytes.size(), kTimeIndexEntrySize);
  }
  Decoded decoded{TimeIndex(base_offset), std::move(problem)};
  {
    absl::MutexLock lock(&decoded.index.mu_);
    decoded.index.timestamps_ = std::move(timestamps);
    decoded.index.relative_offsets_ = std::move(relative_offsets);
  }
  return decoded;
}

}  // namespace kaas::segment
