#include "bench/page_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/fs_util.h"

namespace kaas::bench {

absl::string_view CacheStateName(CacheState cache) {
  return cache == CacheState::kWarm ? "warm" : "cold";
}

absl::Status EvictFromPageCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    return absl::ErrnoToStatus(
        error, absl::StrCat("open \"", path, "\" to evict it from the cache"));
  }
  // posix_fadvise returns the error number instead of setting errno.
  const int error = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (error != 0) {
    return absl::ErrnoToStatus(
        error, absl::StrCat("posix_fadvise(DONTNEED) \"", path, "\""));
  }
  return absl::OkStatus();
}

absl::Status SyncFilesUnder(fs::FileSystem& fs, const std::string& root,
                            CacheState cache) {
  KAAS_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.ListDir(root));
  for (const std::string& name : names) {
    const std::string path = fs::JoinPath(root, name);
    KAAS_ASSIGN_OR_RETURN(fs::FileInfo info, fs.Stat(path));
    if (info.is_symlink) continue;
    if (info.is_directory) {
      KAAS_RETURN_IF_ERROR(SyncFilesUnder(fs, path, cache));
      continue;
    }
    KAAS_ASSIGN_OR_RETURN(
        std::unique_ptr<fs::WritableFile> file,
        fs::FileOpener::OpenForWrite(fs, path, fs::OpenMode::kMustExist));
    KAAS_RETURN_IF_ERROR(file->Sync());
    KAAS_RETURN_IF_ERROR(file->Close());
    if (cache == CacheState::kCold) {
      KAAS_RETURN_IF_ERROR(EvictFromPageCache(path));
    }
  }
  return absl::OkStatus();
}

}  // namespace kaas::bench
