// File: testing/fault_injecting_file_system_model.h
//
// The durability model behind FaultInjectingFileSystem
// (testing/fault_injecting_file_system.h): what a power loss would keep of
// the changes made through the wrapper, and how to put the base filesystem
// into that state. Internal to //testing:fault_injecting_file_system; tests
// use the wrapper's API.
//
// The model mirrors the part of the tree the wrapper has touched as nodes
// with an identity, like inodes: a node keeps its identity across renames.
//   * A file node, once loaded (read from the base filesystem before its
//     first change), holds its current bytes and its durable bytes (as of its
//     last successful DataSync/Sync, or as found), plus the lowest offset
//     changed by every write/truncate not yet durable.
//   * A directory node holds, for every name looked up in it so far, the node
//     bound to it now and the node bound to it as of its last successful
//     SyncDir (or as found). Each binding carries the model clock of the
//     operation that made it. Names never looked up are untouched: the base
//     filesystem still shows them as they were found.
// A node discovered in the base filesystem starts out durable as found.
//
// Renames between directories are two bindings: the new name becomes durable
// with the target directory's SyncDir, the removal of the old name with the
// source directory's. If both names are durable (only the target synced), the
// node survives once, at the more recent name (rename(2) never duplicates a
// file); if neither is (only the source synced), the node is lost.
//
// RestoreDurableState() rewrites the base filesystem to the durable tree:
// misplaced entries are renamed aside ("stashed") in their directory, durable
// entries are renamed back, or recreated from memory when their node was
// unlinked, changed files get their durable bytes back (plus whatever part of
// the unsynced tail the caller keeps), and the stashes are removed.
//
// Limits: paths must be absolute and are taken lexically ("." and ".." are
// resolved as text, symbolic links are not modelled); every change to the
// touched part of the tree must go through the wrapper.
//
// Thread-safety: thread-compatible; the wrapper calls it under its mutex.

#ifndef KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_MODEL_H_
#define KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"

namespace kaas::test::fault_fs_internal {

struct Node;

// A directory entry: the node bound to a name (null: no such entry) and the
// model clock of the operation that bound it (0: as found).
struct Entry {
  Node* node = nullptr;
  uint64_t version = 0;
};

struct Node {
  explicit Node(bool is_directory) : is_dir(is_directory) {}

  const bool is_dir;

  // Where the node is linked now. `parent` is null for the root and for
  // unlinked nodes.
  Node* parent = nullptr;
  std::string name;

  // Directories: the names looked up so far, now and as of the last SyncDir
  // (both maps have the same keys), and the clock of the last committed
  // SyncDir.
  std::map<std::string, Entry> entries;
  std::map<std::string, Entry> durable_entries;
  uint64_t durable_entries_version = 0;

  // Files. An unloaded file is unchanged since it was found.
  bool loaded = false;
  std::string content;  // What the base filesystem holds now.
  std::string durable;  // What survives a crash.
  uint64_t durable_version = 0;
  // (clock, lowest offset changed) of every change not yet durable, oldest
  // first. Empty exactly when content == durable.
  std::vector<std::pair<uint64_t, uint64_t>> unsynced;
};

class DurabilityModel {
 public:
  // `base` is not owned and must outlive the model.
  explicit DurabilityModel(fs::FileSystem* base);

  DurabilityModel(const DurabilityModel&) = delete;
  DurabilityModel& operator=(const DurabilityModel&) = delete;

  // Namespace and path operations: each runs the base operation and records
  // it if it succeeds.

  // On success `*file` is the base handle and the result is its node.
  absl::StatusOr<Node*> OpenForWrite(const std::string& path, fs::OpenMode mode,
                                     std::unique_ptr<fs::WritableFile>* file);
  absl::Status Rename(const std::string& from, const std::string& to);
  absl::Status Unlink(const std::string& path);
  absl::Status RemoveDir(const std::string& dir);
  absl::Status CreateDirs(const std::string& dir);

  // Changes made through a handle of `file`, recorded after the base call
  // succeeded.
  void RecordWrite(Node* file, uint64_t offset, absl::string_view data);
  void RecordTruncate(Node* file, uint64_t size);

  // A sync makes durable what was written before it started: take a snapshot
  // when it starts, commit it when the base sync has succeeded. Committing a
  // snapshot older than the durable state is a no-op.
  struct FileSnapshot {
    Node* file = nullptr;
    uint64_t version = 0;
    uint64_t size = 0;
    uint64_t from = 0;  // The snapshot holds content[from, size).
    std::string bytes;
  };
  FileSnapshot SnapshotFile(Node* file) const;
  void Commit(const FileSnapshot& snapshot);

  struct DirSnapshot {
    Node* dir = nullptr;  // Null when `dir` is unknown: nothing to commit.
    uint64_t version = 0;
    std::map<std::string, Entry> entries;
  };
  absl::StatusOr<DirSnapshot> SnapshotDir(const std::string& dir);
  void Commit(const DirSnapshot& snapshot);

  // Bytes of the file at `path` from its first change not yet durable to its
  // end; 0 if all of it is durable.
  absl::StatusOr<uint64_t> UnsyncedBytes(const std::string& path);

  // Given the bytes a file holds past its durable size, returns the bytes
  // that survive the crash there (e.g. a prefix).
  using TailPolicy = absl::FunctionRef<std::string(absl::string_view tail)>;

  // Rewrites the base filesystem to the durable state (see the file
  // comment). The model must be discarded afterwards.
  absl::Status RestoreDurableState(TailPolicy keep_tail);

 private:
  // A path split into its parent directory and last name. `dir` is null if
  // the parent is not a known directory (then the base operation fails);
  // `node` is the node bound to the name (null if none).
  struct Location {
    Node* dir = nullptr;
    std::string name;
    Node* node = nullptr;
  };

  Node* NewNode(bool is_dir);
  std::string PathOf(const Node* node) const;
  std::string ChildPath(const Node* dir, absl::string_view name) const;
  // The node bound to `name` in `dir`, looked up in the base filesystem the
  // first time (and then durable as found).
  absl::StatusOr<Node*> Lookup(Node* dir, const std::string& name);
  absl::StatusOr<Location> Resolve(const std::string& path);
  // Reads the file's bytes from the base filesystem before its first change.
  absl::Status Load(Node* file);
  // Binds `name` in `dir` to `node` (may be null) as a new change.
  void Bind(Node* dir, const std::string& name, Node* node);

  // RestoreDurableState steps.
  struct DurableTree;
  DurableTree BuildDurableTree() const;
  // Rewrites the base file to its durable bytes plus the kept tail.
  // `recreated`: the base file is new and empty.
  absl::Status RewriteContent(Node* file, bool recreated, TailPolicy keep_tail);

  fs::FileSystem* const base_;
  std::vector<std::unique_ptr<Node>> nodes_;
  Node* const root_;
  uint64_t clock_ = 0;  // Advanced by every recorded change.
};

}  // namespace kaas::test::fault_fs_internal

#endif  // KAAS_TESTING_FAULT_INJECTING_FILE_SYSTEM_MODEL_H_
