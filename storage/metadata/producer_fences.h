// File: storage/metadata/producer_fences.h
//
// The engine-wide record of fenced producer epochs, "<data dir>/
// ~producer-fences" (a ProducerFences message behind the metadata
// envelope). fence_producer_epoch writes it before touching any partition,
// and every partition opened later applies it, so a partition that was not
// open when the fence happened still rejects the fenced epoch (D-24).
// Fences older than the producer-id expiration are dropped when the file is
// rewritten.
//
// The file is written twice, as "~producer-fences" and then
// "~producer-fences.copy", each atomically: a fence lost to a damaged file
// would let a fenced (zombie) producer write again, so losing a fence must
// take the loss of both copies, and then the engine refuses to start rather
// than forget.
//
// Several engines may share one data dir (brokers on a shared volume, each
// leading some partitions). Each rewrites the file under the exclusive lock
// of "~producer-fences.lock" (flock: between processes, and on CephFS and
// NFSv4 between machines), re-reading both copies first, so no engine's
// write drops a fence another recorded; and a take-over re-reads the file
// (Refresh), so a partition opened after another engine's Fence returned
// refuses the fenced epoch too.
//
// The name starts with '~', which no Kafka topic name can contain ([a-zA-Z0-9
// ._-]): the data dir also holds the topic dirs, and a topic named
// "producer-fences" would otherwise be a directory where this file belongs.
//
// Thread-safety: thread-safe; Fence() calls are serialised.

#ifndef KAAS_STORAGE_METADATA_PRODUCER_FENCES_H_
#define KAAS_STORAGE_METADATA_PRODUCER_FENCES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "fs/file_system.h"
#include "storage/metadata/state_snapshot.pb.h"

namespace kaas::metadata {

inline constexpr absl::string_view kProducerFencesFileName = "~producer-fences";
inline constexpr absl::string_view kProducerFencesCopyFileName =
    "~producer-fences.copy";
// Where builds before the rename kept the file. Read (never written) when
// kProducerFencesFileName is absent and it is a regular file, so an upgrade
// keeps the fences; a directory there is a topic's.
inline constexpr absl::string_view kLegacyProducerFencesFileName =
    "producer-fences";
inline constexpr absl::string_view kProducerFencesLockFileName =
    "~producer-fences.lock";
inline constexpr uint16_t kProducerFencesVersion = 1;

class ProducerFenceStore {
 public:
  // Loads the fences of `dir` from both copies (the union, highest epoch per
  // producer). No copy is an empty store (or the legacy single file's
  // fences). One copy corrupt (kDataLoss: damaged, or out-of-range values)
  // or missing: it is set aside as "<name>.corrupt", logged, and both are
  // rewritten from the other. Every existing copy corrupt: kStorageError,
  // nothing changed (starting without the fences would let fenced producers
  // write again). A copy that cannot be read (an I/O or permission error) is
  // kStorageError naming it, and one of a newer format kFailedPrecondition
  // naming it: nothing is set aside or rewritten then.
  //
  // `read_only` changes nothing: a damaged copy is neither set aside nor
  // rewritten, and a store whose every copy is corrupt loads empty instead
  // of failing (tools inspecting a data dir; such a store refuses Fence).
  // `problems`, if not null, receives what was found wrong and what a
  // writable load does about it.
  static absl::StatusOr<std::unique_ptr<ProducerFenceStore>> Load(
      fs::FileSystem* fs, std::string dir, bool read_only = false,
      std::vector<std::string>* problems = nullptr);

  // Records that `producer_id` is fenced at `epoch` (keeps the highest) and
  // rewrites both copies, one after the other; OK only once both are
  // durable. Under the lock file, after merging what both copies hold now
  // (another engine's fences). Fences recorded more than `expiration_ms`
  // before `now_ms` are dropped. Errors: kStorageError when the lock stays
  // held by another engine for seconds, or a copy cannot be read or written;
  // kFailedPrecondition for a copy of a newer format.
  absl::Status Fence(int64_t producer_id, int16_t epoch, int64_t now_ms,
                     int64_t expiration_ms);

  // Merges what both copies hold now into this store (fences another engine
  // sharing the data dir recorded since Load). A missing or corrupt copy
  // adds nothing and is left as it is (Load and Fence repair copies; a
  // reader never does). Errors: a copy that cannot be read (kStorageError)
  // or of a newer format (kFailedPrecondition).
  absl::Status Refresh();

  // The current fences, for a partition being opened.
  ProducerFences Snapshot() const;

 private:
  ProducerFenceStore(fs::FileSystem* fs, std::string dir, bool read_only)
      : fs_(fs), dir_(std::move(dir)), read_only_(read_only) {}

  // Adds `fences` (keeping the highest epoch per producer).
  void Merge(const ProducerFences& fences) ABSL_LOCKS_EXCLUDED(mu_);
  void MergeLocked(const ProducerFences& fences)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Refresh, with mu_ held.
  absl::Status RefreshLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes both copies. REQUIRES: the lock file is held (LockFile).
  absl::Status WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Takes the lock file, retrying for a few seconds while another engine
  // holds it (it holds it for one read and two small writes).
  absl::StatusOr<std::unique_ptr<fs::FileLock>> LockFile() const;

  fs::FileSystem* const fs_;
  const std::string dir_;
  const bool read_only_;
  mutable absl::Mutex mu_;
  // producer id -> (epoch, fenced at ms)
  absl::flat_hash_map<int64_t, std::pair<int32_t, int64_t>> fences_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::metadata

#endif  // KAAS_STORAGE_METADATA_PRODUCER_FENCES_H_
