// File: examples/broker/producer_ids.h
//
// Producer ids for InitProducerId that are never handed out twice, across
// restarts and crashes. Ids come in blocks of kProducerIdBlock: the end of
// the block in use is stored durably (<data dir>/kaas-broker.producer-ids)
// before any id of the block is handed out, so a crash skips at most the
// rest of one block and never reuses an id a producer may still hold.
// Without a data dir (the memory engine) ids are only unique per process.
//
// Thread-safety: thread-safe. Next() may write the file (a blocking fsync
// once per block): call it from a handler thread.

#ifndef KAAS_EXAMPLES_BROKER_PRODUCER_IDS_H_
#define KAAS_EXAMPLES_BROKER_PRODUCER_IDS_H_

#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace kaas::broker {

inline constexpr char kProducerIdsFileName[] = "kaas-broker.producer-ids";
inline constexpr int64_t kProducerIdBlock = 1000;

class ProducerIdAllocator {
 public:
  // `data_dir` empty: in memory only.
  explicit ProducerIdAllocator(std::string data_dir)
      : data_dir_(std::move(data_dir)) {}

  // The next unused id. Errors: those of broker_state_file.h (a damaged
  // file is kDataLoss: refusing is safer than reusing ids).
  absl::StatusOr<int64_t> Next();

 private:
  const std::string data_dir_;
  absl::Mutex mu_;
  bool loaded_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t block_end_ ABSL_GUARDED_BY(mu_) = 0;  // exclusive; durable
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_PRODUCER_IDS_H_
