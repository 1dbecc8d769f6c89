// The engine conformance suite (storage/engine/engine_conformance_testlib.h)
// against the DiskEngine, each test on a fresh data dir, with active
// segments written through the page cache and with direct I/O
// (DiskEngine::Options::direct_io; granted on the local disk the tests run
// on).
#include <stdlib.h>

#include <memory>
#include <string>

#include "fs/fs_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/engine_conformance_testlib.h"

namespace kaas {
namespace {

std::unique_ptr<StorageEngine> NewEngine(const EngineSettings& settings,
                                         bool direct_io) {
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
  options.direct_io = direct_io;
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(std::move(options));
  EXPECT_TRUE(engine.ok()) << engine.status();
  return engine.ok() ? *std::move(engine) : nullptr;
}

std::unique_ptr<StorageEngine> NewDiskEngine(const EngineSettings& settings) {
  return NewEngine(settings, /*direct_io=*/false);
}

std::unique_ptr<StorageEngine> NewDirectIoDiskEngine(
    const EngineSettings& settings) {
  return NewEngine(settings, /*direct_io=*/true);
}

INSTANTIATE_TEST_SUITE_P(
    Disk, EngineConformanceTest,
    ::testing::Values(EngineFactory{"Disk", &NewDiskEngine},
                      EngineFactory{"DiskDirectIo", &NewDirectIoDiskEngine}),
    EngineFactoryName);

}  // namespace
}  // namespace kaas
