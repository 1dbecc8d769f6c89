#include "txn/aborted_txn_list.h"

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

#include "absl/random/distributions.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace txn {

// Readable test failures.
void PrintTo(const AbortedTxn& txn, std::ostream* os) {
  *os << "{pid " << txn.producer_id << ", " << txn.first_offset << ".."
      << txn.last_offset << "}";
}

namespace {

using ::kaas::test::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

AbortedTxnList ListOf(const std::vector<AbortedTxn>& txns) {
  AbortedTxnList list;
  for (const AbortedTxn& txn : txns) EXPECT_OK(list.Insert(txn));
  return list;
}

TEST(AbortedTxnList, InsertKeepsFirstOffsetOrder) {
  // Transactions abort out of first-offset order: 2 opened after 1 but
  // aborted first.
  const AbortedTxnList list =
      ListOf({{2, 20, 30}, {1, 10, 40}, {3, 50, 60}, {4, 45, 70}});
  EXPECT_THAT(list.entries(),
              ElementsAre(AbortedTxn{1, 10, 40}, AbortedTxn{2, 20, 30},
                          AbortedTxn{4, 45, 70}, AbortedTxn{3, 50, 60}));
}

TEST(AbortedTxnList, InsertOfAnEqualEntryIsANoOp) {
  AbortedTxnList list = ListOf({{1, 10, 40}, {2, 50, 60}});
  EXPECT_OK(list.Insert({1, 10, 40}));
  EXPECT_OK(list.Insert({2, 50, 60}));
  EXPECT_EQ(list.size(), 2u);
}

TEST(AbortedTxnList, InsertRejectsInvalidEntries) {
  AbortedTxnList list;
  EXPECT_THAT(list.Insert({-1, 0, 0}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("producer -1 at offsets 0..0")));
  EXPECT_THAT(
      list.Insert({1, -5, 3}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offsets -5..3")));
  EXPECT_THAT(
      list.Insert({1, 9, 8}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("offsets 9..8")));
  EXPECT_TRUE(list.empty());
}

TEST(AbortedTxnList, OverlappingIncludesTransactionsStartedBeforeStart) {
  // D-9: a consumer resuming at 30 inside the aborted [10, 40] must hear of it.
  const AbortedTxnList list = ListOf({{1, 10, 40}, {2, 50, 60}});
  EXPECT_THAT(list.Overlapping(30, 100),
              ElementsAre(AbortedTxn{1, 10, 40}, AbortedTxn{2, 50, 60}));
  EXPECT_THAT(list.Overlapping(40, 45), ElementsAre(AbortedTxn{1, 10, 40}));
  EXPECT_THAT(list.Overlapping(41, 50), IsEmpty());
}

TEST(AbortedTxnList, OverlappingEndIsExclusive) {
  const AbortedTxnList list = ListOf({{1, 10, 40}});
  EXPECT_THAT(list.Overlapping(0, 10), IsEmpty());
  EXPECT_THAT(list.Overlapping(0, 11), ElementsAre(AbortedTxn{1, 10, 40}));
}

TEST(AbortedTxnList, OverlappingOfAnEmptyRangeIsEmpty) {
  const AbortedTxnList list = ListOf({{1, 10, 40}});
  EXPECT_THAT(list.Overlapping(20, 20), IsEmpty());
  EXPECT_THAT(list.Overlapping(30, 20), IsEmpty());
  EXPECT_THAT(AbortedTxnList().Overlapping(0, 100), IsEmpty());
}

TEST(AbortedTxnList, EvictBelowDropsEveryEndedEntryEvenWhenNotAPrefix) {
  // The long transaction [0, 100] survives log start 50 and sits before two
  // that do not.
  AbortedTxnList list = ListOf(
      {{1, 0, 100}, {2, 10, 20}, {3, 30, 40}, {4, 49, 50}, {5, 150, 160}});
  EXPECT_EQ(list.EvictBelow(50), 2u);
  EXPECT_THAT(list.entries(),
              ElementsAre(AbortedTxn{1, 0, 100}, AbortedTxn{4, 49, 50},
                          AbortedTxn{5, 150, 160}));
  // The query structure follows the eviction.
  EXPECT_THAT(list.Overlapping(0, 200),
              ElementsAre(AbortedTxn{1, 0, 100}, AbortedTxn{4, 49, 50},
                          AbortedTxn{5, 150, 160}));
  EXPECT_EQ(list.EvictBelow(50), 0u);
  EXPECT_EQ(list.EvictBelow(1000), 3u);
  EXPECT_TRUE(list.empty());
  EXPECT_THAT(list.Overlapping(0, 2000), IsEmpty());
}

TEST(AbortedTxnList, FromSortedAcceptsSortedEntries) {
  ASSERT_OK_AND_ASSIGN(
      AbortedTxnList list,
      AbortedTxnList::FromSorted({{1, 10, 40}, {2, 20, 30}, {3, 20, 25}}));
  EXPECT_THAT(list.Overlapping(26, 100),
              ElementsAre(AbortedTxn{1, 10, 40}, AbortedTxn{2, 20, 30}));
}

TEST(AbortedTxnList, FromSortedRejectsUnsortedOrInvalidEntries) {
  EXPECT_THAT(AbortedTxnList::FromSorted({{1, 20, 40}, {2, 10, 30}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("aborted transaction 1: first offset 10 is "
                                 "below the previous one's 20")));
  EXPECT_THAT(
      AbortedTxnList::FromSorted({{1, 20, 40}, {2, 50, 45}}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("aborted transaction 1: invalid aborted "
                         "transaction of producer 2 at offsets 50..45")));
}

// The reference: a plain sorted vector, filtered linearly.
class BruteForceList {
 public:
  void Insert(const AbortedTxn& txn) {
    const auto position =
        std::upper_bound(entries_.begin(), entries_.end(), txn.first_offset,
                         [](int64_t offset, const AbortedTxn& t) {
                           return offset < t.first_offset;
                         });
    for (auto it = entries_.begin(); it != position; ++it) {
      if (*it == txn) return;
    }
    entries_.insert(position, txn);
  }
  // Entries holding an offset of [start, end).
  std::vector<AbortedTxn> Overlapping(int64_t start, int64_t end) const {
    std::vector<AbortedTxn> result;
    if (start >= end) return result;
    for (const AbortedTxn& txn : entries_) {
      if (txn.last_offset >= start && txn.first_offset < end) {
        result.push_back(txn);
      }
    }
    return result;
  }
  void EvictBelow(int64_t log_start) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                  [&](const AbortedTxn& txn) {
                                    return txn.last_offset < log_start;
                                  }),
                   entries_.end());
  }
  const std::vector<AbortedTxn>& entries() const { return entries_; }

 private:
  std::vector<AbortedTxn> entries_;
};

TEST(AbortedTxnList, MatchesBruteForceOnRandomOperations) {
  std::mt19937_64 rng(20240611);  // Fixed seed: the test is deterministic.
  for (int round = 0; round < 12; ++round) {
    SCOPED_TRACE(round);
    AbortedTxnList list;
    BruteForceList reference;
    int64_t log_start = 0;
    for (int op = 0; op < 1500; ++op) {
      const int choice = absl::Uniform(rng, 0, 100);
      if (choice < 60) {
        // Mostly short transactions, some spanning thousands of offsets;
        // every tenth re-inserts an existing entry.
        AbortedTxn txn;
        if (choice < 6 && !reference.entries().empty()) {
          txn = reference.entries()[absl::Uniform<size_t>(
              rng, 0, reference.entries().size())];
        } else {
          txn.producer_id = absl::Uniform<int64_t>(rng, 0, 50);
          txn.first_offset = absl::Uniform<int64_t>(rng, log_start, 20000);
          const bool long_txn = absl::Uniform(rng, 0, 20) == 0;
          txn.last_offset =
              txn.first_offset +
              absl::Uniform<int64_t>(rng, 0, long_txn ? 5000 : 50);
        }
        ASSERT_OK(list.Insert(txn));
        reference.Insert(txn);
      } else if (choice < 62) {
        log_start += absl::Uniform<int64_t>(rng, 0, 500);
        list.EvictBelow(log_start);
        reference.EvictBelow(log_start);
      } else {
        const int64_t start = absl::Uniform<int64_t>(rng, -10, 26000);
        const int64_t end = start + absl::Uniform<int64_t>(rng, -5, 3000);
        ASSERT_EQ(list.Overlapping(start, end),
                  reference.Overlapping(start, end))
            << "start " << start << " end " << end;
      }
    }
    ASSERT_EQ(list.entries(), reference.entries());
  }
}

}  // namespace
}  // namespace txn
}  // namespace kaas
