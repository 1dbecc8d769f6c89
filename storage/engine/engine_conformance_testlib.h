// File: storage/engine/engine_conformance_testlib.h
//
// The conformance suite every StorageEngine passes: the observable contract
// of storage/engine/storage_engine.h, written only against that interface
// (googletest's "abstract test" pattern). The tests live in
// engine_conformance_testlib.cc (and the replication API's in
// engine_replication_conformance_testlib.cc), compiled into a testonly library
// with alwayslink; an engine runs them by instantiating the suite with a
// factory in its own test file:
//
//   #include "storage/engine/engine_conformance_testlib.h"
//
//   INSTANTIATE_TEST_SUITE_P(
//       Memory, EngineConformanceTest,
//       ::testing::Values(EngineFactory{
//           "Memory", [] { return std::make_unique<MemoryEngine>(); }}),
//       EngineFactoryName);
//
// Each test calls `create` once, in SetUp, for a fresh, empty engine (no
// partition, no producer fence) with default settings, and destroys the
// engine in TearDown. A disk engine's factory therefore gives each engine
// its own scratch directory (for example by returning an engine that owns
// it).
//
// Nothing here is skipped: every test holds for every engine. Where a test
// leans on a step the disk engine needs and the memory engine does not, the
// test says so (RecreateAfterAbandonAndReclaimStartsAtZero:
// DeletePartition stands in for the operator's reclaim of the abandoned
// directory).
//
// Thread-safety: a test fixture; tests that start threads join them.

#ifndef KAAS_STORAGE_ENGINE_ENGINE_CONFORMANCE_TESTLIB_H_
#define KAAS_STORAGE_ENGINE_ENGINE_CONFORMANCE_TESTLIB_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "storage/common/api_types.h"
#include "storage/engine/storage_engine.h"

namespace kaas {

// Engine-wide settings a test asks for; each factory applies them to its
// engine's defaults for every partition.
struct EngineSettings {
  bool validate_records = false;  // PartitionConfig::validate_records
  // PartitionConfig::broker_managed_high_watermark
  bool broker_managed_high_watermark = false;
};

// How the suite gets an engine.
struct EngineFactory {
  // The instantiation's parameter name (letters, digits, '_').
  std::string name;
  // A fresh, empty engine with `settings`. Called once per test (twice by a
  // test that asks for other settings).
  std::function<std::unique_ptr<StorageEngine>(const EngineSettings&)> create;
};

// For INSTANTIATE_TEST_SUITE_P's name generator argument.
std::string EngineFactoryName(
    const ::testing::TestParamInfo<EngineFactory>& info);

// googletest prints parameters in failure messages.
void PrintTo(const EngineFactory& factory, std::ostream* os);

class EngineConformanceTest : public ::testing::TestWithParam<EngineFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  StorageEngine& engine() { return *engine_; }

  // Replaces the engine with a fresh one created with `settings`.
  void UseEngine(const EngineSettings& settings);

  // TakeOver(tp, epoch), asserting success (check with HasFatalFailure).
  void Lead(const TopicPartition& tp, int64_t epoch = 1);

  // AppendAndWait with acks=all at `epoch`, asserting success. Returns the
  // result (default-constructed after a failure).
  AppendResult MustAppend(const TopicPartition& tp, absl::string_view batch,
                          int64_t epoch = 1);

  // Expects every per-partition operation on `tp` to fail with kNotLeader
  // (and PartitionEpoch to be nullopt).
  void ExpectNotLed(const TopicPartition& tp);

  // Every batch from `offset` to the read bound, concatenated (reads of at
  // most `page_bytes` each).
  std::string ReadAll(const TopicPartition& tp, int64_t offset = 0,
                      Isolation isolation = Isolation::kReadUncommitted,
                      size_t page_bytes = 1 << 20);

  // A plain batch of `records` records with `value_size`-byte values of
  // bytes deterministic in `seed`, base timestamp `timestamp`, and a
  // producer-chosen base offset (999) the engine must replace.
  static std::string Batch(int records = 1, size_t value_size = 16,
                           int64_t timestamp = 1000, uint64_t seed = 1);
  // An idempotent (or transactional) data batch.
  static std::string ProducerBatch(int64_t producer_id, int16_t epoch,
                                   int32_t base_sequence, int records = 1,
                                   bool transactional = false);
  // The base offset of every batch in `bytes` (whole batches).
  static std::vector<int64_t> BaseOffsets(absl::string_view bytes);

  // Replication tests: a follower partition replicating a leader partition
  // of the same engine (what the leader stores is what a fetch from it
  // carries).
  //
  // Leads `leader` at `epoch`, appends `batches` and returns what it stored
  // (empty after a failure).
  std::string LeaderLog(const TopicPartition& leader,
                        const std::vector<std::string>& batches, int64_t epoch);
  // AppendAsFollower with acks=all, waiting until durable.
  absl::StatusOr<AppendResult> Replicate(const TopicPartition& follower,
                                         absl::string_view batches,
                                         int64_t epoch);

 private:
  std::unique_ptr<StorageEngine> engine_;
};

}  // namespace kaas

#endif  // KAAS_STORAGE_ENGINE_ENGINE_CONFORMANCE_TESTLIB_H_
