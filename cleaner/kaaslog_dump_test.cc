// End to end: after the retention cleaner advanced a partition's log start,
// `kaaslog dump` of the partition dir shows it (from the manifest) and no
// longer lists the deleted segments.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cleaner/retention_cleaner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/disk_engine_testlib.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::cleaner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const TopicPartition kTp{"events", 0};

// The kaaslog binary in this test's runfiles (a `data` dependency).
std::string KaaslogPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  EXPECT_NE(srcdir, nullptr);
  EXPECT_NE(workspace, nullptr);
  if (srcdir == nullptr || workspace == nullptr) return "kaaslog";
  return absl::StrCat(srcdir, "/", workspace, "/tools/kaaslog");
}

struct CommandResult {
  int exit_status = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` through the shell. REQUIRES: arguments need no quoting.
CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  FILE* pipe = ::popen(absl::StrCat(command, " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    ADD_FAILURE() << "popen " << command;
    return result;
  }
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.output.append(buffer, n);
  }
  int status = ::pclose(pipe);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class KaaslogDumpTest : public DiskEngineTest {};

TEST_F(KaaslogDumpTest, ShowsTheLogStartTheCleanerPersisted) {
  DiskEngine::Options options = MakeOptions();
  options.default_config.segment_bytes = 1024;  // one batch per segment
  options.default_config.retention_ms = absl::Hours(1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(std::move(options)));
  ASSERT_OK(engine->TakeOver(kTp, 1).status());
  for (absl::Duration age : {absl::Hours(2), absl::Hours(2), absl::Hours(0)}) {
    test::BatchBuilder builder;
    builder.BaseTimestamp(absl::ToUnixMillis(clock().Now() - age))
        .AddRandomRecords(1, 600);
    ASSERT_OK(
        engine->AppendAndWait(kTp, 1, Acks::kAll, builder.Build()).status());
  }
  RetentionCleaner::Options cleaner_options;
  cleaner_options.check_interval = absl::ZeroDuration();
  cleaner_options.clock = &clock();
  RetentionCleaner cleaner(engine.get(), std::move(cleaner_options));
  ASSERT_EQ(cleaner.RunOnce().partitions_advanced, 1);
  ASSERT_OK_AND_ASSIGN(std::string dir, engine->PartitionDir(kTp));

  CommandResult dump = RunCommand(absl::StrCat(KaaslogPath(), " dump ", dir));

  EXPECT_EQ(dump.exit_status, 0) << dump.output;
  EXPECT_THAT(dump.output, HasSubstr("log start offset: 2\n"));
  // The two expired segments are gone from the directory.
  EXPECT_THAT(dump.output, Not(HasSubstr("00000000000000000000.log")));
  EXPECT_THAT(dump.output, Not(HasSubstr("00000000000000000001.log")));
  EXPECT_THAT(dump.output, HasSubstr("00000000000000000002.log"));
}

}  // namespace
}  // namespace kaas::cleaner
