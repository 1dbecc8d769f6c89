// File: tools/metadata_dump.cc

#include "tools/metadata_dump.h"

#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "fs/file_util.h"
#include "fs/fs_util.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "storage/metadata/partition_files.h"
#include "storage/metadata/producer_fences.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/time_index.h"

namespace kaas::tools {
namespace {

uint16_t MaxVersion(metadata::MetadataKind kind) {
  switch (kind) {
    case metadata::MetadataKind::kManifest:
      return metadata::kManifestVersion;
    case metadata::MetadataKind::kRecoveryCheckpoint:
      return metadata::kCheckpointVersion;
    case metadata::MetadataKind::kStateSnapshot:
      return metadata::kStateSnapshotVersion;
    case metadata::MetadataKind::kProducerFences:
      return metadata::kProducerFencesVersion;
  }
  return 0;
}

// Decodes `path` into `message`; prints the header line and, on failure, why.
bool DecodeInto(fs::FileSystem& fs, const std::string& path,
                metadata::MetadataKind kind,
                google::protobuf::MessageLite* message, std::ostream& out) {
  out << "Dumping " << path << " (" << metadata::MetadataKindName(kind)
      << ")\n";
  // The engine's own bound for the kind, so dump and the engine agree.
  absl::StatusOr<std::string> bytes =
      metadata::ReadMetadataBytes(fs, path, kind);
  if (!bytes.ok()) {
    out << "  UNREADABLE: " << bytes.status().message() << "\n";
    return false;
  }
  uint16_t version = 0;
  absl::Status status = metadata::DecodeMetadataFile(
      *bytes, kind, MaxVersion(kind), message, &version);
  if (!status.ok()) {
    out << "  UNREADABLE (" << bytes->size() << " bytes): " << status.message()
        << "\n";
    return false;
  }
  out << "  format version " << version << ", " << bytes->size()
      << " bytes, checksums valid\n";
  return true;
}

}  // namespace

std::optional<metadata::MetadataKind> MetadataKindOfFileName(
    absl::string_view name) {
  absl::ConsumeSuffix(&name, ".corrupt");
  if (name == metadata::kManifestFileName) {
    return metadata::MetadataKind::kManifest;
  }
  if (name == metadata::kCheckpointFileName) {
    return metadata::MetadataKind::kRecoveryCheckpoint;
  }
  if (name == metadata::kProducerFencesFileName ||
      name == metadata::kProducerFencesCopyFileName) {
    return metadata::MetadataKind::kProducerFences;
  }
  if (metadata::ParseSnapshotFileName(name).has_value()) {
    return metadata::MetadataKind::kStateSnapshot;
  }
  return std::nullopt;
}

std::string DescribeManifest(const metadata::PartitionManifest& manifest) {
  std::vector<std::string> epochs;
  for (const metadata::EpochStart& start : manifest.epochs()) {
    epochs.push_back(absl::StrFormat("epoch %d from offset %d", start.epoch(),
                                     start.start_offset()));
  }
  std::string text = absl::StrFormat(
      "  leader epoch: %d\n  log start offset: %d\n"
      "  log end offset: %d (advisory)\n  epoch history: %s\n",
      manifest.leader_epoch(), manifest.log_start_offset(),
      manifest.log_end_offset(),
      epochs.empty() ? "(none)" : absl::StrJoin(epochs, "; "));
  if (manifest.cleaner_offset() > 0) {
    absl::StrAppendFormat(&text,
                          "  cleaner_offset: %d (compaction read keys up to "
                          "here)\n",
                          manifest.cleaner_offset());
  }
  if (manifest.has_next_delete_horizon_ms()) {
    absl::StrAppendFormat(&text, "  next delete horizon: %d ms\n",
                          manifest.next_delete_horizon_ms());
  }
  if (manifest.has_truncate_to()) {
    absl::StrAppendFormat(&text, "  truncation in progress to offset %d\n",
                          manifest.truncate_to());
  }
  if (manifest.has_compaction_swap()) {
    std::vector<std::string> replaced;
    for (const metadata::SegmentRef& ref :
         manifest.compaction_swap().replaced()) {
      replaced.push_back(
          absl::StrFormat("base %d epoch %d", ref.base_offset(), ref.epoch()));
    }
    absl::StrAppendFormat(&text,
                          "  compaction swap in progress (the next open "
                          "completes it): replaces %s\n",
                          absl::StrJoin(replaced, "; "));
  }
  return text;
}

std::string DescribeCheckpoint(const metadata::RecoveryCheckpoint& checkpoint) {
  return absl::StrFormat(
      "  segment: base offset %d, epoch %d\n"
      "  verified: bytes [0, %d), next offset %d\n"
      "  max timestamp before it: %d (batch at offset %d)\n",
      checkpoint.segment_base_offset(), checkpoint.segment_epoch(),
      checkpoint.position(), checkpoint.next_offset(),
      checkpoint.max_timestamp(), checkpoint.offset_of_max_timestamp());
}

std::string DescribeSnapshot(const metadata::PartitionStateSnapshot& snapshot) {
  std::string text = absl::StrFormat(
      "  state of the batches below offset %d; writer's "
      "leader epoch %d\n",
      snapshot.offset(), snapshot.leader_epoch());
  for (const idempotence::ProducerEntrySnapshot& producer :
       snapshot.producers().producers()) {
    std::vector<std::string> window;
    for (const idempotence::CachedBatchSnapshot& batch : producer.window()) {
      window.push_back(absl::StrFormat(
          "seq %d..%d at offsets %d..%d", batch.first_seq(), batch.last_seq(),
          batch.base_offset(), batch.last_offset()));
    }
    absl::StrAppendFormat(
        &text, "  producer %d epoch %d, last timestamp %d: %s\n",
        producer.producer_id(), producer.epoch(), producer.last_timestamp(),
        window.empty() ? "no batches" : absl::StrJoin(window, "; "));
  }
  for (const txn::OpenTxnSnapshot& open : snapshot.transactions().open()) {
    absl::StrAppendFormat(&text,
                          "  open transaction: producer %d from offset %d\n",
                          open.producer_id(), open.first_offset());
  }
  for (const txn::AbortedTxnSnapshot& aborted :
       snapshot.transactions().aborted()) {
    absl::StrAppendFormat(
        &text,
        "  aborted transaction: producer %d, offsets %d..%d (the ABORT marker "
        "at %d)\n",
        aborted.producer_id(), aborted.first_offset(), aborted.last_offset(),
        aborted.last_offset());
  }
  return text;
}

std::string DescribeFences(const metadata::ProducerFences& fences) {
  std::string text;
  for (const metadata::ProducerFences::Fence& fence : fences.fences()) {
    absl::StrAppendFormat(
        &text, "  producer %d fenced below epoch %d (at %d ms)\n",
        fence.producer_id(), fence.epoch(), fence.fenced_at_ms());
  }
  if (text.empty()) text = "  (no fences)\n";
  return text;
}

bool DumpMetadataFile(fs::FileSystem& fs, const std::string& path,
                      metadata::MetadataKind kind, std::ostream& out) {
  switch (kind) {
    case metadata::MetadataKind::kManifest: {
      metadata::PartitionManifest manifest;
      if (!DecodeInto(fs, path, kind, &manifest, out)) return false;
      out << DescribeManifest(manifest);
      return true;
    }
    case metadata::MetadataKind::kRecoveryCheckpoint: {
      metadata::RecoveryCheckpoint checkpoint;
      if (!DecodeInto(fs, path, kind, &checkpoint, out)) return false;
      out << DescribeCheckpoint(checkpoint);
      return true;
    }
    case metadata::MetadataKind::kStateSnapshot: {
      metadata::PartitionStateSnapshot snapshot;
      if (!DecodeInto(fs, path, kind, &snapshot, out)) return false;
      out << DescribeSnapshot(snapshot);
      return true;
    }
    case metadata::MetadataKind::kProducerFences: {
      metadata::ProducerFences fences;
      if (!DecodeInto(fs, path, kind, &fences, out)) return false;
      out << DescribeFences(fences);
      return true;
    }
  }
  return false;
}

bool DumpOffsetIndexFile(fs::FileSystem& fs, const std::string& path,
                         int64_t base_offset, uint64_t log_size, bool entries,
                         std::ostream& out) {
  out << "Dumping " << path << " (offset index)\n";
  absl::StatusOr<std::string> bytes = fs::ReadFileToString(fs, path);
  if (!bytes.ok()) {
    out << "  UNREADABLE: " << bytes.status().message() << "\n";
    return false;
  }
  segment::OffsetIndex::Decoded decoded =
      segment::OffsetIndex::Decode(base_offset, *bytes, log_size);
  out << "  " << decoded.index.size() << " valid entries in " << bytes->size()
      << " bytes\n";
  if (entries) {
    for (const segment::OffsetIndexEntry& entry : decoded.index.entries()) {
      out << "  offset: " << entry.offset << " position: " << entry.position
          << "\n";
    }
  }
  if (!decoded.problem.empty()) {
    out << "  INVALID: " << decoded.problem << "\n";
    return false;
  }
  return true;
}

bool DumpTimeIndexFile(fs::FileSystem& fs, const std::string& path,
                       int64_t base_offset, int64_t next_offset, bool entries,
                       std::ostream& out) {
  out << "Dumping " << path << " (time index)\n";
  absl::StatusOr<std::string> bytes = fs::ReadFileToString(fs, path);
  if (!bytes.ok()) {
    out << "  UNREADABLE: " << bytes.status().message() << "\n";
    return false;
  }
  segment::TimeIndex::Decoded decoded =
      segment::TimeIndex::Decode(base_offset, *bytes, next_offset);
  out << "  " << decoded.index.size() << " valid entries in " << bytes->size()
      << " bytes\n";
  if (entries) {
    for (const segment::TimeIndexEntry& entry : decoded.index.entries()) {
      out << "  timestamp: " << entry.timestamp << " offset: " << entry.offset
          << "\n";
    }
  }
  if (!decoded.problem.empty()) {
    out << "  INVALID: " << decoded.problem << "\n";
    return false;
  }
  return true;
}

bool DumpTopicConfigFile(fs::FileSystem& fs, const std::string& topic_dir,
                         std::ostream& out) {
  out << "Dumping " << fs::JoinPath(topic_dir, kTopicConfigFileName)
      << " (topic config overrides)\n";
  absl::StatusOr<std::optional<TopicConfigOverrides>> config =
      ReadTopicConfig(fs, topic_dir);
  if (!config.ok()) {
    out << "  INVALID: " << config.status().message() << "\n";
    return false;
  }
  out << "  "
      << (config->has_value() ? TopicConfigToJson(**config) : "(absent)")
      << "\n";
  return true;
}

bool DumpTopicIdFile(fs::FileSystem& fs, const std::string& topic_dir,
                     std::ostream& out) {
  out << "Dumping " << fs::JoinPath(topic_dir, kTopicIdFileName)
      << " (topic identity stamp)\n";
  absl::StatusOr<std::optional<std::string>> stamp =
      ReadTopicIdStamp(fs, topic_dir);
  if (!stamp.ok()) {
    out << "  INVALID: " << stamp.status().message() << "\n";
    return false;
  }
  out << "  topic id: " << stamp->value_or("(unstamped)") << "\n";
  return true;
}

}  // namespace kaas::tools
