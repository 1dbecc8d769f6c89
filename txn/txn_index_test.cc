#include "txn/txn_index.h"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "txn/aborted_txn_list.h"
#include "txn/txn_state.pb.h"

namespace kaas {
namespace txn {

void PrintTo(const AbortedTxn& txn, std::ostream* os) {
  *os << "{pid " << txn.producer_id << ", " << txn.first_offset << ".."
      << txn.last_offset << "}";
}

void PrintTo(const OpenTxn& txn, std::ostream* os) {
  *os << "{pid " << txn.producer_id << ", from " << txn.first_offset << "}";
}

namespace {

using ::kaas::test::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

TEST(TxnIndex, TransactionOpensAtItsFirstDataBatch) {
  TxnIndex index;
  EXPECT_EQ(index.FirstUnstableOffset(), absl::nullopt);
  ASSERT_OK(index.OnTransactionalData(7, 10));
  ASSERT_OK(index.OnTransactionalData(7, 12));  // Same transaction.
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(10));
  EXPECT_TRUE(index.HasOpenTransaction(7));
  EXPECT_FALSE(index.HasOpenTransaction(8));
  EXPECT_THAT(index.open_transactions(), ElementsAre(OpenTxn{7, 10}));
}

TEST(TxnIndex, CommitClosesWithoutRecordingAnything) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(7, 10));
  ASSERT_OK(index.OnMarker(7, ControlKind::kCommit, 15));
  EXPECT_EQ(index.FirstUnstableOffset(), absl::nullopt);
  EXPECT_FALSE(index.HasOpenTransaction(7));
  EXPECT_THAT(index.aborted_transactions(), IsEmpty());
}

TEST(TxnIndex, AbortClosesAndRecordsTheAbortedRange) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(7, 10));
  ASSERT_OK(index.OnMarker(7, ControlKind::kAbort, 15));
  EXPECT_EQ(index.FirstUnstableOffset(), absl::nullopt);
  EXPECT_THAT(index.aborted_transactions(), ElementsAre(AbortedTxn{7, 10, 15}));
  // The producer's next transaction starts afresh.
  ASSERT_OK(index.OnTransactionalData(7, 20));
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(20));
}

TEST(TxnIndex, MarkerWithoutOpenTransactionIsHarmless) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(8, 5));
  ASSERT_OK(index.OnMarker(7, ControlKind::kAbort, 10));
  ASSERT_OK(index.OnMarker(7, ControlKind::kCommit, 11));
  EXPECT_THAT(index.aborted_transactions(), IsEmpty());
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(5));
  // A retried marker after the transaction ended.
  ASSERT_OK(index.OnMarker(8, ControlKind::kAbort, 12));
  ASSERT_OK(index.OnMarker(8, ControlKind::kAbort, 13));
  EXPECT_THAT(index.aborted_transactions(), ElementsAre(AbortedTxn{8, 5, 12}));
}

TEST(TxnIndex, FirstUnstableOffsetIsTheOldestOpenTransaction) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(1, 10));
  ASSERT_OK(index.OnTransactionalData(2, 20));
  ASSERT_OK(index.OnTransactionalData(3, 30));
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(10));
  ASSERT_OK(index.OnMarker(1, ControlKind::kCommit, 40));
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(20));
  ASSERT_OK(index.OnMarker(3, ControlKind::kAbort, 50));
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(20));
  ASSERT_OK(index.OnTransactionalData(1, 60));
  ASSERT_OK(index.OnMarker(2, ControlKind::kCommit, 70));
  EXPECT_THAT(index.FirstUnstableOffset(), Optional(60));
  EXPECT_THAT(index.open_transactions(), ElementsAre(OpenTxn{1, 60}));
  ASSERT_OK(index.OnMarker(1, ControlKind::kAbort, 80));
  EXPECT_EQ(index.FirstUnstableOffset(), absl::nullopt);
  EXPECT_THAT(index.aborted_transactions(),
              ElementsAre(AbortedTxn{3, 30, 50}, AbortedTxn{1, 60, 80}));
}

TEST(TxnIndex, AbortedInRangeUsesOverlapSemantics) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(1, 10));
  ASSERT_OK(index.OnTransactionalData(2, 20));
  ASSERT_OK(index.OnMarker(2, ControlKind::kAbort, 30));
  ASSERT_OK(index.OnMarker(1, ControlKind::kAbort, 50));
  // D-9: a fetch from 35 is inside producer 1's aborted transaction.
  EXPECT_THAT(index.AbortedInRange(35, 100),
              ElementsAre(AbortedTxn{1, 10, 50}));
  EXPECT_THAT(index.AbortedInRange(25, 100),
              ElementsAre(AbortedTxn{1, 10, 50}, AbortedTxn{2, 20, 30}));
  EXPECT_THAT(index.AbortedInRange(0, 10), IsEmpty());  // End exclusive.
  EXPECT_THAT(index.AbortedInRange(0, 20), ElementsAre(AbortedTxn{1, 10, 50}));
  EXPECT_THAT(index.AbortedInRange(51, 100), IsEmpty());
}

TEST(TxnIndex, EvictBelowDropsEndedAbortedTransactionsAndKeepsOpenOnes) {
  TxnIndex index;
  ASSERT_OK(index.OnTransactionalData(1, 0));
  ASSERT_OK(index.OnTransactionalData(2, 10));
  ASSERT_OK(index.OnMarker(2, ControlKind::kAbort, 20));
  ASSERT_OK(index.OnTransactionalData(3, 30));
  ASSERT_OK(index.OnMarker(1, ControlKind::kAbort, 100));
  EXPECT_EQ(index.EvictBelow(50), 1u);
  EXPECT_THAT(index.aborted_transactions(), ElementsAre(AbortedTxn{1, 0, 100}));
  EXPECT_THAT(index.open_transactions(), ElementsAre(OpenTxn{3, 30}));
}

TEST(TxnIndex, RejectsOffsetsThatWouldBreakTheIndex) {
  TxnIndex index;
  EXPECT_THAT(index.OnTransactionalData(-1, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("producer -1 at offset 10")));
  EXPECT_THAT(index.OnTransactionalData(7, -10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("producer 7 at offset -10")));
  EXPECT_THAT(index.OnMarker(7, ControlKind::kAbort, -1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("producer 7 at offset -1")));
  ASSERT_OK(index.OnTransactionalData(7, 10));
  EXPECT_THAT(index.OnMarker(7, ControlKind::kAbort, 9),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("offset 9 is below its open transaction's "
                                 "first offset 10")));
  EXPECT_THAT(index.open_transactions(), ElementsAre(OpenTxn{7, 10}));
  EXPECT_THAT(index.aborted_transactions(), IsEmpty());
}

TxnIndex SampleIndex() {
  TxnIndex index;
  EXPECT_OK(index.OnTransactionalData(1, 10));
  EXPECT_OK(index.OnTransactionalData(2, 20));
  EXPECT_OK(index.OnMarker(2, ControlKind::kAbort, 30));
  EXPECT_OK(index.OnMarker(1, ControlKind::kAbort, 50));
  EXPECT_OK(index.OnTransactionalData(4, 60));
  EXPECT_OK(index.OnTransactionalData(3, 55));
  return index;
}

TEST(TxnIndex, ToProtoListsBothSortedByFirstOffset) {
  const TxnIndexSnapshot snapshot = SampleIndex().ToProto();
  ASSERT_EQ(snapshot.open_size(), 2);
  EXPECT_EQ(snapshot.open(0).producer_id(), 3);
  EXPECT_EQ(snapshot.open(0).first_offset(), 55);
  EXPECT_EQ(snapshot.open(1).producer_id(), 4);
  ASSERT_EQ(snapshot.aborted_size(), 2);
  EXPECT_EQ(snapshot.aborted(0).first_offset(), 10);
  EXPECT_EQ(snapshot.aborted(1).first_offset(), 20);
}

TEST(TxnIndex, ProtoRoundTripPreservesTheIndex) {
  const TxnIndex original = SampleIndex();
  ASSERT_OK_AND_ASSIGN(TxnIndex restored,
                       TxnIndex::FromProto(original.ToProto()));
  EXPECT_EQ(restored.open_transactions(), original.open_transactions());
  EXPECT_EQ(restored.aborted_transactions(), original.aborted_transactions());
  EXPECT_EQ(restored.FirstUnstableOffset(), original.FirstUnstableOffset());
  EXPECT_EQ(restored.AbortedInRange(35, 100), original.AbortedInRange(35, 100));
  EXPECT_EQ(restored.ToProto().SerializeAsString(),
            original.ToProto().SerializeAsString());
  // The restored index keeps working.
  ASSERT_OK(restored.OnMarker(3, ControlKind::kAbort, 70));
  EXPECT_THAT(restored.FirstUnstableOffset(), Optional(60));
  EXPECT_THAT(restored.AbortedInRange(52, 100),
              ElementsAre(AbortedTxn{3, 55, 70}));
}

TEST(TxnIndex, FromProtoOfEmptySnapshotIsEmpty) {
  ASSERT_OK_AND_ASSIGN(TxnIndex index, TxnIndex::FromProto(TxnIndexSnapshot()));
  EXPECT_EQ(index.FirstUnstableOffset(), absl::nullopt);
  EXPECT_THAT(index.aborted_transactions(), IsEmpty());
}

TEST(TxnIndex, FromProtoRejectsCorruptSnapshots) {
  struct Case {
    std::string name;
    void (*corrupt)(TxnIndexSnapshot*);
    std::string message;
  };
  const std::vector<Case> cases = {
      {"negative open producer",
       [](TxnIndexSnapshot* s) { s->mutable_open(0)->set_producer_id(-1); },
       "open transaction 0 of producer -1 at offset 10"},
      {"negative open offset",
       [](TxnIndexSnapshot* s) { s->mutable_open(0)->set_first_offset(-4); },
       "open transaction 0 of producer 1 at offset -4"},
      {"two open transactions of one producer",
       [](TxnIndexSnapshot* s) {
         OpenTxnSnapshot* open = s->add_open();
         open->set_producer_id(1);
         open->set_first_offset(70);
       },
       "open transaction 1: producer 1 has more than one open transaction"},
      {"aborted last offset below first",
       [](TxnIndexSnapshot* s) { s->mutable_aborted(1)->set_last_offset(25); },
       "aborted transaction 1: invalid aborted transaction of producer 3 at "
       "offsets 30..25"},
      {"aborted not sorted",
       [](TxnIndexSnapshot* s) { s->mutable_aborted(1)->set_first_offset(1); },
       "aborted transaction 1: first offset 1 is below the previous one's 20"},
      {"negative aborted producer",
       [](TxnIndexSnapshot* s) { s->mutable_aborted(0)->set_producer_id(-2); },
       "aborted transaction 0: invalid aborted transaction of producer -2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TxnIndexSnapshot snapshot;
    OpenTxnSnapshot* open = snapshot.add_open();
    open->set_producer_id(1);
    open->set_first_offset(10);
    AbortedTxnSnapshot* aborted = snapshot.add_aborted();
    aborted->set_producer_id(2);
    aborted->set_first_offset(20);
    aborted->set_last_offset(25);
    aborted = snapshot.add_aborted();
    aborted->set_producer_id(3);
    aborted->set_first_offset(30);
    aborted->set_last_offset(35);
    ASSERT_OK(TxnIndex::FromProto(snapshot).status());
    c.corrupt(&snapshot);
    EXPECT_THAT(TxnIndex::FromProto(snapshot).status(),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("transaction index snapshot"),
                               HasSubstr(c.message))));
  }
}

}  // namespace
}  // namespace txn
}  // namespace kaas
