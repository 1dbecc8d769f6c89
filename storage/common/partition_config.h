// File: storage/common/partition_config.h
//
// The per-partition configuration: the engine default overlaid with the
// topic's `.config.json` overrides (storage/engine/topic_config.h). A running
// partition picks up a new config at its next append (SetConfig); knobs read
// only at open are marked so.
//
// Thread-safety: a plain value.

#ifndef KAAS_STORAGE_COMMON_PARTITION_CONFIG_H_
#define KAAS_STORAGE_COMMON_PARTITION_CONFIG_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace kaas {

// Segment positions are 32-bit in the index files, as in Kafka (whose
// segment.bytes is an int): a segment never exceeds this.
inline constexpr uint64_t kMaxSegmentBytes = (uint64_t{1} << 31) - 1;

struct PartitionConfig {
  // Kafka segment.bytes: roll before an append would grow the active segment
  // past this. A batch larger than this is rejected (RECORD_LIST_TOO_LARGE).
  uint64_t segment_bytes = uint64_t{1} << 30;

  // Kafka segment.ms: roll a non-empty active segment this long after its
  // first append (nullopt: never roll by age). Also what makes a quiet topic
  // roll so that retention can apply.
  std::optional<absl::Duration> segment_ms = absl::Hours(24 * 7);

  // Kafka index.interval.bytes: sparse index density. Read at open.
  uint64_t index_interval_bytes = 4096;

  // Kafka flush.messages: a background fdatasync is started after this many
  // records; <= 0 means only at roll and close. With exactly 1, reads stop
  // at the durable end, so consumers never see a record a crash could take
  // back; otherwise reads may run to the log end. acks=all appends are always
  // made durable before they complete, whatever this says.
  int64_t flush_interval_messages = 1;

  // Fsync watchdog: an fdatasync taking longer than this (from request to
  // completion) stalls the partition (zero disables the watchdog).
  absl::Duration fsync_max_latency = absl::Seconds(30);

  // Group-commit linger: when the last sync cycle completed acks=all appends
  // of several producers taking turns, the next cycle waits, before it
  // samples what to sync, until as many appends wait again, but at most
  // this long (zero: never waits). Without it, producers acknowledged by one
  // cycle miss the next, which starts at once, and every cycle carries about
  // half of them; with it one fdatasync carries them all (more throughput for a
  // little latency). A single producer never waits.
  absl::Duration group_commit_linger_max = absl::Microseconds(500);

  // A recovery checkpoint (and state snapshot) is written after each fsync
  // that makes this much more of the active segment durable.
  uint64_t checkpoint_interval_bytes = uint64_t{64} << 20;

  // Kafka producer.id.expiration.ms.
  int64_t producer_id_expiration_ms = 86400000;

  // Kafka max.message.bytes: larger batches are rejected (MESSAGE_TOO_LARGE);
  // 0 means no limit beyond segment_bytes.
  uint64_t max_message_bytes = 0;

  // Retention (used by //cleaner). Kafka retention.ms / retention.bytes:
  // nullopt keeps forever (Kafka -1).
  std::optional<absl::Duration> retention_ms = absl::Hours(24 * 7);
  std::optional<uint64_t> retention_bytes;
  // Kafka cleanup.policy contains "delete" (compact-only topics are not
  // subject to delete retention).
  bool cleanup_delete = true;
  // Kafka cleanup.policy contains "compact": the log cleaner keeps at least
  // the latest record of every key (storage/partition/partition.h,
  // Compact), and appends of records with a null key are refused
  // (kInvalidRecord), control batches aside. Deciding that decodes the
  // records of every batch on append (outside the partition lock), as
  // validate_records does.
  bool cleanup_compact = false;
  // Kafka min.compaction.lag.ms: a segment whose newest record is younger
  // than this is not compacted yet.
  int64_t min_compaction_lag_ms = 0;
  // Kafka max.compaction.lag.ms: a partition whose oldest uncompacted record
  // is older than this is compacted whatever its dirty ratio.
  int64_t max_compaction_lag_ms = std::numeric_limits<int64_t>::max();
  // Kafka min.cleanable.dirty.ratio: compact when the uncompacted bytes are
  // at least this share of the compactable ones.
  double min_cleanable_dirty_ratio = 0.5;
  // Kafka delete.retention.ms: how long compaction keeps a tombstone (and a
  // marker of a fully removed transaction) after it first kept it.
  int64_t delete_retention_ms = 86400000;
  // Decode and check every batch's records before accepting it, as Kafka's
  // broker does (storage/batch/records.h ValidateRecords): records that are
  // garbage behind a valid CRC, offsets out of sequence, codec bits on
  // uncompressed bytes are refused (kInvalidRecord, kCorruptMessage). Off by
  // default: the append path then keeps batches opaque (a broker that
  // validates itself pays nothing twice). Done outside the partition lock.
  bool validate_records = false;

  // The high watermark is the broker's (a replicated deployment: what the
  // in-sync replicas have, not what this disk made durable). The broker sets
  // it (StorageEngine::SetHighWatermark; after an open it starts at the log
  // start, until the broker says more); reads for consumers stop there, the
  // last stable offset never passes it, and DeleteRecords and retention stay
  // below it. Off: the engine's own (the durable end with flush.messages 1,
  // else the log end). A deployment-wide choice (the engine's default
  // config), so no topic config key sets it.
  bool broker_managed_high_watermark = false;

  // Checks ranges; the message names the field and the value.
  absl::Status Validate() const;
};

bool operator==(const PartitionConfig& a, const PartitionConfig& b);
inline bool operator!=(const PartitionConfig& a, const PartitionConfig& b) {
  return !(a == b);
}

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_PARTITION_CONFIG_H_
