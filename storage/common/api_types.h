// File: storage/common/api_types.h
//
// The value types of the storage engine's API (storage/engine/
// storage_engine.h), shared by the disk and in-memory engines and by the
// partition layer that implements most of them.
//
// Thread-safety: plain values. A StatusFuture may be waited on or given a
// callback from any thread (base/status_future.h).

#ifndef KAAS_STORAGE_COMMON_API_TYPES_H_
#define KAAS_STORAGE_COMMON_API_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "base/status_future.h"
#include "storage/common/record_regions.h"

namespace kaas {

// Kafka's leader epochs are int32 (partitionLeaderEpoch of a RecordBatch,
// the LeaderEpoch fields of the protocol): the engine accepts [0, this] at
// its API and in the files it reads.
inline constexpr int64_t kMaxLeaderEpoch = 2147483647;

// A topic partition. Topic names follow Kafka's rules (storage/common/
// topic_partition.h validates them).
struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  std::string ToString() const;

  friend bool operator==(const TopicPartition& a, const TopicPartition& b) {
    return a.partition == b.partition && a.topic == b.topic;
  }
  friend bool operator!=(const TopicPartition& a, const TopicPartition& b) {
    return !(a == b);
  }
  friend bool operator<(const TopicPartition& a, const TopicPartition& b) {
    return a.topic != b.topic ? a.topic < b.topic : a.partition < b.partition;
  }
  template <typename H>
  friend H AbslHashValue(H h, const TopicPartition& tp) {
    return H::combine(std::move(h), tp.topic, tp.partition);
  }
};

// Kafka acks.
enum class Acks : int {
  kNone = 0,    // no acknowledgement wanted
  kLeader = 1,  // written to the log (page cache)
  kAll = -1,    // durable (fdatasync'ed) before completing
};

// What a partition taken over here does. A leader assigns offsets and stamps
// its leader epoch into each batch (Append); a follower stores the batches
// its leader assigned, verbatim (AppendAsFollower), and may be truncated.
enum class Role { kLeader, kFollower };

enum class Isolation {
  kReadUncommitted,  // up to the high watermark
  kReadCommitted,    // up to the last stable offset, with aborted ranges
  // A follower's fetch from this leader: up to the log end (what the
  // replicas have decides the high watermark, so they must see past it).
  kReplica,
};

struct AppendResult {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  // An idempotent retry was recognised: nothing was written and the offsets
  // are the original batch's.
  bool duplicate = false;
  int64_t log_start_offset = 0;
  // For acks=all: completes OK once the batch is durable, or with the error
  // that prevents it (kStalled; kNotLeader when leadership is given up). For
  // acks 0/1: ready at once.
  StatusFuture durable = StatusFuture::Ready(absl::OkStatus());
};

// An aborted transaction a read_committed consumer must skip. Only
// (producer_id, first_offset) goes on the wire; last_offset is the ABORT
// marker's offset.
struct AbortedTransaction {
  int64_t producer_id = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;

  friend bool operator==(const AbortedTransaction& a,
                         const AbortedTransaction& b) {
    return a.producer_id == b.producer_id && a.first_offset == b.first_offset &&
           a.last_offset == b.last_offset;
  }
};

// What a read returns, with the records as `Records`: absl::Cord (Read: the
// bytes) or RecordRegions (ReadRegions: references for a zero-copy send).
template <typename Records>
struct BasicReadResult {
  // Whole batches, byte-exact as stored.
  Records records;
  int64_t batches = 0;
  // One past the last returned batch's last offset (the next fetch offset).
  int64_t next_offset = 0;
  int64_t high_watermark = 0;
  int64_t log_start_offset = 0;
  int64_t last_stable_offset = 0;
  int64_t log_end_offset = 0;
  // read_committed only: the aborted transactions overlapping the returned
  // range, in first-offset order.
  std::vector<AbortedTransaction> aborted_transactions;
};

// Read's answer: the bytes (no copy of what was read from the file).
using ReadResult = BasicReadResult<absl::Cord>;
// ReadRegions' answer: file ranges, for StorageEngine::ReadRegions.
using RegionReadResult = BasicReadResult<RecordRegions>;

// Kafka ListOffsets answer; {-1, -1} when no record matches.
struct OffsetAndTimestamp {
  int64_t offset = -1;
  int64_t timestamp = -1;
};

// One active producer of a partition (Kafka DescribeProducers, KIP-664).
struct ProducerDescription {
  int64_t producer_id = 0;
  int16_t producer_epoch = 0;
  // The last sequence number of its newest batch; -1 when none is cached (a
  // producer known only from a fence or a transaction marker).
  int32_t last_sequence = -1;
  // maxTimestamp of its last batch (or the time of its last fence).
  int64_t last_timestamp = -1;
  // Not tracked by this engine: always -1 (Kafka's "unknown").
  int32_t coordinator_epoch = -1;
  // The first offset of its open transaction; -1 when none is open.
  int64_t current_txn_start_offset = -1;

  friend bool operator==(const ProducerDescription& a,
                         const ProducerDescription& b) {
    return a.producer_id == b.producer_id &&
           a.producer_epoch == b.producer_epoch &&
           a.last_sequence == b.last_sequence &&
           a.last_timestamp == b.last_timestamp &&
           a.coordinator_epoch == b.coordinator_epoch &&
           a.current_txn_start_offset == b.current_txn_start_offset;
  }
};

// A replica of a partition in this engine's log dirs, taken over here or not
// (Kafka DescribeLogDirs reports every replica on a dir).
struct ReplicaDescription {
  std::string log_dir;      // the log dir's name
  uint64_t size_bytes = 0;  // its segment files (.log)
  int64_t log_start_offset = 0;
  // Taken over here: the log end. Otherwise the durable end its metadata
  // recorded last (exact after a Relinquish; after a crash, what the last
  // recovery checkpoint or manifest proved durable, which the next open's
  // recovery may extend).
  int64_t log_end_offset = 0;
  bool taken_over = false;
};

// Kafka OffsetForLeaderEpoch answer; {-1, -1} when unknown.
struct EpochEndOffset {
  int64_t leader_epoch = -1;
  int64_t end_offset = -1;
};

// The result of advancing the log start offset.
struct LogStartAdvance {
  int64_t log_start_offset = 0;
  int64_t segments_deleted = 0;
  uint64_t bytes_deleted = 0;
};

// What compaction would work on in one partition (cleanup.policy=compact),
// for the log cleaner to choose by (Kafka's LogCleanerManager). The
// cleanable part of the log is its closed segments up to the first one that
// holds an offset at or past the last stable offset or the high watermark,
// or a record newer than min.compaction.lag.ms, or that is not yet durable;
// of it, the part from the cleaner offset on is dirty.
struct CompactionView {
  // cleanup.policy contains "compact"; nothing below is filled otherwise.
  bool compact = false;
  // Where the next pass starts reading keys (the log start if the stored
  // one lies outside the log).
  int64_t cleaner_offset = 0;
  // Where the cleanable part ends (exclusive).
  int64_t cleanable_end = 0;
  uint64_t clean_bytes = 0;
  uint64_t dirty_bytes = 0;
  // The first dirty batch's maxTimestamp (-1: none or unknown), for
  // max.compaction.lag.ms.
  int64_t first_dirty_timestamp = -1;
  // A delete horizon the last pass stamped has passed: a pass would remove
  // tombstones or markers even though nothing is dirty.
  bool delete_horizon_due = false;
  // Changes whenever a config value compaction depends on changes (the
  // cleaner retries a partition it gave up on after a config change).
  std::string config_fingerprint;
  // The partition's config values that decide.
  double min_cleanable_dirty_ratio = 0.5;
  int64_t max_compaction_lag_ms = 0;

  double dirty_ratio() const {
    const uint64_t total = clean_bytes + dirty_bytes;
    return total == 0 ? 0.0 : static_cast<double>(dirty_bytes) / total;
  }
};

class OffsetMap;  // storage/common/offset_map.h

// How to run one compaction pass (Partition::Compact, the engine's
// CompactionHost).
struct CompactionRequest {
  // "Now" for min.compaction.lag.ms and the delete horizons.
  int64_t now_ms = 0;
  // Required; cleared first. One per cleaner thread (its memory is the
  // thread's share of log.cleaner.dedupe.buffer.size). Not owned.
  OffsetMap* map = nullptr;
  // Called with the bytes about to be read or written (the cleaner's I/O
  // throttle; it may block). Optional.
  std::function<void(uint64_t bytes)> throttle;
  // Polled between groups: true ends the pass early. Optional.
  std::function<bool()> stop;
};

// What one compaction pass did.
// What the rewriting walk of a compaction pass counted (the partition
// layer's BatchCleaner fills it).
struct CompactionCounts {
  int64_t batches_read = 0;
  int64_t batches_removed = 0;
  int64_t batches_rewritten = 0;
  int64_t records_read = 0;
  int64_t records_removed = 0;
  int64_t tombstones_removed = 0;
  int64_t markers_removed = 0;
  int64_t null_key_records_removed = 0;
};

struct CompactionReport : CompactionCounts {
  // The keys read covered [dirty_start, map_end); the cleaner offset is now
  // map_end. A pass that finds nothing dirty leaves both equal.
  int64_t dirty_start = 0;
  int64_t map_end = 0;
  // Keys the offset map held.
  int64_t keys = 0;
  // Segments rewritten (groups swapped in) and how many they replaced.
  int64_t segments_replaced = 0;
  int64_t segments_written = 0;
  uint64_t bytes_before = 0;
  uint64_t bytes_after = 0;
  // Bytes read from the log (both walks).
  uint64_t bytes_read = 0;
  // False if the pass stopped early (stop request, a group given up because
  // retention or DeleteRecords removed its segments meanwhile).
  bool complete = true;
};

// One segment, as the cleaner and stats see it.
struct SegmentSummary {
  int64_t base_offset = 0;
  // The leader epoch that created it (the epoch in its file name).
  int64_t epoch = 0;
  int64_t next_offset = 0;
  uint64_t size_bytes = 0;
  bool active = false;
  // The largest record timestamp in the segment (-1: no batch carries one).
  // Filled only where documented (it may load a closed segment's time
  // index).
  int64_t max_timestamp = -1;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_API_TYPES_H_
