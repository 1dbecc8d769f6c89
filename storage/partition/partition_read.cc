// The read side: fetches, ListOffsets by timestamp, OffsetForLeaderEpoch.
// Nothing here takes the partition lock.

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/stopwatch.h"
#include "base/storage_error.h"
#include "storage/batch/record_batch.h"
#include "storage/partition/batch_state.h"
#include "storage/partition/partition.h"

namespace kaas::partition {
namespace {

// The segment holding `offset`: the last one whose base offset is <= it.
size_t SegmentIndexFor(
    const std::vector<std::shared_ptr<segment::Segment>>& segments,
    int64_t offset) {
  auto it = std::upper_bound(
      segments.begin(), segments.end(), offset,
      [](int64_t value, const std::shared_ptr<segment::Segment>& segment) {
        return value < segment->base_offset();
      });
  return it == segments.begin() ? 0 : (it - segments.begin()) - 1;
}

// Counts the records of the batches in `bytes` (whole, valid batches).
int64_t CountRecords(absl::string_view bytes) {
  int64_t records = 0;
  while (bytes.size() >= batch_layout::kHeaderSize) {
    absl::StatusOr<size_t> size = PeekBatchSize(bytes);
    if (!size.ok() || *size > bytes.size()) break;
    records += ReadBigEndian32(bytes.data() + batch_layout::kRecordCount);
    bytes.remove_prefix(*size);
  }
  return records;
}

// A segment file as the source of a zero-copy range: the segment's read
// handle, shared, so the descriptor stays open while regions hold it.
class SegmentFileSource final : public RecordSource {
 public:
  explicit SegmentFileSource(std::shared_ptr<const fs::ReadableFile> file)
      : file_(std::move(file)) {}
  absl::StatusOr<size_t> ReadAt(uint64_t position, size_t n,
                                char* dst) const override {
    return file_->ReadAt(position, n, dst);
  }
  absl::StatusOr<size_t> SendTo(uint64_t position, size_t n,
                                int out_fd) const override {
    return file_->SendTo(position, n, out_fd);
  }
  const std::string& name() const override { return file_->path(); }

 private:
  const std::shared_ptr<const fs::ReadableFile> file_;
};

}  // namespace

absl::Status Partition::DeletedWhileReading(int64_t offset) const {
  return StorageError(
      StorageErrorCode::kOffsetOutOfRange,
      absl::StrFormat("%s: offset %d was deleted (DeleteRecords or retention) "
                      "while being read",
                      dir_, offset));
}

absl::Status Partition::CheckReadable() const {
  if (closed_.load(std::memory_order_acquire)) {
    return StorageError(StorageErrorCode::kNotLeader,
                        absl::StrCat(dir_, ": leadership was given up"));
  }
  return absl::OkStatus();
}

Partition::ReadView Partition::TakeReadView() const {
  ReadView view;
  // Acquire loads of the bounds, then the list: a segment is published
  // before any bound that covers it, so the list read after the bounds holds
  // every offset below them (a list read first could miss a segment rolled
  // in between).
  view.log_start_offset = LogStartOffset();
  view.high_watermark = HighWatermark();
  view.last_stable_offset = LastStableOffset();
  view.log_end_offset = LogEndOffset();
  view.segments = segments_snapshot();
  return view;
}

namespace {

// How Read and ReadRegions differ: what a segment gives (read bytes or a
// located file range) and how a result holds it.
template <typename Result>
struct SegmentReads;

template <>
struct SegmentReads<ReadResult> {
  using Piece = segment::BatchReadResult;
  static absl::StatusOr<Piece> Read(segment::Segment& segment, int64_t offset,
                                    int64_t end_offset, size_t max_bytes) {
    return segment.Read(offset, end_offset, max_bytes);
  }
  static const segment::BatchReadResult& Walk(const Piece& piece) {
    return piece;
  }
  static void Append(Piece piece, ReadResult* result) {
    auto holder = std::make_shared<segment::BatchReadResult>(std::move(piece));
    result->records.Append(absl::MakeCordFromExternal(
        holder->batches_view(), [holder](absl::string_view) {}));
  }
  static int64_t Records(const ReadResult& result, int64_t) {
    int64_t records = 0;
    for (absl::string_view chunk : result.records.Chunks()) {
      records += CountRecords(chunk);
    }
    return records;
  }
};

template <>
struct SegmentReads<RegionReadResult> {
  using Piece = segment::LocatedBatches;
  static absl::StatusOr<Piece> Read(segment::Segment& segment, int64_t offset,
                                    int64_t end_offset, size_t max_bytes) {
    return segment.Locate(offset, end_offset, max_bytes);
  }
  static const segment::BatchReadResult& Walk(const Piece& piece) {
    return piece.walk;
  }
  static void Append(Piece piece, RegionReadResult* result) {
    const uint64_t position = piece.walk.first_position;
    result->records.Append(
        std::make_shared<SegmentFileSource>(std::move(piece.file)), position,
        piece.walk.next_position - position);
  }
  static int64_t Records(const RegionReadResult& result, int64_t offset) {
    return result.next_offset - offset;
  }
};

}  // namespace

absl::StatusOr<ReadResult> Partition::Read(int64_t offset, size_t max_bytes,
                                           Isolation isolation) {
  return ReadWithRetries<ReadResult>(offset, max_bytes, isolation);
}

absl::StatusOr<RegionReadResult> Partition::ReadRegions(int64_t offset,
                                                        size_t max_bytes,
                                                        Isolation isolation) {
  return ReadWithRetries<RegionReadResult>(offset, max_bytes, isolation);
}

template <typename Result>
absl::StatusOr<Result> Partition::ReadWithRetries(int64_t offset,
                                                  size_t max_bytes,
                                                  Isolation isolation) {
  KAAS_RETURN_IF_ERROR(CheckReadable());
  const Stopwatch stopwatch;
  // A compaction swap replaces segments under a read that has not opened
  // them yet (kNotFound from a segment that is no longer in the list): the
  // read runs again over the newer list. Each retry needs another swap
  // meanwhile, so a few suffice.
  constexpr int kAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    bool replaced = false;
    absl::StatusOr<Result> result =
        ReadOnce<Result>(offset, max_bytes, isolation, &replaced);
    if (!replaced) {
      if (result.ok()) {
        RecordRead(result->batches,
                   SegmentReads<Result>::Records(*result, offset),
                   result->records.size(), stopwatch);
      }
      return result;
    }
    if (attempt == kAttempts) {
      return StorageError(
          StorageErrorCode::kStorageError,
          absl::StrFormat("%s: read at offset %d: compaction replaced its "
                          "segments %d times meanwhile",
                          dir_, offset, kAttempts));
    }
  }
}

void Partition::RecordRead(int64_t batches, int64_t records, uint64_t bytes,
                           const Stopwatch& stopwatch) {
  for (StorageStats* stats : StatsSinks()) {
    stats->read_calls.fetch_add(1, std::memory_order_relaxed);
    stats->read_batches.fetch_add(batches, std::memory_order_relaxed);
    stats->read_records.fetch_add(records, std::memory_order_relaxed);
    stats->read_bytes.fetch_add(bytes, std::memory_order_relaxed);
    stats->read_latency.Record(stopwatch.Elapsed());
  }
}

template <typename Result>
absl::StatusOr<Result> Partition::ReadOnce(int64_t offset, size_t max_bytes,
                                           Isolation isolation,
                                           bool* replaced) {
  using Reads = SegmentReads<Result>;
  const ReadView view = TakeReadView();
  const SegmentList* segments = view.segments.get();
  Result result;
  result.log_start_offset = view.log_start_offset;
  result.high_watermark = view.high_watermark;
  result.last_stable_offset = view.last_stable_offset;
  result.log_end_offset = view.log_end_offset;
  result.next_offset = offset;
  KAAS_ASSIGN_OR_RETURN(const int64_t bound,
                        FetchBound(dir_, offset, result, isolation));
  // The segments holding `offset` were deleted after the bounds were read.
  if (offset < bound && !segments->empty() &&
      offset < segments->front()->base_offset() && offset < LogStartOffset()) {
    return DeletedWhileReading(offset);
  }
  size_t budget = max_bytes;
  for (size_t i = SegmentIndexFor(*segments, offset);
       i < segments->size() && result.next_offset < bound; ++i) {
    const std::shared_ptr<segment::Segment>& segment = (*segments)[i];
    int64_t end = bound;
    if (i + 1 < segments->size()) {
      end = std::min(end, (*segments)[i + 1]->base_offset());
    }
    if (result.next_offset >= end) continue;
    absl::StatusOr<typename Reads::Piece> read =
        Reads::Read(*segment, result.next_offset, end, budget);
    if (!read.ok()) {
      // Leadership given up while reading: the segments are closed for
      // reads (no descriptor is opened after Relinquish).
      KAAS_RETURN_IF_ERROR(CheckReadable());
      if (absl::IsNotFound(read.status()) &&
          result.next_offset < LogStartOffset()) {
        return DeletedWhileReading(result.next_offset);
      }
      if (absl::IsNotFound(read.status()) && result.batches == 0 &&
          WaitForReplacement(view.segments)) {
        *replaced = true;  // compacted meanwhile
        return read.status();
      }
      // What was read before stays a result; the next fetch, which starts
      // here, reports the error.
      if (result.batches > 0) break;
      return StorageError(
          StorageErrorCode::kStorageError,
          absl::StrCat("read ", dir_, ": ", read.status().message()));
    }
    const segment::BatchReadResult& walk = Reads::Walk(*read);
    const uint64_t bytes =
        walk.batches > 0 ? walk.next_position - walk.first_position : 0;
    if (result.batches > 0 && bytes > budget) {
      break;  // the first batch of the next segment does not fit
    }
    if (bytes > 0) {
      result.batches += walk.batches;
      result.next_offset = walk.next_offset;
      // A segment read to its end continues at the next segment's base,
      // even when its batches end below it (offsets lost to damage, which
      // recovery reported: a gap, as compaction leaves).
      const bool reached_end = walk.reached_end;
      if (reached_end) {
        result.next_offset = std::max(result.next_offset, end);
      }
      budget -= std::min<uint64_t>(budget, bytes);
      Reads::Append(*std::move(read), &result);
      if (!reached_end || budget == 0) break;
    } else {
      if (!walk.reached_end) break;
      result.next_offset = std::max(result.next_offset, end);
    }
  }
  if (isolation == Isolation::kReadCommitted) {
    result.aborted_transactions =
        AbortedTransactions(offset, std::max(offset + 1, result.next_offset));
  }
  return result;
}

bool Partition::WaitForReplacement(
    const std::shared_ptr<const SegmentList>& seen) const {
  absl::MutexLock lock(&segments_mu_);
  // A swap publishes the new list right after one rename (no sync), then
  // clears swapping_ and takes segments_mu_, which wakes this wait.
  auto replaced_or_settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(segments_mu_) {
    return published_segments_ != seen || !swapping_.load();
  };
  segments_mu_.Await(absl::Condition(&replaced_or_settled));
  return published_segments_ != seen;
}

template <typename T>
absl::StatusOr<T> Partition::LookUpSegments(
    absl::string_view what,
    absl::FunctionRef<absl::StatusOr<T>(const ReadView&)> lookup) {
  // Each retry needs a newer list, i.e. another deletion meanwhile: a bound
  // keeps a lookup from chasing a retention that deletes faster than it reads.
  constexpr int kMaxAttempts = 4;
  for (int attempt = 1;; ++attempt) {
    KAAS_RETURN_IF_ERROR(CheckReadable());
    const ReadView view = TakeReadView();
    absl::StatusOr<T> found = lookup(view);
    if (found.ok()) return found;
    // Leadership given up meanwhile closed the segments for reads.
    KAAS_RETURN_IF_ERROR(CheckReadable());
    if (absl::IsNotFound(found.status()) && attempt < kMaxAttempts &&
        WaitForReplacement(view.segments)) {
      continue;  // a segment was deleted or compacted under the lookup
    }
    if (!HasStorageErrorCode(found.status(), StorageErrorCode::kStorageError)) {
      return found.status();
    }
    return StorageError(
        StorageErrorCode::kStorageError,
        absl::StrCat(what, " ", dir_, ": ", found.status().message()));
  }
}

absl::StatusOr<OffsetAndTimestamp> Partition::OffsetForTimestamp(
    int64_t timestamp, Isolation isolation) {
  return LookUpSegments<OffsetAndTimestamp>(
      "timestamp lookup", [&](const ReadView& view) {
        return FindOffsetForTimestamp(view, timestamp, isolation);
      });
}

absl::StatusOr<OffsetAndTimestamp> Partition::FindOffsetForTimestamp(
    const ReadView& view, int64_t timestamp, Isolation isolation) {
  const SegmentList& segments = *view.segments;
  const int64_t log_start = view.log_start_offset;
  // Kafka's last fetchable offset for the isolation level.
  const int64_t high_watermark =
      isolation == Isolation::kReadCommitted ? view.last_stable_offset
      : isolation == Isolation::kReplica     ? view.log_end_offset
                                             : view.high_watermark;
  KAAS_ASSIGN_OR_RETURN(
      std::optional<OffsetAndTimestamp> special,
      AnswerSpecialTimestamp(timestamp, log_start, high_watermark));
  if (special.has_value()) return *special;
  if (timestamp == kListOffsetsMaxTimestamp) {
    // The first record carrying the largest timestamp.
    int64_t best = -1;
    for (const auto& segment : segments) {
      KAAS_ASSIGN_OR_RETURN(segment::SegmentTimeInfo info,
                            segment->GetTimeInfo());
      best = std::max(best, info.max_timestamp);
    }
    if (best < 0) return OffsetAndTimestamp{};
    timestamp = best;
  }

  // Kafka's rule: the first record at or above the log start whose
  // timestamp is >= the target.
  int64_t from = log_start;
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::shared_ptr<segment::Segment>& segment = segments[i];
    int64_t end = high_watermark;
    if (i + 1 < segments.size()) {
      end = std::min(end, segments[i + 1]->base_offset());
    }
    if (end <= from) continue;
    KAAS_ASSIGN_OR_RETURN(segment::SegmentTimeInfo info,
                          segment->GetTimeInfo());
    if (info.max_timestamp < timestamp) continue;
    while (from < end) {
      KAAS_ASSIGN_OR_RETURN(std::optional<segment::TimestampHit> hit,
                            segment->FindByTimestamp(timestamp, from, end));
      if (!hit.has_value()) break;
      KAAS_ASSIGN_OR_RETURN(segment::BatchReadResult read,
                            segment->Read(hit->offset, end, 1));
      absl::string_view bytes = read.batches_view();
      KAAS_ASSIGN_OR_RETURN(size_t size, PeekBatchSize(bytes));
      KAAS_ASSIGN_OR_RETURN(RecordBatchView batch, RecordBatchView::ParseHeader(
                                                       bytes.substr(0, size)));
      // Record level, compressed or not (a typed error for records that do
      // not decode): the memory engine searches with the same function.
      KAAS_ASSIGN_OR_RETURN(
          std::optional<OffsetAndTimestamp> found,
          SearchBatchByTimestamp(dir_, batch, timestamp, from));
      if (found.has_value()) return *found;
      from = batch.next_offset();  // its qualifying records are below `from`
    }
  }
  return OffsetAndTimestamp{};
}

EpochEndOffset Partition::OffsetForLeaderEpoch(int64_t leader_epoch) const {
  absl::MutexLock lock(&mu_);
  return epochs_.EndOffsetFor(leader_epoch, next_offset_);
}

absl::StatusOr<std::vector<SegmentSummary>>
Partition::SegmentsWithTimestamps() {
  return LookUpSegments<std::vector<SegmentSummary>>(
      "segment timestamps",
      [](const ReadView& view) -> absl::StatusOr<std::vector<SegmentSummary>> {
        const SegmentList& segments = *view.segments;
        std::vector<SegmentSummary> out = SummarizeSegments(segments);
        for (size_t i = 0; i < segments.size(); ++i) {
          KAAS_ASSIGN_OR_RETURN(segment::SegmentTimeInfo info,
                                segments[i]->GetTimeInfo());
          out[i].max_timestamp = info.max_timestamp;
        }
        return out;
      });
}

}  // namespace kaas::partition
