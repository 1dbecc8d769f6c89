// File: storage/segment/segment.h
//
// One segment of a partition's log: the ".log" file of verbatim v2
// RecordBatches and its ".index" / ".timeindex" sparse indexes
// (storage/segment/segment_name.h names them). This class is the ONLY code
// that opens segment files.
//
// A segment is either
//   * active: the partition's last segment, holding a write handle; the
//     partition (its single writer, under the partition lock) appends to it;
//     its indexes live in memory and are persisted by PersistIndexes() (at
//     recovery checkpoints, at roll and at close), never on the append path;
//   * closed: sealed by a roll, or found on disk by a listing. No handle is
//     held; reads open one lazily through the engine-wide ReadHandleCache,
//     together with the indexes loaded from disk (validated, and rebuilt
//     from the log when missing or corrupt).
//
// Offsets: base_offset() is the offset of the first batch; next_offset() is
// one past the last batch (== base_offset() while empty). size() counts the
// bytes of complete, valid batches; bytes past it are never served.
//
// Thread-safety:
//   * Writer methods (OpenForWrite, Recover, Append, Seal, SetNextOffset) are
//     called by one thread at a time (the partition holds its lock).
//     ReleaseWriteHandle is also called by the sync cycle after a sealed
//     segment's fdatasync, without the partition lock (the handle it drops
//     is guarded by the segment's mu_; the segment is sealed by then, so no
//     writer method runs).
//   * DataSync and PersistIndexes may run on an I/O thread concurrently with
//     the writer (group commit); PersistIndexes calls are serialised
//     internally.
//   * Readers (Read, FindByTimestamp, GetTimeInfo) are thread-safe and do not
//     take the partition lock.
//   * DeleteFiles/Quarantine/DropReadState may run concurrently with readers
//     (a reader holding a SegmentReadState keeps its descriptor open until it
//     finishes). StopPersisting may run concurrently with anything.

#ifndef KAAS_STORAGE_SEGMENT_SEGMENT_H_
#define KAAS_STORAGE_SEGMENT_SEGMENT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "fs/file_system.h"
#include "storage/segment/batch_reader.h"
#include "storage/segment/direct_log_file.h"
#include "storage/segment/log_scanner.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/read_handle_cache.h"
#include "storage/segment/segment_name.h"
#include "storage/segment/time_index.h"

namespace kaas::segment {

struct SegmentOptions {
  fs::FileSystem* fs = nullptr;          // required
  ReadHandleCache* cache = nullptr;      // required
  uint64_t index_interval_bytes = 4096;  // sparse index density
  // A read-only segment never changes a file: recovery verifies through a
  // read handle and only records where the valid log ends (size() stops
  // there; nothing is truncated), indexes are rebuilt in memory only, and
  // OpenForWrite and Append are refused (tools inspecting a data dir).
  bool read_only = false;
  // The active segment's log is written with direct I/O through a
  // DirectLogFile (storage/segment/direct_log_file.h) instead of through the
  // page cache, where the filesystem grants it (fs::WritableFile::
  // TryDirectIo; elsewhere the buffered handle stays). Same files, same
  // durability for synced bytes; a file may end with up to one block of
  // zeros until its segment is sealed (recovery truncates them as a torn
  // tail), and bytes appended but not yet synced or flushed live in memory,
  // so a process crash loses them as a power loss does.
  bool direct_io = false;
};

// The offsets and timestamp of a batch being appended.
struct BatchSummary {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t max_timestamp = -1;
};

// Largest batch maxTimestamp in the segment and the base offset of the
// (first) batch carrying it; both -1 when no batch has a timestamp >= 0.
struct SegmentTimeInfo {
  int64_t max_timestamp = -1;
  int64_t offset_of_max_timestamp = -1;
};

// Where recovery starts verifying: a batch boundary, the offset expected
// there, and the time info of the bytes before it.
struct RecoveryStart {
  uint64_t position = 0;
  int64_t expected_offset = 0;
  SegmentTimeInfo time_before;
  // Batches whose base offset is >= this are not part of the segment (the
  // next segment starts there: bytes a deposed leader appended after the
  // take-over); recovery truncates them away.
  int64_t end_offset = INT64_MAX;
};

struct SegmentRecovery {
  ScanResult scan;
  uint64_t file_size = 0;        // before truncation
  uint64_t truncated_bytes = 0;  // file_size - scan.valid_end
  std::string index_problem;     // what was wrong with the .index file
  std::string time_index_problem;
};

// A batch found by timestamp.
// Batches of a segment as a range of its open file (Segment::Locate).
struct LocatedBatches {
  BatchReadResult walk;
  std::shared_ptr<const fs::ReadableFile> file;
};

struct TimestampHit {
  int64_t offset = 0;     // base offset of the first batch with
                          // maxTimestamp >= the wanted timestamp
  int64_t timestamp = 0;  // that batch's maxTimestamp
};

class Segment {
 public:
  // Creates the .log file of a new, empty segment (exclusive create; a
  // leftover file of the same name, possible only from an earlier failed
  // attempt, is truncated). The directory is not synced: the caller syncs it
  // before the segment's data counts as durable. The segment is active and
  // holds its write handle.
  static absl::StatusOr<std::shared_ptr<Segment>> Create(
      const SegmentOptions& options, std::string dir, SegmentId id);

  // A segment found on disk with `size` bytes. Opens nothing.
  static std::shared_ptr<Segment> Listed(const SegmentOptions& options,
                                         std::string dir, SegmentId id,
                                         uint64_t size);

  ~Segment();

  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  const SegmentId& id() const { return id_; }
  int64_t base_offset() const { return id_.base_offset; }
  uint32_t epoch() const { return id_.epoch; }
  const std::string& dir() const { return dir_; }
  std::string path(SegmentFileKind kind) const;

  uint64_t size() const { return size_.load(std::memory_order_acquire); }
  // One past the last batch; -1 for a listed segment whose end is not known
  // yet (the partition sets it from the next segment's base offset).
  int64_t next_offset() const {
    return next_offset_.load(std::memory_order_acquire);
  }
  bool has_write_handle() const;

  // ---- Writer side -------------------------------------------------------

  // Opens the write handle of a listed segment (it becomes active).
  // kFailedPrecondition for a read-only segment.
  absl::Status OpenForWrite();

  // Opens what Recover verifies through: the write handle, or a read handle
  // for a read-only segment.
  absl::Status OpenForRecovery();

  // Verifies the log from `start` to the end of the file (or the first
  // invalid byte), rebuilding the in-memory indexes for the verified part
  // (entries before start.position come from the index files), truncates the
  // file to the last valid batch (a read-only segment only stops size()
  // there), and sets size() and next_offset(). `visitor` sees every verified
  // batch. REQUIRES: OpenForRecovery().
  absl::StatusOr<SegmentRecovery> Recover(const RecoveryStart& start,
                                          BatchVisitor visitor);

  // Whether a batch with base offset `offset` begins at `position` (or the
  // batches before `position` end at `offset - 1` and `position` is where
  // they end): the header walk, without CRCs, from the index entry before
  // `position` (from the start if the index file is missing or damaged).
  // Reads through a handle of its own; for a listed segment before recovery
  // (a recovery checkpoint is trusted only if it passes this).
  absl::StatusOr<bool> IsBatchBoundary(uint64_t position, int64_t offset);

  // The base offset the first batch of the file claims (its first 8 bytes),
  // or nullopt for a file shorter than a batch's length prefix. Reads
  // through a handle of its own; for a listed segment before recovery: a
  // file whose first batch is not at the base offset its name says is no
  // segment of this log (a copy or a rename).
  absl::StatusOr<std::optional<int64_t>> FirstBatchOffset();

  // Rebuilds both index files of this closed segment from its log, whatever
  // they hold (reads rebuild only indexes they find invalid; a repair tool
  // also replaces ones that are well-formed but disagree with the log), and
  // writes them back. Damage the walk finds ends the readable part, as for
  // a rebuild at load. Errors: opening the log, persisting the files.
  absl::Status RebuildIndexFiles();

  // Where the batches of this closed segment end, without verifying CRCs:
  // the header walk from its last index entry (from the start if its index
  // is missing or damaged) to the end of the file. Recovery uses it where
  // the listing alone cannot tell whether two segments meet.
  absl::StatusOr<ScanResult> FindEnd();

  // Writes the concatenation of `parts` (one batch of `bytes` bytes,
  // described by `batch`) at size(), indexes it and publishes the new size.
  // On error nothing is published and the file is truncated back to size()
  // (best effort; Seal() retries), so that a partial write never stays
  // behind the last batch of a segment that rolls next. REQUIRES: a write
  // handle; batch offsets continue the log.
  absl::Status Append(absl::Span<const absl::string_view> parts, size_t bytes,
                      const BatchSummary& batch);

  // Re-verifies (framing, CRC32C, offsets from `offset`) the bytes from
  // `position` to size() and writes them back in place, so that a following
  // DataSync makes them durable even if an earlier failed fdatasync left the
  // kernel's copy marked clean. kDataLoss if the bytes no longer verify.
  absl::Status RewriteTail(uint64_t position, int64_t offset);

  // fdatasync of the .log file. Safe concurrently with Append. OK without
  // syncing anything once the write handle was released: the partition
  // releases it only after the bytes were made durable (by a sync cycle or a
  // final sync), when the files are deleted or quarantined, or at close
  // (after which nothing is published as durable). So nothing is left to
  // sync, and a sync cycle that sampled the segment before the release must
  // not fail (that would stall the partition for nothing).
  absl::Status DataSync();

  // Writes the in-memory indexes to the .index and .timeindex files
  // (incrementally when possible) and fdatasyncs them, up to the entries of
  // batches below `up_to_position` / `up_to_offset`: an index must never
  // point past the durable log, so pass what the log was synced to. Does
  // nothing once the segment's files were deleted or quarantined.
  absl::Status PersistIndexes(
      uint64_t up_to_position = std::numeric_limits<uint64_t>::max(),
      int64_t up_to_offset = std::numeric_limits<int64_t>::max());

  // Ends appends: cuts off what a failed append left past size() (if
  // Append could not), and adds the final time index entry so that the
  // persisted time index holds the segment's largest timestamp. The write
  // handle stays open (for the pending fsync) until ReleaseWriteHandle().
  void Seal();

  // No more appends come (the partition is closing): a direct-I/O log's
  // next sync also cuts the alignment padding behind the last batch. Seal()
  // implies it.
  void FinishAppends();

  // Closes the write handle (after a final sync, or on abandon). Reads keep
  // working through the cache.
  void ReleaseWriteHandle();

  // For listed (closed) segments: the end offset, known from the next
  // segment's base.
  void SetNextOffset(int64_t next_offset);

  // ---- Readers -----------------------------------------------------------

  // Whole batches from the batch containing `offset`, never at or past
  // `end_offset`, up to `max_bytes` (the first batch always whole). An index
  // that points at the wrong place is rebuilt from the log and the read
  // retried. Damage the rebuild finds (batches ending before the segment)
  // is never skipped: a read stops before it (reached_end false), and one
  // at or past it fails with kDataLoss naming the range.
  absl::StatusOr<BatchReadResult> Read(int64_t offset, int64_t end_offset,
                                       size_t max_bytes);

  // What Read would return, located instead of read: the walk reads batch
  // headers only, and the batches are bytes [walk.first_position,
  // walk.next_position) of `file` (walk.buffer is empty). Holding `file`
  // keeps its descriptor open, also after DropReadState or DeleteFiles (the
  // space of a deleted segment is freed when the last holder lets go), so a
  // transfer that raced them finishes with it.
  absl::StatusOr<LocatedBatches> Locate(int64_t offset, int64_t end_offset,
                                        size_t max_bytes);

  // The first batch with maxTimestamp >= `timestamp`, last offset >=
  // `min_offset` and base offset below `end_offset`, if any.
  absl::StatusOr<std::optional<TimestampHit>> FindByTimestamp(
      int64_t timestamp, int64_t min_offset, int64_t end_offset);

  // The segment's largest timestamp (loads the time index of a closed
  // segment once).
  absl::StatusOr<SegmentTimeInfo> GetTimeInfo();

  // The maxTimestamp of the first batch (-1 if empty or none).
  absl::StatusOr<int64_t> FirstBatchMaxTimestamp();

  // Walks the batch headers from the batch containing `from_offset` (using
  // the index) to the end, without CRC verification (the bytes were verified
  // when written or recovered). For rebuilding producer state.
  absl::StatusOr<ScanResult> WalkFrom(int64_t from_offset,
                                      BatchVisitor visitor);

  // ---- Lifecycle ---------------------------------------------------------

  // Drops cached read handles and the write handle, then unlinks the three
  // files (missing index files are fine). The caller syncs the directory.
  absl::Status DeleteFiles();

  // Renames the files aside with the ".quarantined" suffix so they are never
  // served or listed again.
  absl::Status Quarantine();

  // Closes the segment for reads: drops its cached read state (descriptors),
  // and no later read opens a descriptor or caches one (they fail with
  // kNotFound, as a read of a deleted file would). A read that loaded its state
  // before this call may finish with it; its descriptor closes when that read
  // lets go. Called when the partition gives up leadership and before files are
  // deleted or set aside, so a deposed leader holds no descriptor of the shared
  // volume.
  void DropReadState();

  // Makes every later PersistIndexes (and the index files written by an
  // index rebuild) a no-op; returns once a persist in flight has finished.
  // The partition calls it when it closes: the directory may already belong
  // to a new incarnation of the partition, so nothing may be written there.
  void StopPersisting();

 private:
  Segment(const SegmentOptions& options, std::string dir, SegmentId id,
          uint64_t size, int64_t next_offset);

  // The write handle (shared, so an fsync in flight keeps it open), or
  // kFailedPrecondition naming `operation`.
  absl::StatusOr<std::shared_ptr<fs::WritableFile>> WriteHandle(
      absl::string_view operation) const;
  // Read's and Locate's walk: ReadWithRetry, then the damage check.
  absl::StatusOr<BatchReadResult> WalkForRead(
      std::shared_ptr<const SegmentReadState> state, int64_t offset,
      int64_t end_offset, size_t max_bytes, bool locate_only);
  // The walk, retried once from the segment start through a rebuilt index
  // when the index points at the wrong place.
  absl::StatusOr<BatchReadResult> ReadWithRetry(
      std::shared_ptr<const SegmentReadState> state, int64_t offset,
      int64_t end_offset, size_t max_bytes, bool locate_only);
  // kDataLoss: `offset` lies in the part past damage found by an index
  // rebuild.
  absl::Status UnreadableError(int64_t offset) const;
  // What readers use: the active state, or the cached / freshly loaded
  // state of a closed segment.
  absl::StatusOr<std::shared_ptr<const SegmentReadState>> ReadState();
  absl::StatusOr<std::shared_ptr<const SegmentReadState>> LoadClosedState();
  // kNotFound once DropReadState was called.
  absl::Status CheckReadsOpen() const;
  // Caches `state` unless DropReadState was called meanwhile (then the
  // caller's read finishes with it and its descriptor closes after).
  void CacheReadState(std::shared_ptr<const SegmentReadState> state);
  // Rebuilds both indexes (and the time info) by walking the log headers,
  // and writes them back (a failure to is logged, or returned when
  // `must_persist`).
  absl::StatusOr<std::shared_ptr<const SegmentReadState>> RebuildIndexes(
      std::shared_ptr<const fs::ReadableFile> file, bool must_persist = false);
  // With options.direct_io, where the filesystem grants direct I/O: replaces
  // the write handle with a DirectLogFile over it (and a read handle of its
  // own). REQUIRES: no I/O through the write handle in flight.
  absl::Status UseDirectLog();
  // Truncates the .log file to size() if a failed append left bytes past it.
  void TruncateTornTail(fs::WritableFile& file)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer_);
  // Adds index entries for a batch at `position` (writer side).
  void IndexBatch(const BatchSummary& batch, uint64_t position)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(writer_);
  void NoteTimestamp(int64_t max_timestamp, int64_t base_offset);
  absl::Status PersistIndexFile(SegmentFileKind kind, const std::string& bytes,
                                size_t persisted_entries, size_t entry_size,
                                size_t total_entries);

  // Constant after construction.
  fs::FileSystem* const fs_;
  ReadHandleCache* const cache_;
  const uint64_t index_interval_bytes_;
  const std::string dir_;
  const SegmentId id_;
  const uint64_t cache_key_;

  std::atomic<uint64_t> size_;
  std::atomic<int64_t> next_offset_;
  std::atomic<int64_t> max_timestamp_{-1};
  std::atomic<int64_t> offset_of_max_timestamp_{-1};
  std::atomic<bool> time_info_known_{false};
  // Set when an index rebuild found damage (a closed segment's batches end
  // before the segment does): the first offset that cannot be read.
  std::atomic<int64_t> unreadable_from_{-1};

  const bool read_only_;
  const bool direct_io_;

  // Guards the handle and active-state pointers (not the I/O through them).
  mutable absl::Mutex mu_;
  std::shared_ptr<fs::WritableFile> write_file_ ABSL_GUARDED_BY(mu_);
  // write_file_ as a DirectLogFile, when it is one.
  DirectLogFile* direct_log_ ABSL_GUARDED_BY(mu_) = nullptr;
  // A read-only segment's handle for recovery (and its active-state reads).
  std::shared_ptr<const fs::ReadableFile> recovery_file_ ABSL_GUARDED_BY(mu_);
  // Set while the segment is active (it has in-memory indexes).
  std::shared_ptr<const SegmentReadState> active_state_ ABSL_GUARDED_BY(mu_);
  // Set by DropReadState: reads neither open nor cache descriptors any more.
  bool reads_closed_ ABSL_GUARDED_BY(mu_) = false;
  std::string unreadable_detail_ ABSL_GUARDED_BY(mu_);

  // Writer-side state. `writer_` is a documentation-only capability: the
  // owner serialises writer calls; the mutex is taken only to satisfy
  // annotations cheaply (uncontended).
  mutable absl::Mutex writer_;
  std::shared_ptr<OffsetIndex> index_ ABSL_GUARDED_BY(writer_);
  std::shared_ptr<TimeIndex> time_index_ ABSL_GUARDED_BY(writer_);
  uint64_t last_indexed_position_ ABSL_GUARDED_BY(writer_) = 0;
  bool sealed_ ABSL_GUARDED_BY(writer_) = false;
  // A failed append left bytes past size() that could not be truncated yet.
  bool torn_tail_ ABSL_GUARDED_BY(writer_) = false;

  // Serialises PersistIndexes (which may race with a roll's persist).
  absl::Mutex persist_mu_;
  size_t persisted_index_entries_ ABSL_GUARDED_BY(persist_mu_) = 0;
  size_t persisted_time_entries_ ABSL_GUARDED_BY(persist_mu_) = 0;
  // Set by DeleteFiles/Quarantine (the files are gone) and StopPersisting
  // (the partition closed): a sync cycle or a reader finishing late must not
  // write index files any more.
  bool persisting_stopped_ ABSL_GUARDED_BY(persist_mu_) = false;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_SEGMENT_H_
