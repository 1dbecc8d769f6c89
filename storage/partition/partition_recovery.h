// File: storage/partition/partition_recovery.h
//
// Recovery of a partition directory into a consistent log, as named phases.
// Partition::Open runs them in order (Run); each is also callable on its own,
// with its inputs and outputs in the open, so that tests can pin each rule
// and tools can ask what recovery would decide:
//
//   1. ListDirectory  what the directory holds; an engine file that is not a
//                     regular file (a symbolic link, a FIFO) refuses the open
//   2. LoadManifest   the manifest, validated (a corrupt one is set aside and
//                     rebuilt from the log; an unreadable or newer one
//                     refuses the open)
//  2b. CompleteCompaction  a compaction swap the manifest records is
//                     completed (the cleaned file renamed over the first
//                     segment it replaces if it is still there, the other
//                     replaced segments deleted); cleaned files no swap
//                     names are deleted (storage/partition/
//                     partition_compaction.cc)
//   3. PlanSegments   which segment files make up the log, and what happens
//                     to the others (a pure function of 1 and 2)
//   4. ApplyPlan      removes the strays and sets aside the misfits of 3, and
//                     checks the seams their removal leaves
//   5. ChooseStart    where verification starts: the recovery checkpoint, if
//                     it agrees with the log it names, else the first segment
//   6. LoadState      producer and transaction state: the newest usable
//                     snapshot at or before the start, plus the batch headers
//                     between it and the start
//   7. VerifyLog      every batch from the start on (CRC32C, framing,
//                     offsets); the first invalid byte ends its segment; the
//                     later segments go unless data past the damage is known
//                     durable (then it is damage, not a torn crash tail: they
//                     stay, and the hole is reported)
//   8. Finish         the active segment, the log start, the epoch history,
//                     and (leader) everything touched made durable
//
// Access. kLeader applies every decision (truncation, deletion, quarantine,
// temp-file removal, index rebuilds) and leaves the active segment open for
// writing; the caller holds the partition's lock. kReadOnly decides exactly
// the same and changes nothing, takes no lock, and leaves the segments open
// for reads only, so `kaaslog verify` predicts what opening does by running
// this very code, and `kaaslog read` inspects a read-only or full data dir.
//
// Every finding goes to OpenReport::problems (and the log), in the present
// tense ("truncates ...") for both kinds of access.
//
// The rules that keep acknowledged data (each pinned by a test in
// partition_recovery_test.cc):
//   * A segment file the engine never leaves behind is a stray: an empty
//     segment before the last one (rolls never leave one; a take-over over an
//     empty segment replaces it), and an empty last segment whose base is not
//     where the previous one ends (rolls happen at the log end). Strays are
//     deleted; they hold nothing.
//   * With a valid manifest, a segment whose epoch is above the manifest's
//     leader epoch yet is followed by later segments cannot be the log's (a
//     take-over's segment is the last one until its epoch is persisted): it
//     is set aside, not the segments after it. A segment whose epoch is below
//     an earlier one's, or below what the epoch history says for its base, is
//     a deposed leader's: set aside ("<name>.quarantined").
//   * The durable floor is the highest offset metadata proves durable (a
//     checkpoint that agrees with the log, a valid snapshot's offset, the
//     manifest's log end). Segments after invalid bytes or a hole are deleted
//     only past it; below it, the damage is reported and they stay.
//   * A checkpoint is used only if its position is a batch boundary of the
//     segment it names with the offset it claims there; otherwise every
//     segment is verified.
//
// Thread-safety: thread-compatible; one opening thread.

#ifndef KAAS_STORAGE_PARTITION_PARTITION_RECOVERY_H_
#define KAAS_STORAGE_PARTITION_PARTITION_RECOVERY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fs/file_system.h"
#include "idempotence/producer_state_map.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "storage/metadata/state_snapshot.pb.h"
#include "storage/partition/epoch_history.h"
#include "storage/segment/segment.h"
#include "txn/txn_index.h"

namespace kaas::partition {

// How a partition directory is opened (see the file comment).
enum class PartitionAccess { kLeader, kReadOnly };

// What Open() found and did (or, read-only, would do), for logs, stats and
// tools.
struct OpenReport {
  int segments = 0;
  uint64_t scanned_bytes = 0;
  uint64_t truncated_bytes = 0;
  int deleted_segments = 0;  // == deleted.size()
  struct Truncation {
    std::string file;  // name in the partition dir
    uint64_t position = 0;
    uint64_t bytes = 0;  // cut off from `position` to the end of the file
    std::string reason;
  };
  std::vector<Truncation> truncations;
  std::vector<std::string> deleted;      // segment files removed
  std::vector<std::string> quarantined;  // file names set aside
  std::vector<std::string> problems;     // human-readable findings
  // Where verification began: the segment file and the position in it
  // (the recovery checkpoint's, or 0 of the first segment). Bytes before it
  // are trusted, not verified.
  std::string verified_from_file;
  uint64_t verified_from_position = 0;
  int64_t snapshot_offset = -1;  // state snapshot used (-1: none)
  int64_t replayed_batches = 0;
  bool used_checkpoint = false;
  // The highest offset metadata proves durable (see the file comment).
  int64_t durable_floor = 0;
  // A follower's truncation the manifest recorded and this open carried out
  // (Partition::PrepareTruncation, or one a crash interrupted): the log now
  // ends there (a full truncation: restarts there).
  std::optional<int64_t> completed_truncation;
  bool read_only = false;
  absl::Duration duration;
};

// A ".log" file of the directory.
struct ListedSegment {
  segment::SegmentId id;
  uint64_t size = 0;
};

// Phase 1's result.
struct DirectoryListing {
  // Sorted by base offset, then epoch descending.
  std::vector<ListedSegment> logs;
  std::vector<int64_t> snapshot_offsets;  // descending
  std::vector<std::string> temp_files;    // of interrupted atomic writes
  // "<stem>.log.cleaned" files: compaction output (CompleteCompaction).
  std::vector<segment::SegmentId> cleaned;
  // Nothing but (perhaps) the lock file: a partition being created, which
  // opening leaves alone (its first take-over writes the metadata).
  bool brand_new = false;
};

// Phase 2's result.
struct ManifestState {
  metadata::PartitionManifest manifest;  // default unless `valid`
  bool valid = false;
  // Present but corrupt or invalid: set aside and rebuilt from the log.
  bool corrupt = false;
};

// Phase 3's result.
struct SegmentPlan {
  // The segments of the log, in offset order.
  std::vector<ListedSegment> log;
  struct Removal {
    ListedSegment segment;
    bool quarantine = false;  // set aside (it holds data); else deleted
    std::string reason;
  };
  std::vector<Removal> removals;
  // Bases of removed empty segments that lay between two kept ones: the
  // seam there is checked (phase 4), since such a file may have been a real
  // segment truncated to nothing.
  std::vector<int64_t> removed_between;
  EpochHistory epochs;  // the manifest's, or rebuilt from segment names
  bool epochs_from_manifest = false;
  int64_t max_epoch = 0;  // the highest epoch of the kept segments
};

// Phase 5's result.
struct RecoveryStartPoint {
  size_t segment_index = 0;  // into the log's segments
  segment::RecoveryStart start;
  bool from_checkpoint = false;
};

// What recovery leaves: the state a Partition adopts.
struct RecoveredLog {
  // Oldest first; the last is the active segment. Empty only read-only,
  // when the directory has no segment.
  std::vector<std::shared_ptr<segment::Segment>> segments;
  // Closed segments wholly below the log start whose files stay until a
  // state snapshot lies at the base of the file after them (they hold
  // producer state no snapshot has yet), oldest first. Never read.
  std::vector<std::shared_ptr<segment::Segment>> below_log_start;
  // The state at the base of the first segment not below the log start,
  // taken by the replay when below_log_start is not empty and no snapshot
  // lies there yet: once written, those segments go.
  std::optional<metadata::PartitionStateSnapshot> log_start_snapshot;
  // The offsets of the state snapshots left on disk, oldest first.
  std::vector<int64_t> snapshot_offsets;
  int64_t next_offset = 0;
  int64_t log_start_offset = 0;
  int64_t leader_epoch = 0;
  EpochHistory epochs;
  idempotence::ProducerStateMap producers;
  txn::TxnIndex txns;
  ManifestState manifest;
  bool brand_new = false;
};

class PartitionRecovery {
 public:
  // `report` must outlive this object. `options.read_only` must match
  // `access`.
  PartitionRecovery(fs::FileSystem& fs, std::string dir,
                    const segment::SegmentOptions& options,
                    PartitionAccess access, OpenReport* report);

  // Every phase in order. Errors (all kStorageError, naming the file):
  // an engine file that is not a regular file, an unreadable or newer-format
  // manifest or checkpoint, I/O failures.
  absl::StatusOr<RecoveredLog> Run(const metadata::ProducerFences& fences);

  // ---- The phases ---------------------------------------------------------

  absl::StatusOr<DirectoryListing> ListDirectory();
  // Leader only, before anything changes: another engine may still write
  // the log although this one holds the partition lock (a lock file removed
  // and created anew behind its back). Its active segment's write handle is
  // locked, so the last segments are opened for writing (which locks them)
  // up to the last one with data, then the directory is listed again (a
  // writer rolling meanwhile creates and locks its new segment before it
  // releases the old one, so a new name shows). kNotLeader if either finds
  // another writer.
  absl::Status CheckNoOtherWriter(const DirectoryListing& listing);
  absl::StatusOr<ManifestState> LoadManifest();
  // Completes the compaction swap `manifest` records, or deletes the
  // cleaned files of a pass that never committed one; `listing` then
  // describes the directory as the completed swap leaves it (read-only:
  // as it would). Leader: clears the swap from the manifest on disk and in
  // `manifest`.
  absl::Status CompleteCompaction(DirectoryListing& listing,
                                  ManifestState& manifest);
  static SegmentPlan PlanSegments(const DirectoryListing& listing,
                                  const ManifestState& manifest);
  // The plan's segments as objects (closed ones know where they end),
  // after the removals; the seams of removed strays checked. A stray found
  // by its seam (an empty last segment where the log does not end) leaves
  // `plan` too.
  absl::StatusOr<std::vector<std::shared_ptr<segment::Segment>>> ApplyPlan(
      SegmentPlan& plan);
  absl::StatusOr<RecoveryStartPoint> ChooseStart(
      const std::vector<std::shared_ptr<segment::Segment>>& segments);

 private:
  void Note(std::string problem);
  // Without a manifest: the epoch history from the epochs stamped in the
  // batches (a header walk of every segment).
  absl::StatusOr<EpochHistory> EpochsOfBatches(
      const std::vector<std::shared_ptr<segment::Segment>>& segments);
  bool leader() const { return access_ == PartitionAccess::kLeader; }
  // Deletes a segment's files (leader) and reports it.
  absl::Status Drop(segment::Segment& segment, const std::string& why);
  // The highest offset metadata proves durable.
  int64_t DurableFloor(const ManifestState& manifest,
                       const RecoveryStartPoint& start,
                       const DirectoryListing& listing);

  fs::FileSystem& fs_;
  const std::string dir_;
  const segment::SegmentOptions options_;
  const PartitionAccess access_;
  OpenReport& report_;
  bool dir_changed_ = false;
  // A follower's truncation recorded in the manifest: nothing at or past
  // this offset is kept (INT64_MIN for a full one: nothing at all).
  std::optional<int64_t> cut_;
};

// Where a follower's truncation recorded in `manifest` cuts the log (see
// PartitionRecovery::cut_), if it records one.
std::optional<int64_t> TruncationCut(const ManifestState& manifest);

}  // namespace kaas::partition

#endif  // KAAS_STORAGE_PARTITION_PARTITION_RECOVERY_H_
