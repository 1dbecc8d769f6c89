// File: storage/segment/sparse_index.h
//
// The core both sparse indexes of a segment share (OffsetIndex, TimeIndex;
// Kafka's AbstractIndex): fixed-size entries, strictly increasing, held in
// memory in their on-disk encoding, so that persisting is a copy of bytes,
// decoding a file keeps a prefix of its bytes, and memory is the file's
// size. The two indexes are thin types over it: `Format` says how an entry
// is encoded (relative to the segment's base offset) and what each index
// adds (lookups, appends, truncation by its own key).
//
// A Format provides:
//   using Entry = ...;                        // absolute values
//   static constexpr size_t kEntrySize;
//   static constexpr absl::string_view kName;  // "index", for messages
//   static Entry Read(const char* bytes, int64_t base_offset);
//   static void Write(const Entry& entry, int64_t base_offset, char* bytes);
//
// Thread-safety: thread-safe. Readers (lookups, lock-free with respect to
// the partition) may run concurrently with the single writer (appends,
// truncation); an internal reader/writer lock protects the entries.

#ifndef KAAS_STORAGE_SEGMENT_SPARSE_INDEX_H_
#define KAAS_STORAGE_SEGMENT_SPARSE_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "glog/logging.h"

namespace kaas::segment {

// What decoding an index file gives: the longest valid prefix of its
// entries, and a precise description of the first invalid part (empty when
// the whole file was valid).
template <typename Index>
struct DecodedIndex {
  Index index;
  std::string problem;
};

template <typename Format>
class SparseIndex {
 public:
  using Entry = typename Format::Entry;
  static constexpr size_t kEntrySize = Format::kEntrySize;

  explicit SparseIndex(int64_t base_offset) : base_offset_(base_offset) {}

  // Copies take the source's lock. Assignment replaces the entries (e.g.
  // with a rebuilt index); REQUIRES: other.base_offset() == base_offset().
  SparseIndex(const SparseIndex& other) : base_offset_(other.base_offset_) {
    absl::ReaderMutexLock lock(&other.mu_);
    bytes_ = other.bytes_;
  }
  SparseIndex& operator=(const SparseIndex& other) {
    if (this == &other) return *this;
    CHECK_EQ(base_offset_, other.base_offset_)
        << "an index belongs to one segment";
    // Copy out under the source's lock, then install under ours: never
    // holding both means `a = b` and `b = a` at once cannot deadlock.
    std::string bytes;
    {
      absl::ReaderMutexLock lock(&other.mu_);
      bytes = other.bytes_;
    }
    absl::MutexLock lock(&mu_);
    bytes_ = std::move(bytes);
    return *this;
  }

  int64_t base_offset() const { return base_offset_; }

  size_t size() const {
    absl::ReaderMutexLock lock(&mu_);
    return bytes_.size() / kEntrySize;
  }

  std::optional<Entry> last() const {
    absl::ReaderMutexLock lock(&mu_);
    if (bytes_.empty()) return std::nullopt;
    return EntryLocked(bytes_.size() / kEntrySize - 1);
  }

  std::vector<Entry> entries() const {
    absl::ReaderMutexLock lock(&mu_);
    std::vector<Entry> result;
    result.reserve(bytes_.size() / kEntrySize);
    for (size_t i = 0; i < bytes_.size() / kEntrySize; ++i) {
      result.push_back(EntryLocked(i));
    }
    return result;
  }

  // The on-disk encoding of entries [from_entry, to_entry) (to the end by
  // default). REQUIRES: from_entry <= to_entry <= size().
  std::string Encode(size_t from_entry = 0) const {
    absl::ReaderMutexLock lock(&mu_);
    CHECK_LE(from_entry * kEntrySize, bytes_.size());
    return bytes_.substr(from_entry * kEntrySize);
  }
  std::string Encode(size_t from_entry, size_t to_entry) const {
    absl::ReaderMutexLock lock(&mu_);
    CHECK_LE(from_entry, to_entry);
    CHECK_LE(to_entry * kEntrySize, bytes_.size());
    return bytes_.substr(from_entry * kEntrySize,
                         (to_entry - from_entry) * kEntrySize);
  }

 protected:
  // How many leading entries satisfy `before` (entries increase, so they
  // form a prefix): a binary search.
  size_t CountPrefix(absl::FunctionRef<bool(const Entry&)> before) const {
    absl::ReaderMutexLock lock(&mu_);
    return CountPrefixLocked(before);
  }

  // The last entry that satisfies `before`, if any.
  std::optional<Entry> LastOf(
      absl::FunctionRef<bool(const Entry&)> before) const {
    absl::ReaderMutexLock lock(&mu_);
    const size_t count = CountPrefixLocked(before);
    if (count == 0) return std::nullopt;
    return EntryLocked(count - 1);
  }

  // Removes every entry that does not satisfy `before`.
  void KeepPrefix(absl::FunctionRef<bool(const Entry&)> before) {
    absl::MutexLock lock(&mu_);
    bytes_.resize(CountPrefixLocked(before) * kEntrySize);
  }

  // Appends `entry` if `follows(last entry or nullopt, entry)`; returns
  // whether it did.
  bool AppendIf(const Entry& entry,
                absl::FunctionRef<bool(const std::optional<Entry>& last,
                                       const Entry& entry)>
                    follows) {
    absl::MutexLock lock(&mu_);
    const std::optional<Entry> last =
        bytes_.empty()
            ? std::nullopt
            : std::optional<Entry>(EntryLocked(bytes_.size() / kEntrySize - 1));
    if (!follows(last, entry)) return false;
    const size_t at = bytes_.size();
    bytes_.resize(at + kEntrySize);
    Format::Write(entry, base_offset_, &bytes_[at]);
    return true;
  }

  // Decodes an index file into `index`: the longest prefix of whole entries
  // that `problem(i, previous entry or nullopt, entry)` finds nothing wrong
  // with (it returns a description of what is wrong, or empty). Returns the
  // first problem, or one about a partial last entry, or empty.
  static std::string DecodeInto(
      absl::string_view bytes,
      absl::FunctionRef<std::string(size_t i, const std::optional<Entry>&,
                                    const Entry&)>
          problem,
      SparseIndex* index) {
    std::string found;
    std::optional<Entry> previous;
    size_t kept = 0;
    const size_t whole = bytes.size() / kEntrySize;
    for (; kept < whole; ++kept) {
      const Entry entry =
          Format::Read(bytes.data() + kept * kEntrySize, index->base_offset_);
      found = problem(kept, previous, entry);
      if (!found.empty()) break;
      previous = entry;
    }
    if (found.empty() && bytes.size() % kEntrySize != 0) {
      found = absl::StrCat(Format::kName, " size ", bytes.size(),
                           " is not a multiple of ", kEntrySize);
    }
    absl::MutexLock lock(&index->mu_);
    index->bytes_.assign(bytes.data(), kept * kEntrySize);
    return found;
  }

 private:
  Entry EntryLocked(size_t i) const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return Format::Read(bytes_.data() + i * kEntrySize, base_offset_);
  }
  size_t CountPrefixLocked(absl::FunctionRef<bool(const Entry&)> before) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    size_t low = 0;
    size_t high = bytes_.size() / kEntrySize;
    while (low < high) {
      const size_t middle = low + (high - low) / 2;
      if (before(EntryLocked(middle))) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    return low;
  }

  const int64_t base_offset_;
  mutable absl::Mutex mu_;
  // The entries, encoded as in the index file.
  std::string bytes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kaas::segment

#endif  // KAAS_STORAGE_SEGMENT_SPARSE_INDEX_H_
