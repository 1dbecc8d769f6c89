#include "storage/metadata/metadata_file.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "storage/batch/crc32c.h"

namespace kaas::metadata {
namespace {

constexpr char kMagic[4] = {'K', 'A', 'A', 'S'};

void PutBigEndian16(char* p, uint16_t v) {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v);
}

void PutBigEndian32(char* p, uint32_t v) {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}

uint16_t GetBigEndian16(const char* p) {
  return static_cast<uint16_t>((static_cast<uint8_t>(p[0]) << 8) |
                               static_cast<uint8_t>(p[1]));
}

uint32_t GetBigEndian32(const char* p) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(p[0])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(p[1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(p[2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(p[3]));
}

}  // namespace

absl::string_view MetadataKindName(MetadataKind kind) {
  switch (kind) {
    case MetadataKind::kManifest:
      return "manifest";
    case MetadataKind::kRecoveryCheckpoint:
      return "recovery checkpoint";
    case MetadataKind::kStateSnapshot:
      return "state snapshot";
    case MetadataKind::kProducerFences:
      return "producer fences";
  }
  return "unknown metadata";
}

std::string EncodeMetadataFile(MetadataKind kind, uint16_t version,
                               const google::protobuf::MessageLite& message) {
  std::string payload = message.SerializeAsString();
  std::string out(kMetadataHeaderSize, '\0');
  std::memcpy(&out[0], kMagic, sizeof(kMagic));
  PutBigEndian16(&out[4], static_cast<uint16_t>(kind));
  PutBigEndian16(&out[6], version);
  PutBigEndian32(&out[8], static_cast<uint32_t>(payload.size()));
  PutBigEndian32(&out[12], crc32c::Value(payload.data(), payload.size()));
  PutBigEndian32(&out[16], crc32c::Value(out.data(), 16));
  out += payload;
  return out;
}

absl::Status DecodeMetadataFile(absl::string_view bytes, MetadataKind kind,
                                uint16_t max_version,
                                google::protobuf::MessageLite* message,
                                uint16_t* version) {
  if (bytes.size() < kMetadataHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "truncated %s: %d bytes, the header alone has %d",
        MetadataKindName(kind), bytes.size(), kMetadataHeaderSize));
  }
  const char* header = bytes.data();
  if (std::memcmp(header, kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError(
        absl::StrCat("not a kaas metadata file (bad magic) where a ",
                     MetadataKindName(kind), " was expected"));
  }
  uint32_t stored_header_crc = GetBigEndian32(header + 16);
  uint32_t header_crc = crc32c::Value(header, 16);
  if (stored_header_crc != header_crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s header checksum mismatch (stored 0x%08x, computed 0x%08x)",
        MetadataKindName(kind), stored_header_crc, header_crc));
  }
  auto file_kind = static_cast<MetadataKind>(GetBigEndian16(header + 4));
  if (file_kind != kind) {
    return absl::DataLossError(
        absl::StrFormat("expected a %s but the file holds a %s (kind %d)",
                        MetadataKindName(kind), MetadataKindName(file_kind),
                        static_cast<int>(file_kind)));
  }
  uint16_t file_version = GetBigEndian16(header + 6);
  if (file_version > max_version) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has format version %d, newer than this build reads (up to %d)",
        MetadataKindName(kind), file_version, max_version));
  }
  uint32_t length = GetBigEndian32(header + 8);
  if (length != bytes.size() - kMetadataHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s payload length %d does not match the file (%d bytes after the "
        "header)",
        MetadataKindName(kind), length, bytes.size() - kMetadataHeaderSize));
  }
  absl::string_view payload = bytes.substr(kMetadataHeaderSize);
  uint32_t stored_crc = GetBigEndian32(header + 12);
  uint32_t crc = crc32c::Value(payload.data(), payload.size());
  if (stored_crc != crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s payload checksum mismatch (stored 0x%08x, computed 0x%08x)",
        MetadataKindName(kind), stored_crc, crc));
  }
  if (!message->ParseFromArray(payload.data(),
                               static_cast<int>(payload.size()))) {
    return absl::DataLossError(
        absl::StrCat(MetadataKindName(kind), " payload is not a valid ",
                     message->GetTypeName(), " message"));
  }
  if (version != nullptr) *version = file_version;
  return absl::OkStatus();
}

absl::Status WriteMetadataFile(fs::FileSystem& fs, const std::string& path,
                               MetadataKind kind, uint16_t version,
                               const google::protobuf::MessageLite& message) {
  return fs::AtomicReplaceFile(fs, path,
                               EncodeMetadataFile(kind, version, message));
}

uint64_t MaxMetadataFileBytes(MetadataKind kind) {
  switch (kind) {
    case MetadataKind::kManifest:
      return uint64_t{16} << 20;  // an epoch history of a million entries
    case MetadataKind::kRecoveryCheckpoint:
      return uint64_t{64} << 10;
    case MetadataKind::kStateSnapshot:
      return uint64_t{1} << 30;  // millions of producers
    case MetadataKind::kProducerFences:
      return uint64_t{256} << 20;
  }
  return uint64_t{64} << 20;
}

absl::StatusOr<std::string> ReadMetadataBytes(fs::FileSystem& fs,
                                              const std::string& path,
                                              MetadataKind kind) {
  absl::StatusOr<std::string> bytes =
      fs::ReadFileToString(fs, path, MaxMetadataFileBytes(kind));
  if (absl::IsOutOfRange(bytes.status())) {
    // No file this engine writes gets that large: damage, not a metadata
    // file (and it is never read into memory).
    return absl::DataLossError(absl::StrCat("not a ", MetadataKindName(kind),
                                            ": ", bytes.status().message()));
  }
  return bytes;
}

absl::Status ReadMetadataFile(fs::FileSystem& fs, const std::string& path,
                              MetadataKind kind, uint16_t max_version,
                              google::protobuf::MessageLite* message) {
  KAAS_ASSIGN_OR_RETURN(std::string bytes, ReadMetadataBytes(fs, path, kind));
  absl::Status status =
      DecodeMetadataFile(bytes, kind, max_version, message, nullptr);
  if (!status.ok()) {
    return absl::Status(status.code(),
                        absl::StrCat(path, ": ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace kaas::metadata
