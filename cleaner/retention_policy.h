// File: cleaner/retention_policy.h
//
// What retention would delete, as pure functions of a partition's segments
// and config (Kafka's UnifiedLog.deleteRetentionMsBreachedSegments /
// deleteRetentionSizeBreachedSegments, reference 1.8 and 7.2-7.4). Each
// returns the new log start offset retention wants: always the base offset
// of a segment, so the partition deletes whole segments and its log start
// stays contiguous. The active segment is never deleted.
//
// Every function takes the segments oldest first, the last one being the
// active segment, as RetentionHost::DescribeForRetention gives them
// (storage/engine/retention_host.h).
//
// Dating a segment (time retention): by the largest record timestamp in it
// (SegmentSummary::max_timestamp), never by file modification times, which
// copies, restores and log dir moves reset. A segment whose batches carry
// no timestamp (max_timestamp < 0) takes the largest timestamp of the
// nearest LATER segment that has one, the active segment included: its
// records were appended before that segment's, so they are no younger. If
// no later segment has a timestamp, the segment is never deleted by time
// (size retention still applies). So an undated segment is never deleted
// before the data appended after it would be.
//
// Thread-safety: pure functions.

#ifndef KAAS_CLEANER_RETENTION_POLICY_H_
#define KAAS_CLEANER_RETENTION_POLICY_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "storage/common/api_types.h"
#include "storage/common/partition_config.h"
#include "storage/engine/retention_host.h"

namespace kaas::cleaner {

// "time" / "size", for logs.
absl::string_view RetentionReasonName(RetentionReason reason);

// The log start offset that removes every closed segment whose largest
// timestamp (dated as the file comment says) is older than `now -
// retention`, walking oldest first and stopping at the first segment still
// in the window (later expired segments wait, so the log start stays
// contiguous). nullopt if the oldest segment is in the window. A zero
// retention expires every closed segment dated before `now`; a negative one
// keeps everything (Kafka: retention.ms < 0 is unlimited).
std::optional<int64_t> TimeRetentionTarget(
    absl::Span<const SegmentSummary> segments, absl::Time now,
    absl::Duration retention);

// Kafka's size retention: with `total` the size of all segments (the active
// one included), deletes the oldest closed segments while `total - segment
// size >= retention_bytes`, so what remains is at least retention_bytes (a
// segment whose deletion would go below it is kept, and so is everything
// after it). Returns the resulting log start offset; nullopt if nothing
// goes. The active segment is never deleted, whatever its size.
std::optional<int64_t> SizeRetentionTarget(
    absl::Span<const SegmentSummary> segments, uint64_t retention_bytes);

// Whether delete retention applies to a partition with `config` at all: its
// cleanup.policy includes "delete" and at least one of retention.ms /
// retention.bytes is set (nullopt keeps forever).
bool RetentionApplies(const PartitionConfig& config);

// The log start retention wants, and which knob asked for it.
struct RetentionDecision {
  int64_t target = 0;
  RetentionReason reason = RetentionReason::kTime;
  // The knobs wanted more, but the high watermark held the target back to
  // the last segment boundary at or below it (the rest waits until it is
  // durable and visible).
  bool held_back = false;

  friend bool operator==(const RetentionDecision& a,
                         const RetentionDecision& b) {
    return a.target == b.target && a.reason == b.reason &&
           a.held_back == b.held_back;
  }
};

// Combines both knobs of `view.config`: whichever removes more (the larger
// target) wins; on a tie the reason is kSize. The target is then held to the
// last segment boundary at or below `view.high_watermark` (Kafka never
// deletes past the high watermark). nullopt when retention does not apply
// (RetentionApplies), neither knob removes anything, or the target is not
// above `view.log_start_offset` (nothing new to delete).
std::optional<RetentionDecision> DecideRetention(const RetentionView& view,
                                                 absl::Time now);

}  // namespace kaas::cleaner

#endif  // KAAS_CLEANER_RETENTION_POLICY_H_
