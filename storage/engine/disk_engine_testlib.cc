#include "storage/engine/disk_engine_testlib.h"

#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "fs/test_util.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas {

DiskEngineTest::DiskEngineTest()
    : data_dir_(fs::JoinPath(temp_dir_.path(), "data")),
      fs_(fs::PosixFileSystem::Default(), /*seed=*/4242) {}

PartitionConfig DiskEngineTest::SmallConfig() {
  PartitionConfig config;
  config.segment_bytes = 64 << 10;
  config.index_interval_bytes = 256;
  config.checkpoint_interval_bytes = 16 << 10;
  config.fsync_max_latency = absl::ZeroDuration();
  return config;
}

void DiskEngineTest::WriteTopicFile(absl::string_view topic,
                                    absl::string_view name,
                                    absl::string_view json) {
  const std::string dir = fs::JoinPath(data_dir_, topic);
  ASSERT_OK(fs::CreateDirsDurably(fs_, dir));
  ASSERT_OK(fs::ReplaceFileDurably(fs_, fs::JoinPath(dir, name), json));
}

void DiskEngineTest::RemoveTopicFile(absl::string_view topic,
                                     absl::string_view name) {
  ASSERT_OK(fs_.Unlink(fs::JoinPath(data_dir_, topic, name)));
}

std::string DiskEngineTest::ExtraDir(const std::string& name) const {
  return fs::JoinPath(temp_dir_.path(), name);
}

DiskEngine::Options DiskEngineTest::MakeOptions(
    const std::vector<std::string>& extra) {
  DiskEngine::Options options;
  options.data_dir = data_dir_;
  options.default_config = SmallConfig();
  options.fs = &fs_;
  options.clock = &clock_;
  options.io_threads = 2;
  options.rearm_interval = absl::Milliseconds(10);
  for (const std::string& name : extra) {
    placement::LogDirInfo dir;
    dir.name = name;
    dir.path = ExtraDir(name);
    options.extra_log_dirs.push_back(dir);
  }
  return options;
}

std::unique_ptr<DiskEngine> DiskEngineTest::NewEngine(
    const std::vector<std::string>& extra) {
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(MakeOptions(extra));
  EXPECT_OK(engine.status());
  return engine.ok() ? *std::move(engine) : nullptr;
}

std::string DiskEngineTest::Batch(int records, size_t value_size) {
  test::BatchBuilder builder;
  builder.BaseTimestamp(1000).AddRandomRecords(records, value_size);
  return builder.Build();
}

}  // namespace kaas
