// File: examples/broker/txn_messages_test.cc
//
// Each transaction API's request decoded and response encoded in its lowest
// and highest served versions (bytes built field by field from the
// published specs), every truncation of a request rejected, hostile array
// lengths rejected before allocation, unserved versions refused.

#include "examples/broker/txn_messages.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "examples/broker/wire.h"
#include "gtest/gtest.h"

namespace kaas::broker {
namespace {

template <typename Decode>
void ExpectEveryTruncationFails(const std::string& bytes, Decode decode) {
  for (size_t n = 0; n < bytes.size(); ++n) {
    WireReader reader(absl::string_view(bytes).substr(0, n));
    EXPECT_FALSE(decode(reader).ok()) << "prefix of " << n << " bytes";
  }
}

void Producer(WireWriter& w) {
  w.String("tx");
  w.Int64(42);
  w.Int16(3);
}

// ---- AddPartitionsToTxn ----

std::string AddPartitionsBytes(int32_t topic_count = 1) {
  std::string bytes;
  WireWriter w(&bytes);
  Producer(w);
  w.ArrayLength(topic_count);
  w.String("t");
  w.ArrayLength(2);
  w.Int32(0);
  w.Int32(5);
  return bytes;
}

TEST(AddPartitionsToTxnTest, DecodesEveryServedVersion) {
  for (int16_t version = 0; version <= 2; ++version) {
    const std::string bytes = AddPartitionsBytes();
    WireReader reader(bytes);
    auto request = DecodeAddPartitionsToTxnRequest(reader, version);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->transactional_id, "tx");
    EXPECT_EQ(request->producer_id, 42);
    EXPECT_EQ(request->producer_epoch, 3);
    ASSERT_EQ(request->topics.size(), 1u);
    EXPECT_EQ(request->topics[0].name, "t");
    EXPECT_EQ(request->topics[0].partitions, (std::vector<int32_t>{0, 5}));
    EXPECT_EQ(reader.remaining(), 0u);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeAddPartitionsToTxnRequest(r, version);
    });
  }
}

TEST(AddPartitionsToTxnTest, HostileLengthAndVersionRefused) {
  const std::string bytes = AddPartitionsBytes(/*topic_count=*/0x7fffffff);
  WireReader reader(bytes);
  EXPECT_EQ(DecodeAddPartitionsToTxnRequest(reader, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string good = AddPartitionsBytes();
  WireReader r3(good);
  EXPECT_FALSE(DecodeAddPartitionsToTxnRequest(r3, 3).ok());
  WireReader rn(good);
  EXPECT_FALSE(DecodeAddPartitionsToTxnRequest(rn, -1).ok());
}

TEST(AddPartitionsToTxnTest, EncodesResponse) {
  AddPartitionsToTxnResponse response;
  TxnTopicResult& topic = response.results.emplace_back();
  topic.name = "t";
  topic.results.push_back({7, txn_error::kInvalidProducerEpoch});
  std::string out, want;
  WireWriter ow(&out);
  EncodeAddPartitionsToTxnResponse(response, 2, ow);
  WireWriter w(&want);
  w.Int32(0);  // throttle
  w.ArrayLength(1);
  w.String("t");
  w.ArrayLength(1);
  w.Int32(7);
  w.Int16(47);
  EXPECT_EQ(out, want);
}

// ---- AddOffsetsToTxn ----

TEST(AddOffsetsToTxnTest, RoundTrip) {
  std::string bytes;
  WireWriter w(&bytes);
  Producer(w);
  w.String("grp");
  for (int16_t version = 0; version <= 2; ++version) {
    WireReader reader(bytes);
    auto request = DecodeAddOffsetsToTxnRequest(reader, version);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->transactional_id, "tx");
    EXPECT_EQ(request->producer_id, 42);
    EXPECT_EQ(request->producer_epoch, 3);
    EXPECT_EQ(request->group_id, "grp");
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeAddOffsetsToTxnRequest(r, version);
    });
  }
  WireReader r3(bytes);
  EXPECT_FALSE(DecodeAddOffsetsToTxnRequest(r3, 3).ok());

  std::string out, want;
  WireWriter ow(&out);
  EncodeAddOffsetsToTxnResponse({txn_error::kInvalidTxnState}, 0, ow);
  WireWriter ww(&want);
  ww.Int32(0);
  ww.Int16(48);
  EXPECT_EQ(out, want);
}

// ---- EndTxn ----

TEST(EndTxnTest, RoundTrip) {
  std::string bytes;
  WireWriter w(&bytes);
  Producer(w);
  w.Bool(true);
  for (int16_t version = 0; version <= 2; ++version) {
    WireReader reader(bytes);
    auto request = DecodeEndTxnRequest(reader, version);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->transactional_id, "tx");
    EXPECT_TRUE(request->committed);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeEndTxnRequest(r, version);
    });
  }
  WireReader r3(bytes);
  EXPECT_FALSE(DecodeEndTxnRequest(r3, 3).ok());

  std::string out, want;
  WireWriter ow(&out);
  EncodeEndTxnResponse({txn_error::kNone}, 2, ow);
  WireWriter ww(&want);
  ww.Int32(0);
  ww.Int16(0);
  EXPECT_EQ(out, want);
}

// ---- TxnOffsetCommit ----

std::string TxnOffsetCommitBytes(int16_t version, int32_t partitions = 1) {
  std::string bytes;
  WireWriter w(&bytes);
  w.String("tx");
  w.String("grp");
  w.Int64(42);
  w.Int16(3);
  w.ArrayLength(1);
  w.String("t");
  w.ArrayLength(partitions);
  w.Int32(2);
  w.Int64(100);
  if (version >= 2) w.Int32(9);
  w.NullableString(std::string("meta"));
  return bytes;
}

TEST(TxnOffsetCommitTest, DecodesV0AndV2) {
  for (int16_t version : {0, 1, 2}) {
    const std::string bytes = TxnOffsetCommitBytes(version);
    WireReader reader(bytes);
    auto request = DecodeTxnOffsetCommitRequest(reader, version);
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->transactional_id, "tx");
    EXPECT_EQ(request->group_id, "grp");
    EXPECT_EQ(request->producer_id, 42);
    EXPECT_EQ(request->producer_epoch, 3);
    ASSERT_EQ(request->topics.size(), 1u);
    ASSERT_EQ(request->topics[0].partitions.size(), 1u);
    const TxnOffsetCommitPartition& p = request->topics[0].partitions[0];
    EXPECT_EQ(p.partition_index, 2);
    EXPECT_EQ(p.committed_offset, 100);
    EXPECT_EQ(p.committed_leader_epoch, version >= 2 ? 9 : -1);
    EXPECT_EQ(p.committed_metadata, "meta");
    EXPECT_EQ(reader.remaining(), 0u);
    ExpectEveryTruncationFails(bytes, [version](WireReader& r) {
      return DecodeTxnOffsetCommitRequest(r, version);
    });
  }
}

TEST(TxnOffsetCommitTest, HostileLengthRefused) {
  const std::string bytes = TxnOffsetCommitBytes(2, /*partitions=*/1 << 30);
  WireReader reader(bytes);
  EXPECT_EQ(DecodeTxnOffsetCommitRequest(reader, 2).status().code(),
            absl::StatusCode::kInvalidArgument);
  WireReader r3(bytes);
  EXPECT_FALSE(DecodeTxnOffsetCommitRequest(r3, 3).ok());
}

TEST(TxnOffsetCommitTest, EncodesResponse) {
  TxnOffsetCommitResponse response;
  TxnTopicResult& topic = response.topics.emplace_back();
  topic.name = "t";
  topic.results.push_back({2, 0});
  std::string out, want;
  WireWriter ow(&out);
  EncodeTxnOffsetCommitResponse(response, 0, ow);
  WireWriter w(&want);
  w.Int32(0);
  w.ArrayLength(1);
  w.String("t");
  w.ArrayLength(1);
  w.Int32(2);
  w.Int16(0);
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace kaas::broker
