// File: fs/file_util.cc

#include "fs/file_util.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/fs_util.h"

namespace kaas::fs {
namespace {

constexpr size_t kCopyChunkBytes = 1 << 20;
constexpr size_t kReadChunkBytes = 1 << 20;

std::string Quote(absl::string_view path) {
  return absl::StrCat("\"", path, "\"");
}

// Copies trees with one reusable chunk buffer.
class TreeCopier {
 public:
  explicit TreeCopier(FileSystem& fs)
      : fs_(fs), buffer_(new char[kCopyChunkBytes]) {}

  // Copies the file or directory tree `from` to the new path `to`; every file
  // is DataSync'ed and every directory SyncDir'ed before this returns OK.
  absl::Status CopyEntry(const std::string& from, const std::string& to) {
    KAAS_ASSIGN_OR_RETURN(const FileInfo info, fs_.Stat(from));
    if (info.is_symlink) {
      return absl::FailedPreconditionError(
          absl::StrCat(Quote(from),
                       " is a symbolic link (only regular files and "
                       "directories are copied)"));
    }
    if (!info.is_directory) return CopyFile(from, to);
    KAAS_RETURN_IF_ERROR(fs_.CreateDirs(to));
    KAAS_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                          fs_.ListDir(from));
    for (const std::string& name : names) {
      KAAS_RETURN_IF_ERROR(CopyEntry(JoinPath(from, name), JoinPath(to, name)));
    }
    // Makes the entries just created in `to` durable.
    return fs_.SyncDir(to);
  }

 private:
  absl::Status CopyFile(const std::string& from, const std::string& to) {
    KAAS_ASSIGN_OR_RETURN(const std::unique_ptr<ReadableFile> source,
                          FileOpener::OpenForRead(fs_, from));
    KAAS_ASSIGN_OR_RETURN(
        const std::unique_ptr<WritableFile> target,
        FileOpener::OpenForWrite(fs_, to, OpenMode::kCreateExclusive));
    uint64_t offset = 0;
    while (true) {
      KAAS_ASSIGN_OR_RETURN(
          const size_t n,
          source->ReadAt(offset, kCopyChunkBytes, buffer_.get()));
      if (n > 0) {
        KAAS_RETURN_IF_ERROR(
            target->WriteAt(offset, absl::string_view(buffer_.get(), n)));
        offset += n;
      }
      if (n < kCopyChunkBytes) break;  // End of file.
    }
    KAAS_RETURN_IF_ERROR(target->DataSync());
    return target->Close();
  }

  FileSystem& fs_;
  const std::unique_ptr<char[]> buffer_;
};

}  // namespace

absl::StatusOr<std::string> ReadFileToString(FileSystem& fs,
                                             const std::string& path,
                                             uint64_t max_bytes) {
  KAAS_ASSIGN_OR_RETURN(const std::unique_ptr<ReadableFile> file,
                        FileOpener::OpenForRead(fs, path));
  KAAS_ASSIGN_OR_RETURN(const uint64_t size, file->Size());
  if (size > max_bytes) {
    return absl::OutOfRangeError(absl::StrCat("read ", Quote(path), ": ", size,
                                              " bytes, more than the ",
                                              max_bytes, " it may have"));
  }
  std::string contents;
  while (contents.size() < size) {
    const size_t done = contents.size();
    const size_t chunk =
        static_cast<size_t>(std::min<uint64_t>(kReadChunkBytes, size - done));
    contents.resize(done + chunk);
    KAAS_ASSIGN_OR_RETURN(const size_t n,
                          file->ReadAt(done, chunk, contents.data() + done));
    contents.resize(done + n);
    if (n < chunk) break;  // shrank meanwhile
  }
  return contents;
}

absl::Status AtomicReplaceFile(FileSystem& fs, const std::string& path,
                               absl::string_view contents) {
  const std::string context = absl::StrCat("atomic replace of ", Quote(path));
  const std::string temp = NewAtomicTempFileName(path);

  absl::StatusOr<std::unique_ptr<WritableFile>> file =
      FileOpener::OpenForWrite(fs, temp, OpenMode::kCreateExclusive);
  if (!file.ok()) {
    return WithContext(file.status(),
                       absl::StrCat(context, ": create temp file"));
  }
  // From here on, a failure before the rename must not leave the temp behind.
  auto fail = [&](absl::string_view step, const absl::Status& status) {
    file->reset();  // Closes the handle, if still open.
    (void)fs.Unlink(temp);
    return WithContext(status, absl::StrCat(context, ": ", step));
  };
  absl::Status status = (*file)->WriteAt(0, contents);
  if (!status.ok()) return fail("write temp file", status);
  status = (*file)->Sync();
  if (!status.ok()) return fail("sync temp file", status);
  status = (*file)->Close();
  if (!status.ok()) return fail("close temp file", status);
  status = fs.Rename(temp, path);
  if (!status.ok()) return fail("rename temp file over it", status);
  return WithContext(fs.SyncDir(Dirname(path)),
                     absl::StrCat(context, ": sync directory"));
}

absl::Status CopyTree(FileSystem& fs, const std::string& from,
                      const std::string& to) {
  const std::string context =
      absl::StrCat("copy ", Quote(from), " to ", Quote(to));
  absl::StatusOr<bool> to_exists = fs.Exists(to);
  if (!to_exists.ok()) return WithContext(to_exists.status(), context);
  if (*to_exists) {
    return absl::AlreadyExistsError(
        absl::StrCat(context, ": ", Quote(to), " already exists"));
  }
  TreeCopier copier(fs);
  KAAS_RETURN_IF_ERROR(WithContext(copier.CopyEntry(from, to), context));
  // Makes the entry `to` itself durable.
  return WithContext(fs.SyncDir(Dirname(to)), context);
}

}  // namespace kaas::fs
