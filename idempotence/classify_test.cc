#include "idempotence/classify.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "idempotence/producer_entry.h"

namespace kaas {
namespace idempotence {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr int64_t kProducer = 7;
constexpr int16_t kEpoch = 3;
constexpr int32_t kMaxSeq = std::numeric_limits<int32_t>::max();

BatchInfo Data(int16_t epoch, int32_t base_sequence, int32_t record_count) {
  BatchInfo batch;
  batch.producer_id = kProducer;
  batch.producer_epoch = epoch;
  batch.base_sequence = base_sequence;
  batch.last_offset_delta = record_count - 1;
  return batch;
}

BatchInfo Marker(int16_t epoch) {
  BatchInfo batch;
  batch.producer_id = kProducer;
  batch.producer_epoch = epoch;
  batch.base_sequence = -1;
  batch.is_transactional = true;
  batch.is_control = true;
  return batch;
}

// Batch i (i = 1..5) holds sequences 10i..10i+9 at offsets 1000+10i...; the
// batch with sequences 0..9 has already left the window.
CachedBatch WindowBatch(int i) {
  return CachedBatch{10 * i, 10 * i + 9, 1000 + 10 * i, 1000 + 10 * i + 9};
}

ProducerEntry FullWindow() {
  ProducerEntry entry;
  entry.epoch = kEpoch;
  for (int i = 1; i <= 5; ++i) entry.window.push_back(WindowBatch(i));
  return entry;
}

ProducerEntry EmptyWindow(int16_t epoch) {
  ProducerEntry entry;
  entry.epoch = epoch;
  return entry;
}

TEST(Classify, BatchWithoutProducerIdIsNotIdempotent) {
  BatchInfo batch = Data(kEpoch, 0, 1);
  batch.producer_id = -1;
  const ProducerEntry entry = FullWindow();
  EXPECT_EQ(Classify(nullptr, batch).kind, VerdictKind::kNotIdempotent);
  EXPECT_EQ(Classify(&entry, batch).kind, VerdictKind::kNotIdempotent);
  // Markers without a producer id too (they are not ours to validate).
  BatchInfo marker = Marker(kEpoch);
  marker.producer_id = -1;
  EXPECT_EQ(Classify(nullptr, marker).kind, VerdictKind::kNotIdempotent);
}

TEST(Classify, AcceptAndNotIdempotentHaveNoReason) {
  const ProducerEntry entry = FullWindow();
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 60, 1)).reason, "");
  BatchInfo plain = Data(kEpoch, 0, 1);
  plain.producer_id = -1;
  EXPECT_EQ(Classify(&entry, plain).reason, "");
}

// D-10 decision: as in Kafka, a producer without state continues anywhere.
TEST(Classify, UnknownProducerAcceptsAnySequence) {
  for (int32_t sequence : {0, 1, 42, kMaxSeq - 3, kMaxSeq}) {
    SCOPED_TRACE(sequence);
    EXPECT_EQ(Classify(nullptr, Data(kEpoch, sequence, 5)).kind,
              VerdictKind::kAccept);
  }
}

TEST(Classify, DuplicateAtEachWindowPositionReturnsThatBatch) {
  const ProducerEntry entry = FullWindow();
  for (int i = 1; i <= 5; ++i) {
    SCOPED_TRACE(i);
    const Verdict verdict = Classify(&entry, Data(kEpoch, 10 * i, 10));
    ASSERT_EQ(verdict.kind, VerdictKind::kDuplicate) << verdict.reason;
    EXPECT_EQ(verdict.duplicate_of, WindowBatch(i));
    EXPECT_THAT(
        verdict.reason,
        HasSubstr(absl::StrCat("at offsets ", WindowBatch(i).base_offset)));
  }
}

TEST(Classify, DuplicateNeedsSameFirstAndLastSequence) {
  const ProducerEntry entry = FullWindow();
  // Same first sequence, different length: not a duplicate, and not next.
  const Verdict verdict = Classify(&entry, Data(kEpoch, 30, 5));
  EXPECT_EQ(verdict.kind, VerdictKind::kOutOfOrderSequence);
}

TEST(Classify, DuplicateNeedsSameEpoch) {
  const ProducerEntry entry = FullWindow();
  // Sequences of the newest cached batch, but a newer epoch: a new epoch
  // must start at 0, so this is out of order rather than a duplicate.
  EXPECT_EQ(Classify(&entry, Data(kEpoch + 1, 50, 10)).kind,
            VerdictKind::kOutOfOrderSequence);
}

TEST(Classify, RetryOlderThanWindowIsOutOfOrder) {
  const ProducerEntry entry = FullWindow();
  const Verdict verdict = Classify(&entry, Data(kEpoch, 0, 10));
  EXPECT_EQ(verdict.kind, VerdictKind::kOutOfOrderSequence);
  EXPECT_THAT(verdict.reason,
              AllOf(HasSubstr("expected 60"), HasSubstr("received 0")));
}

TEST(Classify, NextSequenceIsAccepted) {
  const ProducerEntry entry = FullWindow();
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 60, 1)).kind, VerdictKind::kAccept);
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 60, 500)).kind, VerdictKind::kAccept);
}

TEST(Classify, GapIsOutOfOrderNamingExpectedAndReceived) {
  const ProducerEntry entry = FullWindow();
  const Verdict verdict = Classify(&entry, Data(kEpoch, 62, 1));
  EXPECT_EQ(verdict.kind, VerdictKind::kOutOfOrderSequence);
  EXPECT_THAT(verdict.reason,
              AllOf(HasSubstr("producer 7"), HasSubstr("epoch 3"),
                    HasSubstr("expected 60"), HasSubstr("received 62")));
}

TEST(Classify, EpochBumpWithSequenceZeroIsAccepted) {
  const ProducerEntry entry = FullWindow();
  EXPECT_EQ(Classify(&entry, Data(kEpoch + 1, 0, 3)).kind,
            VerdictKind::kAccept);
}

TEST(Classify, EpochBumpWithNonZeroSequenceIsOutOfOrder) {
  const ProducerEntry entry = FullWindow();
  const Verdict verdict = Classify(&entry, Data(kEpoch + 1, 60, 1));
  EXPECT_EQ(verdict.kind, VerdictKind::kOutOfOrderSequence);
  EXPECT_THAT(verdict.reason,
              AllOf(HasSubstr("expected 0"), HasSubstr("received 60"),
                    HasSubstr("current epoch is 3")));
}

TEST(Classify, OlderEpochIsInvalidEpoch) {
  const ProducerEntry entry = FullWindow();
  // Even with the sequences of a cached batch, or sequence 0.
  for (int32_t sequence : {0, 10, 60}) {
    SCOPED_TRACE(sequence);
    const Verdict verdict = Classify(&entry, Data(kEpoch - 1, sequence, 10));
    EXPECT_EQ(verdict.kind, VerdictKind::kInvalidProducerEpoch);
    EXPECT_THAT(verdict.reason, AllOf(HasSubstr("received 2"),
                                      HasSubstr("current epoch is 3")));
  }
}

TEST(Classify, EmptyWindowRequiresSequenceZero) {
  const ProducerEntry entry = EmptyWindow(kEpoch);
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 0, 4)).kind, VerdictKind::kAccept);
  const Verdict verdict = Classify(&entry, Data(kEpoch, 5, 4));
  EXPECT_EQ(verdict.kind, VerdictKind::kOutOfOrderSequence);
  EXPECT_THAT(verdict.reason,
              AllOf(HasSubstr("expected 0"), HasSubstr("received 5")));
  EXPECT_EQ(Classify(&entry, Data(kEpoch - 1, 0, 4)).kind,
            VerdictKind::kInvalidProducerEpoch);
}

TEST(Classify, BatchEndingAtInt32MaxIsFollowedByZero) {
  ProducerEntry entry = EmptyWindow(kEpoch);
  entry.window.push_back(CachedBatch{kMaxSeq - 9, kMaxSeq, 500, 509});
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 0, 10)).kind, VerdictKind::kAccept);
  // INT32_MAX + 1 in two's complement is malformed, not the successor.
  const Verdict negative =
      Classify(&entry, Data(kEpoch, std::numeric_limits<int32_t>::min(), 10));
  EXPECT_EQ(negative.kind, VerdictKind::kInvalidRecord);
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 1, 10)).kind,
            VerdictKind::kOutOfOrderSequence);
}

TEST(Classify, BatchCrossingInt32MaxWrapsItsLastSequence) {
  // Sequences INT32_MAX-1, INT32_MAX, 0, 1.
  const BatchInfo crossing = Data(kEpoch, kMaxSeq - 1, 4);
  EXPECT_EQ(crossing.last_sequence(), 1);

  ProducerEntry entry = EmptyWindow(kEpoch);
  entry.window.push_back(CachedBatch{kMaxSeq - 11, kMaxSeq - 2, 500, 509});
  EXPECT_EQ(Classify(&entry, crossing).kind, VerdictKind::kAccept);
  entry.window.push_back(CachedBatch{kMaxSeq - 1, 1, 510, 513});
  const Verdict retry = Classify(&entry, crossing);
  ASSERT_EQ(retry.kind, VerdictKind::kDuplicate) << retry.reason;
  EXPECT_EQ(retry.duplicate_of.base_offset, 510);
  EXPECT_EQ(Classify(&entry, Data(kEpoch, 2, 1)).kind, VerdictKind::kAccept);
}

TEST(Classify, MarkerIsAcceptedWithoutSequenceCheck) {
  const ProducerEntry full = FullWindow();
  const ProducerEntry empty = EmptyWindow(kEpoch);
  EXPECT_EQ(Classify(nullptr, Marker(kEpoch)).kind, VerdictKind::kAccept);
  EXPECT_EQ(Classify(&full, Marker(kEpoch)).kind, VerdictKind::kAccept);
  EXPECT_EQ(Classify(&empty, Marker(kEpoch)).kind, VerdictKind::kAccept);
  // D-25: a newer epoch is accepted (and adopted by Record).
  EXPECT_EQ(Classify(&full, Marker(kEpoch + 1)).kind, VerdictKind::kAccept);
}

TEST(Classify, MarkerWithOlderEpochIsInvalidEpoch) {
  const ProducerEntry entry = FullWindow();
  const Verdict verdict = Classify(&entry, Marker(kEpoch - 1));
  EXPECT_EQ(verdict.kind, VerdictKind::kInvalidProducerEpoch);
  EXPECT_THAT(verdict.reason,
              AllOf(HasSubstr("transaction marker"), HasSubstr("received 2"),
                    HasSubstr("current epoch is 3")));
}

TEST(Classify, MalformedProducerFieldsAreInvalidRecords) {
  struct Case {
    std::string name;
    BatchInfo batch;
    std::string reason;
  };
  BatchInfo negative_epoch = Data(-1, 0, 1);
  BatchInfo negative_sequence = Data(kEpoch, -1, 1);
  BatchInfo negative_delta = Data(kEpoch, 0, 0);
  BatchInfo negative_epoch_marker = Marker(-1);
  const std::vector<Case> cases = {
      {"negative epoch", negative_epoch, "invalid producer epoch -1"},
      {"negative base sequence", negative_sequence, "invalid base sequence -1"},
      {"negative lastOffsetDelta", negative_delta,
       "invalid lastOffsetDelta -1"},
      {"marker with negative epoch", negative_epoch_marker,
       "invalid producer epoch -1"},
  };
  const ProducerEntry entry = FullWindow();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (const ProducerEntry* state :
         std::vector<const ProducerEntry*>{&entry, nullptr}) {
      const Verdict verdict = Classify(state, c.batch);
      EXPECT_EQ(verdict.kind, VerdictKind::kInvalidRecord);
      EXPECT_THAT(verdict.reason,
                  AllOf(HasSubstr(c.reason), HasSubstr("producer 7")));
    }
  }
}

TEST(VerdictKindName, NamesEveryKind) {
  EXPECT_EQ(VerdictKindName(VerdictKind::kNotIdempotent), "kNotIdempotent");
  EXPECT_EQ(VerdictKindName(VerdictKind::kAccept), "kAccept");
  EXPECT_EQ(VerdictKindName(VerdictKind::kDuplicate), "kDuplicate");
  EXPECT_EQ(VerdictKindName(VerdictKind::kOutOfOrderSequence),
            "kOutOfOrderSequence");
  EXPECT_EQ(VerdictKindName(VerdictKind::kInvalidProducerEpoch),
            "kInvalidProducerEpoch");
  EXPECT_EQ(VerdictKindName(VerdictKind::kInvalidRecord), "kInvalidRecord");
}

}  // namespace
}  // namespace idempotence
}  // namespace kaas
