#include "storage/partition/epoch_history.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kaas::partition {
namespace {

using Entry = EpochHistory::Entry;
using ::testing::ElementsAre;

void ExpectEnd(const EpochHistory& history, int64_t asked, int64_t log_end,
               int64_t epoch, int64_t end) {
  EpochEndOffset answer = history.EndOffsetFor(asked, log_end);
  EXPECT_EQ(answer.leader_epoch, epoch) << "asked " << asked;
  EXPECT_EQ(answer.end_offset, end) << "asked " << asked;
}

TEST(EpochHistory, AnswersKafkasOffsetForLeaderEpoch) {
  EpochHistory history;
  history.Begin(1, 0);
  history.Begin(3, 10);
  history.Begin(4, 15);
  ExpectEnd(history, 1, 20, 1, 10);
  ExpectEnd(history, 2, 20, 1, 10);  // no epoch 2: the largest below it
  ExpectEnd(history, 3, 20, 3, 15);
  ExpectEnd(history, 4, 20, 4, 20);  // the latest: the log end
  ExpectEnd(history, 5, 20, -1, -1);
  ExpectEnd(history, 0, 20, 0, 0);  // below the first known epoch
  ExpectEnd(history, -1, 20, -1, -1);
  ExpectEnd(EpochHistory(), 1, 20, -1, -1);
}

TEST(EpochHistory, AnEpochThatWroteNothingLeavesNoTrace) {
  EpochHistory history;
  history.Begin(1, 0);
  history.Begin(2, 5);
  history.Begin(3, 5);
  EXPECT_THAT(history.entries(), ElementsAre(Entry{1, 0}, Entry{3, 5}));
  history.Begin(3, 9);  // not newer: ignored
  history.Begin(2, 9);
  EXPECT_THAT(history.entries(), ElementsAre(Entry{1, 0}, Entry{3, 5}));
}

TEST(EpochHistory, TrimKeepsTheEpochCoveringTheLogStart) {
  EpochHistory history({{1, 0}, {2, 10}, {5, 20}});
  history.TrimBelow(12);
  EXPECT_THAT(history.entries(), ElementsAre(Entry{2, 12}, Entry{5, 20}));
  history.TrimBelow(20);
  EXPECT_THAT(history.entries(), ElementsAre(Entry{5, 20}));
  history.TrimBelow(3);  // lower: nothing changes
  EXPECT_THAT(history.entries(), ElementsAre(Entry{5, 20}));
}

TEST(EpochHistory, EpochAtAnOffset) {
  EpochHistory history({{1, 0}, {2, 10}, {5, 20}});
  EXPECT_EQ(history.EpochAt(0), 1);
  EXPECT_EQ(history.EpochAt(9), 1);
  EXPECT_EQ(history.EpochAt(10), 2);
  EXPECT_EQ(history.EpochAt(100), 5);
  EXPECT_EQ(EpochHistory().EpochAt(3), 0);
}

}  // namespace
}  // namespace kaas::partition
