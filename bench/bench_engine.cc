#include "bench/bench_engine.h"

#include <utility>

#include "base/status_macros.h"

namespace kaas::bench {

absl::StatusOr<std::unique_ptr<DiskEngine>> OpenBenchEngine(
    const std::string& data_dir, int64_t flush_interval_messages,
    bool validate_records, bool direct_io) {
  DiskEngine::Options options;
  options.data_dir = data_dir;
  options.default_config.flush_interval_messages = flush_interval_messages;
  options.default_config.validate_records = validate_records;
  options.direct_io = direct_io;
  return DiskEngine::Create(std::move(options));
}

absl::Status StartTopic(StorageEngine& engine, const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(engine.CreatePartition(tp));
  return engine.TakeOver(tp, kWriterEpoch).status();
}

}  // namespace kaas::bench
