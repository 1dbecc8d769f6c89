// File: storage/metadata/metadata_file.h
//
// The envelope of every metadata file the engine writes (manifest, recovery
// checkpoint, state snapshots, producer fences): a small checksummed header
// in front of a Protocol Buffers payload, so that a torn, corrupt, foreign or
// newer-format file is detected and reported instead of misread.
//
//   offset size field
//   0      4    magic "KAAS"
//   4      2    kind (MetadataKind, big-endian)
//   6      2    format version of the payload schema (big-endian)
//   8      4    payload length (big-endian)
//   12     4    CRC32C of the payload (big-endian)
//   16     4    CRC32C of bytes [0, 16) (big-endian)
//   20     ...  payload (a serialized protobuf message)
//
// Files are replaced atomically (fs/fs_util.h AtomicReplaceFile: temp file,
// fsync, rename, directory fsync), so a reader sees either the old or the new
// complete file, never a mix.
//
// Decode errors (all carry the path when read through ReadMetadataFile):
//   kDataLoss           truncated, bad magic, header or payload CRC mismatch,
//                       wrong kind, length mismatch, unparsable payload;
//   kFailedPrecondition written by a newer format version than this build
//                       reads (never misinterpreted);
//   kNotFound           (ReadMetadataFile) the file does not exist.
//
// Thread-safety: pure functions; reading and writing go through the given
// FileSystem.

#ifndef KAAS_STORAGE_METADATA_METADATA_FILE_H_
#define KAAS_STORAGE_METADATA_METADATA_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fs/file_system.h"
#include "google/protobuf/message_lite.h"

namespace kaas::metadata {

// The kind of a metadata file. Values are on-disk format: never change them.
enum class MetadataKind : uint16_t {
  kManifest = 1,
  kRecoveryCheckpoint = 2,
  kStateSnapshot = 3,
  kProducerFences = 4,
};

absl::string_view MetadataKindName(MetadataKind kind);

inline constexpr size_t kMetadataHeaderSize = 20;

// Serializes `message` behind a header of `kind` and `version`.
std::string EncodeMetadataFile(MetadataKind kind, uint16_t version,
                               const google::protobuf::MessageLite& message);

// Parses `bytes` into `message`, checking magic, both CRCs, the kind and
// that the format version is at most `max_version`. On success `*version`
// (if not null) receives the file's version.
absl::Status DecodeMetadataFile(absl::string_view bytes, MetadataKind kind,
                                uint16_t max_version,
                                google::protobuf::MessageLite* message,
                                uint16_t* version = nullptr);

// Atomically replaces `path` with the encoded message (durable on return).
absl::Status WriteMetadataFile(fs::FileSystem& fs, const std::string& path,
                               MetadataKind kind, uint16_t version,
                               const google::protobuf::MessageLite& message);

// The largest file of `kind` this engine reads (far above what it writes).
uint64_t MaxMetadataFileBytes(MetadataKind kind);

// The bytes of the metadata file `path` of `kind`: ReadFileToString bounded by
// MaxMetadataFileBytes(kind); a larger file is kDataLoss (never read into
// memory). Other errors as ReadFileToString's.
absl::StatusOr<std::string> ReadMetadataBytes(fs::FileSystem& fs,
                                              const std::string& path,
                                              MetadataKind kind);

// Reads and decodes `path`; errors name the path.
absl::Status ReadMetadataFile(fs::FileSystem& fs, const std::string& path,
                              MetadataKind kind, uint16_t max_version,
                              google::protobuf::MessageLite* message);

}  // namespace kaas::metadata

#endif  // KAAS_STORAGE_METADATA_METADATA_FILE_H_
