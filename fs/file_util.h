// File: fs/file_util.h
//
// Multi-step file operations built only on the FileSystem interface, so that
// a fault-injecting filesystem sees, and can fail or "lose at power-off",
// every single step. They open files, so they are part of the opening
// capability (//fs:file_opener, fs/file_opener.h): only the owners of files
// may use them.
//
//   ReadFileToString    whole small file into memory, bounded
//   AtomicReplaceFile   temp file + sync + rename + dir sync
//   CopyTree            durable recursive copy (log-dir moves)
//
// Errors: as fs/fs_util.h's (the step that failed, with context).
//
// Thread-safety: as fs/fs_util.h's; concurrent AtomicReplaceFile calls for
// the same path are safe, the last rename wins.

#ifndef KAAS_FS_FILE_UTIL_H_
#define KAAS_FS_FILE_UTIL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::fs {

// The whole content of the file at `path`. Reads the size the file has when
// opened: bytes appended after that are not returned; if the file shrinks
// meanwhile, returns what was there up to the new end. Memory grows with the
// bytes actually read (1 MiB at a time), not with the size a file claims, and
// a file larger than `max_bytes` fails with kOutOfRange before
// anything is read (a small metadata file that became huge is damage, and a
// sparse file must not be read into memory).
inline constexpr uint64_t kDefaultMaxReadBytes = uint64_t{64} << 20;
absl::StatusOr<std::string> ReadFileToString(
    FileSystem& fs, const std::string& path,
    uint64_t max_bytes = kDefaultMaxReadBytes);

// Durably replaces the content of `path` (creating it if missing) with
// `contents`, so that after a crash at any point `path` holds either the old
// or the new content, never a mix:
//   1. create NewAtomicTempFileName(path) (kCreateExclusive:
//      a name nobody else uses, so concurrent writers of `path` are safe);
//   2. write `contents`, Sync, Close;
//   3. Rename the temp over `path`;
//   4. SyncDir the parent of `path`.
// If a step before the rename fails, the temp is unlinked (best effort),
// `path` keeps its old content and the error names the failed step. If the
// final SyncDir fails, `path` already shows the new content but it may not
// survive a crash. REQUIRES: the parent directory of `path` exists.
absl::Status AtomicReplaceFile(FileSystem& fs, const std::string& path,
                               absl::string_view contents);

// Copies the directory tree (or single regular file) `from` to `to`,
// recursively, in 1 MiB chunks. On OK the copy is durable: every copied file
// was DataSync'ed, every created directory was SyncDir'ed after its entries
// were created, and so was the parent of `to`.
//   * `to` must not exist (kAlreadyExists otherwise); its parent must.
//   * Symbolic links anywhere in the tree, including `from` itself, fail with
//     kFailedPrecondition: following them could copy data from outside the
//     tree and silently skipping them would produce an incomplete copy. (The
//     engine's directories hold regular files and directories only.)
//   * Only content is copied; modes and mtimes are those of new files.
//   * On error, a partial copy may remain at `to`; RemoveTree it before
//     retrying.
// REQUIRES: nobody modifies `from` during the copy.
absl::Status CopyTree(FileSystem& fs, const std::string& from,
                      const std::string& to);

}  // namespace kaas::fs

#endif  // KAAS_FS_FILE_UTIL_H_
