// File: fs/fs_util.h
//
// Path helpers and multi-step file operations built only on the FileSystem
// interface (fs/file_system.h), so that a fault-injecting filesystem sees,
// and can fail or "lose at power-off", every single step:
//
//   JoinPath / Dirname / Basename   string manipulation of '/'-separated paths
//   NewAtomicTempFileName /         the temp names of AtomicReplaceFile
//     IsAtomicTempFileName            (fs/file_util.h); recognise crash
//     leftovers
//   CreateDirsDurably               mkdir -p + sync of every new level
//   RemoveTree                      recursive delete + parent dir sync
//   WithContext                     an error with context prepended
//
// None of them opens a file: those that do (ReadFileToString,
// AtomicReplaceFile, CopyTree) are in fs/file_util.h, which only the owners
// of files may use (fs/file_opener.h).
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
// Temp files and errors.

// A fresh temp name for replacing `path`: "<path>.<16 random lowercase hex
// digits>.tmp".
std::string NewAtomicTempFileName(absl::string_view path);

// True if `name` (a file name, not a path) has the shape of the temp files
// of NewAtomicTempFileName: "<non-empty name>.<16 lowercase hex digits>.tmp".
// Such a file is garbage once no AtomicReplaceFile is running in its
// directory (e.g. at startup, after a crash): the directory's owner may
// unlink it.
bool IsAtomicTempFileName(absl::string_view name);

// `status` with "<context>: " prepended to its message; same code and
// payloads. OK stays OK.
absl::Status WithContext(const absl::Status& status, absl::string_view context);

// ---------------------------------------------------------------------------
// Trees.

// CreateDirs(dir), then SyncDir of the parent of every level of `dir` that
// did not exist before, so that a crash after it returns OK cannot lose any
// new directory. A `dir` that already exists costs one Stat and no sync.
absl::Status CreateDirsDurably(FileSystem& fs, const std::string& dir);

// Removes `dir` and everything below it (files first, then each directory
// once empty), then SyncDir's the parent of `dir`. A missing `dir` is OK
// (idempotent, so an interrupted removal can simply be repeated); a regular
// file `dir` is unlinked. Symbolic links are unlinked, never followed.
absl::Status RemoveTree(FileSystem& fs, const std::string& dir);

}  // namespace kaas::fs

#endif  // KAAS_FS_FS_UTIL_H_
