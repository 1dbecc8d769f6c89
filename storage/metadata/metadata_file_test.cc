#include "storage/metadata/metadata_file.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/metadata/partition_metadata.pb.h"
#include "testing/status_matchers.h"

namespace kaas::metadata {
namespace {

using ::kaas::test::IsOk;
using ::kaas::test::StatusIs;
using ::testing::HasSubstr;

PartitionManifest SampleManifest() {
  PartitionManifest manifest;
  manifest.set_leader_epoch(7);
  manifest.set_log_start_offset(100);
  manifest.set_log_end_offset(250);
  EpochStart* epoch = manifest.add_epochs();
  epoch->set_epoch(7);
  epoch->set_start_offset(120);
  return manifest;
}

TEST(MetadataFile, RoundTrips) {
  std::string bytes =
      EncodeMetadataFile(MetadataKind::kManifest, 1, SampleManifest());
  PartitionManifest decoded;
  uint16_t version = 0;
  ASSERT_OK(DecodeMetadataFile(bytes, MetadataKind::kManifest, 1, &decoded,
                               &version));
  EXPECT_EQ(version, 1);
  EXPECT_EQ(decoded.leader_epoch(), 7);
  EXPECT_EQ(decoded.epochs(0).start_offset(), 120);
}

TEST(MetadataFile, EveryTruncationIsDetected) {
  std::string bytes =
      EncodeMetadataFile(MetadataKind::kManifest, 1, SampleManifest());
  for (size_t size = 0; size < bytes.size(); ++size) {
    PartitionManifest decoded;
    EXPECT_THAT(DecodeMetadataFile(bytes.substr(0, size),
                                   MetadataKind::kManifest, 1, &decoded),
                StatusIs(absl::StatusCode::kDataLoss, ::testing::_))
        << "size " << size;
  }
}

TEST(MetadataFile, EveryFlippedBitIsDetected) {
  std::string bytes =
      EncodeMetadataFile(MetadataKind::kManifest, 1, SampleManifest());
  for (size_t i = 0; i < bytes.size() * 8; ++i) {
    std::string corrupt = bytes;
    corrupt[i / 8] ^= static_cast<char>(1 << (i % 8));
    PartitionManifest decoded;
    absl::Status status =
        DecodeMetadataFile(corrupt, MetadataKind::kManifest, 1, &decoded);
    EXPECT_FALSE(status.ok()) << "bit " << i;
  }
}

TEST(MetadataFile, NamesWhatIsWrong) {
  std::string bytes =
      EncodeMetadataFile(MetadataKind::kManifest, 1, SampleManifest());
  PartitionManifest decoded;
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THAT(
      DecodeMetadataFile(bad_magic, MetadataKind::kManifest, 1, &decoded),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("bad magic")));
  std::string bad_payload = bytes;
  bad_payload.back() ^= 1;
  EXPECT_THAT(
      DecodeMetadataFile(bad_payload, MetadataKind::kManifest, 1, &decoded),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("payload checksum mismatch")));
  EXPECT_THAT(
      DecodeMetadataFile(bytes + "x", MetadataKind::kManifest, 1, &decoded),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("payload length")));
}

TEST(MetadataFile, WrongKindIsRejected) {
  std::string bytes = EncodeMetadataFile(MetadataKind::kRecoveryCheckpoint, 1,
                                         RecoveryCheckpoint());
  PartitionManifest decoded;
  EXPECT_THAT(
      DecodeMetadataFile(bytes, MetadataKind::kManifest, 1, &decoded),
      StatusIs(absl::StatusCode::kDataLoss,
               HasSubstr("expected a manifest but the file holds a recovery "
                         "checkpoint")));
}

TEST(MetadataFile, NewerVersionIsReportedNotMisread) {
  std::string bytes =
      EncodeMetadataFile(MetadataKind::kManifest, 3, SampleManifest());
  PartitionManifest decoded;
  EXPECT_THAT(DecodeMetadataFile(bytes, MetadataKind::kManifest, 1, &decoded),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("format version 3, newer than this build "
                                 "reads (up to 1)")));
  EXPECT_EQ(decoded.leader_epoch(), 0);
}

}  // namespace
}  // namespace kaas::metadata
