// File: storage/common/record_regions.cc

#include "storage/common/record_regions.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace kaas {
namespace {

absl::Status ShortFileError(const RecordSource& source, uint64_t position) {
  return absl::DataLossError(absl::StrFormat(
      "%s ends at %d, inside the range being read (truncated under the read)",
      source.name(), position));
}

// write(2) of `bytes` until done or a non-blocking `out_fd` would block.
absl::StatusOr<size_t> WriteSome(int out_fd, absl::string_view bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t w =
        ::write(out_fd, bytes.data() + written, bytes.size() - written);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (w < 0) return absl::ErrnoToStatus(errno, "write to socket");
    written += static_cast<size_t>(w);
  }
  return written;
}

}  // namespace

void RecordRegions::Append(absl::Cord bytes) {
  if (bytes.empty()) return;
  size_ += bytes.size();
  Piece piece;
  piece.length = bytes.size();
  piece.bytes = std::move(bytes);
  pieces_.push_back(std::move(piece));
}

void RecordRegions::Append(std::shared_ptr<const RecordSource> source,
                           uint64_t position, uint64_t length) {
  if (length == 0) return;
  size_ += length;
  // A range continuing the previous one of the same file extends it: one
  // sendfile covers a read that spans batches.
  if (!pieces_.empty() && pieces_.back().source == source &&
      pieces_.back().position + pieces_.back().length == position) {
    pieces_.back().length += length;
    return;
  }
  Piece piece;
  piece.source = std::move(source);
  piece.position = position;
  piece.length = length;
  pieces_.push_back(std::move(piece));
}

absl::StatusOr<absl::Cord> RecordRegions::ToCord() const {
  absl::Cord out;
  for (const Piece& piece : pieces_) {
    if (piece.source == nullptr) {
      out.Append(piece.bytes);
      continue;
    }
    std::string bytes(static_cast<size_t>(piece.length), '\0');
    absl::StatusOr<size_t> got =
        piece.source->ReadAt(piece.position, bytes.size(), bytes.data());
    if (!got.ok()) return got.status();
    if (*got < bytes.size()) {
      return ShortFileError(*piece.source, piece.position + *got);
    }
    out.Append(std::move(bytes));
  }
  return out;
}

absl::StatusOr<uint64_t> RecordRegions::SendTo(int out_fd,
                                               uint64_t from) const {
  uint64_t sent = 0;
  uint64_t piece_start = 0;  // offset of the piece within the regions
  for (const Piece& piece : pieces_) {
    const uint64_t piece_end = piece_start + piece.length;
    if (from + sent >= piece_end) {
      piece_start = piece_end;
      continue;
    }
    const uint64_t skip = from + sent - piece_start;
    const uint64_t want = piece.length - skip;
    size_t went = 0;
    if (piece.source == nullptr) {
      absl::Cord rest = piece.bytes.Subcord(skip, want);
      for (absl::string_view chunk : rest.Chunks()) {
        absl::StatusOr<size_t> wrote = WriteSome(out_fd, chunk);
        if (!wrote.ok()) return wrote.status();
        went += *wrote;
        if (*wrote < chunk.size()) break;
      }
    } else {
      absl::StatusOr<size_t> wrote = piece.source->SendTo(
          piece.position + skip, static_cast<size_t>(want), out_fd);
      if (!wrote.ok()) return wrote.status();
      went = *wrote;
      if (went < want) {
        // Short: the socket would block, or the file ends early. Only a
        // read can tell them apart without a poll: one byte at the stop.
        char probe;
        absl::StatusOr<size_t> more =
            piece.source->ReadAt(piece.position + skip + went, 1, &probe);
        if (!more.ok()) return more.status();
        if (*more == 0) {
          return ShortFileError(*piece.source, piece.position + skip + went);
        }
      }
    }
    sent += went;
    if (went < want) return sent;  // out_fd would block
    piece_start = piece_end;
  }
  return sent;
}

}  // namespace kaas
