// Writes the seed corpora of the binary-input fuzz targets into a source
// tree (the JSON targets' seeds are written by hand):
//
//   bazel run //tools:fuzz_seeds -- "$PWD"
//
// Each seed is a small, valid instance of what its target parses (libFuzzer
// mutates from there); the files are checked in and replayed by `bazel
// test`. Rerun after a format change and commit what changed.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "glog/logging.h"
#include "storage/batch/batch_rewrite.h"
#include "storage/batch/compression.h"
#include "storage/batch/record_batch.h"
#include "storage/batch/records.h"
#include "storage/metadata/metadata_file.h"
#include "storage/metadata/partition_files.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "storage/metadata/producer_fences.h"
#include "storage/metadata/state_snapshot.pb.h"
#include "storage/segment/offset_index.h"
#include "storage/segment/time_index.h"
#include "testing/batch_builder.h"

namespace kaas {
namespace {

using test::BatchBuilder;

class SeedWriter {
 public:
  SeedWriter(std::string root, std::string dir)
      : dir_(fs::JoinPath(root, dir)) {
    CHECK(fs::CreateDirsDurably(*fs::PosixFileSystem::Default(), dir_).ok())
        << dir_;
  }
  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream out(fs::JoinPath(dir_, name), std::ios::binary);
    out << bytes;
    CHECK(out.good()) << name;
  }

 private:
  std::string dir_;
};

std::vector<std::pair<std::string, std::string>> Batches() {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("plain", BatchBuilder().AddRecord("k", "v").Build());
  test::TestRecord with_headers;
  with_headers.key = "key";
  with_headers.value = "value";
  with_headers.timestamp_delta = 7;
  with_headers.headers = {{"h", std::string("1")}, {"n", absl::nullopt}};
  out.emplace_back("headers-nulls", BatchBuilder()
                                        .BaseOffset(42)
                                        .AddRecord(with_headers)
                                        .AddRecord(absl::nullopt, absl::nullopt)
                                        .AddRecord("tomb", absl::nullopt)
                                        .Build());
  out.emplace_back("transactional", BatchBuilder()
                                        .Producer(7, 1, 5)
                                        .Transactional()
                                        .AddRecord("a", "1")
                                        .AddRecord("b", "2")
                                        .Build());
  out.emplace_back("commit-marker",
                   test::ControlBatch(ControlType::kCommit, 7, 1, 3, 1000));
  for (CompressionCodec codec :
       {CompressionCodec::kGzip, CompressionCodec::kSnappy,
        CompressionCodec::kLz4, CompressionCodec::kZstd}) {
    out.emplace_back(absl::StrCat("codec-", CompressionCodecName(codec)),
                     BatchBuilder()
                         .Compression(codec)
                         .AddRecord("k1", "value one")
                         .AddRecord("k2", "value two")
                         .Build());
  }
  // A compacted batch: the middle record removed, a delete horizon stamped.
  const std::string three = BatchBuilder()
                                .BaseTimestamp(5000)
                                .AddRecord("x", "1")
                                .AddRecord("y", absl::nullopt)
                                .AddRecord("z", "3")
                                .Build();
  RecordBatchView view = *RecordBatchView::Parse(three);
  DecodedRecords records = *DecodeRecords(view);
  std::vector<Record> kept = {records[0], records[2]};
  out.emplace_back("compacted", *RewriteBatch(view, kept, 90000));
  out.emplace_back("empty-filler", EmptyBatch(100, 5, 3));
  return out;
}

void WriteBatchSeeds(const std::string& root) {
  SeedWriter batches(root, "storage/batch/fuzz_corpus/record_batch_fuzzer");
  // The mode byte: 1 has the target recompute the CRC (see the target).
  for (const auto& [name, bytes] : Batches()) {
    batches.Write(name, std::string(1, '\0') + bytes);
  }
  batches.Write(
      "crc-fixed-plain",
      std::string(1, '\1') + BatchBuilder().AddRecord("k", "v").Build());

  SeedWriter codecs(root, "storage/batch/fuzz_corpus/compression_fuzzer");
  const std::string text = "a record value, a record value, 12345678";
  const CompressionCodec kCodecs[] = {
      CompressionCodec::kNone, CompressionCodec::kGzip,
      CompressionCodec::kSnappy, CompressionCodec::kLz4,
      CompressionCodec::kZstd};
  for (int i = 0; i < 5; ++i) {
    codecs.Write(
        std::string(CompressionCodecName(kCodecs[i])),
        std::string(1, static_cast<char>(i)) + *Compress(kCodecs[i], text));
  }
}

void WriteSegmentSeeds(const std::string& root) {
  SeedWriter scans(root, "storage/segment/fuzz_corpus/log_scan_fuzzer");
  std::string log;
  int64_t next = 0;
  for (const auto& [name, bytes] : Batches()) {
    if (name == "empty-filler") continue;  // covers offsets 100..104
    std::string batch = bytes;
    SetBaseOffset(&batch[0], next);
    next = RecordBatchView::ParseHeader(batch)->next_offset();
    log += batch;
  }
  scans.Write("valid-log", log);
  scans.Write("torn-tail", log.substr(0, log.size() - 7));
  scans.Write("zero-tail", log + std::string(64, '\0'));
  std::string flipped = log;
  flipped[flipped.size() / 2] ^= 0x10;
  scans.Write("flipped-bit", flipped);

  SeedWriter indexes(root, "storage/segment/fuzz_corpus/index_fuzzer");
  // kind byte, base offset << 2 and log size << 32 (as the target reads
  // them, little-endian), then the entries.
  auto header = [](char kind, int64_t base, uint64_t log_size) {
    std::string h(1, kind);
    const uint64_t b = static_cast<uint64_t>(base) << 2;
    const uint64_t s = log_size << 32;
    h.append(reinterpret_cast<const char*>(&b), 8);
    h.append(reinterpret_cast<const char*>(&s), 8);
    return h;
  };
  segment::OffsetIndex offsets(1000);
  offsets.Append(1010, 4096);
  offsets.Append(1042, 8192);
  offsets.Append(1100, 12288);
  indexes.Write("offset-index", header(0, 1000, 20000) + offsets.Encode());
  segment::TimeIndex times(1000);
  times.MaybeAppend(5000, 1010);
  times.MaybeAppend(6000, 1042);
  times.MaybeAppend(9000, 1100);
  // Next offset = base + log size / 2 (see the target).
  indexes.Write("time-index", header(1, 1000, 400) + times.Encode());
}

void WriteMetadataSeeds(const std::string& root) {
  using metadata::MetadataKind;
  SeedWriter files(root, "storage/metadata/fuzz_corpus/metadata_fuzzer");
  metadata::PartitionManifest manifest;
  manifest.set_leader_epoch(7);
  manifest.set_log_start_offset(10);
  manifest.set_log_end_offset(500);
  metadata::EpochStart* epoch = manifest.add_epochs();
  epoch->set_epoch(3);
  epoch->set_start_offset(0);
  epoch = manifest.add_epochs();
  epoch->set_epoch(7);
  epoch->set_start_offset(200);
  manifest.set_cleaner_offset(100);
  manifest.set_next_delete_horizon_ms(86400000);
  files.Write("manifest",
              std::string(1, '\0') + metadata::EncodeMetadataFile(
                                         MetadataKind::kManifest,
                                         metadata::kManifestVersion, manifest));
  // Bit 2 of the kind byte has the target recompute length and CRCs.
  files.Write("manifest-crc-fixed",
              std::string(1, '\4') + metadata::EncodeMetadataFile(
                                         MetadataKind::kManifest,
                                         metadata::kManifestVersion, manifest));
  metadata::PartitionManifest swapping = manifest;
  metadata::SegmentRef* ref =
      swapping.mutable_compaction_swap()->add_replaced();
  ref->set_base_offset(10);
  ref->set_epoch(3);
  ref = swapping.mutable_compaction_swap()->add_replaced();
  ref->set_base_offset(300);
  ref->set_epoch(7);
  swapping.set_truncate_to(400);
  files.Write("manifest-swap-truncate",
              std::string(1, '\0') + metadata::EncodeMetadataFile(
                                         MetadataKind::kManifest,
                                         metadata::kManifestVersion, swapping));
  metadata::RecoveryCheckpoint checkpoint;
  checkpoint.set_segment_base_offset(200);
  checkpoint.set_segment_epoch(7);
  checkpoint.set_position(8192);
  checkpoint.set_next_offset(450);
  checkpoint.set_max_timestamp(123456);
  checkpoint.set_offset_of_max_timestamp(440);
  files.Write("checkpoint", std::string(1, '\1') +
                                metadata::EncodeMetadataFile(
                                    MetadataKind::kRecoveryCheckpoint,
                                    metadata::kCheckpointVersion, checkpoint));
  metadata::PartitionStateSnapshot snapshot;
  snapshot.set_offset(450);
  snapshot.set_leader_epoch(7);
  idempotence::ProducerEntrySnapshot* producer =
      snapshot.mutable_producers()->add_producers();
  producer->set_producer_id(9);
  producer->set_epoch(2);
  producer->set_last_timestamp(123000);
  idempotence::CachedBatchSnapshot* cached = producer->add_window();
  cached->set_first_seq(0);
  cached->set_last_seq(4);
  cached->set_base_offset(400);
  cached->set_last_offset(404);
  txn::OpenTxnSnapshot* open = snapshot.mutable_transactions()->add_open();
  open->set_producer_id(9);
  open->set_first_offset(400);
  txn::AbortedTxnSnapshot* aborted =
      snapshot.mutable_transactions()->add_aborted();
  aborted->set_producer_id(11);
  aborted->set_first_offset(300);
  aborted->set_last_offset(320);
  files.Write("state-snapshot",
              std::string(1, '\2') +
                  metadata::EncodeMetadataFile(MetadataKind::kStateSnapshot,
                                               metadata::kStateSnapshotVersion,
                                               snapshot));
  metadata::ProducerFences fences;
  metadata::ProducerFences::Fence* fence = fences.add_fences();
  fence->set_producer_id(9);
  fence->set_epoch(3);
  fence->set_fenced_at_ms(1000);
  files.Write("producer-fences",
              std::string(1, '\3') +
                  metadata::EncodeMetadataFile(MetadataKind::kProducerFences,
                                               metadata::kProducerFencesVersion,
                                               fences));
}

}  // namespace
}  // namespace kaas

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  if (argc != 2) {
    std::cerr << "usage: fuzz_seeds SOURCE_ROOT\n";
    return 2;
  }
  kaas::WriteBatchSeeds(argv[1]);
  kaas::WriteSegmentSeeds(argv[1]);
  kaas::WriteMetadataSeeds(argv[1]);
  std::cout << "fuzz_seeds: wrote the seed corpora under " << argv[1] << "\n";
  return 0;
}
