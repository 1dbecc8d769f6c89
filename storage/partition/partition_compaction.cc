// Compaction (cleanup.policy=compact): planning, the two walks and the swap
// protocol (partition.h, "Compaction", has the steps).

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "glog/logging.h"
#include "storage/batch/batch_rewrite.h"
#include "storage/batch/record_batch.h"
#include "storage/metadata/partition_files.h"
#include "storage/partition/batch_cleaner.h"
#include "storage/partition/partition.h"
#include "storage/segment/cleaned_segment.h"

namespace kaas::partition {

struct Partition::CompactionPlan {
  PartitionConfig config;
  // The cleanable segments, oldest first (closed, durable, below the last
  // stable offset and the high watermark, old enough).
  SegmentList segments;
  int64_t cleaner_offset = 0;
  int64_t next_delete_horizon_ms = 0;
  std::vector<txn::AbortedTxn> aborted;
  absl::flat_hash_set<int64_t> producer_batches;
};

namespace {

// Reads per call of Segment::Read.
constexpr size_t kReadChunkBytes = size_t{4} << 20;

// Calls `visit` for each batch of `segment` from `from` (a batch boundary) to
// its end, each CRC-checked; `visit` returning false ends the walk. Adds the
// bytes read to `*bytes_read`.
absl::Status ForEachBatch(
    segment::Segment& segment, int64_t from,
    const std::function<void(uint64_t)>& throttle,
    const std::atomic<bool>& stop, uint64_t* bytes_read,
    absl::FunctionRef<absl::StatusOr<bool>(const RecordBatchView&)> visit) {
  const int64_t end = segment.next_offset();
  int64_t offset = from;
  while (offset < end) {
    if (stop.load()) return absl::CancelledError("the partition is closing");
    if (throttle) throttle(kReadChunkBytes);
    KAAS_ASSIGN_OR_RETURN(segment::BatchReadResult read,
                          segment.Read(offset, end, kReadChunkBytes));
    absl::string_view bytes = read.batches_view();
    *bytes_read += bytes.size();
    if (bytes.empty()) {
      return StorageError(
          StorageErrorCode::kStorageError,
          absl::StrFormat("%s: compaction read nothing at offset %d (the "
                          "segment ends at %d)",
                          segment.path(segment::SegmentFileKind::kLog), offset,
                          end));
    }
    while (!bytes.empty()) {
      if (stop.load()) return absl::CancelledError("the partition is closing");
      KAAS_ASSIGN_OR_RETURN(size_t size, PeekBatchSize(bytes));
      KAAS_ASSIGN_OR_RETURN(RecordBatchView batch, RecordBatchView::ParseHeader(
                                                       bytes.substr(0, size)));
      if (!batch.CrcMatches()) {
        return StorageError(
            StorageErrorCode::kCorruptMessage,
            absl::StrFormat("%s: the batch at offset %d fails its CRC32C: "
                            "compaction stops before rewriting it",
                            segment.path(segment::SegmentFileKind::kLog),
                            batch.base_offset()));
      }
      KAAS_ASSIGN_OR_RETURN(bool go_on, visit(batch));
      if (!go_on) return absl::OkStatus();
      bytes.remove_prefix(size);
    }
    offset = read.next_offset;
  }
  return absl::OkStatus();
}

// The empty batches standing for a run of removed batches: started by the
// first removed batch, written up to the next kept one (or the group's
// end), one per leader epoch of the run so that the epochs the batches
// carry still say which epoch wrote which offsets.
class RemovedRun {
 public:
  // A removed batch.
  absl::Status Add(const RecordBatchView& batch,
                   segment::CleanedSegmentWriter& out) {
    if (start_ >= 0 && epoch_ != batch.partition_leader_epoch()) {
      KAAS_RETURN_IF_ERROR(Flush(batch.base_offset(), out));
    }
    if (start_ < 0) {
      start_ = batch.base_offset();
      epoch_ = batch.partition_leader_epoch();
    }
    return absl::OkStatus();
  }

  // Writes the run up to `end` (exclusive), if there is one.
  absl::Status Flush(int64_t end, segment::CleanedSegmentWriter& out) {
    while (start_ >= 0 && start_ < end) {
      const int64_t span = std::min(end - start_, kMaxEmptyBatchSpan);
      KAAS_RETURN_IF_ERROR(out.Append(EmptyBatch(start_, span, epoch_)));
      start_ += span;
    }
    start_ = -1;
    return absl::OkStatus();
  }

 private:
  int64_t start_ = -1;
  int32_t epoch_ = -1;
};

}  // namespace

absl::StatusOr<Partition::CompactionPlan> Partition::PlanCompaction(
    int64_t now_ms, PlanFor purpose) {
  CompactionPlan plan;
  {
    absl::MutexLock metadata_lock(&metadata_mu_);
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed || access_ == PartitionAccess::kReadOnly) {
      return StorageError(StorageErrorCode::kNotLeader,
                          absl::StrCat(dir_, ": not open for writing"));
    }
    plan.config = config_;
    if (!config_.cleanup_compact || segments_.size() < 2) return plan;
    // Durable, and below what consumers may not see yet (an open
    // transaction, records not replicated): never cleaned.
    const int64_t bound =
        std::min({last_stable_.load(), high_watermark_.load(), durable_end_});
    size_t n = segments_.size() - 1;  // never the active segment
    // A segment rolled but not yet synced, and the segment the last
    // recovery checkpoint names (until the next one names the active
    // segment): a swap would make recovery distrust the checkpoint.
    for (const PendingSeal& seal : pending_seals_) {
      for (size_t i = 0; i < n; ++i) {
        if (segments_[i] == seal.segment) n = i;
      }
    }
    if (checkpoint_after_roll_ && n == segments_.size() - 1 && n > 0) --n;
    for (size_t i = 0; i < n; ++i) {
      if (segments_[i]->next_offset() > bound) {
        n = i;
        break;
      }
    }
    plan.segments.assign(segments_.begin(), segments_.begin() + n);
    plan.cleaner_offset = cleaner_offset_;
    plan.next_delete_horizon_ms = next_delete_horizon_ms_;
    // Only a pass needs the transaction and producer state (the cleaner
    // describes every partition each round, under this lock).
    if (purpose == PlanFor::kPass) {
      producers_.ForEachSorted(
          [&](int64_t, const idempotence::ProducerEntry& entry) {
            for (const idempotence::CachedBatch& batch : entry.window) {
              plan.producer_batches.insert(batch.base_offset);
            }
          });
      absl::ReaderMutexLock txn_lock(&txn_mu_);
      plan.aborted = txns_.aborted_transactions();
    }
  }
  // min.compaction.lag.ms: the first segment holding a record younger than
  // the lag ends the cleanable part (its time index may need loading: no
  // lock held).
  const int64_t newest_allowed =
      now_ms - std::min(plan.config.min_compaction_lag_ms, now_ms);
  for (size_t i = 0; i < plan.segments.size(); ++i) {
    KAAS_ASSIGN_OR_RETURN(segment::SegmentTimeInfo time,
                          plan.segments[i]->GetTimeInfo());
    if (time.max_timestamp > newest_allowed) {
      plan.segments.resize(i);
      break;
    }
  }
  if (!plan.segments.empty() &&
      (plan.cleaner_offset < plan.segments.front()->base_offset() ||
       plan.cleaner_offset > plan.segments.back()->next_offset())) {
    // Outside the log (retention passed it, or a truncation cut below it):
    // start over from the log start, as Kafka resets its checkpoint.
    plan.cleaner_offset = plan.segments.front()->base_offset();
  }
  return plan;
}

absl::StatusOr<CompactionView> Partition::DescribeCompaction(int64_t now_ms) {
  KAAS_ASSIGN_OR_RETURN(CompactionPlan plan,
                        PlanCompaction(now_ms, PlanFor::kDescribe));
  CompactionView view;
  view.compact = plan.config.cleanup_compact;
  view.min_cleanable_dirty_ratio = plan.config.min_cleanable_dirty_ratio;
  view.max_compaction_lag_ms = plan.config.max_compaction_lag_ms;
  view.config_fingerprint = absl::StrCat(
      plan.config.segment_bytes, "/", plan.config.min_compaction_lag_ms, "/",
      plan.config.max_compaction_lag_ms, "/",
      plan.config.min_cleanable_dirty_ratio, "/",
      plan.config.delete_retention_ms, "/", plan.config.cleanup_delete);
  view.cleaner_offset = plan.cleaner_offset;
  if (plan.segments.empty()) return view;
  view.delete_horizon_due = plan.next_delete_horizon_ms <= now_ms;
  view.cleanable_end = plan.segments.back()->next_offset();
  for (const std::shared_ptr<segment::Segment>& segment : plan.segments) {
    if (segment->next_offset() <= plan.cleaner_offset) {
      view.clean_bytes += segment->size();
      continue;
    }
    if (view.dirty_bytes == 0) {
      absl::StatusOr<int64_t> first = segment->FirstBatchMaxTimestamp();
      if (first.ok()) view.first_dirty_timestamp = *first;
    }
    view.dirty_bytes += segment->size();
  }
  return view;
}

absl::StatusOr<CompactionReport> Partition::Compact(
    const CompactionRequest& request) {
  absl::StatusOr<CompactionReport> report = RunCompaction(request);
  if (absl::IsNotFound(report.status()) || absl::IsCancelled(report.status())) {
    // A segment the pass was reading left the log (retention, DeleteRecords,
    // a close): the next pass starts over.
    CompactionReport incomplete;
    incomplete.complete = false;
    return incomplete;
  }
  if (!report.ok()) {
    for (StorageStats* stats : StatsSinks()) {
      stats->compaction_failures.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return report;
}

absl::StatusOr<CompactionReport> Partition::RunCompaction(
    const CompactionRequest& request) {
  CHECK(request.map != nullptr) << "Compact needs an offset map";
  absl::MutexLock pass(&compaction_mu_);
  if (stop_compaction_.load()) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, ": the partition is closing"));
  }
  {
    // A swap whose last manifest write failed is still recorded on disk:
    // record the log as it is before anything else is written.
    absl::MutexLock metadata_lock(&metadata_mu_);
    if (swap_on_disk_) KAAS_RETURN_IF_ERROR(WriteManifestLocked());
  }
  KAAS_ASSIGN_OR_RETURN(CompactionPlan plan,
                        PlanCompaction(request.now_ms, PlanFor::kPass));
  CompactionReport report;
  report.dirty_start = report.map_end = plan.cleaner_offset;
  if (plan.segments.empty()) return report;
  // Nothing dirty: a pass only if a delete horizon has passed (then with an
  // empty map: it removes only what the horizon lets go).
  const bool dirty = plan.cleaner_offset < plan.segments.back()->next_offset();
  if (!dirty && plan.next_delete_horizon_ms > request.now_ms) return report;

  // ---- Keys of the dirty part, until the map is full.
  OffsetMap& map = *request.map;
  map.Clear();
  const AbortedRanges aborted(plan.aborted);
  int64_t map_end =
      dirty ? plan.segments.back()->next_offset() : plan.cleaner_offset;
  for (const std::shared_ptr<segment::Segment>& segment : plan.segments) {
    if (!dirty) break;
    if (segment->next_offset() <= plan.cleaner_offset) continue;
    bool full = false;
    KAAS_RETURN_IF_ERROR(ForEachBatch(
        *segment, std::max(plan.cleaner_offset, segment->base_offset()),
        request.throttle, stop_compaction_, &report.bytes_read,
        [&](const RecordBatchView& batch) -> absl::StatusOr<bool> {
          KAAS_ASSIGN_OR_RETURN(bool added, KeysIntoMap(batch, aborted, &map));
          if (!added) {
            full = true;
            map_end = batch.base_offset();
          }
          return added;
        }));
    if (full) break;
  }
  if (dirty && map_end == plan.cleaner_offset) {
    return StorageError(
        StorageErrorCode::kInvalidConfig,
        absl::StrFormat("%s: the compaction offset map (%d entries) cannot "
                        "hold the keys of the batch at offset %d: raise "
                        "log.cleaner.dedupe.buffer.size",
                        dir_, map.capacity(), map_end));
  }
  report.map_end = map_end;
  report.keys = static_cast<int64_t>(map.size());

  // ---- Clean every segment below map_end, from the log start, in groups.
  BatchCleaner::Context context;
  context.map = &map;
  context.map_end = map_end;
  context.now_ms = request.now_ms;
  context.delete_retention_ms = plan.config.delete_retention_ms;
  context.aborted = &aborted;
  context.producer_batches = std::move(plan.producer_batches);
  BatchCleaner cleaner(std::move(context));
  const uint64_t group_limit =
      std::min<uint64_t>(plan.config.segment_bytes, kMaxSegmentBytes);
  // With nothing dirty, every cleanable segment (for the horizons).
  const int64_t clean_end =
      dirty ? map_end : plan.segments.back()->next_offset();
  size_t i = 0;
  while (i < plan.segments.size() &&
         plan.segments[i]->base_offset() < clean_end) {
    if (request.stop && request.stop()) {
      report.complete = false;
      break;
    }
    SegmentList group = {plan.segments[i++]};
    uint64_t bytes = group[0]->size();
    while (i < plan.segments.size() &&
           plan.segments[i]->base_offset() < clean_end &&
           bytes + plan.segments[i]->size() <= group_limit) {
      bytes += plan.segments[i]->size();
      group.push_back(plan.segments[i++]);
    }
    KAAS_ASSIGN_OR_RETURN(bool swapped,
                          CleanGroup(group, cleaner, request, report));
    if (!swapped) {
      report.complete = false;
      break;
    }
  }
  static_cast<CompactionCounts&>(report) = cleaner.counts();

  // ---- The cleaner offset: the next pass reads keys from map_end.
  if (report.complete) {
    absl::MutexLock metadata_lock(&metadata_mu_);
    cleaner_offset_ = map_end;
    next_delete_horizon_ms_ = cleaner.earliest_horizon_ms();
    KAAS_RETURN_IF_ERROR(WriteManifestLocked());
  }
  for (StorageStats* stats : StatsSinks()) {
    stats->compaction_passes.fetch_add(1, std::memory_order_relaxed);
    stats->compaction_bytes_read.fetch_add(report.bytes_read,
                                           std::memory_order_relaxed);
    stats->compaction_bytes_reclaimed.fetch_add(
        report.bytes_before - std::min(report.bytes_before, report.bytes_after),
        std::memory_order_relaxed);
    stats->compaction_records_removed.fetch_add(report.records_removed,
                                                std::memory_order_relaxed);
  }
  return report;
}

absl::StatusOr<bool> Partition::CleanGroup(const SegmentList& group,
                                           BatchCleaner& cleaner,
                                           const CompactionRequest& request,
                                           CompactionReport& report) {
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<segment::CleanedSegmentWriter> out,
                        segment::CleanedSegmentWriter::Create(
                            *runtime_.fs, dir_, group.front()->id()));
  RemovedRun removed;
  // Merging segments is a change; so is any batch not kept as it was, but
  // an empty batch left by an earlier pass that stays as it is.
  bool changed = group.size() > 1;
  absl::Status written = [&]() -> absl::Status {
    for (const std::shared_ptr<segment::Segment>& segment : group) {
      report.bytes_before += segment->size();
      KAAS_RETURN_IF_ERROR(ForEachBatch(
          *segment, segment->base_offset(), request.throttle, stop_compaction_,
          &report.bytes_read,
          [&](const RecordBatchView& batch) -> absl::StatusOr<bool> {
            KAAS_ASSIGN_OR_RETURN(BatchCleaner::Decision decision,
                                  cleaner.Clean(batch));
            const bool earlier_empty =
                batch.record_count() == 0 && !batch.has_producer_id();
            changed |= decision.verdict != BatchCleaner::Verdict::kKeep &&
                       !earlier_empty;
            switch (decision.verdict) {
              case BatchCleaner::Verdict::kRemove:
                KAAS_RETURN_IF_ERROR(removed.Add(batch, *out));
                break;
              case BatchCleaner::Verdict::kKeep:
                KAAS_RETURN_IF_ERROR(removed.Flush(batch.base_offset(), *out));
                KAAS_RETURN_IF_ERROR(out->Append(batch.bytes()));
                break;
              case BatchCleaner::Verdict::kRewrite:
                KAAS_RETURN_IF_ERROR(removed.Flush(batch.base_offset(), *out));
                KAAS_RETURN_IF_ERROR(out->Append(decision.rewritten));
                break;
            }
            return true;
          }));
    }
    KAAS_RETURN_IF_ERROR(removed.Flush(group.back()->next_offset(), *out));
    if (!changed) return absl::OkStatus();
    if (request.throttle) request.throttle(out->size());
    return out->Finish();
  }();
  if (!written.ok() || !changed) {
    // (Nothing changed: the segments stay as they are.)
    runtime_.fs->Unlink(out->path()).IgnoreError();
    if (!written.ok()) return written;
    for (const std::shared_ptr<segment::Segment>& segment : group) {
      report.bytes_after += segment->size();
    }
    return true;
  }
  KAAS_ASSIGN_OR_RETURN(bool swapped,
                        SwapInCleaned(group, out->path(), out->size()));
  if (swapped) {
    report.segments_replaced += static_cast<int64_t>(group.size());
    report.segments_written += 1;
    report.bytes_after += out->size();
  }
  return swapped;
}

absl::StatusOr<bool> Partition::SwapInCleaned(const SegmentList& group,
                                              const std::string& cleaned_path,
                                              uint64_t cleaned_size) {
  fs::FileSystem& fs = *runtime_.fs;
  absl::MutexLock metadata_lock(&metadata_mu_);
  {
    absl::MutexLock lock(&mu_);
    auto first = std::find(segments_.begin(), segments_.end(), group.front());
    const bool present =
        state_ != State::kClosed &&
        static_cast<size_t>(segments_.end() - first) > group.size() &&
        std::equal(group.begin(), group.end(), first);
    if (!present) {
      // Retention, DeleteRecords or a close took (some of) them meanwhile.
      fs.Unlink(cleaned_path).IgnoreError();
      return false;
    }
    metadata::CompactionSwap swap;
    for (const std::shared_ptr<segment::Segment>& segment : group) {
      metadata::SegmentRef* ref = swap.add_replaced();
      ref->set_base_offset(segment->base_offset());
      ref->set_epoch(segment->epoch());
    }
    swap_in_progress_ = std::move(swap);
  }
  // The commit point: from here on recovery completes the swap.
  if (absl::Status committed = WriteManifestLocked(); !committed.ok()) {
    swap_in_progress_.reset();
    fs.Unlink(cleaned_path).IgnoreError();
    return committed;
  }
  swap_on_disk_ = true;
  std::shared_ptr<segment::Segment> cleaned = segment::Segment::Listed(
      segment_options_, dir_, group.front()->id(), cleaned_size);
  cleaned->SetNextOffset(group.back()->next_offset());
  // The window in which readers cannot read the group is this one rename:
  // no new read opens the old files (the rename would give it the new bytes
  // under the old indexes; reads already holding them finish), and a read
  // that finds them closed waits for the new list (ReadOnce), which is
  // published right after. The new segment's indexes are rebuilt from the
  // log by its first read.
  swapping_.store(true);
  for (const std::shared_ptr<segment::Segment>& segment : group) {
    segment->StopPersisting();
    segment->DropReadState();
  }
  // The first segment's indexes describe the old bytes: they go before
  // the rename (a crash between leaves none, and reads rebuild them).
  absl::Status status;
  for (segment::SegmentFileKind kind : {segment::SegmentFileKind::kOffsetIndex,
                                        segment::SegmentFileKind::kTimeIndex}) {
    absl::Status unlinked = fs.Unlink(group.front()->path(kind));
    if (!unlinked.ok() && !absl::IsNotFound(unlinked) && status.ok()) {
      status = unlinked;
    }
  }
  const std::string first_log =
      group.front()->path(segment::SegmentFileKind::kLog);
  if (status.ok()) status = fs.Rename(cleaned_path, first_log);
  {
    absl::MutexLock lock(&mu_);
    if (status.ok()) {
      auto first = std::find(segments_.begin(), segments_.end(), group.front());
      if (static_cast<size_t>(segments_.end() - first) > group.size()) {
        first = segments_.erase(first, first + group.size());
        segments_.insert(first, cleaned);
        PublishSegmentsLocked();
      }
    }
    swap_in_progress_.reset();
  }
  swapping_.store(false);
  {
    // Wakes readers waiting for the list (see ReadOnce).
    absl::MutexLock lock(&segments_mu_);
  }
  for (size_t i = 1; i < group.size() && status.ok(); ++i) {
    status = group[i]->DeleteFiles();
  }
  if (status.ok()) status = fs.SyncDir(dir_);
  // The new segment's index files now, so that no read pays for them.
  if (status.ok()) {
    if (absl::Status indexed = cleaned->RebuildIndexFiles(); !indexed.ok()) {
      LOG(WARNING) << dir_ << ": indexes of the compacted segment at offset "
                   << group.front()->base_offset() << ": " << indexed;
    }
  }
  if (!status.ok()) {
    // The manifest still records the swap (swap_on_disk_).
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrFormat("%s: compaction swap at offset %d failed after it was "
                        "committed (reopening the partition completes it): %s",
                        dir_, group.front()->base_offset(), status.message()));
  }
  if (absl::Status cleared = WriteManifestLocked(); !cleared.ok()) {
    // Harmless meanwhile (recovery would find the swap done); rewritten
    // before the next pass writes anything.
    LOG(WARNING) << dir_ << ": manifest after a compaction swap: " << cleared;
    return true;
  }
  swap_on_disk_ = false;
  return true;
}

absl::Status Partition::WriteManifestLocked() {
  metadata::PartitionManifest manifest;
  {
    absl::MutexLock lock(&mu_);
    manifest = ManifestLocked();
  }
  KAAS_ASSIGN_OR_RETURN(
      metadata::ManifestWrite written,
      metadata::WriteManifestUnlessSuperseded(*runtime_.fs, dir_, manifest));
  if (written.superseded) {
    return StorageError(
        StorageErrorCode::kNotLeader,
        absl::StrFormat("%s: a newer leader (epoch %d) took the partition over",
                        dir_, written.on_disk.leader_epoch()));
  }
  if (!swap_in_progress_.has_value()) swap_on_disk_ = false;
  return absl::OkStatus();
}

}  // namespace kaas::partition
