// File: fs/fs_util.h
//
// Path helpers and multi-step file operations built only on the FileSystem
// interface (fs/file_system.h), so that a fault-injecting filesystem sees,
// and can fail or "lose at power-off", every single step:
//
//   JoinPath / Dirname / Basename   string manipulation of '/'-separated paths
//   ReadFileToString                whole small file into memory
//   AtomicReplaceFile               temp file + sync + rename + dir sync
//   IsAtomicTempFileName            recognise temps left by a crash
//   CreateDirsDurably               mkdir -p + sync of every new level
//   CopyTree                        durable recursive copy (log-dir moves)
//   RemoveTree                      recursive delete + parent dir sync
//
// Errors: a function returns the status of the step that failed; the
// multi-step ones prepend their context (AtomicReplaceFile also the step) to
// its message, keeping its code and payloads, e.g.
//   atomic replace of "/d/m.json": sync temp file: fsync "/d/m.json.<hex>.tmp":
//   Input/output error
//
// Thread-safety: the functions are thread-safe in the sense of the
// FileSystem they use; the multi-step ones are not atomic against concurrent
// changes of the same tree (AtomicReplaceFile excepted: concurrent calls for
// the same path are safe, the last rename wins).

#ifndef KAAS_FS_FS_UTIL_H_
#define KAAS_FS_FS_UTIL_H_

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::fs {

// ---------------------------------------------------------------------------
// Paths. Pure string functions: they never touch the filesystem and do not
// resolve "." or "..".

namespace fs_util_internal {
std::string JoinPathImpl(std::initializer_list<absl::string_view> parts);
}  // namespace fs_util_internal

// Joins path components with exactly one '/' between non-empty parts:
//   JoinPath("a", "b") == "a/b",   JoinPath("a/", "/b") == "a/b",
//   JoinPath("/", "b") == "/b",    JoinPath("", "b") == "b",
//   JoinPath("a", "") == "a",      JoinPath("a", "b", "c.log") == "a/b/c.log".
// Unlike Python's os.path.join, an absolute later part does not discard the
// earlier ones. A leading '/' of the first non-empty part and a trailing '/'
// of the last one are kept.
template <typename... Parts>
std::string JoinPath(const Parts&... parts) {
  return fs_util_internal::JoinPathImpl({absl::string_view(parts)...});
}

// The parent directory of `path`, as POSIX dirname(3): trailing slashes are
// ignored; "a/b" -> "a", "/a" -> "/", "a" -> ".", "a/b/" -> "a",
// "a//b" -> "a", "/" -> "/", "" -> ".".
std::string Dirname(absl::string_view path);

// The last component of `path`, as POSIX basename(3): "a/b" -> "b",
// "a/b/" -> "b", "b" -> "b", "/" -> "/", "" -> ".".
std::string Basename(absl::string_view path);

// ---------------------------------------------------------------------------
// Files.

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
//   1. create "<dir>/<name>.<16 random hex digits>.tmp" (kCreateExclusive:
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

// True if `name` (a file name, not a path) has the shape of the temp files
// of AtomicReplaceFile: "<non-empty name>.<16 lowercase hex digits>.tmp".
// Such a file is garbage once no AtomicReplaceFile is running in its
// directory (e.g. at startup, after a crash): the directory's owner may
// unlink it.
bool IsAtomicTempFileName(absl::string_view name);

// ---------------------------------------------------------------------------
// Trees.

// CreateDirs(dir), then SyncDir of the parent of every level of `dir` that
// did not exist before, so that a crash after it returns OK cannot lose any
// new directory. A `dir` that already exists costs one Stat and no sync.
absl::Status CreateDirsDurably(FileSystem& fs, const std::string& dir);

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

// Removes `dir` and everything below it (files first, then each directory
// once empty), then SyncDir's the parent of `dir`. A missing `dir` is OK
// (idempotent, so an interrupted removal can simply be repeated); a regular
// file `dir` is unlinked. Symbolic links are unlinked, never followed.
absl::Status RemoveTree(FileSystem& fs, const std::string& dir);

}  // namespace kaas::fs

#endif  // KAAS_FS_FS_UTIL_H_
