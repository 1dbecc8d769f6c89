#include "bench/null_file_system.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fs/fs_util.h"

namespace kaas::bench {

struct NullFileSystem::FileData {
  explicit FileData(bool sink) : sink(sink) {}

  // Segment logs: writes only move the size.
  const bool sink;
  const absl::Time created = absl::Now();
  absl::Mutex mu;
  uint64_t size ABSL_GUARDED_BY(mu) = 0;
  std::string contents ABSL_GUARDED_BY(mu);  // always empty for a sink
  // The handle holding the file's lock (WritableFile::TryLock), if any.
  const void* locked_by ABSL_GUARDED_BY(mu) = nullptr;
};

namespace {

using FileData = NullFileSystem::FileData;

std::string Normalize(const std::string& path) {
  std::string out = path;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsImplicitRoot(const std::string& path) {
  return path == "/" || path == "." || path.empty();
}

absl::Status Closed(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("\"", path, "\" is closed"));
}

class NullFile final : public fs::WritableFile {
 public:
  NullFile(std::string path, std::shared_ptr<FileData> data)
      : path_(std::move(path)), data_(std::move(data)) {
    absl::MutexLock lock(&data_->mu);
    end_ = data_->size;
  }

  absl::StatusOr<size_t> ReadAt(uint64_t offset, size_t n,
                                char* dst) const override {
    if (closed_.load()) return Closed(path_);
    absl::MutexLock lock(&data_->mu);
    if (offset >= data_->size) return 0;
    const size_t available =
        static_cast<size_t>(std::min<uint64_t>(n, data_->size - offset));
    if (data_->sink) {
      std::memset(dst, 0, available);
    } else {
      std::memcpy(dst, data_->contents.data() + offset, available);
    }
    return available;
  }

  absl::StatusOr<uint64_t> Size() const override {
    if (closed_.load()) return Closed(path_);
    absl::MutexLock lock(&data_->mu);
    return data_->size;
  }

  const std::string& path() const override { return path_; }

  absl::Status WriteAt(uint64_t offset, absl::string_view data) override {
    if (closed_.load()) return Closed(path_);
    absl::MutexLock lock(&data_->mu);
    const uint64_t end = offset + data.size();
    if (data_->sink) {
      data_->size = std::max(data_->size, end);
      return absl::OkStatus();
    }
    if (data_->contents.size() < end) data_->contents.resize(end, '\0');
    data_->contents.replace(offset, data.size(), data.data(), data.size());
    data_->size = data_->contents.size();
    return absl::OkStatus();
  }

  absl::Status Append(absl::string_view data) override {
    absl::Status status = WriteAt(end_, data);
    if (status.ok()) end_ += data.size();
    return status;
  }

  absl::Status Truncate(uint64_t size) override {
    if (closed_.load()) return Closed(path_);
    absl::MutexLock lock(&data_->mu);
    if (!data_->sink) data_->contents.resize(size, '\0');
    data_->size = size;
    return absl::OkStatus();
  }

  absl::Status DataSync() override {
    return closed_.load() ? Closed(path_) : absl::OkStatus();
  }
  absl::Status Sync() override { return DataSync(); }

  absl::Status TryLock() override {
    if (closed_.load()) return Closed(path_);
    absl::MutexLock lock(&data_->mu);
    if (data_->locked_by != nullptr && data_->locked_by != this) {
      return absl::UnavailableError(
          absl::StrCat("lock \"", path_, "\": held by another handle"));
    }
    data_->locked_by = this;
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (closed_.exchange(true)) return Closed(path_);
    Unlock();
    return absl::OkStatus();
  }

  ~NullFile() override { Unlock(); }

  void Unlock() override {
    absl::MutexLock lock(&data_->mu);
    if (data_->locked_by == this) data_->locked_by = nullptr;
  }

 private:
  const std::string path_;
  const std::shared_ptr<FileData> data_;
  uint64_t end_ = 0;  // where Append writes (single writer)
  std::atomic<bool> closed_{false};
};

}  // namespace

absl::Status NullFileSystem::CheckParentDirLocked(
    const std::string& path) const {
  const std::string parent = fs::Dirname(path);
  if (IsImplicitRoot(parent)) return absl::OkStatus();
  auto it = nodes_.find(parent);
  if (it == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("\"", path, "\": parent directory does not exist"));
  }
  if (!it->second.is_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("\"", path, "\": parent is not a directory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<fs::ReadableFile>> NullFileSystem::OpenForRead(
    const std::string& path) {
  const std::string name = Normalize(path);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("open \"", path, "\": no such file"));
  }
  if (it->second.is_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("open \"", path, "\": is a directory"));
  }
  return std::make_unique<NullFile>(path, it->second.file);
}

absl::StatusOr<std::unique_ptr<fs::WritableFile>> NullFileSystem::OpenForWrite(
    const std::string& path, fs::OpenMode mode) {
  const std::string name = Normalize(path);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it != nodes_.end()) {
    if (it->second.is_directory) {
      return absl::FailedPreconditionError(
          absl::StrCat("open \"", path, "\" for write: is a directory"));
    }
    if (mode == fs::OpenMode::kCreateExclusive) {
      return absl::AlreadyExistsError(
          absl::StrCat("open \"", path, "\" for write: file exists"));
    }
    auto file = std::make_unique<NullFile>(path, it->second.file);
    if (mode == fs::OpenMode::kTruncate) {
      absl::Status truncated = file->Truncate(0);
      if (!truncated.ok()) return truncated;
    }
    return file;
  }
  if (mode == fs::OpenMode::kMustExist) {
    return absl::NotFoundError(
        absl::StrCat("open \"", path, "\" for write: no such file"));
  }
  absl::Status parent = CheckParentDirLocked(name);
  if (!parent.ok()) return parent;
  Node node;
  node.file = std::make_shared<FileData>(absl::EndsWith(name, ".log"));
  std::shared_ptr<FileData> data = node.file;
  nodes_.emplace(name, std::move(node));
  return std::make_unique<NullFile>(path, std::move(data));
}

absl::Status NullFileSystem::SyncDir(const std::string& dir) {
  const std::string name = Normalize(dir);
  if (IsImplicitRoot(name)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.is_directory) {
    return absl::NotFoundError(
        absl::StrCat("sync dir \"", dir, "\": no such directory"));
  }
  return absl::OkStatus();
}

absl::Status NullFileSystem::Rename(const std::string& from,
                                    const std::string& to) {
  const std::string source = Normalize(from);
  const std::string target = Normalize(to);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(source);
  if (it == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("rename \"", from, "\": no such file or directory"));
  }
  absl::Status parent = CheckParentDirLocked(target);
  if (!parent.ok()) return parent;
  if (source == target) return absl::OkStatus();
  auto existing = nodes_.find(target);
  if (existing != nodes_.end() &&
      existing->second.is_directory != it->second.is_directory) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rename \"", from, "\" to \"", to, "\": not the same kind of entry"));
  }
  // Move the entry and, for a directory, everything below it.
  const std::string prefix = source + "/";
  std::vector<std::pair<std::string, Node>> moved;
  moved.emplace_back(target, it->second);
  nodes_.erase(it);
  for (auto child = nodes_.lower_bound(prefix);
       child != nodes_.end() && absl::StartsWith(child->first, prefix);) {
    moved.emplace_back(target + child->first.substr(source.size()),
                       child->second);
    child = nodes_.erase(child);
  }
  for (auto& [name, node] : moved) nodes_[name] = std::move(node);
  return absl::OkStatus();
}

absl::Status NullFileSystem::Unlink(const std::string& path) {
  const std::string name = Normalize(path);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    return absl::NotFoundError(
        absl::StrCat("unlink \"", path, "\": no such file"));
  }
  if (it->second.is_directory) {
    return absl::FailedPreconditionError(
        absl::StrCat("unlink \"", path, "\": is a directory"));
  }
  nodes_.erase(it);
  return absl::OkStatus();
}

absl::Status NullFileSystem::RemoveDir(const std::string& dir) {
  const std::string name = Normalize(dir);
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.is_directory) {
    return absl::NotFoundError(
        absl::StrCat("rmdir \"", dir, "\": no such directory"));
  }
  const std::string prefix = name + "/";
  auto child = nodes_.lower_bound(prefix);
  if (child != nodes_.end() && absl::StartsWith(child->first, prefix)) {
    return absl::FailedPreconditionError(
        absl::StrCat("rmdir \"", dir, "\": directory not empty"));
  }
  nodes_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> NullFileSystem::ListDir(
    const std::string& dir) {
  const std::string name = Normalize(dir);
  absl::MutexLock lock(&mu_);
  if (!IsImplicitRoot(name)) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second.is_directory) {
      return absl::NotFoundError(
          absl::StrCat("list \"", dir, "\": no such directory"));
    }
  }
  const std::string prefix =
      name == "/" ? "/" : (IsImplicitRoot(name) ? "" : name + "/");
  std::vector<std::string> entries;
  for (auto it = nodes_.lower_bound(prefix);
       it != nodes_.end() && absl::StartsWith(it->first, prefix); ++it) {
    absl::string_view rest = absl::string_view(it->first).substr(prefix.size());
    if (!rest.empty() && rest.find('/') == absl::string_view::npos) {
      entries.emplace_back(rest);
    }
  }
  return entries;  // sorted: std::map order
}

absl::StatusOr<fs::FileInfo> NullFileSystem::Stat(const std::string& path) {
  const std::string name = Normalize(path);
  fs::FileInfo info;
  if (IsImplicitRoot(name)) {
    info.is_directory = true;
    return info;
  }
  std::shared_ptr<FileData> file;
  {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) {
      return absl::NotFoundError(
          absl::StrCat("stat \"", path, "\": no such file or directory"));
    }
    info.is_directory = it->second.is_directory;
    info.is_regular = !it->second.is_directory;
    file = it->second.file;
  }
  if (file != nullptr) {
    absl::MutexLock lock(&file->mu);
    info.size = file->size;
    info.mtime = file->created;
  }
  return info;
}

absl::Status NullFileSystem::CreateDirs(const std::string& dir) {
  const std::string name = Normalize(dir);
  absl::MutexLock lock(&mu_);
  // Every prefix ending before a '/' (and the whole path) is a level.
  for (size_t end = 1; end <= name.size(); ++end) {
    if (end < name.size() && name[end] != '/') continue;
    const std::string level = name.substr(0, end);
    if (IsImplicitRoot(level)) continue;
    auto it = nodes_.find(level);
    if (it == nodes_.end()) {
      Node node;
      node.is_directory = true;
      nodes_.emplace(level, std::move(node));
    } else if (!it->second.is_directory) {
      return absl::FailedPreconditionError(
          absl::StrCat("mkdir \"", level, "\": Not a directory"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<fs::VolumeSpace> NullFileSystem::GetVolumeSpace(
    const std::string& path) {
  constexpr uint64_t kTiB = uint64_t{1} << 40;
  return fs::VolumeSpace{kTiB, kTiB};
}

class NullFileSystem::Lock final : public fs::FileLock {
 public:
  Lock(NullFileSystem* fs, std::string path)
      : fs_(fs), path_(std::move(path)) {}
  ~Lock() override {
    absl::MutexLock lock(&fs_->mu_);
    fs_->locked_.erase(path_);
  }
  const std::string& path() const override { return path_; }

 private:
  NullFileSystem* const fs_;
  const std::string path_;
};

absl::StatusOr<std::unique_ptr<fs::FileLock>> NullFileSystem::LockFile(
    const std::string& path) {
  const std::string name = Normalize(path);
  {
    absl::StatusOr<std::unique_ptr<fs::WritableFile>> file =
        OpenForWrite(name, fs::OpenMode::kCreateIfMissing);
    if (!file.ok()) return file.status();
  }
  absl::MutexLock lock(&mu_);
  if (!locked_.insert(name).second) {
    return absl::UnavailableError(
        absl::StrCat("lock \"", path, "\": held by another handle"));
  }
  return std::make_unique<Lock>(this, name);
}

}  // namespace kaas::bench
