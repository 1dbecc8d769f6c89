// File: storage/segment/cleaned_segment.h
//
// The file compaction writes a cleaned segment into: "<stem>.log.cleaned"
// beside the segment it replaces (segment_name.h), batches appended in
// offset order, made durable by Finish. The partition then swaps it in by a
// rename that recovery completes or rolls back (storage/partition/
// partition_compaction.cc); this class never renames or deletes anything.
//
// Thread-safety: thread-compatible (one compaction pass writes it).

#ifndef KAAS_STORAGE_SEGMENT_CLEANED_SEGMENT_H_
#define KAAS_STORAGE_SEGMENT_CLEANED_SEGMENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "storage/segment/segment_name.h"

namespace kaas::segment {

class CleanedSegmentWriter {
 public:
  // Creates "<dir>/<stem of id>.log.cleaned" (a leftover of an interrupted
  // pass is truncated: no swap names it, or recovery would have completed
  // it). Errors: the filesystem's (kStorageError from the seam), including
  // a symbolic link or other non-regular file at that name.
  static absl::StatusOr<std::unique_ptr<CleanedSegmentWriter>> Create(
      fs::FileSystem& fs, const std::string& dir, const SegmentId& id);

  // Appends whole batches (buffered).
  absl::Status Append(absl::string_view batches);

  // Writes what is buffered, fdatasyncs and closes the file.
  absl::Status Finish();

  // Bytes appended so far.
  uint64_t size() const { return size_ + buffer_.size(); }
  const std::string& path() const { return path_; }

 private:
  CleanedSegmentWriter(std::string path, std::unique_ptr<fs::WritableFile> file)
      : path_(std::move(path)), file_(std::move(file)) {}
  absl::Status Flush();

  const std::string path_;
  std::unique_ptr<fs::WritableFile> file_;
  std::string buffer_;
  uint64_t size_ = 0;
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_CLEANED_SEGMENT_H_
