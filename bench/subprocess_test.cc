#include "bench/subprocess.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace kaas::bench {
namespace {

TEST(RunChild, CapturesStdoutAndExitCode) {
  ASSERT_OK_AND_ASSIGN(ChildOutcome outcome,
                       RunChild({"/bin/sh", "-c", "echo hello; exit 3"}));
  EXPECT_EQ(outcome.exit_code, 3);
  EXPECT_EQ(outcome.stdout_text, "hello\n");
}

TEST(RunChild, ReportsDeathBySignal) {
  ASSERT_OK_AND_ASSIGN(ChildOutcome outcome,
                       RunChild({"/bin/sh", "-c", "kill -9 $$"}));
  EXPECT_EQ(outcome.exit_code, 128 + 9);
}

TEST(RunChild, CapturesLargeOutput) {
  // More than a pipe buffer: the parent must read while the child writes.
  ASSERT_OK_AND_ASSIGN(ChildOutcome outcome,
                       RunChild({"/bin/sh", "-c", "head -c 300000 /dev/zero"}));
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.stdout_text.size(), 300000u);
}

TEST(RunChild, MissingExecutableIsAnError) {
  absl::StatusOr<ChildOutcome> outcome = RunChild({"/nonexistent/binary"});
  ASSERT_FALSE(outcome.ok());
  EXPECT_THAT(outcome.status().message(),
              ::testing::HasSubstr("/nonexistent/binary"));
}

}  // namespace
}  // namespace kaas::bench
