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
// Under ThreadSanitizer the child gets kaaslog's suppressions (the known
// absl::Mutex false positive; test binaries link theirs, kaaslog cannot).
CommandResult RunCommand(const std::string& command) {
  CommandResult result;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::string env;
  if (srcdir != nullptr && workspace != nullptr) {
    env = absl::StrCat("TSAN_OPTIONS=suppressions=", srcdir, "/", workspace,
                       "/tools/kaaslog_tsan.supp ");
  }
  FILE* pipe = ::popen(absl::StrCat(env, command, " 2>&1").c_str(), "r");
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

// `kaaslog compact` runs one pass over a partition no engine leads, and
// `kaaslog dump` then shows the compacted batches, their gaps and the delete
// horizon of the tombstone kept; the engine reads the compacted log back.
TEST_F(KaaslogDumpTest, CompactsOfflineAndDumpShowsGapsAndHorizons) {
  const TopicPartition tp{"profiles", 0};
  WriteTopicFile(tp.topic, ".config.json", R"({"cleanupPolicy": "compact"})");
  DiskEngine::Options options = MakeOptions();
  options.default_config.segment_bytes = 1024;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<DiskEngine> engine,
                       DiskEngine::Create(std::move(options)));
  ASSERT_OK(engine->TakeOver(tp, 1).status());
  for (int i = 0; i < 60; ++i) {
    test::BatchBuilder builder;
    builder.BaseTimestamp(1000).AddRecord(absl::StrCat("user", i % 3),
                                          absl::StrCat("profile", i));
    if (i == 30) builder.AddRecord("gone", absl::nullopt);  // a tombstone
    ASSERT_OK(
        engine->AppendAndWait(tp, 1, Acks::kAll, builder.Build()).status());
  }
  ASSERT_OK_AND_ASSIGN(std::string dir, engine->PartitionDir(tp));
  // While the engine leads it, the tool refuses and changes nothing.
  CommandResult refused =
      RunCommand(absl::StrCat(KaaslogPath(), " compact ", dir));
  EXPECT_EQ(refused.exit_status, 1) << refused.output;
  ASSERT_OK(engine->Drain());
  engine.reset();

  CommandResult compact =
      RunCommand(absl::StrCat(KaaslogPath(), " compact ", dir));
  EXPECT_EQ(compact.exit_status, 0) << compact.output;
  EXPECT_THAT(compact.output, HasSubstr("records removed"));
  CommandResult dump =
      RunCommand(absl::StrCat(KaaslogPath(), " dump --records ", dir));
  EXPECT_EQ(dump.exit_status, 0) << dump.output;
  EXPECT_THAT(dump.output, HasSubstr("stands for batches compaction removed"));
  EXPECT_THAT(dump.output, HasSubstr("deleteHorizonMs: "));
  EXPECT_THAT(dump.output, HasSubstr("cleaner_offset"));

  ASSERT_OK_AND_ASSIGN(engine, DiskEngine::Create(MakeOptions()));
  ASSERT_OK(engine->TakeOver(tp, 2).status());
  ASSERT_OK_AND_ASSIGN(
      ReadResult read,
      engine->Read(tp, 0, 1 << 20, Isolation::kReadUncommitted));
  const std::string bytes(read.records);
  EXPECT_THAT(bytes, HasSubstr("profile59"));
  EXPECT_THAT(bytes, Not(HasSubstr("profile0")));
}

}  // namespace
}  // namespace kaas::cleaner
