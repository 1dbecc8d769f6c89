#include "cleaner/retention_policy.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kaas::cleaner {

namespace {

// The index of the first segment retention may never delete: the active
// one (the last, or the first marked active).
size_t ActiveIndex(absl::Span<const SegmentSummary> segments) {
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    if (segments[i].active) return i;
  }
  return segments.empty() ? 0 : segments.size() - 1;
}

// Each segment's date for time retention (see the file comment of the
// header): its own largest timestamp, else the nearest later segment's;
// -1 if neither exists.
std::vector<int64_t> SegmentDates(absl::Span<const SegmentSummary> segments) {
  std::vector<int64_t> dates(segments.size(), -1);
  int64_t nearest_later = -1;
  for (size_t i = segments.size(); i-- > 0;) {
    if (segments[i].max_timestamp >= 0) {
      nearest_later = segments[i].max_timestamp;
    }
    dates[i] = nearest_later;
  }
  return dates;
}

}  // namespace

absl::string_view RetentionReasonName(RetentionReason reason) {
  switch (reason) {
    case RetentionReason::kTime:
      return "time";
    case RetentionReason::kSize:
      return "size";
  }
  return "unknown";
}

std::optional<int64_t> TimeRetentionTarget(
    absl::Span<const SegmentSummary> segments, absl::Time now,
    absl::Duration retention) {
  if (retention < absl::ZeroDuration()) return std::nullopt;
  // absl::Time arithmetic saturates, so a huge retention cannot overflow.
  const absl::Time cutoff = now - retention;
  const std::vector<int64_t> dates = SegmentDates(segments);
  std::optional<int64_t> target;
  const size_t active = ActiveIndex(segments);
  for (size_t i = 0; i < active; ++i) {
    if (dates[i] < 0 || absl::FromUnixMillis(dates[i]) >= cutoff) break;
    target = segments[i + 1].base_offset;
  }
  return target;
}

std::optional<int64_t> SizeRetentionTarget(
    absl::Span<const SegmentSummary> segments, uint64_t retention_bytes) {
  uint64_t total = 0;
  for (const SegmentSummary& segment : segments) total += segment.size_bytes;
  if (total < retention_bytes) return std::nullopt;
  uint64_t surplus = total - retention_bytes;
  std::optional<int64_t> target;
  const size_t active = ActiveIndex(segments);
  for (size_t i = 0; i < active; ++i) {
    if (segments[i].size_bytes > surplus) break;
    surplus -= segments[i].size_bytes;
    target = segments[i + 1].base_offset;
  }
  return target;
}

bool RetentionApplies(const PartitionConfig& config) {
  return config.cleanup_delete && (config.retention_ms.has_value() ||
                                   config.retention_bytes.has_value());
}

std::optional<RetentionDecision> DecideRetention(const RetentionView& view,
                                                 absl::Time now) {
  if (!RetentionApplies(view.config)) return std::nullopt;
  std::optional<int64_t> by_time;
  if (view.config.retention_ms.has_value()) {
    by_time =
        TimeRetentionTarget(view.segments, now, *view.config.retention_ms);
  }
  std::optional<int64_t> by_size;
  if (view.config.retention_bytes.has_value()) {
    by_size = SizeRetentionTarget(view.segments, *view.config.retention_bytes);
  }
  std::optional<RetentionDecision> decision;
  if (by_size.has_value() && (!by_time.has_value() || *by_size >= *by_time)) {
    decision = RetentionDecision{*by_size, RetentionReason::kSize};
  } else if (by_time.has_value()) {
    decision = RetentionDecision{*by_time, RetentionReason::kTime};
  }
  if (!decision.has_value()) return std::nullopt;
  if (decision->target > view.high_watermark) {
    // Back to the last segment boundary a consumer can already read past.
    int64_t boundary = view.log_start_offset;
    for (const SegmentSummary& segment : view.segments) {
      if (segment.base_offset <= view.high_watermark) {
        boundary = std::max(boundary, segment.base_offset);
      }
    }
    decision->target = boundary;
    decision->held_back = true;
  }
  if (decision->target <= view.log_start_offset) return std::nullopt;
  return decision;
}

}  // namespace kaas::cleaner
