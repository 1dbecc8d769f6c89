#include "storage/segment/cleaned_segment.h"

#include <utility>

#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"

namespace kaas::segment {
namespace {

// Writes go out in pieces of about this size.
constexpr size_t kFlushBytes = size_t{1} << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<CleanedSegmentWriter>>
CleanedSegmentWriter::Create(fs::FileSystem& fs, const std::string& dir,
                             const SegmentId& id) {
  std::string path = fs::JoinPath(dir, CleanedFileName(id));
  KAAS_ASSIGN_OR_RETURN(
      std::unique_ptr<fs::WritableFile> file,
      fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kTruncate));
  return std::unique_ptr<CleanedSegmentWriter>(
      new CleanedSegmentWriter(std::move(path), std::move(file)));
}

absl::Status CleanedSegmentWriter::Append(absl::string_view batches) {
  buffer_.append(batches.data(), batches.size());
  if (buffer_.size() >= kFlushBytes) return Flush();
  return absl::OkStatus();
}

absl::Status CleanedSegmentWriter::Flush() {
  if (buffer_.empty()) return absl::OkStatus();
  KAAS_RETURN_IF_ERROR(file_->WriteAt(size_, buffer_));
  size_ += buffer_.size();
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status CleanedSegmentWriter::Finish() {
  KAAS_RETURN_IF_ERROR(Flush());
  KAAS_RETURN_IF_ERROR(file_->Truncate(size_));
  KAAS_RETURN_IF_ERROR(file_->DataSync());
  return file_->Close();
}

}  // namespace kaas::segment
