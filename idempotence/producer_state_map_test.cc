#include "idempotence/producer_state_map.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "idempotence/classify.h"
#include "idempotence/producer_entry.h"
#include "idempotence/producer_state.pb.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace idempotence {
namespace {

using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kProducer = 7;

BatchInfo Data(int64_t producer_id, int16_t epoch, int32_t base_sequence,
               int32_t record_count, int64_t max_timestamp = 0) {
  BatchInfo batch;
  batch.producer_id = producer_id;
  batch.producer_epoch = epoch;
  batch.base_sequence = base_sequence;
  batch.last_offset_delta = record_count - 1;
  batch.max_timestamp = max_timestamp;
  return batch;
}

BatchInfo Marker(int64_t producer_id, int16_t epoch,
                 int64_t max_timestamp = 0) {
  BatchInfo batch;
  batch.producer_id = producer_id;
  batch.producer_epoch = epoch;
  batch.base_sequence = -1;
  batch.is_transactional = true;
  batch.is_control = true;
  batch.max_timestamp = max_timestamp;
  return batch;
}

VerdictKind CheckKind(const ProducerStateMap& map, const BatchInfo& batch) {
  return map.Check(batch).kind;
}

bool NoOngoingTransaction(int64_t) { return false; }

TEST(ProducerStateMap, UnknownProducerIsAcceptedAndRecorded) {
  ProducerStateMap map;
  EXPECT_EQ(map.Get(kProducer), nullptr);
  const BatchInfo batch = Data(kProducer, 1, 40, 5, /*max_timestamp=*/123);
  EXPECT_EQ(CheckKind(map, batch), VerdictKind::kAccept);
  ASSERT_OK(map.Record(batch, 1000));

  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, 1);
  EXPECT_EQ(entry->last_timestamp, 123);
  EXPECT_THAT(entry->window, ElementsAre(CachedBatch{40, 44, 1000, 1004}));
  EXPECT_EQ(map.size(), 1u);
}

TEST(ProducerStateMap, RetryOfRecordedBatchIsDuplicateWithItsOffsets) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 0, 0, 3), 10));
  ASSERT_OK(map.Record(Data(kProducer, 0, 3, 2), 13));
  const Verdict verdict = map.Check(Data(kProducer, 0, 0, 3));
  ASSERT_EQ(verdict.kind, VerdictKind::kDuplicate);
  EXPECT_EQ(verdict.duplicate_of, (CachedBatch{0, 2, 10, 12}));
  EXPECT_EQ(CheckKind(map, Data(kProducer, 0, 5, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, WindowKeepsTheNewestFiveBatches) {
  ProducerStateMap map;
  // Seven batches of two records: sequences 2i..2i+1 at offsets 100+2i...
  for (int i = 0; i < 7; ++i) {
    ASSERT_OK(map.Record(Data(kProducer, 0, 2 * i, 2), 100 + 2 * i));
  }
  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->window.size(), kMaxCachedBatches);
  EXPECT_EQ(entry->window.front(), (CachedBatch{4, 5, 104, 105}));
  EXPECT_EQ(entry->window.back(), (CachedBatch{12, 13, 112, 113}));

  for (int i = 0; i < 7; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(
        CheckKind(map, Data(kProducer, 0, 2 * i, 2)),
        i < 2 ? VerdictKind::kOutOfOrderSequence : VerdictKind::kDuplicate);
  }
}

TEST(ProducerStateMap, EpochBumpWithSequenceZeroResetsTheWindow) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 0, 0, 5), 0));
  ASSERT_OK(map.Record(Data(kProducer, 0, 5, 5), 5));
  ASSERT_EQ(CheckKind(map, Data(kProducer, 1, 0, 5)), VerdictKind::kAccept);
  ASSERT_OK(map.Record(Data(kProducer, 1, 0, 5), 10));

  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, 1);
  EXPECT_THAT(entry->window, ElementsAre(CachedBatch{0, 4, 10, 14}));
  // The old epoch's batches are gone: a retry of one is a fenced producer.
  EXPECT_EQ(CheckKind(map, Data(kProducer, 0, 5, 5)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 1, 5, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, ControlBatchesNeverTakeAWindowSlot) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 0, 0, 10), 0));  // Sequences 0..9.
  ASSERT_EQ(CheckKind(map, Marker(kProducer, 0)), VerdictKind::kAccept);
  ASSERT_OK(map.Record(Marker(kProducer, 0), 10));
  EXPECT_EQ(map.Get(kProducer)->window.size(), 1u);
  // The next data batch is measured against the last data batch.
  EXPECT_EQ(CheckKind(map, Data(kProducer, 0, 10, 1)), VerdictKind::kAccept);
  ASSERT_OK(map.Record(Data(kProducer, 0, 10, 1), 11));
  EXPECT_THAT(
      map.Get(kProducer)->window,
      ElementsAre(CachedBatch{0, 9, 0, 9}, CachedBatch{10, 10, 11, 11}));
}

TEST(ProducerStateMap, MarkerWithNewerEpochIsAdoptedAndClearsTheWindow) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 2, 0, 10), 0));
  ASSERT_OK(map.Record(Marker(kProducer, 3, /*max_timestamp=*/77), 10));

  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, 3);
  EXPECT_TRUE(entry->window.empty());
  EXPECT_EQ(entry->last_timestamp, 77);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 2, 10, 1)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 3, 10, 1)),
            VerdictKind::kOutOfOrderSequence);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 3, 0, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, MarkerForUnknownProducerCreatesItsEpoch) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Marker(kProducer, 4), 0));
  ASSERT_NE(map.Get(kProducer), nullptr);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 3, 0, 1)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 4, 1, 1)),
            VerdictKind::kOutOfOrderSequence);
}

TEST(ProducerStateMap, MarkerWithOlderEpochIsRejectedAndNotRecorded) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 5, 0, 1), 0));
  EXPECT_EQ(CheckKind(map, Marker(kProducer, 4)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_THAT(map.Record(Marker(kProducer, 4), 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the producer is at epoch 5")));
  EXPECT_EQ(map.Get(kProducer)->epoch, 5);
}

TEST(ProducerStateMap, RecordIgnoresBatchesWithoutProducerId) {
  ProducerStateMap map;
  EXPECT_OK(map.Record(Data(-1, 0, 0, 1), 0));
  EXPECT_TRUE(map.empty());
}

TEST(ProducerStateMap, RecordDoesNotCheckSequencesSoReplayRebuildsState) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 0, 0, 5), 0));
  // A gap, as a log written before the producer's state expired can hold.
  ASSERT_OK(map.Record(Data(kProducer, 0, 100, 5), 5));
  EXPECT_EQ(map.Get(kProducer)->newest()->first_seq, 100);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 0, 105, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, RecordRefusesInputThatWouldBreakTheInvariants) {
  struct Case {
    std::string name;
    BatchInfo batch;
    int64_t base_offset;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"negative epoch", Data(kProducer, -1, 0, 1), 50,
       absl::StatusCode::kInvalidArgument, "negative epoch -1"},
      {"negative base sequence", Data(kProducer, 1, -3, 1), 50,
       absl::StatusCode::kInvalidArgument, "base sequence -3"},
      {"negative lastOffsetDelta", Data(kProducer, 1, 0, 0), 50,
       absl::StatusCode::kInvalidArgument, "lastOffsetDelta -1"},
      {"negative base offset", Data(kProducer, 1, 0, 1), -1,
       absl::StatusCode::kInvalidArgument, "base offset -1"},
      {"last offset overflows", Data(kProducer, 1, 0, 3),
       std::numeric_limits<int64_t>::max() - 1,
       absl::StatusCode::kInvalidArgument, "lastOffsetDelta 2"},
      {"older epoch", Data(kProducer, 0, 0, 1), 50,
       absl::StatusCode::kFailedPrecondition, "the producer is at epoch 1"},
      {"duplicate offsets", Data(kProducer, 1, 0, 10), 9,
       absl::StatusCode::kFailedPrecondition,
       "newest cached batch ends at offset 9"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ProducerStateMap map;
    ASSERT_OK(map.Record(Data(kProducer, 1, 0, 10, /*max_timestamp=*/5), 0));
    EXPECT_THAT(
        map.Record(c.batch, c.base_offset),
        StatusIs(c.code, AllOf(HasSubstr(c.message), HasSubstr("producer 7"))));
    const ProducerEntry* entry = map.Get(kProducer);
    EXPECT_EQ(entry->epoch, 1);
    EXPECT_EQ(entry->last_timestamp, 5);
    EXPECT_THAT(entry->window, ElementsAre(CachedBatch{0, 9, 0, 9}));
  }
}

TEST(ProducerStateMap, FenceAcceptsOnlySequenceZeroAtOrAboveTheFencedEpoch) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 2, 0, 10), 0));
  ASSERT_OK(map.Fence(kProducer, 5, /*now_ms=*/1000));

  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, 5);
  EXPECT_TRUE(entry->window.empty());
  // The zombie at the old epoch, even with its next sequence.
  EXPECT_EQ(CheckKind(map, Data(kProducer, 2, 10, 1)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 4, 0, 1)),
            VerdictKind::kInvalidProducerEpoch);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 5, 3, 1)),
            VerdictKind::kOutOfOrderSequence);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 5, 0, 1)), VerdictKind::kAccept);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 6, 0, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, FenceOfUnknownProducerCreatesItAtTheFenceTime) {
  ProducerStateMap map;
  ASSERT_OK(map.Fence(kProducer, 3, /*now_ms=*/1000));
  const ProducerEntry* entry = map.Get(kProducer);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->epoch, 3);
  EXPECT_EQ(entry->last_timestamp, 1000);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 2, 0, 1)),
            VerdictKind::kInvalidProducerEpoch);
  // The fence survives a sweep before its expiration period has passed.
  EXPECT_EQ(
      map.RemoveExpired(1000 + kDefaultProducerIdExpirationMs - 1,
                        kDefaultProducerIdExpirationMs, NoOngoingTransaction),
      0u);
}

TEST(ProducerStateMap, FenceWithOlderOrEqualEpochKeepsTheWindow) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 5, 0, 10, /*max_timestamp=*/2000), 0));
  ASSERT_OK(map.Fence(kProducer, 5, /*now_ms=*/1000));
  ASSERT_OK(map.Fence(kProducer, 4, /*now_ms=*/3000));
  const ProducerEntry* entry = map.Get(kProducer);
  EXPECT_EQ(entry->epoch, 5);
  EXPECT_EQ(entry->window.size(), 1u);
  EXPECT_EQ(entry->last_timestamp, 3000);
  EXPECT_EQ(CheckKind(map, Data(kProducer, 5, 10, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, FenceRejectsNegativeProducerIdOrEpoch) {
  ProducerStateMap map;
  EXPECT_THAT(map.Fence(-1, 0, 0), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("producer -1")));
  EXPECT_THAT(
      map.Fence(kProducer, -2, 0),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("epoch -2")));
  EXPECT_TRUE(map.empty());
}

TEST(ProducerStateMap, RemoveExpiredKeepsRecentAndTransactionalProducers) {
  constexpr int64_t kExpiration = 1000;
  constexpr int64_t kNow = 10000;
  constexpr int64_t kExpired = 1, kOngoingTxn = 2, kRecent = 3, kBoundary = 4,
                    kFuture = 5;
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kExpired, 0, 0, 1, kNow - 5000), 0));
  ASSERT_OK(map.Record(Data(kOngoingTxn, 0, 0, 1, kNow - 5000), 1));
  ASSERT_OK(map.Record(Data(kRecent, 0, 0, 1, kNow - kExpiration + 1), 2));
  ASSERT_OK(map.Record(Data(kBoundary, 0, 0, 1, kNow - kExpiration), 3));
  ASSERT_OK(map.Record(Data(kFuture, 0, 0, 1, kNow + 5000), 4));

  const size_t removed = map.RemoveExpired(
      kNow, kExpiration,
      [](int64_t producer_id) { return producer_id == kOngoingTxn; });
  EXPECT_EQ(removed, 2u);
  EXPECT_EQ(map.Get(kExpired), nullptr);
  EXPECT_EQ(map.Get(kBoundary), nullptr);  // Idle for exactly the period.
  EXPECT_NE(map.Get(kOngoingTxn), nullptr);
  EXPECT_NE(map.Get(kRecent), nullptr);
  EXPECT_NE(map.Get(kFuture), nullptr);
  // Expiry of a removed producer forgets it: any sequence is accepted again.
  EXPECT_EQ(CheckKind(map, Data(kExpired, 0, 77, 1)), VerdictKind::kAccept);
}

TEST(ProducerStateMap, ExpiryRestartsWithEachBatchIncludingMarkers) {
  ProducerStateMap map;
  ASSERT_OK(map.Record(Data(kProducer, 0, 0, 1, /*max_timestamp=*/0), 0));
  ASSERT_OK(map.Record(Marker(kProducer, 0, /*max_timestamp=*/900), 1));
  EXPECT_EQ(map.RemoveExpired(1000, 500, NoOngoingTransaction), 0u);
  EXPECT_EQ(map.RemoveExpired(1400, 500, NoOngoingTransaction), 1u);
}

TEST(ProducerStateMap, RemoveExpiredHandlesExtremeTimestamps) {
  ProducerStateMap map;
  ASSERT_OK(
      map.Record(Data(1, 0, 0, 1, std::numeric_limits<int64_t>::min()), 0));
  ASSERT_OK(
      map.Record(Data(2, 0, 0, 1, std::numeric_limits<int64_t>::max()), 1));
  EXPECT_EQ(
      map.RemoveExpired(std::numeric_limits<int64_t>::max(),
                        kDefaultProducerIdExpirationMs, NoOngoingTransaction),
      1u);
  EXPECT_EQ(map.Get(1), nullptr);
  EXPECT_NE(map.Get(2), nullptr);
}

// A map with several kinds of producers, for the snapshot tests.
ProducerStateMap SampleMap() {
  ProducerStateMap map;
  // Producer 30: a full window whose batches wrap past INT32_MAX.
  constexpr int32_t kMaxSeq = std::numeric_limits<int32_t>::max();
  int32_t sequence = kMaxSeq - 20;
  for (int i = 0; i < 7; ++i) {
    const BatchInfo batch = Data(30, 2, sequence, 5, 1000 + i);
    EXPECT_OK(map.Record(batch, 100 + 5 * i));
    sequence = NextSequence(batch.last_sequence(), 1);
  }
  // Producer 10: fenced, empty window.
  EXPECT_OK(map.Fence(10, 4, 555));
  // Producer 20: two batches, then a marker.
  EXPECT_OK(map.Record(Data(20, 0, 0, 3, 10), 200));
  EXPECT_OK(map.Record(Data(20, 0, 3, 1, 11), 203));
  EXPECT_OK(map.Record(Marker(20, 0, 12), 204));
  return map;
}

TEST(ProducerStateMap, ToProtoSortsProducersById) {
  const ProducerStateSnapshot snapshot = SampleMap().ToProto();
  ASSERT_EQ(snapshot.producers_size(), 3);
  EXPECT_EQ(snapshot.producers(0).producer_id(), 10);
  EXPECT_EQ(snapshot.producers(1).producer_id(), 20);
  EXPECT_EQ(snapshot.producers(2).producer_id(), 30);
  EXPECT_EQ(snapshot.producers(2).window_size(), 5);
  EXPECT_EQ(snapshot.producers(1).last_timestamp(), 12);
}

TEST(ProducerStateMap, ProtoRoundTripPreservesClassification) {
  const ProducerStateMap original = SampleMap();
  ASSERT_OK_AND_ASSIGN(ProducerStateMap restored,
                       ProducerStateMap::FromProto(original.ToProto()));
  EXPECT_EQ(restored.size(), original.size());
  EXPECT_EQ(restored.ToProto().SerializeAsString(),
            original.ToProto().SerializeAsString());

  // Every producer, epochs around its own, sequences around its window.
  for (int64_t producer_id : {10, 20, 30, 40}) {
    for (int16_t epoch = 0; epoch <= 5; ++epoch) {
      for (int32_t base :
           {0, 1, 3, 4, 5, 9, 10, 11, 2147483627, 2147483642, 2147483647}) {
        for (int32_t count : {1, 3, 5}) {
          const BatchInfo batch = Data(producer_id, epoch, base, count);
          const Verdict want = original.Check(batch);
          const Verdict got = restored.Check(batch);
          EXPECT_EQ(got.kind, want.kind) << want.reason;
          EXPECT_EQ(got.duplicate_of, want.duplicate_of);
          EXPECT_EQ(got.reason, want.reason);
        }
      }
      EXPECT_EQ(restored.Check(Marker(producer_id, epoch)).kind,
                original.Check(Marker(producer_id, epoch)).kind);
    }
  }
}

TEST(ProducerStateMap, FromProtoOfEmptySnapshotIsEmpty) {
  ASSERT_OK_AND_ASSIGN(ProducerStateMap map,
                       ProducerStateMap::FromProto(ProducerStateSnapshot()));
  EXPECT_TRUE(map.empty());
}

CachedBatchSnapshot* AddBatch(ProducerEntrySnapshot* entry, int32_t first_seq,
                              int32_t last_seq, int64_t base_offset,
                              int64_t last_offset) {
  CachedBatchSnapshot* batch = entry->add_window();
  batch->set_first_seq(first_seq);
  batch->set_last_seq(last_seq);
  batch->set_base_offset(base_offset);
  batch->set_last_offset(last_offset);
  return batch;
}

TEST(ProducerStateMap, FromProtoRejectsCorruptSnapshots) {
  struct Case {
    std::string name;
    // Applied to a valid snapshot of one producer (id 7, epoch 1, one batch
    // of sequences 0..9 at offsets 0..9).
    void (*corrupt)(ProducerStateSnapshot*);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"window of six",
       [](ProducerStateSnapshot* s) {
         for (int i = 1; i <= 5; ++i) {
           AddBatch(s->mutable_producers(0), 10 * i, 10 * i + 9, 10 * i,
                    10 * i + 9);
         }
       },
       "producer 7: window holds 6 batches, at most 5"},
      {"unordered window",
       [](ProducerStateSnapshot* s) {
         AddBatch(s->mutable_producers(0), 10, 19, 0, 9);
       },
       "producer 7: window[1]: offsets 0..9 do not follow the previous "
       "batch's last offset 9"},
      {"negative epoch",
       [](ProducerStateSnapshot* s) { s->mutable_producers(0)->set_epoch(-1); },
       "producer 7: epoch -1 is outside [0, 32767]"},
      {"epoch beyond int16",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->set_epoch(40000);
       },
       "epoch 40000 is outside"},
      {"negative producer id",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->set_producer_id(-5);
       },
       "producer -5: negative producer id"},
      {"producer listed twice",
       [](ProducerStateSnapshot* s) { *s->add_producers() = s->producers(0); },
       "producer 7: listed more than once"},
      {"negative sequence",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->mutable_window(0)->set_first_seq(-1);
       },
       "window[0]: negative sequence -1..9"},
      {"last offset below base offset",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->mutable_window(0)->set_last_offset(-3);
       },
       "window[0]: invalid offsets 0..-3"},
      {"sequences do not match offsets",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->mutable_window(0)->set_last_seq(8);
       },
       "window[0]: sequences 0..8 do not match offsets 0..9"},
      {"offset delta beyond int32",
       [](ProducerStateSnapshot* s) {
         s->mutable_producers(0)->mutable_window(0)->set_last_offset(int64_t{1}
                                                                     << 40);
       },
       "do not match offsets"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ProducerStateSnapshot snapshot;
    ProducerEntrySnapshot* entry = snapshot.add_producers();
    entry->set_producer_id(kProducer);
    entry->set_epoch(1);
    AddBatch(entry, 0, 9, 0, 9);
    ASSERT_OK(ProducerStateMap::FromProto(snapshot).status());
    c.corrupt(&snapshot);
    EXPECT_THAT(ProducerStateMap::FromProto(snapshot).status(),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("producer state snapshot"),
                               HasSubstr(c.message))));
  }
}

}  // namespace
}  // namespace idempotence
}  // namespace kaas
