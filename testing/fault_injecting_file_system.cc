// File: testing/fault_injecting_file_system.cc

#include "testing/fault_injecting_file_system.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/random/distributions.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "glog/logging.h"
#include "re2/re2.h"
#include "testing/fault_injecting_file_system_model.h"

namespace kaas::test {
namespace {

using fault_fs_internal::DurabilityModel;
using fault_fs_internal::Node;

std::string Quote(absl::string_view path) {
  return absl::StrCat("\"", path, "\"");
}

// The status PosixFileSystem returns when `what` fails with `error`
// (fs/posix_file_system.cc: absl::ErrnoToStatus, but EIO is kInternal),
// marked as injected.
absl::Status InjectedError(int error, absl::string_view what) {
  const absl::Status status = absl::ErrnoToStatus(error, what);
  const absl::StatusCode code =
      error == EIO ? absl::StatusCode::kInternal : status.code();
  return absl::Status(code, absl::StrCat(status.message(), " (injected)"));
}

absl::Status DeadHandleError(absl::string_view operation,
                             absl::string_view path) {
  return absl::FailedPreconditionError(
      absl::StrCat(operation, " ", Quote(path),
                   ": file handle from before the simulated crash"));
}

}  // namespace

absl::string_view FsOpName(FsOp op) {
  switch (op) {
    case FsOp::kAny:
      return "any";
    case FsOp::kOpenForRead:
      return "open-for-read";
    case FsOp::kOpenForWrite:
      return "open-for-write";
    case FsOp::kRead:
      return "read";
    case FsOp::kWrite:
      return "write";
    case FsOp::kAppend:
      return "append";
    case FsOp::kTruncate:
      return "truncate";
    case FsOp::kDataSync:
      return "datasync";
    case FsOp::kSync:
      return "sync";
    case FsOp::kSyncDir:
      return "syncdir";
    case FsOp::kRename:
      return "rename";
    case FsOp::kUnlink:
      return "unlink";
    case FsOp::kRemoveDir:
      return "removedir";
    case FsOp::kListDir:
      return "listdir";
    case FsOp::kStat:
      return "stat";
    case FsOp::kCreateDirs:
      return "createdirs";
    case FsOp::kVolumeSpace:
      return "volume-space";
    case FsOp::kClose:
      return "close";
    case FsOp::kLock:
      return "lock";
  }
  return "unknown";
}

PathPattern PathPattern::Any() { return PathPattern(); }

PathPattern PathPattern::Substring(absl::string_view text) {
  PathPattern pattern;
  pattern.substring_ = std::string(text);
  return pattern;
}

PathPattern PathPattern::Regex(absl::string_view regex) {
  PathPattern pattern;
  pattern.regex_ = std::make_shared<const re2::RE2>(std::string(regex));
  CHECK(pattern.regex_->ok())
      << "PathPattern::Regex(\"" << regex << "\"): " << pattern.regex_->error();
  return pattern;
}

bool PathPattern::Matches(absl::string_view path) const {
  if (regex_ == nullptr) return absl::StrContains(path, substring_);
  return re2::RE2::PartialMatch(re2::StringPiece(path.data(), path.size()),
                                *regex_);
}

// --- File handles -----------------------------------------------------------

// A handle from OpenForRead: reads go straight to the base file.
class FaultInjectingFileSystem::ReadOnlyFile final : public fs::ReadableFile {
 public:
  ReadOnlyFile(FaultInjectingFileSystem* fs, uint64_t epoch,
               std::unique_ptr<fs::ReadableFile> base)
      : fs_(fs), epoch_(epoch), base_(std::move(base)) {}

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    return fs_->HandleReadAt(epoch_, *base_, offset, n, dst);
  }

  absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                int out_fd) const override {
    return fs_->HandleSendTo(epoch_, *base_, offset, n, out_fd);
  }

  // A hint with no effect on what reads return: no fault applies.
  void Prefetch(uint64_t offset, size_t n) const override {
    base_->Prefetch(offset, n);
  }

  absl::StatusOr<uint64_t> Size() const override {
    return fs_->HandleSize(epoch_, *base_);
  }

  const std::string& path() const override { return base_->path(); }

 private:
  FaultInjectingFileSystem* const fs_;
  const uint64_t epoch_;
  const std::unique_ptr<fs::ReadableFile> base_;
};

// A handle from OpenForWrite: every change is applied to the base file and
// recorded in the durability model, under the filesystem's mutex.
class FaultInjectingFileSystem::File final : public fs::WritableFile {
 public:
  File(FaultInjectingFileSystem* fs, uint64_t epoch, Node* node,
       std::unique_ptr<fs::WritableFile> base, uint64_t size)
      : fs_(fs),
        epoch_(epoch),
        node_(node),
        base_(std::move(base)),
        end_(size) {}

  ~File() override { Unlock(); }

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    return fs_->HandleReadAt(epoch_, *base_, offset, n, dst);
  }

  absl::StatusOr<size_t> SendTo(uint64_t offset, size_t n,
                                int out_fd) const override {
    return fs_->HandleSendTo(epoch_, *base_, offset, n, out_fd);
  }

  // A hint with no effect on what reads return: no fault applies.
  void Prefetch(uint64_t offset, size_t n) const override {
    base_->Prefetch(offset, n);
  }

  absl::StatusOr<uint64_t> Size() const override {
    return fs_->HandleSize(epoch_, *base_);
  }

  const std::string& path() const override { return base_->path(); }

  absl::Status WriteAt(uint64_t offset, absl::string_view data) override {
    return Write(FsOp::kWrite, offset, {data});
  }

  absl::Status WriteAtV(uint64_t offset,
                        absl::Span<const absl::string_view> parts) override {
    return Write(FsOp::kWrite, offset, parts);
  }

  // Same rule as PosixWritableFile: the end is the size at open, grown by
  // every write of this handle and set by Truncate.
  absl::Status Append(absl::string_view data) override {
    return Write(FsOp::kAppend, end_, {data});
  }

  absl::Status Truncate(uint64_t size) override {
    absl::MutexLock lock(&fs_->mu_);
    if (fs_->epoch_ != epoch_) return DeadHandleError("truncate", path());
    KAAS_RETURN_IF_ERROR(fs_->CheckFault(
        FsOp::kTruncate, path(),
        absl::StrCat("truncate ", Quote(path()), " to ", size, " bytes")));
    KAAS_RETURN_IF_ERROR(base_->Truncate(size));
    fs_->model_->RecordTruncate(node_, size);
    end_ = size;
    return absl::OkStatus();
  }

  absl::Status DataSync() override {
    return SyncData(FsOp::kDataSync, "fdatasync",
                    [this] { return base_->DataSync(); });
  }

  absl::Status Sync() override {
    return SyncData(FsOp::kSync, "fsync", [this] { return base_->Sync(); });
  }

  // Granted as the wrapper says (GrantDirectIo); the base handle stays
  // buffered, and Write enforces the alignment O_DIRECT would.
  bool TryDirectIo() override {
    absl::MutexLock lock(&fs_->mu_);
    direct_ = fs_->grant_direct_io_;
    return direct_;
  }

  // The lock is the wrapper's own (a table by path), so that Crash() and
  // BreakLocks() can drop it while the handle lives on, as a reboot or a
  // lost lease would.
  absl::Status TryLock() override {
    absl::MutexLock lock(&fs_->mu_);
    if (fs_->epoch_ != epoch_) return DeadHandleError("lock", path());
    KAAS_RETURN_IF_ERROR(fs_->CheckFault(FsOp::kLock, path(),
                                         absl::StrCat("lock ", Quote(path()))));
    auto [held, inserted] = fs_->write_locks_.try_emplace(path(), this);
    if (!inserted && held->second != this) {
      return absl::UnavailableError(absl::StrCat(
          "lock ", Quote(path()), ": held by another process or handle"));
    }
    return absl::OkStatus();
  }

  void Unlock() override {
    absl::MutexLock lock(&fs_->mu_);
    auto held = fs_->write_locks_.find(path());
    if (held != fs_->write_locks_.end() && held->second == this) {
      fs_->write_locks_.erase(held);
    }
  }

  absl::Status Close() override {
    Unlock();
    absl::MutexLock lock(&fs_->mu_);
    if (fs_->epoch_ != epoch_) {
      (void)base_->Close();  // Still release the descriptor.
      return DeadHandleError("close", path());
    }
    if (auto fault = fs_->NextFault(FsOp::kClose, path())) {
      // close(2) releases the descriptor even when it fails.
      (void)base_->Close();
      return InjectedError(fault->error, absl::StrCat("close ", Quote(path())));
    }
    return base_->Close();
  }

 private:
  absl::Status Write(FsOp op, uint64_t offset,
                     absl::Span<const absl::string_view> parts) {
    if (direct_) KAAS_RETURN_IF_ERROR(CheckDirectIoAlignment(offset, parts));
    absl::MutexLock lock(&fs_->mu_);
    if (fs_->epoch_ != epoch_) return DeadHandleError("write", path());
    if (auto fault = fs_->NextFault(op, path())) {
      const std::string data = absl::StrJoin(parts, "");
      const absl::string_view torn = absl::string_view(data).substr(
          0, std::min(fault->torn_write_bytes, data.size()));
      if (!torn.empty() && base_->WriteAt(offset, torn).ok()) {
        Record(offset, {torn});
      }
      return InjectedError(fault->error, absl::StrCat("write ", Quote(path()),
                                                      " at offset ", offset));
    }
    // (A real error may leave a prefix written that the model does not
    // know about; tests inject errors rather than provoke them.)
    KAAS_RETURN_IF_ERROR(parts.size() == 1 ? base_->WriteAt(offset, parts[0])
                                           : base_->WriteAtV(offset, parts));
    Record(offset, parts);
    return absl::OkStatus();
  }

  absl::Status CheckDirectIoAlignment(
      uint64_t offset, absl::Span<const absl::string_view> parts) const {
    constexpr uint64_t kAlign = fs::kDirectIoAlignment;
    bool aligned = offset % kAlign == 0;
    for (absl::string_view part : parts) {
      aligned = aligned && part.size() % kAlign == 0 &&
                reinterpret_cast<uintptr_t>(part.data()) % kAlign == 0;
    }
    if (aligned) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("write ", Quote(path()), " at offset ", offset,
                     ": not aligned for direct I/O (EINVAL)"));
  }

  void Record(uint64_t offset, absl::Span<const absl::string_view> parts)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(fs_->mu_) {
    for (absl::string_view part : parts) {
      if (part.empty()) continue;
      fs_->model_->RecordWrite(node_, offset, part);
      offset += part.size();
      end_ = std::max(end_, offset);
    }
  }

  absl::Status SyncData(FsOp op, absl::string_view syscall,
                        absl::FunctionRef<absl::Status()> base_sync) {
    absl::MutexLock lock(&fs_->mu_);
    if (fs_->epoch_ != epoch_) return DeadHandleError(syscall, path());
    const std::string what = absl::StrCat(syscall, " ", Quote(path()));
    if (auto fault = fs_->NextFault(op, path())) {
      return InjectedError(fault->error, what);
    }
    // What the sync makes durable: the bytes written before it started.
    const DurabilityModel::FileSnapshot snapshot =
        fs_->model_->SnapshotFile(node_);
    return fs_->FinishSync(epoch_, path(), what, base_sync, [&] {
      fs_->mu_.AssertHeld();  // FinishSync holds it
      fs_->model_->Commit(snapshot);
    });
  }

  FaultInjectingFileSystem* const fs_;
  const uint64_t epoch_;
  Node* const node_;  // Valid while epoch_ is current.
  const std::unique_ptr<fs::WritableFile> base_;
  uint64_t end_;         // Where Append writes. Guarded by the single writer.
  bool direct_ = false;  // Set by TryDirectIo, before any write.
};

// --- FaultInjectingFileSystem -----------------------------------------------

absl::StatusOr<size_t> FaultInjectingFileSystem::HandleReadAt(
    uint64_t epoch, const fs::ReadableFile& base, uint64_t offset, size_t n,
    char* dst) {
  absl::MutexLock lock(&mu_);
  if (epoch_ != epoch) return DeadHandleError("read", base.path());
  KAAS_RETURN_IF_ERROR(CheckFault(
      FsOp::kRead, base.path(),
      absl::StrCat("read ", Quote(base.path()), " at offset ", offset)));
  return base.ReadAt(offset, n, dst);
}

absl::StatusOr<size_t> FaultInjectingFileSystem::HandleSendTo(
    uint64_t epoch, const fs::ReadableFile& base, uint64_t offset, size_t n,
    int out_fd) {
  // A transfer is a read of the file: the same faults apply, and a handle
  // from before a simulated power loss is dead for it too.
  absl::MutexLock lock(&mu_);
  if (epoch_ != epoch) return DeadHandleError("send", base.path());
  KAAS_RETURN_IF_ERROR(CheckFault(
      FsOp::kRead, base.path(),
      absl::StrCat("send ", Quote(base.path()), " at offset ", offset)));
  return base.SendTo(offset, n, out_fd);
}

absl::StatusOr<uint64_t> FaultInjectingFileSystem::HandleSize(
    uint64_t epoch, const fs::ReadableFile& base) {
  absl::MutexLock lock(&mu_);
  if (epoch_ != epoch) return DeadHandleError("stat", base.path());
  KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kStat, base.path(),
                                  absl::StrCat("stat ", Quote(base.path()))));
  return base.Size();
}

FaultInjectingFileSystem::FaultInjectingFileSystem(fs::FileSystem* base,
                                                   uint64_t seed)
    : fs::FileSystemWrapper(base),
      base_(base),
      random_(seed),
      model_(std::make_unique<DurabilityModel>(base)) {}

FaultInjectingFileSystem::~FaultInjectingFileSystem() = default;

absl::StatusOr<std::unique_ptr<fs::ReadableFile>>
FaultInjectingFileSystem::OpenForRead(const std::string& path) {
  std::unique_ptr<fs::ReadableFile> opened;
  std::function<void()> hook;
  {
    absl::MutexLock lock(&mu_);
    KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kOpenForRead, path,
                                    absl::StrCat("open ", Quote(path))));
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::ReadableFile> file,
                          fs::FileOpener::OpenForRead(*base_, path));
    opened = std::make_unique<ReadOnlyFile>(this, epoch_, std::move(file));
    if (open_hook_ != nullptr && open_hook_paths_->Matches(path)) {
      hook = std::move(open_hook_);
      open_hook_ = nullptr;
      open_hook_paths_.reset();
    }
  }
  if (hook != nullptr) hook();
  return opened;
}

void FaultInjectingFileSystem::OnNextOpenForRead(PathPattern paths,
                                                 std::function<void()> hook) {
  absl::MutexLock lock(&mu_);
  open_hook_paths_ = std::move(paths);
  open_hook_ = std::move(hook);
}

void FaultInjectingFileSystem::OnSync(
    std::function<void(const std::string& path)> observer) {
  absl::MutexLock lock(&mu_);
  sync_observer_ = std::move(observer);
}

absl::StatusOr<std::unique_ptr<fs::WritableFile>>
FaultInjectingFileSystem::OpenForWrite(const std::string& path,
                                       fs::OpenMode mode) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(
      CheckFault(FsOp::kOpenForWrite, path,
                 absl::StrCat("open ", Quote(path), " for write")));
  std::unique_ptr<fs::WritableFile> file;
  KAAS_ASSIGN_OR_RETURN(Node* const node,
                        model_->OpenForWrite(path, mode, &file));
  return std::make_unique<File>(this, epoch_, node, std::move(file),
                                node->content.size());
}

absl::Status FaultInjectingFileSystem::SyncDir(const std::string& dir) {
  absl::MutexLock lock(&mu_);
  const std::string what = absl::StrCat("fsync directory ", Quote(dir));
  KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kSyncDir, dir, what));
  KAAS_ASSIGN_OR_RETURN(const DurabilityModel::DirSnapshot snapshot,
                        model_->SnapshotDir(dir));
  return FinishSync(
      epoch_, dir, what, [&] { return base_->SyncDir(dir); },
      [&] {
        mu_.AssertHeld();  // FinishSync holds it
        model_->Commit(snapshot);
      });
}

absl::Status FaultInjectingFileSystem::Rename(const std::string& from,
                                              const std::string& to) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(
      CheckFault(FsOp::kRename, from,
                 absl::StrCat("rename ", Quote(from), " to ", Quote(to)), to));
  return model_->Rename(from, to);
}

absl::Status FaultInjectingFileSystem::Unlink(const std::string& path) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(
      CheckFault(FsOp::kUnlink, path, absl::StrCat("unlink ", Quote(path))));
  return model_->Unlink(path);
}

absl::Status FaultInjectingFileSystem::RemoveDir(const std::string& dir) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckFault(
      FsOp::kRemoveDir, dir, absl::StrCat("remove directory ", Quote(dir))));
  return model_->RemoveDir(dir);
}

absl::StatusOr<std::vector<std::string>> FaultInjectingFileSystem::ListDir(
    const std::string& dir) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kListDir, dir,
                                  absl::StrCat("list directory ", Quote(dir))));
  return base_->ListDir(dir);
}

absl::StatusOr<std::vector<fs::DirEntry>>
FaultInjectingFileSystem::ListDirEntries(const std::string& dir) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kListDir, dir,
                                  absl::StrCat("list directory ", Quote(dir))));
  return base_->ListDirEntries(dir);
}

absl::StatusOr<fs::FileInfo> FaultInjectingFileSystem::Stat(
    const std::string& path) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(
      CheckFault(FsOp::kStat, path, absl::StrCat("stat ", Quote(path))));
  return base_->Stat(path);
}

absl::Status FaultInjectingFileSystem::CreateDirs(const std::string& dir) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckFault(
      FsOp::kCreateDirs, dir, absl::StrCat("create directory ", Quote(dir))));
  return model_->CreateDirs(dir);
}

absl::StatusOr<fs::VolumeSpace> FaultInjectingFileSystem::GetVolumeSpace(
    const std::string& path) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(CheckFault(FsOp::kVolumeSpace, path,
                                  absl::StrCat("statvfs ", Quote(path))));
  return base_->GetVolumeSpace(path);
}

// A lock taken through the wrapper: the base lock, dropped when the handle
// goes or at a Crash(), whichever comes first.
struct FaultInjectingFileSystem::HeldLock {
  absl::Mutex mu;
  std::unique_ptr<fs::FileLock> base ABSL_GUARDED_BY(mu);
};

class FaultInjectingFileSystem::Lock final : public fs::FileLock {
 public:
  Lock(std::string path, std::shared_ptr<HeldLock> held)
      : path_(std::move(path)), held_(std::move(held)) {}
  ~Lock() override {
    absl::MutexLock lock(&held_->mu);
    held_->base.reset();
  }
  const std::string& path() const override { return path_; }

 private:
  const std::string path_;
  const std::shared_ptr<HeldLock> held_;
};

absl::StatusOr<std::unique_ptr<fs::FileLock>>
FaultInjectingFileSystem::LockFile(const std::string& path) {
  absl::MutexLock lock(&mu_);
  KAAS_RETURN_IF_ERROR(
      CheckFault(FsOp::kLock, path, absl::StrCat("lock ", Quote(path))));
  {
    // Created like any other file, so that the model knows the name.
    std::unique_ptr<fs::WritableFile> file;
    KAAS_RETURN_IF_ERROR(
        model_->OpenForWrite(path, fs::OpenMode::kCreateIfMissing, &file)
            .status());
  }
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<fs::FileLock> base_lock,
                        fs::FileOpener::LockFile(*base_, path));
  auto held = std::make_shared<HeldLock>();
  {
    absl::MutexLock held_lock(&held->mu);
    held->base = std::move(base_lock);
  }
  locks_.erase(std::remove_if(locks_.begin(), locks_.end(),
                              [](const std::weak_ptr<HeldLock>& weak) {
                                return weak.expired();
                              }),
               locks_.end());
  locks_.push_back(held);
  return std::make_unique<Lock>(path, std::move(held));
}

// --- Power loss -------------------------------------------------------------

void FaultInjectingFileSystem::ReleaseLocksLocked() {
  for (const std::weak_ptr<HeldLock>& weak : locks_) {
    if (std::shared_ptr<HeldLock> held = weak.lock()) {
      absl::MutexLock held_lock(&held->mu);
      held->base.reset();
    }
  }
  locks_.clear();
  write_locks_.clear();
}

void FaultInjectingFileSystem::BreakLocks() {
  absl::MutexLock lock(&mu_);
  ReleaseLocksLocked();
}

void FaultInjectingFileSystem::Crash(const CrashOptions& options) {
  absl::MutexLock lock(&mu_);
  // A rebooted machine holds no locks.
  ReleaseLocksLocked();
  const absl::Status restored =
      model_->RestoreDurableState([&](absl::string_view tail) {
        mu_.AssertHeld();  // called on this thread, under the lock
        return TornTail(options, tail);
      });
  CHECK(restored.ok()) << "FaultInjectingFileSystem::Crash: restoring the "
                          "durable state failed: "
                       << restored;
  model_ = std::make_unique<DurabilityModel>(base_);
  ++epoch_;
}

std::string FaultInjectingFileSystem::TornTail(const CrashOptions& options,
                                               absl::string_view tail) {
  size_t kept = 0;
  switch (options.tail) {
    case UnsyncedTail::kDrop:
      break;
    case UnsyncedTail::kKeepRandomPrefix:
      kept =
          absl::Uniform<size_t>(absl::IntervalClosed, random_, 0, tail.size());
      break;
    case UnsyncedTail::kKeepAll:
      kept = tail.size();
      break;
  }
  std::string result(tail.substr(0, kept));
  switch (options.content) {
    case TailContent::kWritten:
      break;
    case TailContent::kZeros:
      std::fill(result.begin(), result.end(), '\0');
      break;
    case TailContent::kGarbage:
      for (char& c : result)
        c = static_cast<char>(absl::Uniform<uint8_t>(random_));
      break;
  }
  return result;
}

absl::StatusOr<uint64_t> FaultInjectingFileSystem::UnsyncedBytes(
    const std::string& path) {
  absl::MutexLock lock(&mu_);
  return model_->UnsyncedBytes(path);
}

// --- Injected errors --------------------------------------------------------

void FaultInjectingFileSystem::InjectFault(Fault fault) {
  CHECK(fault.count > 0 || fault.count == Fault::kForever)
      << "Fault::count must be positive or kForever, got " << fault.count;
  CHECK_GE(fault.skip, 0);
  absl::MutexLock lock(&mu_);
  faults_.push_back(std::move(fault));
}

void FaultInjectingFileSystem::ClearFaults() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
}

absl::Status FaultInjectingFileSystem::CheckFault(
    FsOp op, absl::string_view path, absl::string_view what,
    absl::string_view other_path) {
  if (auto fault = NextFault(op, path, other_path)) {
    return InjectedError(fault->error, what);
  }
  return absl::OkStatus();
}

absl::optional<FaultInjectingFileSystem::InjectedFault>
FaultInjectingFileSystem::NextFault(FsOp op, absl::string_view path,
                                    absl::string_view other_path) {
  ++counts_[static_cast<int>(op)];
  absl::optional<InjectedFault> fired;
  for (auto it = faults_.begin(); it != faults_.end();) {
    Fault& fault = *it;
    const bool matches =
        (fault.op == FsOp::kAny || fault.op == op) &&
        (fault.path.Matches(path) ||
         (!other_path.empty() && fault.path.Matches(other_path)));
    if (matches && fault.skip > 0) {
      --fault.skip;
    } else if (matches) {
      if (!fired) fired = InjectedFault{fault.error, fault.torn_write_bytes};
      if (fault.count != Fault::kForever && --fault.count == 0) {
        it = faults_.erase(it);
        continue;
      }
    }
    ++it;
  }
  return fired;
}

// --- Blocked and slow syncs -------------------------------------------------

void FaultInjectingFileSystem::BlockSyncs(PathPattern paths) {
  absl::MutexLock lock(&mu_);
  blocked_paths_ = std::move(paths);
}

void FaultInjectingFileSystem::ReleaseSyncs() {
  absl::MutexLock lock(&mu_);
  blocked_paths_.reset();
  ++release_generation_;
}

void FaultInjectingFileSystem::WaitUntilBlockedSyncs(int n) {
  absl::MutexLock lock(&mu_);
  auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return blocked_syncs_ >= n;
  };
  mu_.Await(absl::Condition(&enough));
}

int FaultInjectingFileSystem::BlockedSyncs() {
  absl::MutexLock lock(&mu_);
  return blocked_syncs_;
}

void FaultInjectingFileSystem::GrantDirectIo(bool grant) {
  absl::MutexLock lock(&mu_);
  grant_direct_io_ = grant;
}

void FaultInjectingFileSystem::SetSyncDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  sync_delay_ = delay;
}

void FaultInjectingFileSystem::WaitIfSyncBlocked(absl::string_view path) {
  if (!blocked_paths_.has_value() || !blocked_paths_->Matches(path)) return;
  const uint64_t generation = release_generation_;
  auto released = [this, generation]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return release_generation_ != generation;
  };
  ++blocked_syncs_;
  mu_.Await(absl::Condition(&released));
  --blocked_syncs_;
}

absl::Status FaultInjectingFileSystem::FinishSync(
    uint64_t epoch, absl::string_view path, const std::string& what,
    absl::FunctionRef<absl::Status()> base_sync,
    absl::FunctionRef<void()> commit) {
  WaitIfSyncBlocked(path);
  absl::Status status;
  if (epoch_ == epoch) {
    const absl::Duration delay = sync_delay_;
    const std::function<void(const std::string&)> observer = sync_observer_;
    // The real (possibly slow) sync runs without the lock; a Crash() may
    // happen meanwhile.
    mu_.Unlock();
    if (observer != nullptr) observer(std::string(path));
    if (delay > absl::ZeroDuration()) absl::SleepFor(delay);
    status = base_sync();
    mu_.Lock();
  }
  if (epoch_ != epoch) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": sync from before the simulated crash"));
  }
  if (status.ok()) commit();
  return status;
}

// --- Counters ---------------------------------------------------------------

int64_t FaultInjectingFileSystem::Count(FsOp op) {
  absl::MutexLock lock(&mu_);
  if (op != FsOp::kAny) return counts_[static_cast<int>(op)];
  int64_t total = 0;
  for (int64_t count : counts_) total += count;
  return total;
}

void FaultInjectingFileSystem::ResetCounts() {
  absl::MutexLock lock(&mu_);
  counts_.fill(0);
}

}  // namespace kaas::test
