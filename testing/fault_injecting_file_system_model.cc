// File: testing/fault_injecting_file_system_model.cc

#include "testing/fault_injecting_file_system_model.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "fs/file_opener.h"
#include "fs/file_system.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"

namespace kaas::test::fault_fs_internal {
namespace {

// Names under which RestoreDurableState moves misplaced entries aside.
constexpr absl::string_view kStashPrefix = ".faultfs-crash-stash-";

absl::StatusOr<std::vector<std::string>> SplitPath(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat(
        "fault-injecting filesystem: path \"", path, "\" is not absolute"));
  }
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  return parts;
}

// The base operation succeeded on a path the model could not follow: a
// change behind the wrapper's back, or a symbolic link.
absl::Status OutOfSync(const std::string& path) {
  return absl::InternalError(
      absl::StrCat("fault-injecting filesystem: the model does not know the "
                   "parent directory of \"",
                   path, "\" (changed behind its back?)"));
}

uint64_t LowestUnsyncedOffset(const Node& file) {
  uint64_t lowest = file.content.size();
  for (const auto& [version, offset] : file.unsynced) {
    lowest = std::min(lowest, offset);
  }
  return lowest;
}

bool IsStashed(const Node& node) {
  return node.parent != nullptr && absl::StartsWith(node.name, kStashPrefix);
}

}  // namespace

DurabilityModel::DurabilityModel(fs::FileSystem* base)
    : base_(base), root_(NewNode(/*is_dir=*/true)) {}

Node* DurabilityModel::NewNode(bool is_dir) {
  nodes_.push_back(std::make_unique<Node>(is_dir));
  return nodes_.back().get();
}

std::string DurabilityModel::PathOf(const Node* node) const {
  std::vector<const std::string*> names;
  for (const Node* n = node; n->parent != nullptr; n = n->parent) {
    names.push_back(&n->name);
  }
  if (names.empty()) return "/";
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    absl::StrAppend(&path, "/", **it);
  }
  return path;
}

std::string DurabilityModel::ChildPath(const Node* dir,
                                       absl::string_view name) const {
  if (dir == root_) return absl::StrCat("/", name);
  return absl::StrCat(PathOf(dir), "/", name);
}

absl::StatusOr<Node*> DurabilityModel::Lookup(Node* dir,
                                              const std::string& name) {
  auto it = dir->entries.find(name);
  if (it != dir->entries.end()) return it->second.node;
  Node* node = nullptr;
  absl::StatusOr<fs::FileInfo> info = base_->Stat(ChildPath(dir, name));
  if (info.ok()) {
    node = NewNode(info->is_directory);
    node->parent = dir;
    node->name = name;
  } else if (!absl::IsNotFound(info.status())) {
    return info.status();
  }
  dir->entries[name] = Entry{node, 0};
  dir->durable_entries[name] = Entry{node, 0};
  return node;
}

absl::StatusOr<DurabilityModel::Location> DurabilityModel::Resolve(
    const std::string& path) {
  KAAS_ASSIGN_OR_RETURN(const std::vector<std::string> parts, SplitPath(path));
  Location location;
  if (parts.empty()) {
    location.node = root_;
    return location;
  }
  Node* dir = root_;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    KAAS_ASSIGN_OR_RETURN(Node* const next, Lookup(dir, parts[i]));
    if (next == nullptr || !next->is_dir) return location;
    dir = next;
  }
  location.dir = dir;
  location.name = parts.back();
  KAAS_ASSIGN_OR_RETURN(location.node, Lookup(dir, location.name));
  return location;
}

absl::Status DurabilityModel::Load(Node* file) {
  if (file->loaded) return absl::OkStatus();
  KAAS_ASSIGN_OR_RETURN(file->content,
                        fs::ReadFileToString(*base_, PathOf(file)));
  file->durable = file->content;
  file->loaded = true;
  return absl::OkStatus();
}

void DurabilityModel::Bind(Node* dir, const std::string& name, Node* node) {
  // A name not looked up yet can only be new in a directory created through
  // the model, so it was absent as found.
  dir->durable_entries.try_emplace(name);
  dir->entries[name] = Entry{node, ++clock_};
  if (node != nullptr) {
    node->parent = dir;
    node->name = name;
  }
}

absl::StatusOr<Node*> DurabilityModel::OpenForWrite(
    const std::string& path, fs::OpenMode mode,
    std::unique_ptr<fs::WritableFile>* file) {
  KAAS_ASSIGN_OR_RETURN(const Location location, Resolve(path));
  Node* node = location.node;
  if (node != nullptr && !node->is_dir) KAAS_RETURN_IF_ERROR(Load(node));
  KAAS_ASSIGN_OR_RETURN(*file,
                        fs::FileOpener::OpenForWrite(*base_, path, mode));
  if (node == nullptr) {
    if (location.dir == nullptr) return OutOfSync(path);
    node = NewNode(/*is_dir=*/false);
    node->loaded = true;
    Bind(location.dir, location.name, node);
  } else if (mode == fs::OpenMode::kTruncate) {
    RecordTruncate(node, 0);
  }
  return node;
}

absl::Status DurabilityModel::Rename(const std::string& from,
                                     const std::string& to) {
  KAAS_ASSIGN_OR_RETURN(const Location source, Resolve(from));
  KAAS_ASSIGN_OR_RETURN(const Location target, Resolve(to));
  Node* const replaced = target.node;
  // The replaced file may come back after a crash: keep its bytes.
  if (replaced != nullptr && replaced != source.node && !replaced->is_dir) {
    KAAS_RETURN_IF_ERROR(Load(replaced));
  }
  KAAS_RETURN_IF_ERROR(base_->Rename(from, to));
  if (source.node == nullptr || source.dir == nullptr) return OutOfSync(from);
  if (target.dir == nullptr) return OutOfSync(to);
  if (source.node == replaced) return absl::OkStatus();  // Same file: no-op.
  if (replaced != nullptr) replaced->parent = nullptr;
  Bind(source.dir, source.name, nullptr);
  Bind(target.dir, target.name, source.node);
  return absl::OkStatus();
}

absl::Status DurabilityModel::Unlink(const std::string& path) {
  KAAS_ASSIGN_OR_RETURN(const Location location, Resolve(path));
  Node* const node = location.node;
  // The file comes back after a crash unless the unlink is synced.
  if (node != nullptr && !node->is_dir) KAAS_RETURN_IF_ERROR(Load(node));
  KAAS_RETURN_IF_ERROR(base_->Unlink(path));
  if (node == nullptr || location.dir == nullptr) return OutOfSync(path);
  Bind(location.dir, location.name, nullptr);
  node->parent = nullptr;
  return absl::OkStatus();
}

absl::Status DurabilityModel::RemoveDir(const std::string& dir) {
  KAAS_ASSIGN_OR_RETURN(const Location location, Resolve(dir));
  KAAS_RETURN_IF_ERROR(base_->RemoveDir(dir));
  if (location.node == nullptr || location.dir == nullptr) {
    return OutOfSync(dir);
  }
  Bind(location.dir, location.name, nullptr);
  location.node->parent = nullptr;
  return absl::OkStatus();
}

absl::Status DurabilityModel::CreateDirs(const std::string& dir) {
  KAAS_ASSIGN_OR_RETURN(const std::vector<std::string> parts, SplitPath(dir));
  // The levels that exist before; the base call creates the rest.
  Node* parent = root_;
  size_t level = 0;
  for (; level < parts.size(); ++level) {
    KAAS_ASSIGN_OR_RETURN(Node* const next, Lookup(parent, parts[level]));
    if (next == nullptr || !next->is_dir) break;
    parent = next;
  }
  KAAS_RETURN_IF_ERROR(base_->CreateDirs(dir));
  for (; level < parts.size(); ++level) {
    Node* const created = NewNode(/*is_dir=*/true);
    Bind(parent, parts[level], created);
    parent = created;
  }
  return absl::OkStatus();
}

void DurabilityModel::RecordWrite(Node* file, uint64_t offset,
                                  absl::string_view data) {
  if (data.empty()) return;
  std::string& content = file->content;
  const uint64_t lowest = std::min<uint64_t>(offset, content.size());
  if (offset + data.size() > content.size()) {
    content.resize(offset + data.size(), '\0');
  }
  content.replace(offset, data.size(), data.data(), data.size());
  file->unsynced.emplace_back(++clock_, lowest);
}

void DurabilityModel::RecordTruncate(Node* file, uint64_t size) {
  const uint64_t lowest = std::min<uint64_t>(size, file->content.size());
  file->content.resize(size, '\0');
  file->unsynced.emplace_back(++clock_, lowest);
}

DurabilityModel::FileSnapshot DurabilityModel::SnapshotFile(Node* file) const {
  FileSnapshot snapshot;
  snapshot.file = file;
  snapshot.version = clock_;
  snapshot.size = file->content.size();
  snapshot.from = LowestUnsyncedOffset(*file);
  snapshot.bytes = file->content.substr(snapshot.from);
  return snapshot;
}

void DurabilityModel::Commit(const FileSnapshot& snapshot) {
  Node* const file = snapshot.file;
  if (snapshot.version <= file->durable_version) return;
  // The durable bytes below `from` already equal the snapshot's: every change
  // since the durable state started at or above `from`.
  file->durable.resize(snapshot.size, '\0');
  file->durable.replace(snapshot.from, snapshot.bytes.size(), snapshot.bytes);
  file->durable_version = snapshot.version;
  auto& unsynced = file->unsynced;
  unsynced.erase(unsynced.begin(),
                 std::find_if(unsynced.begin(), unsynced.end(),
                              [&](const std::pair<uint64_t, uint64_t>& change) {
                                return change.first > snapshot.version;
                              }));
}

absl::StatusOr<DurabilityModel::DirSnapshot> DurabilityModel::SnapshotDir(
    const std::string& dir) {
  KAAS_ASSIGN_OR_RETURN(const Location location, Resolve(dir));
  DirSnapshot snapshot;
  if (location.node == nullptr || !location.node->is_dir) return snapshot;
  snapshot.dir = location.node;
  snapshot.version = clock_;
  snapshot.entries = location.node->entries;
  return snapshot;
}

void DurabilityModel::Commit(const DirSnapshot& snapshot) {
  Node* const dir = snapshot.dir;
  if (dir == nullptr || snapshot.version <= dir->durable_entries_version) {
    return;
  }
  // Names looked up after the snapshot keep their as-found durable binding.
  for (const auto& [name, entry] : snapshot.entries) {
    dir->durable_entries[name] = entry;
  }
  dir->durable_entries_version = snapshot.version;
}

absl::StatusOr<uint64_t> DurabilityModel::UnsyncedBytes(
    const std::string& path) {
  KAAS_ASSIGN_OR_RETURN(const Location location, Resolve(path));
  const Node* const file = location.node;
  if (file == nullptr || file->is_dir) {
    return absl::NotFoundError(
        absl::StrCat("UnsyncedBytes: no file at \"", path, "\""));
  }
  return file->content.size() - LowestUnsyncedOffset(*file);
}

// The durable tree: the nodes that survive a crash and where.
struct DurabilityModel::DurableTree {
  // Where each surviving node is bound (directory and name).
  absl::flat_hash_map<const Node*, std::pair<const Node*, std::string>>
      placement;
  std::vector<Node*> dirs;  // Parents before children, starting at the root.
  std::vector<Node*> files;

  bool IsPlacedAt(const Node* node, const Node* dir,
                  const std::string& name) const {
    auto it = placement.find(node);
    return it != placement.end() && it->second.first == dir &&
           it->second.second == name;
  }
};

DurabilityModel::DurableTree DurabilityModel::BuildDurableTree() const {
  // 1. The most recent durable binding of every node that has one.
  struct Binding {
    const Node* dir;
    const std::string* name;
    uint64_t version;
  };
  absl::flat_hash_map<const Node*, Binding> latest;
  std::vector<const Node*> pending = {root_};
  absl::flat_hash_set<const Node*> seen = {root_};
  while (!pending.empty()) {
    const Node* dir = pending.back();
    pending.pop_back();
    for (const auto& [name, entry] : dir->durable_entries) {
      if (entry.node == nullptr) continue;
      const Binding binding{dir, &name, entry.version};
      auto [it, inserted] = latest.try_emplace(entry.node, binding);
      if (!inserted && entry.version > it->second.version) it->second = binding;
      if (entry.node->is_dir && seen.insert(entry.node).second) {
        pending.push_back(entry.node);
      }
    }
  }
  // 2. The nodes whose chosen binding hangs off the root. (Pathological
  // cross-directory renames of directories can make the chosen bindings form
  // a cycle; such nodes are lost.)
  DurableTree tree;
  tree.dirs.push_back(root_);
  for (size_t i = 0; i < tree.dirs.size(); ++i) {
    const Node* dir = tree.dirs[i];
    for (const auto& [name, entry] : dir->durable_entries) {
      if (entry.node == nullptr) continue;
      const Binding& binding = latest.at(entry.node);
      if (binding.dir != dir || *binding.name != name) continue;
      tree.placement[entry.node] = {dir, name};
      (entry.node->is_dir ? tree.dirs : tree.files).push_back(entry.node);
    }
  }
  return tree;
}

absl::Status DurabilityModel::RestoreDurableState(TailPolicy keep_tail) {
  const DurableTree tree = BuildDurableTree();

  // 1. Move every entry of a surviving directory that is not durable there
  // aside, within its directory (so the rename cannot fail for lack of a
  // place), keeping the nodes linked for step 2.
  std::vector<Node*> stashed;
  for (Node* dir : tree.dirs) {
    for (auto& [name, entry] : dir->entries) {
      Node* const node = entry.node;
      if (node == nullptr || tree.IsPlacedAt(node, dir, name)) continue;
      const std::string stash_name = absl::StrCat(kStashPrefix, stashed.size());
      KAAS_RETURN_IF_ERROR(
          base_->Rename(ChildPath(dir, name), ChildPath(dir, stash_name)));
      node->name = stash_name;
      entry.node = nullptr;
      stashed.push_back(node);
    }
  }

  // 2. Put every durable entry in place, parents first: rename it back from
  // where it is now, or recreate it if it was unlinked.
  absl::flat_hash_set<const Node*> recreated;
  for (Node* dir : tree.dirs) {
    for (const auto& [name, durable] : dir->durable_entries) {
      Node* const node = durable.node;
      if (node == nullptr || !tree.IsPlacedAt(node, dir, name)) continue;
      Entry& current = dir->entries[name];
      if (current.node == node) continue;
      const std::string path = ChildPath(dir, name);
      if (node->parent != nullptr) {
        KAAS_RETURN_IF_ERROR(base_->Rename(PathOf(node), path));
      } else if (node->is_dir) {
        KAAS_RETURN_IF_ERROR(base_->CreateDirs(path));
      } else {
        KAAS_ASSIGN_OR_RETURN(
            const std::unique_ptr<fs::WritableFile> file,
            fs::FileOpener::OpenForWrite(*base_, path,
                                         fs::OpenMode::kCreateExclusive));
        KAAS_RETURN_IF_ERROR(file->Close());
        recreated.insert(node);
      }
      current.node = node;
      node->parent = dir;
      node->name = name;
    }
  }

  // 3. Give every surviving changed file its durable bytes back.
  for (Node* file : tree.files) {
    const bool is_recreated = recreated.contains(file);
    if (!is_recreated && file->unsynced.empty()) continue;
    KAAS_RETURN_IF_ERROR(RewriteContent(file, is_recreated, keep_tail));
  }

  // 4. Remove what is left of the stashes (a stash inside another one goes
  // with it).
  for (const Node* node : stashed) {
    if (!IsStashed(*node)) continue;  // Moved back in step 2.
    bool nested = false;
    for (const Node* p = node->parent; p != nullptr; p = p->parent) {
      nested = nested || IsStashed(*p);
    }
    if (!nested) KAAS_RETURN_IF_ERROR(fs::RemoveTree(*base_, PathOf(node)));
  }
  return absl::OkStatus();
}

absl::Status DurabilityModel::RewriteContent(Node* file, bool recreated,
                                             TailPolicy keep_tail) {
  std::string target = file->durable;
  if (file->content.size() > target.size()) {
    target += keep_tail(absl::string_view(file->content).substr(target.size()));
  }
  // The base file already holds the durable bytes below the first unsynced
  // change; rewrite from there.
  const uint64_t from =
      recreated
          ? 0
          : std::min<uint64_t>(LowestUnsyncedOffset(*file), target.size());
  KAAS_ASSIGN_OR_RETURN(const std::unique_ptr<fs::WritableFile> base_file,
                        fs::FileOpener::OpenForWrite(*base_, PathOf(file),
                                                     fs::OpenMode::kMustExist));
  if (from < target.size()) {
    KAAS_RETURN_IF_ERROR(
        base_file->WriteAt(from, absl::string_view(target).substr(from)));
  }
  KAAS_RETURN_IF_ERROR(base_file->Truncate(target.size()));
  return base_file->Close();
}

}  // namespace kaas::test::fault_fs_internal
