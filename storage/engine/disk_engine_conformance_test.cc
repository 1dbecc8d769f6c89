// The engine conformance suite (storage/engine/engine_conformance_testlib.h)
// against the DiskEngine, each test on a fresh data dir.
#include <stdlib.h>

#include <memory>
#include <string>

#include "fs/fs_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/engine_conformance_testlib.h"

namespace kaas {
namespace {

std::unique_ptr<StorageEngine> NewDiskEngine(const EngineSettings& settings) {
  // Under the test's scratch dir, which Bazel removes after the test.
  std::string dir = fs::JoinPath(::testing::TempDir(), "engine.XXXXXX");
  if (mkdtemp(dir.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << dir;
    return nullptr;
  }
  DiskEngine::Options options;
  options.data_dir = dir;
  options.format_log_dirs = true;  // a scratch dir that exists, empty
  options.default_config.segment_bytes = 64 << 10;
  options.default_config.index_interval_bytes = 256;
  options.default_config.validate_records = settings.validate_records;
  options.default_config.broker_managed_high_watermark =
      settings.broker_managed_high_watermark;
  options.io_threads = 2;
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(std::move(options));
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Disk, EngineConformanceTest,
                         ::testing::Values(EngineFactory{"Disk",
                                                         &NewDiskEngine}),
                         EngineFactoryName);

}  // namespace
}  // namespace kaas
