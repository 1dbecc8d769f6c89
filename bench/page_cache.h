// File: bench/page_cache.h
//
// Warm and cold page-cache states for the read and reopen scenarios of the
// standard workload: "the parent fsyncs every file (and, for cold, evicts
// them with posix_fadvise DONTNEED)".
//
// The fsyncs go through the filesystem seam like every other I/O of the
// benchmark; only the eviction uses a raw descriptor, because the seam has
// (and should have) no fadvise.
//
// Thread-safety: thread-safe (no state).

#ifndef KAAS_BENCH_PAGE_CACHE_H_
#define KAAS_BENCH_PAGE_CACHE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::bench {

enum class CacheState {
  kWarm,  // the files' pages stay cached
  kCold,  // the files' pages are dropped after the fsync
};

// "warm" / "cold".
absl::string_view CacheStateName(CacheState cache);

// Asks the kernel to drop the cached pages of the file at `path`
// (posix_fadvise(POSIX_FADV_DONTNEED) on a raw descriptor). Only clean pages
// can be dropped: sync the file first.
absl::Status EvictFromPageCache(const std::string& path);

// Fsyncs every regular file below `root` (recursively) and, for kCold, then
// evicts it from the page cache.
absl::Status SyncFilesUnder(fs::FileSystem& fs, const std::string& root,
                            CacheState cache);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_PAGE_CACHE_H_
