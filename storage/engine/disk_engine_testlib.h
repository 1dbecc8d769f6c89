// File: storage/engine/disk_engine_testlib.h
//
// A DiskEngine over a scratch data dir (and optional extra log dirs), on the
// real filesystem wrapped by the fault-injecting one, with a manual clock.

#ifndef KAAS_STORAGE_ENGINE_DISK_ENGINE_TESTLIB_H_
#define KAAS_STORAGE_ENGINE_DISK_ENGINE_TESTLIB_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/topic_identity.h"
#include "testing/fault_injecting_file_system.h"

namespace kaas {

// A TopicIdentityResolver answering the same incarnation for every topic.
class FixedIdentity : public TopicIdentityResolver {
 public:
  explicit FixedIdentity(TopicIncarnation incarnation)
      : incarnation_(std::move(incarnation)) {}
  TopicIncarnation IncarnationOf(absl::string_view) const override {
    return incarnation_;
  }

 private:
  TopicIncarnation incarnation_;
};

class DiskEngineTest : public ::testing::Test {
 protected:
  DiskEngineTest();

  // Options for a new engine over data_dir() with the given extra dirs
  // ("fast", "bulk", ... under the scratch dir).
  DiskEngine::Options MakeOptions(const std::vector<std::string>& extra = {});
  std::unique_ptr<DiskEngine> NewEngine(
      const std::vector<std::string>& extra = {});

  static PartitionConfig SmallConfig();
  static std::string Batch(int records = 1, size_t value_size = 16);

  const std::string& data_dir() const { return data_dir_; }
  std::string ExtraDir(const std::string& name) const;
  test::FaultInjectingFileSystem& fs() { return fs_; }
  ManualClock& clock() { return clock_; }

  // What an operator's tooling does: durably (and atomically) replaces the
  // topic file `name` (.config.json, .topic-id.json) of `topic` in the data
  // dir, creating the topic dir if missing; and removes it.
  void WriteTopicFile(absl::string_view topic, absl::string_view name,
                      absl::string_view json);
  void RemoveTopicFile(absl::string_view topic, absl::string_view name);

 private:
  fs::ScopedTempDir temp_dir_;
  std::string data_dir_;
  test::FaultInjectingFileSystem fs_;
  ManualClock clock_;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_DISK_ENGINE_TESTLIB_H_
