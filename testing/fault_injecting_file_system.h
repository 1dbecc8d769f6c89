// File: testing/fault_injecting_file_system.h
//
// A FileSystem for tests that wraps any other one (usually PosixFileSystem
// on a temp dir) and adds what a real disk does to an engine on a bad day:
//
//   * simulated power loss: Crash() puts the base filesystem back into the
//     state the durability contract of fs/file_system.h guarantees, dropping
//     unsynced writes, creates, renames and unlinks;
//   * injected errors: fail chosen operations on chosen paths with an errno;
//   * blocked or slow syncs, so a test can hold an fsync in flight;
//   * per-operation call counters.
//
//   PosixFileSystem posix;
//   FaultInjectingFileSystem fs(&posix, /*seed=*/42);
//   ... engine writes through &fs ...
//   Fault fault(FsOp::kDataSync, EIO);
//   fault.path = PathPattern::Substring(".log");
//   fs.InjectFault(fault);  // The next DataSync of a .log file fails.
//   fs.Crash();  // Power loss: reopen the engine on &fs and check recovery.
//
// The crash model (details in testing/fault_injecting_file_system_model.h):
//   * Files have an identity that survives renames (like inodes). For each
//     file the wrapper knows its durable bytes: as found when first touched
//     (everything that existed before counts as durable), then as of its last
//     successful DataSync()/Sync(), which makes durable what was written
//     before the sync *started*.
//   * For each directory it knows its durable entries (name -> file or
//     directory): as found, then as of its last successful SyncDir(). Creates,
//     renames, unlinks, RemoveDir and CreateDirs change entries, and each
//     change is durable once the changed directory is synced. A rename
//     between two directories is durable at the new name once the target
//     directory is synced, and gone from the old name once the source is
//     synced; if both names are durable the file survives once, at the new
//     name; if neither is (source synced, target not), it is lost.
//   * Crash() rewrites the base filesystem to the durable tree: unsynced
//     creates and mkdirs disappear (with everything below them), unsynced
//     unlinks and renames are undone (a replaced rename target comes back
//     with its durable bytes), and every file gets its durable bytes back,
//     except that bytes past the durable size may survive in part, as
//     CrashOptions says (a torn append).
//   * After Crash() every handle opened before it is dead (each call fails
//     with kFailedPrecondition "... from before the simulated crash"), a sync
//     in flight fails, and tracking restarts with everything durable, like a
//     freshly booted machine. Faults, blocked-sync patterns and counters are
//     test settings and survive the crash.
//
// Paths must be absolute. Every change to the touched part of the tree must
// go through the wrapper; symbolic links are not modelled.
//
// Thread-safety: thread-safe. Every operation's base call and bookkeeping run
// under one mutex, so each operation happened entirely before a Crash() or
// fails; syncs release it while they are blocked, delayed or in the base
// call. (So the wrapper serialises file I/O, which can hide some data races
// of its callers from TSan.) File handles must not outlive the wrapper.

#ifndef KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_
#define KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "fs/file_system.h"
#include "fs/file_system_wrapper.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace kaas::test {
namespace fault_fs_internal {
class DurabilityModel;  // testing/fault_injecting_file_system_model.h
}  // namespace fault_fs_internal

// The operations of the FileSystem seam, for faults and counters.
enum class FsOp {
  kAny,          // Matches every operation (faults); the total (counters).
  kOpenForRead,  // FileSystem::OpenForRead
  kOpenForWrite,
  kRead,      // ReadAt on any handle
  kWrite,     // WriteAt, WriteAtV
  kAppend,    // WritableFile::Append
  kTruncate,  // WritableFile::Truncate
  kDataSync,
  kSync,
  kSyncDir,
  kRename,
  kUnlink,
  kRemoveDir,
  kListDir,  // ListDir and ListDirEntries
  kStat,     // Stat, Exists, and Size on any handle
  kCreateDirs,
  kVolumeSpace,  // GetVolumeSpace
  kClose,        // WritableFile::Close
  kLock,         // LockFile, WritableFile::TryLock
};
inline constexpr int kNumFsOps = static_cast<int>(FsOp::kLock) + 1;

absl::string_view FsOpName(FsOp op);

// Which paths a fault or a sync block applies to. Copyable.
class PathPattern {
 public:
  // Every path.
  static PathPattern Any();
  // Paths containing `text`.
  static PathPattern Substring(absl::string_view text);
  // Paths in which the RE2 `regex` matches somewhere (anchor it with ^...$
  // to match whole paths). An invalid regex is a programmer error (CHECK).
  static PathPattern Regex(absl::string_view regex);

  bool Matches(absl::string_view path) const;

 private:
  PathPattern() = default;

  std::string substring_;
  std::shared_ptr<const re2::RE2> regex_;  // Null: match by substring_.
};

// An injected error: the calls of `op` on a path matching `path` fail with
// `error`, with the status code and message the POSIX implementation gives
// for that errno, marked "(injected)" (EIO -> kInternal, ENOSPC ->
// kResourceExhausted, ENOENT -> kNotFound, EROFS -> kPermissionDenied...).
// The first `skip` matching calls succeed, the next `count` fail (kForever:
// all of them, until ClearFaults()). An injected failure has no effect,
// except that a failed write or append first writes the first
// `torn_write_bytes` bytes of its data (a torn write).
struct Fault {
  static constexpr int kForever = -1;

  Fault(FsOp op, int error) : op(op), error(error) {}

  FsOp op;
  PathPattern path = PathPattern::Any();  // Rename matches either path.
  int error;
  int skip = 0;
  int count = 1;
  size_t torn_write_bytes = 0;
};

// What a crash keeps of the bytes a file holds past its durable size.
enum class UnsyncedTail {
  kDrop,              // Nothing.
  kKeepRandomPrefix,  // A prefix of random length (from the seeded generator).
  kKeepAll,           // All of them.
};

// What the kept bytes of an unsynced tail contain.
enum class TailContent {
  kWritten,  // What was written.
  kZeros,    // Zeros (the size was persisted, the data was not).
  kGarbage,  // Random bytes.
};

struct CrashOptions {
  UnsyncedTail tail = UnsyncedTail::kDrop;
  TailContent content = TailContent::kWritten;
};

class FaultInjectingFileSystem final : public fs::FileSystemWrapper {
 public:
  // `base` is not owned and must outlive this object. `seed` drives every
  // random choice (torn tail lengths, garbage bytes), so a test is
  // reproducible.
  FaultInjectingFileSystem(fs::FileSystem* base, uint64_t seed);
  ~FaultInjectingFileSystem() override;

  FaultInjectingFileSystem(const FaultInjectingFileSystem&) = delete;
  FaultInjectingFileSystem& operator=(const FaultInjectingFileSystem&) = delete;

  // fs::FileSystem (opening is private, as there: fs/file_opener.h).
  absl::Status SyncDir(const std::string& dir) override;
  absl::Status Rename(const std::string& from, const std::string& to) override;
  absl::Status Unlink(const std::string& path) override;
  absl::Status RemoveDir(const std::string& dir) override;
  absl::StatusOr<std::vector<std::string>> ListDir(
      const std::string& dir) override;
  absl::StatusOr<std::vector<fs::DirEntry>> ListDirEntries(
      const std::string& dir) override;
  absl::StatusOr<fs::FileInfo> Stat(const std::string& path) override;
  absl::Status CreateDirs(const std::string& dir) override;
  absl::StatusOr<fs::VolumeSpace> GetVolumeSpace(
      const std::string& path) override;

  // --- Power loss ---------------------------------------------------------

  // Simulates a power loss and reboot (see the file comment). Dies if the
  // base filesystem fails while being restored: the test environment is
  // broken then.
  void Crash(const CrashOptions& options = CrashOptions());

  // Bytes of the file at `path` from its first change not yet durable to its
  // end (0: all durable). kNotFound if there is no such file.
  absl::StatusOr<uint64_t> UnsyncedBytes(const std::string& path);

  // Releases every lock taken so far without telling its holders, as a
  // filesystem does that drops a client's locks (an evicted CephFS session,
  // an expired NFS lease) while the client still runs: another holder can
  // then take them. Their handles keep working.
  void BreakLocks();

  // --- Direct I/O -----------------------------------------------------------

  // Whether write handles grant WritableFile::TryDirectIo from now on
  // (default false, as on a filesystem without direct I/O). A granted
  // handle refuses writes whose offset, part lengths or part addresses are
  // not multiples of fs::kDirectIoAlignment (kInvalidArgument, as O_DIRECT's
  // EINVAL), so the direct-I/O write path runs through the crash model with
  // the device's alignment rules enforced; the bytes still go to the base
  // filesystem through its page cache.
  void GrantDirectIo(bool grant);

  // --- Injected errors ----------------------------------------------------

  // Adds a fault. Faults are independent: each counts the calls it matches,
  // and a call fails if any fault fires (with the error of the first one
  // added).
  void InjectFault(Fault fault);
  void ClearFaults();

  // --- Blocked and slow syncs ---------------------------------------------

  // From now on, DataSync/Sync/SyncDir calls on paths matching `paths` block
  // (holding no lock of this object) until ReleaseSyncs(). Replaces the
  // previous pattern.
  void BlockSyncs(PathPattern paths);
  // Lets every blocked sync go on (each then does the real sync) and stops
  // blocking new ones. A sync blocked across a Crash() fails.
  void ReleaseSyncs();
  // Waits until at least `n` syncs are blocked.
  void WaitUntilBlockedSyncs(int n);
  int BlockedSyncs();
  // Every DataSync/Sync/SyncDir sleeps `delay` before the real sync (a slow
  // device). Zero turns it off.
  void SetSyncDelay(absl::Duration delay);

  // --- Hooks --------------------------------------------------------------

  // Runs `hook` once, on the opening thread and holding no lock of this
  // object, when the next OpenForRead of a path matching `paths` has opened
  // the file, before the handle is returned: a test can make something happen
  // exactly between a reader's checks and its use of a new descriptor.
  // Replaces a hook not yet run; a null `hook` just removes it.
  void OnNextOpenForRead(PathPattern paths, std::function<void()> hook);

  // Calls `observer` with the path of every DataSync/Sync/SyncDir from now
  // on, on the syncing thread and holding no lock of this object, just
  // before the real sync (after a blocked sync is released): a test can see
  // which thread synced what. Replaces the previous observer; null removes
  // it.
  void OnSync(std::function<void(const std::string& path)> observer);

  // --- Counters -----------------------------------------------------------

  // Calls of `op` so far (kAny: of all operations), including injected
  // failures, excluding calls on handles from before a crash.
  int64_t Count(FsOp op);
  void ResetCounts();

 private:
  absl::StatusOr<std::unique_ptr<fs::ReadableFile>> OpenForRead(
      const std::string& path) override;
  absl::StatusOr<std::unique_ptr<fs::WritableFile>> OpenForWrite(
      const std::string& path, fs::OpenMode mode) override;
  // The lock file is created through the durability model (like any file);
  // the lock itself is the base filesystem's. Crash() releases every lock
  // taken before it, as a reboot would.
  absl::StatusOr<std::unique_ptr<fs::FileLock>> LockFile(
      const std::string& path) override;

  class ReadOnlyFile;
  class File;
  class Lock;
  struct HeldLock;

  struct InjectedFault {
    int error;
    size_t torn_write_bytes;
  };

  // ReadAt, SendTo and Size of the handles opened in crash epoch `epoch`.
  absl::StatusOr<size_t> HandleReadAt(uint64_t epoch,
                                      const fs::ReadableFile& base,
                                      uint64_t offset, size_t n, char* dst)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<size_t> HandleSendTo(uint64_t epoch,
                                      const fs::ReadableFile& base,
                                      uint64_t offset, size_t n, int out_fd)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<uint64_t> HandleSize(uint64_t epoch,
                                      const fs::ReadableFile& base)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Counts a call of `op` on `path` (and `other_path`) and returns the fault
  // that fails it, if any.
  absl::optional<InjectedFault> NextFault(FsOp op, absl::string_view path,
                                          absl::string_view other_path = {})
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // NextFault as a status: the injected error of `what` (a description of
  // the call, as PosixFileSystem words it), or OK.
  absl::Status CheckFault(FsOp op, absl::string_view path,
                          absl::string_view what,
                          absl::string_view other_path = {})
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Blocks while syncs of `path` are blocked; releases mu_ meanwhile.
  void WaitIfSyncBlocked(absl::string_view path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The second half of every sync, after its snapshot: waits if blocked,
  // sleeps the delay, runs `base_sync` without the lock, then (if no crash
  // happened since `epoch`) runs `commit`. `what` names the sync in errors.
  // Returns with mu_ held, but releases it meanwhile.
  absl::Status FinishSync(uint64_t epoch, absl::string_view path,
                          const std::string& what,
                          absl::FunctionRef<absl::Status()> base_sync,
                          absl::FunctionRef<void()> commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string TornTail(const CrashOptions& options, absl::string_view tail)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReleaseLocksLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction: target(), the wrapped filesystem.
  fs::FileSystem* const base_;

  absl::Mutex mu_;
  std::mt19937_64 random_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<fault_fs_internal::DurabilityModel> model_
      ABSL_GUARDED_BY(mu_);
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;  // Crash() count.
  std::vector<Fault> faults_ ABSL_GUARDED_BY(mu_);
  absl::optional<PathPattern> blocked_paths_ ABSL_GUARDED_BY(mu_);
  uint64_t release_generation_ ABSL_GUARDED_BY(mu_) = 0;
  int blocked_syncs_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration sync_delay_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  bool grant_direct_io_ ABSL_GUARDED_BY(mu_) = false;
  std::array<int64_t, kNumFsOps> counts_ ABSL_GUARDED_BY(mu_) = {};
  absl::optional<PathPattern> open_hook_paths_ ABSL_GUARDED_BY(mu_);
  std::function<void()> open_hook_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::string&)> sync_observer_ ABSL_GUARDED_BY(mu_);
  // Locks taken and not released yet (Crash() releases them).
  std::vector<std::weak_ptr<HeldLock>> locks_ ABSL_GUARDED_BY(mu_);
  // Locks taken through write handles (WritableFile::TryLock): path -> the
  // handle holding it.
  absl::flat_hash_map<std::string, const void*> write_locks_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::test

#endif  // KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_H_
