#include "bench/producer_driver.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "glog/logging.h"
#include "storage/common/storage_stats.h"

namespace kaas::bench {

namespace {

// A producer: its batch and what it measured. Only the holder of the
// producer's single in-flight "token" touches the mutable fields; the token
// passes between threads through a driver's queue (a mutex), the engine's
// future (its internal lock) and `Run::mu_`, which order the accesses.
struct Producer {
  TopicPartition tp;
  std::string batch;
  int driver = 0;
  absl::Time issued;
  int64_t batches_in_window = 0;
  std::vector<int64_t> latencies_ns;
};

// One driver thread's ready queue.
struct DriverQueue {
  absl::Mutex mu;
  std::deque<int> ready ABSL_GUARDED_BY(mu);
  bool stopping ABSL_GUARDED_BY(mu) = false;
};

// The shared state of one run. Completion callbacks hold a shared_ptr to it,
// so it outlives the last callback whatever the order of destruction.
class Run : public std::enable_shared_from_this<Run> {
 public:
  explicit Run(const ProducerRunSpec& spec) : spec_(spec) {
    const int drivers =
        std::max(1, std::min(spec.driver_threads, spec.producers));
    for (int d = 0; d < drivers; ++d) {
      queues_.push_back(std::make_unique<DriverQueue>());
    }
    const int64_t now_ms = absl::ToUnixMillis(absl::Now());
    producers_.resize(spec.producers);
    for (int p = 0; p < spec.producers; ++p) {
      producers_[p].batch =
          BuildWorkloadBatch(spec.shape, /*seed=*/p + 1, now_ms);
      producers_[p].driver = p % drivers;
      producers_[p].tp = {spec.tp.topic,
                          spec.tp.partition + p % spec.partitions};
    }
    blocking_ = spec.producers == drivers;
  }

  absl::StatusOr<ProducerRunResult> Execute() {
    const absl::Time started = absl::Now();
    window_start_ = started + spec_.warmup;
    window_end_ = window_start_ + spec_.window;
    for (int p = 0; p < spec_.producers; ++p) Enqueue(p);
    std::vector<std::thread> threads;
    for (size_t d = 0; d < queues_.size(); ++d) {
      threads.emplace_back([self = shared_from_this(), d] { self->Loop(d); });
    }

    const StorageStats& stats = spec_.engine->Stats();
    absl::SleepFor(window_start_ - absl::Now());
    const uint64_t fsyncs_before = stats.fsyncs.load();
    const LatencyHistogram::Snapshot fsync_latency_before =
        stats.fsync_latency.Take();
    absl::SleepFor(window_end_ - absl::Now());
    const uint64_t fsyncs_after = stats.fsyncs.load();
    const LatencyHistogram::Snapshot fsync_latency_after =
        stats.fsync_latency.Take();

    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Run* run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(run->mu_) {
            return run->parked_ == run->spec_.producers;
          },
          this));
    }
    for (const std::unique_ptr<DriverQueue>& queue : queues_) {
      absl::MutexLock lock(&queue->mu);
      queue->stopping = true;
    }
    for (std::thread& thread : threads) thread.join();

    {
      absl::MutexLock lock(&mu_);
      if (!first_error_.ok()) return first_error_;
    }
    ProducerRunResult result;
    result.window = spec_.window;
    result.fsyncs = static_cast<int64_t>(fsyncs_after - fsyncs_before);
    const uint64_t timed_fsyncs =
        fsync_latency_after.count - fsync_latency_before.count;
    if (timed_fsyncs > 0) {
      result.fsync_mean = (fsync_latency_after.sum - fsync_latency_before.sum) /
                          static_cast<int64_t>(timed_fsyncs);
    }
    std::vector<int64_t> latencies;
    for (Producer& producer : producers_) {
      result.batches += producer.batches_in_window;
      result.bytes += producer.batches_in_window *
                      static_cast<int64_t>(producer.batch.size());
      latencies.insert(latencies.end(), producer.latencies_ns.begin(),
                       producer.latencies_ns.end());
    }
    result.latency = SummarizeLatencies(&latencies);
    return result;
  }

 private:
  void Loop(size_t d) {
    if (blocking_) {
      BlockingLoop(static_cast<int>(d));
      return;
    }
    DriverQueue& queue = *queues_[d];
    while (true) {
      int p;
      {
        absl::MutexLock lock(&queue.mu);
        queue.mu.Await(absl::Condition(
            +[](DriverQueue* q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(q->mu) {
              return !q->ready.empty() || q->stopping;
            },
            &queue));
        if (queue.ready.empty()) return;  // stopping
        p = queue.ready.front();
        queue.ready.pop_front();
      }
      Issue(p);
    }
  }

  // Stamps the time of `producer`'s next append; false (the producer is
  // parked) once the window is over or the run failed.
  bool StampOrPark(Producer& producer) {
    producer.issued = absl::Now();
    if (producer.issued < window_end_ && !failed_.load()) return true;
    Park();
    return false;
  }

  // A driver thread serving only producer `p` (and the engine's
  // AppendAndWait, which may run the fdatasync on this thread).
  void BlockingLoop(int p) {
    Producer& producer = producers_[p];
    while (StampOrPark(producer)) {
      absl::StatusOr<AppendResult> appended = spec_.engine->AppendAndWait(
          producer.tp, spec_.leader_epoch, spec_.acks, producer.batch);
      Record(p, appended.status());
    }
  }

  // Starts producer `p`'s next append, or parks it once the window is over
  // (or the run failed).
  void Issue(int p) {
    Producer& producer = producers_[p];
    if (!StampOrPark(producer)) return;
    absl::StatusOr<AppendResult> appended = spec_.engine->Append(
        producer.tp, spec_.leader_epoch, spec_.acks, producer.batch);
    if (!appended.ok()) {
      Fail(appended.status());
      Park();
      return;
    }
    appended->durable.Then(
        [self = shared_from_this(), p](const absl::Status& status) {
          self->Complete(p, status);
        });
  }

  // The ack of producer `p`'s append: runs on the thread completing the
  // future (short, never blocks).
  void Complete(int p, const absl::Status& status) {
    Record(p, status);
    Enqueue(p);
  }

  // Counts producer `p`'s ack if it arrived inside the window.
  void Record(int p, const absl::Status& status) {
    const absl::Time now = absl::Now();
    if (!status.ok()) Fail(status);
    Producer& producer = producers_[p];
    if (status.ok() && now >= window_start_ && now < window_end_) {
      ++producer.batches_in_window;
      producer.latencies_ns.push_back(
          absl::ToInt64Nanoseconds(now - producer.issued));
    }
  }

  void Enqueue(int p) {
    DriverQueue& queue = *queues_[producers_[p].driver];
    absl::MutexLock lock(&queue.mu);
    queue.ready.push_back(p);
  }

  void Park() {
    absl::MutexLock lock(&mu_);
    ++parked_;
  }

  void Fail(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    if (first_error_.ok()) {
      first_error_ = status;
      failed_.store(true);
    }
  }

  // Constant after construction (window_* set before the drivers start).
  const ProducerRunSpec spec_;
  std::vector<std::unique_ptr<DriverQueue>> queues_;
  std::vector<Producer> producers_;
  // One producer per driver: each driver blocks in AppendAndWait.
  bool blocking_ = false;
  absl::Time window_start_;
  absl::Time window_end_;

  std::atomic<bool> failed_{false};
  absl::Mutex mu_;
  int parked_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status first_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<ProducerRunResult> RunProducers(const ProducerRunSpec& spec) {
  CHECK(spec.engine != nullptr);
  if (spec.producers < 1 || spec.driver_threads < 1 || spec.partitions < 1 ||
      spec.partitions > spec.producers || spec.window <= absl::ZeroDuration() ||
      spec.warmup < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad producer run: producers=", spec.producers, " partitions=",
        spec.partitions, " driver_threads=", spec.driver_threads,
        " window=", absl::FormatDuration(spec.window),
        " warmup=", absl::FormatDuration(spec.warmup)));
  }
  return std::make_shared<Run>(spec)->Execute();
}

}  // namespace kaas::bench
