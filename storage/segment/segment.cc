#include "storage/segment/segment.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "glog/logging.h"

namespace kaas::segment {
namespace {

std::atomic<uint64_t> next_cache_key{1};

// Scan buffer for index rebuilds and timestamp searches of closed segments:
// smaller than recovery's, these walks are usually short.
constexpr size_t kWalkBufferBytes = 256 << 10;

// An index of a log of `log_size` bytes has at most one entry per batch: a
// larger file is damage, rebuilt from the log without being read.
uint64_t MaxIndexBytes(uint64_t log_size, size_t entry_size) {
  return (log_size / batch_layout::kHeaderSize + 2) * entry_size;
}

// The write handle of a segment is locked for as long as it is open, so
// that a second writer (another engine that took over while this one still
// runs, its partition lock file removed behind its back) is refused before
// it changes a byte, instead of overwriting acknowledged batches.
absl::Status LockForWriting(fs::WritableFile& file) {
  absl::Status locked = file.TryLock();
  if (absl::IsUnavailable(locked)) {
    return absl::UnavailableError(absl::StrCat(
        file.path(),
        " is open for writing by another engine (its write handle is "
        "locked): the partition is led elsewhere"));
  }
  return locked;
}

}  // namespace

Segment::Segment(const SegmentOptions& options, std::string dir, SegmentId id,
                 uint64_t size, int64_t next_offset)
    : fs_(options.fs),
      cache_(options.cache),
      index_interval_bytes_(
          std::max<uint64_t>(1, options.index_interval_bytes)),
      dir_(std::move(dir)),
      id_(id),
      cache_key_(next_cache_key.fetch_add(1)),
      size_(size),
      next_offset_(next_offset),
      read_only_(options.read_only),
      direct_io_(options.direct_io && !options.read_only) {
  CHECK(fs_ != nullptr);
  CHECK(cache_ != nullptr);
  // A read-only segment never writes its index files either.
  persisting_stopped_ = read_only_;
}

Segment::~Segment() {
  // A read state in the cache may keep the write handle open for readers;
  // the lock of a writer goes with the segment.
  {
    absl::MutexLock lock(&mu_);
    if (write_file_ != nullptr) write_file_->Unlock();
  }
  cache_->Erase(cache_key_);
}

absl::StatusOr<std::shared_ptr<Segment>> Segment::Create(
    const SegmentOptions& options, std::string dir, SegmentId id) {
  CHECK(!options.read_only) << "a read-only segment creates no file";
  std::shared_ptr<Segment> segment(
      new Segment(options, std::move(dir), id, 0, id.base_offset));
  std::string log_path = segment->path(SegmentFileKind::kLog);
  absl::StatusOr<std::unique_ptr<fs::WritableFile>> file =
      fs::FileOpener::OpenForWrite(*options.fs, log_path,
                                   fs::OpenMode::kCreateExclusive);
  if (absl::IsAlreadyExists(file.status())) {
    // Only an earlier failed attempt at this very roll can have left a file
    // with this name (a segment with data at this base and epoch would be the
    // active segment); its content is not part of the log.
    LOG(WARNING) << "reusing leftover segment file " << log_path;
    file = fs::FileOpener::OpenForWrite(*options.fs, log_path,
                                        fs::OpenMode::kTruncate);
  }
  if (!file.ok()) return file.status();
  KAAS_RETURN_IF_ERROR(LockForWriting(**file));
  {
    absl::MutexLock writer(&segment->writer_);
    segment->index_ = std::make_shared<OffsetIndex>(id.base_offset);
    segment->time_index_ = std::make_shared<TimeIndex>(id.base_offset);
    absl::MutexLock lock(&segment->mu_);
    segment->write_file_ = std::move(*file);
  }
  KAAS_RETURN_IF_ERROR(segment->UseDirectLog());
  {
    absl::MutexLock writer(&segment->writer_);
    absl::MutexLock lock(&segment->mu_);
    segment->active_state_ =
        std::make_shared<SegmentReadState>(SegmentReadState{
            segment->write_file_, segment->index_, segment->time_index_});
  }
  segment->time_info_known_.store(true);
  return segment;
}

absl::Status Segment::UseDirectLog() {
  if (!direct_io_) return absl::OkStatus();
  std::shared_ptr<fs::WritableFile> base;
  {
    absl::MutexLock lock(&mu_);
    base = write_file_;
  }
  // A filesystem without (suitable) direct I/O keeps the buffered handle.
  if (base == nullptr || !base->TryDirectIo()) return absl::OkStatus();
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> reader,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DirectLogFile> direct,
                        DirectLogFile::Open(base, std::move(reader)));
  absl::MutexLock lock(&mu_);
  direct_log_ = direct.get();
  write_file_ = std::move(direct);
  return absl::OkStatus();
}

std::shared_ptr<Segment> Segment::Listed(const SegmentOptions& options,
                                         std::string dir, SegmentId id,
                                         uint64_t size) {
  return std::shared_ptr<Segment>(
      new Segment(options, std::move(dir), id, size, -1));
}

std::string Segment::path(SegmentFileKind kind) const {
  return fs::JoinPath(dir_, SegmentFileName(id_, kind));
}

absl::StatusOr<std::shared_ptr<fs::WritableFile>> Segment::WriteHandle(
    absl::string_view operation) const {
  absl::MutexLock lock(&mu_);
  if (write_file_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(operation, " ", path(SegmentFileKind::kLog),
                     ": the segment is not open for writing"));
  }
  return write_file_;
}

bool Segment::has_write_handle() const {
  absl::MutexLock lock(&mu_);
  return write_file_ != nullptr;
}

absl::Status Segment::OpenForWrite() {
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(path(SegmentFileKind::kLog), " is opened read-only"));
  }
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::WritableFile> file,
      fs::FileOpener::OpenForWrite(*fs_, path(SegmentFileKind::kLog),
                                   fs::OpenMode::kMustExist));
  KAAS_RETURN_IF_ERROR(LockForWriting(*file));
  absl::MutexLock lock(&mu_);
  write_file_ = std::move(file);
  direct_log_ = nullptr;
  return absl::OkStatus();
}

absl::Status Segment::OpenForRecovery() {
  if (!read_only_) return OpenForWrite();
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> file,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  absl::MutexLock lock(&mu_);
  recovery_file_ = std::move(file);
  return absl::OkStatus();
}

void Segment::SetNextOffset(int64_t next_offset) {
  next_offset_.store(next_offset, std::memory_order_release);
}

void Segment::NoteTimestamp(int64_t max_timestamp, int64_t base_offset) {
  if (max_timestamp > max_timestamp_.load(std::memory_order_relaxed)) {
    offset_of_max_timestamp_.store(base_offset, std::memory_order_relaxed);
    max_timestamp_.store(max_timestamp, std::memory_order_release);
  }
}

void Segment::IndexBatch(const BatchSummary& batch, uint64_t position) {
  NoteTimestamp(batch.max_timestamp, batch.base_offset);
  if (position - last_indexed_position_ < index_interval_bytes_) return;
  index_->Append(batch.base_offset, position);
  last_indexed_position_ = position;
  int64_t max_so_far = max_timestamp_.load(std::memory_order_relaxed);
  if (max_so_far >= 0) time_index_->MaybeAppend(max_so_far, batch.base_offset);
}

absl::StatusOr<SegmentRecovery> Segment::Recover(const RecoveryStart& start,
                                                 BatchVisitor visitor) {
  std::shared_ptr<const fs::ReadableFile> file;
  std::shared_ptr<fs::WritableFile> writable;
  if (read_only_) {
    absl::MutexLock lock(&mu_);
    file = recovery_file_;
    if (file == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("recover ", path(SegmentFileKind::kLog),
                       ": the segment is not open for recovery"));
    }
  } else {
    KAAS_ASSIGN_OR_RETURN(writable, WriteHandle("recover"));
    file = writable;
  }
  SegmentRecovery recovery;
  KAAS_ASSIGN_OR_RETURN(recovery.file_size, file->Size());

  // Index entries before the verified start come from the index files; the
  // rest is rebuilt while scanning. The files may hold entries past the
  // start (persisted after the checkpoint was sampled): validate against
  // the whole file, then cut at the start.
  OffsetIndex::Decoded index{OffsetIndex(id_.base_offset), ""};
  TimeIndex::Decoded time_index{TimeIndex(id_.base_offset), ""};
  if (start.position > 0) {
    absl::StatusOr<std::string> bytes = fs::ReadFileToString(
        *fs_, path(SegmentFileKind::kOffsetIndex),
        MaxIndexBytes(recovery.file_size, kOffsetIndexEntrySize));
    if (bytes.ok()) {
      index = OffsetIndex::Decode(id_.base_offset, *bytes, recovery.file_size);
    } else {
      index.problem = absl::IsNotFound(bytes.status())
                          ? "missing"
                          : std::string(bytes.status().message());
    }
    bytes = fs::ReadFileToString(
        *fs_, path(SegmentFileKind::kTimeIndex),
        MaxIndexBytes(recovery.file_size, kTimeIndexEntrySize));
    if (bytes.ok()) {
      time_index = TimeIndex::Decode(id_.base_offset, *bytes,
                                     std::numeric_limits<int64_t>::max());
    } else {
      time_index.problem = absl::IsNotFound(bytes.status())
                               ? "missing"
                               : std::string(bytes.status().message());
    }
  }
  index.index.TruncateToPosition(start.position);
  time_index.index.TruncateToOffset(start.expected_offset);
  recovery.index_problem = index.problem;
  recovery.time_index_problem = time_index.problem;

  max_timestamp_.store(start.time_before.max_timestamp);
  offset_of_max_timestamp_.store(start.time_before.offset_of_max_timestamp);

  absl::MutexLock writer(&writer_);
  index_ = std::make_shared<OffsetIndex>(std::move(index.index));
  time_index_ = std::make_shared<TimeIndex>(std::move(time_index.index));
  std::optional<OffsetIndexEntry> last = index_->last();
  last_indexed_position_ = last.has_value() ? last->position : 0;

  if (start.position > 0 &&
      (!index.problem.empty() || !time_index.problem.empty())) {
    // A missing or damaged index below the verified start: rebuild that part
    // by walking the (trusted) batch headers, so reads do not walk from the
    // segment start forever after.
    index_ = std::make_shared<OffsetIndex>(id_.base_offset);
    time_index_ = std::make_shared<TimeIndex>(id_.base_offset);
    last_indexed_position_ = 0;
    max_timestamp_.store(-1);
    offset_of_max_timestamp_.store(-1);
    ScanOptions prefix;
    prefix.verify_crc = false;
    prefix.end_position = start.position;
    KAAS_RETURN_IF_ERROR(
        ScanLog(*file, 0, id_.base_offset, prefix,
                [&](const RecordBatchView& batch, uint64_t position) {
                  writer_.AssertHeld();  // the scan runs on this thread
                  IndexBatch({batch.base_offset(), batch.last_offset(),
                              batch.max_timestamp()},
                             position);
                  return true;
                })
            .status());
  }

  ScanOptions options;
  // Where the first batch at or past start.end_offset begins, if any.
  std::optional<std::pair<uint64_t, int64_t>> foreign;
  KAAS_ASSIGN_OR_RETURN(
      recovery.scan,
      ScanLog(*file, start.position, start.expected_offset, options,
              [&](const RecordBatchView& batch, uint64_t position) {
                writer_.AssertHeld();  // the scan runs on this thread
                if (batch.base_offset() >= start.end_offset) {
                  foreign.emplace(position, batch.base_offset());
                  return false;
                }
                IndexBatch({batch.base_offset(), batch.last_offset(),
                            batch.max_timestamp()},
                           position);
                return visitor(batch, position);
              }));
  if (foreign.has_value()) {
    recovery.scan.detail =
        absl::StrCat("batch at position ", foreign->first, " has base offset ",
                     foreign->second, ", where the next segment begins (",
                     start.end_offset, "): bytes written after a take-over");
    recovery.scan.valid_end = foreign->first;
    recovery.scan.next_offset = foreign->second;
  }
  if (recovery.scan.valid_end < recovery.file_size) {
    // Read-only: size() stops at the valid end, the file keeps its bytes.
    if (writable != nullptr) {
      KAAS_RETURN_IF_ERROR(writable->Truncate(recovery.scan.valid_end));
    }
    recovery.truncated_bytes = recovery.file_size - recovery.scan.valid_end;
  }
  size_.store(recovery.scan.valid_end, std::memory_order_release);
  next_offset_.store(recovery.scan.next_offset, std::memory_order_release);
  time_info_known_.store(true);
  {
    absl::MutexLock persist(&persist_mu_);
    // The files may hold entries past the verified part, or garbage: the
    // next persist rewrites them whole.
    persisted_index_entries_ = 0;
    persisted_time_entries_ = 0;
  }
  if (writable != nullptr) {
    // From here on the log is written through the direct path (if chosen).
    writable.reset();
    KAAS_RETURN_IF_ERROR(UseDirectLog());
    absl::MutexLock lock(&mu_);
    file = write_file_;
  }
  absl::MutexLock lock(&mu_);
  active_state_ = std::make_shared<SegmentReadState>(
      SegmentReadState{std::move(file), index_, time_index_});
  return recovery;
}

absl::StatusOr<std::optional<int64_t>> Segment::FirstBatchOffset() {
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> file,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  char header[batch_layout::kLogOverhead];
  KAAS_ASSIGN_OR_RETURN(size_t n, file->ReadAt(0, sizeof(header), header));
  if (n < sizeof(header)) return std::nullopt;
  return static_cast<int64_t>(ReadBigEndian64(header));
}

absl::Status Segment::RebuildIndexFiles() {
  KAAS_RETURN_IF_ERROR(CheckReadsOpen());
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> opened,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  return RebuildIndexes(std::move(opened), /*must_persist=*/true).status();
}

absl::StatusOr<bool> Segment::IsBatchBoundary(uint64_t position,
                                              int64_t offset) {
  if (position == 0) return offset == id_.base_offset;
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> file,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  KAAS_ASSIGN_OR_RETURN(uint64_t file_size, file->Size());
  if (position > file_size) return false;
  OffsetIndexEntry from{id_.base_offset, 0};
  absl::StatusOr<std::string> bytes =
      fs::ReadFileToString(*fs_, path(SegmentFileKind::kOffsetIndex),
                           MaxIndexBytes(file_size, kOffsetIndexEntrySize));
  if (bytes.ok()) {
    OffsetIndex::Decoded index =
        OffsetIndex::Decode(id_.base_offset, *bytes, file_size);
    if (index.problem.empty()) {
      OffsetIndexEntry entry = index.index.Lookup(offset);
      if (entry.position <= position) from = entry;
    }
  }
  ScanOptions options;
  options.verify_crc = false;
  options.buffer_bytes = kWalkBufferBytes;
  options.end_position = position;
  KAAS_ASSIGN_OR_RETURN(
      ScanResult scan,
      ScanLog(*file, from.position, from.offset, options,
              [](const RecordBatchView&, uint64_t) { return true; }));
  return scan.valid_end == position && scan.next_offset == offset;
}

absl::StatusOr<ScanResult> Segment::FindEnd() {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  OffsetIndexEntry from =
      state->index->Lookup(std::numeric_limits<int64_t>::max());
  ScanOptions options;
  options.verify_crc = false;
  options.buffer_bytes = kWalkBufferBytes;
  return ScanLog(*state->file, from.position, from.offset, options,
                 [](const RecordBatchView&, uint64_t) { return true; });
}

absl::Status Segment::Append(absl::Span<const absl::string_view> parts,
                             size_t bytes, const BatchSummary& batch) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<fs::WritableFile> file,
                        WriteHandle("append to"));
  uint64_t position = size_.load(std::memory_order_relaxed);
  absl::Status status = file->WriteAtV(position, parts);
  absl::MutexLock writer(&writer_);
  if (!status.ok()) {
    // Part of the batch may have been written. The next append would
    // overwrite it, but if the next event is a roll it would stay behind the
    // segment's last batch, where recovery takes it for a torn log.
    torn_tail_ = true;
    TruncateTornTail(*file);
    return status;
  }
  IndexBatch(batch, position);
  next_offset_.store(batch.last_offset + 1, std::memory_order_release);
  size_.store(position + bytes, std::memory_order_release);
  return absl::OkStatus();
}

absl::Status Segment::RewriteTail(uint64_t position, int64_t offset) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<fs::WritableFile> file,
                        WriteHandle("rewrite"));
  uint64_t end = size();
  ScanOptions options;
  options.end_position = end;
  KAAS_ASSIGN_OR_RETURN(
      ScanResult scan,
      ScanLog(*file, position, offset, options,
              [](const RecordBatchView&, uint64_t) { return true; }));
  if (scan.valid_end != end) {
    return absl::DataLossError(absl::StrCat(
        path(SegmentFileKind::kLog),
        ": bytes not known durable no longer verify after an fsync failure (",
        scan.detail, ")"));
  }
  constexpr size_t kChunk = 1 << 20;
  std::string buffer;
  for (uint64_t at = position; at < end;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, end - at));
    buffer.resize(n);
    KAAS_ASSIGN_OR_RETURN(size_t got, file->ReadAt(at, n, buffer.data()));
    if (got != n) {
      return absl::DataLossError(
          absl::StrCat(path(SegmentFileKind::kLog), ": short read at ", at));
    }
    KAAS_RETURN_IF_ERROR(file->WriteAt(at, buffer));
    at += n;
  }
  return absl::OkStatus();
}

absl::Status Segment::DataSync() {
  std::shared_ptr<fs::WritableFile> file;
  {
    absl::MutexLock lock(&mu_);
    file = write_file_;
  }
  // Released: durable already, deleted, or closed (see the header).
  if (file == nullptr) return absl::OkStatus();
  return file->DataSync();
}

void Segment::TruncateTornTail(fs::WritableFile& file) {
  absl::Status status = file.Truncate(size());
  if (status.ok()) {
    torn_tail_ = false;
  } else {
    LOG(WARNING) << path(SegmentFileKind::kLog)
                 << ": could not cut off the bytes of a failed append: "
                 << status;
  }
}

absl::Status Segment::PersistIndexFile(SegmentFileKind kind,
                                       const std::string& bytes,
                                       size_t persisted_entries,
                                       size_t entry_size,
                                       size_t total_entries) {
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::WritableFile> file,
                        fs::FileOpener::OpenForWrite(
                            *fs_, path(kind), fs::OpenMode::kCreateIfMissing));
  KAAS_RETURN_IF_ERROR(file->WriteAt(persisted_entries * entry_size, bytes));
  KAAS_ASSIGN_OR_RETURN(uint64_t file_size, file->Size());
  if (file_size != total_entries * entry_size) {
    KAAS_RETURN_IF_ERROR(file->Truncate(total_entries * entry_size));
  }
  KAAS_RETURN_IF_ERROR(file->DataSync());
  return file->Close();
}

absl::Status Segment::PersistIndexes(uint64_t up_to_position,
                                     int64_t up_to_offset) {
  std::shared_ptr<OffsetIndex> index;
  std::shared_ptr<TimeIndex> time_index;
  {
    absl::MutexLock writer(&writer_);
    index = index_;
    time_index = time_index_;
  }
  if (index == nullptr) return absl::OkStatus();  // never loaded: nothing new
  absl::MutexLock persist(&persist_mu_);
  if (persisting_stopped_) return absl::OkStatus();
  const size_t index_entries = std::max(
      index->CountBelowPosition(up_to_position), persisted_index_entries_);
  KAAS_RETURN_IF_ERROR(PersistIndexFile(
      SegmentFileKind::kOffsetIndex,
      index->Encode(persisted_index_entries_, index_entries),
      persisted_index_entries_, kOffsetIndexEntrySize, index_entries));
  persisted_index_entries_ = index_entries;
  const size_t time_entries = std::max(
      time_index->CountBelowOffset(up_to_offset), persisted_time_entries_);
  KAAS_RETURN_IF_ERROR(PersistIndexFile(
      SegmentFileKind::kTimeIndex,
      time_index->Encode(persisted_time_entries_, time_entries),
      persisted_time_entries_, kTimeIndexEntrySize, time_entries));
  persisted_time_entries_ = time_entries;
  return absl::OkStatus();
}

void Segment::FinishAppends() {
  std::shared_ptr<fs::WritableFile> file;  // keeps direct_log_ alive
  DirectLogFile* direct = nullptr;
  {
    absl::MutexLock lock(&mu_);
    file = write_file_;
    direct = direct_log_;
  }
  // Not under mu_: Seal waits for a flush in flight.
  if (direct != nullptr) direct->Seal();
}

void Segment::Seal() {
  FinishAppends();
  absl::MutexLock writer(&writer_);
  if (sealed_) return;
  sealed_ = true;
  if (torn_tail_) {
    absl::StatusOr<std::shared_ptr<fs::WritableFile>> file =
        WriteHandle("seal");
    if (file.ok()) TruncateTornTail(**file);
  }
  int64_t max_timestamp = max_timestamp_.load();
  int64_t next = next_offset_.load();
  if (max_timestamp >= 0 && next > id_.base_offset) {
    // Anchor the final entry at the segment's last offset: every batch up to
    // it has maxTimestamp <= the segment's maximum, and the entry makes the
    // persisted time index end with that maximum.
    time_index_->MaybeAppend(max_timestamp, next - 1);
  }
  // From now on a closed segment's reads go through the cache; seed it with
  // the in-memory state so nothing is reloaded.
  std::shared_ptr<const SegmentReadState> state;
  {
    absl::MutexLock lock(&mu_);
    state = active_state_;
  }
  if (state != nullptr) CacheReadState(std::move(state));
}

void Segment::ReleaseWriteHandle() {
  std::shared_ptr<fs::WritableFile> file;
  std::shared_ptr<const fs::ReadableFile> recovery_file;
  std::shared_ptr<const SegmentReadState> state;
  {
    absl::MutexLock lock(&mu_);
    file = std::move(write_file_);
    direct_log_ = nullptr;
    recovery_file = std::move(recovery_file_);
    state = std::move(active_state_);
  }
  // Readers may keep the descriptor (through the cache); the lock that kept
  // other writers out goes now.
  if (file != nullptr) file->Unlock();
  // The cached read state (if any) keeps the descriptor open for readers
  // until evicted or dropped; a handle nobody else holds closes here.
}

absl::StatusOr<std::shared_ptr<const SegmentReadState>> Segment::ReadState() {
  {
    absl::MutexLock lock(&mu_);
    if (active_state_ != nullptr) return active_state_;
  }
  if (std::shared_ptr<const SegmentReadState> cached =
          cache_->Find(cache_key_)) {
    return cached;
  }
  return LoadClosedState();
}

absl::StatusOr<std::shared_ptr<const SegmentReadState>>
Segment::LoadClosedState() {
  KAAS_RETURN_IF_ERROR(CheckReadsOpen());
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::ReadableFile> opened,
      fs::FileOpener::OpenForRead(*fs_, path(SegmentFileKind::kLog)));
  std::shared_ptr<const fs::ReadableFile> file = std::move(opened);
  uint64_t log_size = size();
  int64_t next = next_offset();
  absl::StatusOr<std::string> index_bytes =
      fs::ReadFileToString(*fs_, path(SegmentFileKind::kOffsetIndex),
                           MaxIndexBytes(log_size, kOffsetIndexEntrySize));
  absl::StatusOr<std::string> time_bytes =
      fs::ReadFileToString(*fs_, path(SegmentFileKind::kTimeIndex),
                           MaxIndexBytes(log_size, kTimeIndexEntrySize));
  if (!index_bytes.ok() || !time_bytes.ok() || next < 0) {
    return RebuildIndexes(std::move(file));
  }
  OffsetIndex::Decoded index =
      OffsetIndex::Decode(id_.base_offset, *index_bytes, log_size);
  TimeIndex::Decoded time_index =
      TimeIndex::Decode(id_.base_offset, *time_bytes, next);
  if (!index.problem.empty() || !time_index.problem.empty()) {
    LOG(WARNING) << path(SegmentFileKind::kLog)
                 << ": rebuilding indexes from the log (index: "
                 << (index.problem.empty() ? "ok" : index.problem)
                 << "; time index: "
                 << (time_index.problem.empty() ? "ok" : time_index.problem)
                 << ")";
    return RebuildIndexes(std::move(file));
  }
  if (!time_info_known_.load()) {
    std::optional<TimeIndexEntry> last = time_index.index.last();
    if (last.has_value()) {
      max_timestamp_.store(last->timestamp);
      // The time index does not say which batch carries the maximum
      // (FindByTimestamp does); -1 means "not known exactly".
      offset_of_max_timestamp_.store(-1);
    }
    time_info_known_.store(true);
  }
  auto state = std::make_shared<SegmentReadState>(SegmentReadState{
      std::move(file), std::make_shared<OffsetIndex>(std::move(index.index)),
      std::make_shared<TimeIndex>(std::move(time_index.index))});
  CacheReadState(state);
  return state;
}

absl::StatusOr<std::shared_ptr<const SegmentReadState>> Segment::RebuildIndexes(
    std::shared_ptr<const fs::ReadableFile> file, bool must_persist) {
  auto index = std::make_shared<OffsetIndex>(id_.base_offset);
  auto time_index = std::make_shared<TimeIndex>(id_.base_offset);
  uint64_t last_indexed = 0;
  int64_t max_timestamp = -1;
  int64_t offset_of_max = -1;
  ScanOptions options;
  options.verify_crc = false;
  options.buffer_bytes = kWalkBufferBytes;
  options.end_position = size();
  // A closed segment ends at the next segment's base offset: batches from
  // there on are a deposed leader's late writes (never served), so they
  // neither enter the indexes nor count as damage.
  const int64_t end_offset = next_offset();
  std::optional<uint64_t> foreign_from;
  KAAS_ASSIGN_OR_RETURN(
      ScanResult scan,
      ScanLog(*file, 0, id_.base_offset, options,
              [&](const RecordBatchView& batch, uint64_t position) {
                if (end_offset >= 0 && batch.base_offset() >= end_offset) {
                  foreign_from = position;
                  return false;
                }
                if (batch.max_timestamp() > max_timestamp) {
                  max_timestamp = batch.max_timestamp();
                  offset_of_max = batch.base_offset();
                }
                if (position - last_indexed >= index_interval_bytes_) {
                  index->Append(batch.base_offset(), position);
                  last_indexed = position;
                  if (max_timestamp >= 0) {
                    time_index->MaybeAppend(max_timestamp, batch.base_offset());
                  }
                }
                return true;
              }));
  if (foreign_from.has_value()) {
    scan.valid_end = *foreign_from;
    scan.next_offset = end_offset;
    scan.stop = ScanStop::kEndOfFile;
  }
  if (max_timestamp >= 0 && scan.next_offset > id_.base_offset) {
    time_index->MaybeAppend(max_timestamp, scan.next_offset - 1);
  }
  if (scan.stop != ScanStop::kEndOfFile) {
    LOG(WARNING) << path(SegmentFileKind::kLog)
                 << ": index rebuild stopped early: " << scan.detail;
  }
  // Serve only what the walk proved framed. Damage it found ends the
  // readable part: reads of the offsets from there to the segment's end
  // fail (never skip them silently).
  size_.store(scan.valid_end, std::memory_order_release);
  if (next_offset() < 0) {
    next_offset_.store(scan.next_offset, std::memory_order_release);
  }
  if (scan.stop != ScanStop::kEndOfFile) {
    absl::MutexLock lock(&mu_);
    unreadable_detail_ = scan.detail;
    unreadable_from_.store(scan.next_offset, std::memory_order_release);
  }
  max_timestamp_.store(max_timestamp);
  offset_of_max_timestamp_.store(offset_of_max);
  time_info_known_.store(true);
  {
    absl::MutexLock persist(&persist_mu_);
    if (!persisting_stopped_) {
      absl::Status status =
          PersistIndexFile(SegmentFileKind::kOffsetIndex, index->Encode(), 0,
                           kOffsetIndexEntrySize, index->size());
      if (status.ok()) {
        status =
            PersistIndexFile(SegmentFileKind::kTimeIndex, time_index->Encode(),
                             0, kTimeIndexEntrySize, time_index->size());
      }
      if (!status.ok() && must_persist) return status;
      LOG_IF(WARNING, !status.ok())
          << path(SegmentFileKind::kLog)
          << ": could not persist the rebuilt indexes: " << status;
    } else if (must_persist) {
      return absl::FailedPreconditionError(
          absl::StrCat(path(SegmentFileKind::kLog),
                       ": its index files are not written (read-only, or "
                       "the segment is being deleted)"));
    }
  }
  auto state = std::make_shared<SegmentReadState>(
      SegmentReadState{std::move(file), index, time_index});
  CacheReadState(state);
  return state;
}

absl::Status Segment::UnreadableError(int64_t offset) const {
  absl::MutexLock lock(&mu_);
  return absl::DataLossError(absl::StrCat(
      path(SegmentFileKind::kLog), ": offset ", offset,
      " cannot be read: the batches end at offset ", unreadable_from_.load(),
      " (", unreadable_detail_,
      "), damage recovery did not see (below the recovery checkpoint); "
      "kaaslog verify tells more"));
}

absl::StatusOr<BatchReadResult> Segment::Read(int64_t offset,
                                              int64_t end_offset,
                                              size_t max_bytes) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  return WalkForRead(std::move(state), offset, end_offset, max_bytes,
                     /*locate_only=*/false);
}

absl::StatusOr<LocatedBatches> Segment::Locate(int64_t offset,
                                               int64_t end_offset,
                                               size_t max_bytes) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  LocatedBatches located;
  located.file = state->file;
  KAAS_ASSIGN_OR_RETURN(
      located.walk, WalkForRead(std::move(state), offset, end_offset, max_bytes,
                                /*locate_only=*/true));
  return located;
}

absl::StatusOr<BatchReadResult> Segment::WalkForRead(
    std::shared_ptr<const SegmentReadState> state, int64_t offset,
    int64_t end_offset, size_t max_bytes, bool locate_only) {
  absl::StatusOr<BatchReadResult> result = ReadWithRetry(
      std::move(state), offset, end_offset, max_bytes, locate_only);
  const int64_t unreadable = unreadable_from_.load(std::memory_order_acquire);
  if (unreadable >= 0 && result.ok() && result->next_offset >= unreadable &&
      unreadable < next_offset()) {
    // The walk stopped at the damage, not at the segment's end: the caller
    // must not go on past it.
    if (result->batches == 0) return UnreadableError(offset);
    result->reached_end = false;
  }
  return result;
}

absl::StatusOr<BatchReadResult> Segment::ReadWithRetry(
    std::shared_ptr<const SegmentReadState> state, int64_t offset,
    int64_t end_offset, size_t max_bytes, bool locate_only) {
  for (int attempt = 0;; ++attempt) {
    // A retry after a bad index walks from the segment start.
    OffsetIndexEntry hint = attempt == 0 ? state->index->Lookup(offset)
                                         : OffsetIndexEntry{id_.base_offset, 0};
    BatchReadRequest request;
    request.hint_position = hint.position;
    request.hint_offset = hint.offset;
    request.end_position = size();
    request.offset = offset;
    int64_t next = next_offset();
    request.end_offset = next >= 0 ? std::min(end_offset, next) : end_offset;
    request.max_bytes = max_bytes;
    request.lookahead_bytes = index_interval_bytes_;
    request.locate_only = locate_only;
    absl::StatusOr<BatchReadResult> result = ReadBatches(*state->file, request);
    if (result.ok() || !absl::IsDataLoss(result.status()) || attempt > 0) {
      return result;
    }
    LOG(WARNING) << path(SegmentFileKind::kLog)
                 << ": index does not match the log (" << result.status()
                 << ")";
    bool closed;
    {
      absl::MutexLock lock(&mu_);
      closed = active_state_ == nullptr;
    }
    if (closed) {
      // A closed segment's index is rebuilt for good; an active segment's
      // index belongs to its writer (recovery rebuilds it), so this read just
      // walks from the segment start.
      KAAS_ASSIGN_OR_RETURN(state, RebuildIndexes(state->file));
    }
  }
}

absl::StatusOr<std::optional<TimestampHit>> Segment::FindByTimestamp(
    int64_t timestamp, int64_t min_offset, int64_t end_offset) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  // Start at the later of: the last batch known to be below the timestamp
  // (time index), and the batch holding min_offset (offset index).
  int64_t from = min_offset;
  if (std::optional<TimeIndexEntry> below =
          state->time_index->LookupBelow(timestamp)) {
    from = std::max(from, below->offset);
  }
  OffsetIndexEntry start = state->index->Lookup(from);
  std::optional<TimestampHit> hit;
  ScanOptions options;
  options.verify_crc = false;
  options.buffer_bytes = kWalkBufferBytes;
  options.end_position = size();
  KAAS_ASSIGN_OR_RETURN(
      ScanResult scan,
      ScanLog(
          *state->file, start.position, start.offset, options,
          [&](const RecordBatchView& batch, uint64_t) {
            if (batch.base_offset() >= end_offset) return false;
            if (batch.last_offset() < min_offset) return true;
            if (batch.max_timestamp() >= timestamp) {
              hit = TimestampHit{batch.base_offset(), batch.max_timestamp()};
              return false;
            }
            return true;
          }));
  (void)scan;
  return hit;
}

absl::StatusOr<SegmentTimeInfo> Segment::GetTimeInfo() {
  if (!time_info_known_.load()) {
    KAAS_RETURN_IF_ERROR(ReadState().status());
  }
  return SegmentTimeInfo{max_timestamp_.load(),
                         offset_of_max_timestamp_.load()};
}

absl::StatusOr<int64_t> Segment::FirstBatchMaxTimestamp() {
  if (size() < batch_layout::kHeaderSize) return -1;
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  char header[batch_layout::kHeaderSize];
  KAAS_ASSIGN_OR_RETURN(size_t got,
                        state->file->ReadAt(0, sizeof(header), header));
  if (got != sizeof(header)) return -1;
  return ReadBigEndian64(header + batch_layout::kMaxTimestamp);
}

absl::StatusOr<ScanResult> Segment::WalkFrom(int64_t from_offset,
                                             BatchVisitor visitor) {
  KAAS_ASSIGN_OR_RETURN(std::shared_ptr<const SegmentReadState> state,
                        ReadState());
  OffsetIndexEntry start = state->index->Lookup(from_offset);
  ScanOptions options;
  options.verify_crc = false;
  options.end_position = size();
  return ScanLog(*state->file, start.position, start.offset, options, visitor);
}

void Segment::DropReadState() {
  {
    absl::MutexLock lock(&mu_);
    reads_closed_ = true;
  }
  cache_->Erase(cache_key_);
}

absl::Status Segment::CheckReadsOpen() const {
  absl::MutexLock lock(&mu_);
  if (!reads_closed_) return absl::OkStatus();
  // kNotFound: to a reader this is a deleted segment (DeleteRecords,
  // retention) or one of a partition that gave up leadership, which the
  // partition reports itself.
  return absl::NotFoundError(absl::StrCat(
      path(SegmentFileKind::kLog), " is closed for reads (deleted or closed)"));
}

void Segment::CacheReadState(std::shared_ptr<const SegmentReadState> state) {
  // Under mu_, so that DropReadState either sees the entry (and erases it)
  // or has already closed reads (and none is inserted).
  absl::MutexLock lock(&mu_);
  if (!reads_closed_) cache_->Insert(cache_key_, std::move(state));
}

void Segment::StopPersisting() {
  absl::MutexLock persist(&persist_mu_);
  persisting_stopped_ = true;
}

absl::Status Segment::DeleteFiles() {
  StopPersisting();
  DropReadState();
  ReleaseWriteHandle();
  absl::Status first_error;
  for (SegmentFileKind kind :
       {SegmentFileKind::kLog, SegmentFileKind::kOffsetIndex,
        SegmentFileKind::kTimeIndex}) {
    absl::Status status = fs_->Unlink(path(kind));
    if (!status.ok() && !absl::IsNotFound(status) && first_error.ok()) {
      first_error = status;
    }
  }
  return first_error;
}

absl::Status Segment::Quarantine() {
  StopPersisting();
  DropReadState();
  ReleaseWriteHandle();
  for (SegmentFileKind kind :
       {SegmentFileKind::kOffsetIndex, SegmentFileKind::kTimeIndex,
        SegmentFileKind::kLog}) {
    std::string from = path(kind);
    absl::Status status =
        fs_->Rename(from, absl::StrCat(from, kQuarantineSuffix));
    if (!status.ok() && !absl::IsNotFound(status)) return status;
  }
  return absl::OkStatus();
}

}  // namespace kaas::segment
