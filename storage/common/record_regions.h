// File: storage/common/record_regions.h
//
// The records of a read as references instead of copies: ranges of segment
// files (kept open while held) and, where an engine holds the bytes in
// memory, the bytes themselves. A broker sends them to a client's socket with
// SendTo, which moves file ranges with sendfile(2) inside the engine's file
// layer: the bytes never cross user space and the descriptors never leave the
// engine (nothing here exposes one).
//
// Holding a RecordRegions keeps the descriptors of its files open, also after
// the partition is relinquished or the segment deleted by retention (a
// deleted segment's space is freed when the last holder lets go), so a
// transfer that races those finishes with its descriptor. Send the regions
// and drop them: a deposed leader on a shared volume holds no descriptor
// once the fetches it was answering are done.
//
// Thread-safety: a const RecordRegions may be read and sent from several
// threads at once (each with its own progress); building one is
// single-threaded.

#ifndef KAAS_STORAGE_COMMON_RECORD_REGIONS_H_
#define KAAS_STORAGE_COMMON_RECORD_REGIONS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/cord.h"

namespace kaas {

// Where a file range's bytes come from: an open segment file.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Reads up to `n` bytes at `position`; fewer only at end of file.
  virtual absl::StatusOr<size_t> ReadAt(uint64_t position, size_t n,
                                        char* dst) const = 0;
  // Sends up to `n` bytes at `position` to `out_fd`; fewer only at end of
  // file or when a non-blocking `out_fd` would block.
  virtual absl::StatusOr<size_t> SendTo(uint64_t position, size_t n,
                                        int out_fd) const = 0;
  // The file's path, for error messages.
  virtual const std::string& name() const = 0;
};

class RecordRegions {
 public:
  RecordRegions() = default;

  // Appends bytes held in memory.
  void Append(absl::Cord bytes);
  // Appends bytes [position, position + length) of `source`.
  void Append(std::shared_ptr<const RecordSource> source, uint64_t position,
              uint64_t length);

  // Bytes in all, and whether there are none.
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Every byte, read into memory (one copy): for callers that need the bytes
  // themselves. kDataLoss when a file is shorter than its range.
  absl::StatusOr<absl::Cord> ToCord() const;

  // Writes bytes [from, size()) to `out_fd` (a socket or a pipe): file
  // ranges with sendfile(2), in-memory bytes with write(2). Returns how many
  // bytes this call sent: fewer than size() - from only when `out_fd` is
  // non-blocking and would block (call again with `from` advanced once it
  // is writable). Errors: kDataLoss when a file is shorter than its range
  // (it was truncated under the read); errors of the file or of `out_fd`
  // (a closed peer: EPIPE, so the process must ignore SIGPIPE) pass through
  // with their path or "socket" named.
  absl::StatusOr<uint64_t> SendTo(int out_fd, uint64_t from = 0) const;

 private:
  struct Piece {
    absl::Cord bytes;                            // when source is null
    std::shared_ptr<const RecordSource> source;  // else a file range
    uint64_t position = 0;
    uint64_t length = 0;
  };

  std::vector<Piece> pieces_;
  uint64_t size_ = 0;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_COMMON_RECORD_REGIONS_H_
