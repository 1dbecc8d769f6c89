// File: tools/demo.cc
//
// `kaaslog demo` (the default subcommand): a guided tour of the engine on a
// real data dir. Creates a topic, appends with concurrent acks=all
// producers, reads everything back and checks it, crashes a child process
// appending with acks=all (SIGKILL, mid-stream), recovers, and checks that
// every acknowledged batch survived byte for byte. Prints a short summary of
// each step (offsets, throughput, recovery time).

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "fs/fs_util.h"
#include "storage/batch/record_batch.h"
#include "storage/engine/disk_engine.h"
#include "tools/child_process.h"
#include "tools/cli.h"
#include "tools/demo_flags.h"
#include "tools/demo_workload.h"
#include "tools/progress.h"
#include "tools/subcommands.h"

ABSL_FLAG(int32_t, partitions, 4, "Partitions of the demo topic.");
ABSL_FLAG(int32_t, producers, 8,
          "Concurrent acks=all producers (producer i writes to partition "
          "i % partitions).");
ABSL_FLAG(int32_t, batches, 500, "Batches each producer appends.");
ABSL_FLAG(int32_t, records_per_batch, 10, "Records in each batch.");
ABSL_FLAG(int32_t, value_bytes, 100, "Bytes of each record value.");
ABSL_FLAG(int32_t, crash_writers, 4,
          "Concurrent acks=all producers in the child process that is "
          "killed.");
ABSL_FLAG(int32_t, crash_after_acks, 500,
          "SIGKILL the child once it has acknowledged this many batches.");
ABSL_FLAG(int64_t, segment_bytes, int64_t{1} << 20,
          "Segment size of the demo (small, so that segments roll).");

namespace kaas::tools {

using ::kaas::partition::OpenReport;
namespace {

constexpr absl::Duration kChildTimeout = absl::Seconds(60);
constexpr size_t kFetchBytes = 1 << 20;

struct DemoConfig {
  std::string data_dir;
  int partitions = 0;
  int producers = 0;
  int64_t batches = 0;
  int crash_writers = 0;
  int64_t crash_after_acks = 0;
  uint64_t segment_bytes = 0;
  DemoShape shape;
  // Base timestamps of the batches of the first producers and of the child.
  int64_t base_timestamp_ms = 0;
  int64_t child_base_timestamp_ms = 0;

  int64_t TimestampOf(int producer) const {
    return producer < producers ? base_timestamp_ms : child_base_timestamp_ms;
  }
};

// (producer, batch number) -> base offset of each acknowledged batch.
using AckMap = std::map<std::pair<int, int64_t>, int64_t>;

std::string Megabytes(uint64_t bytes) {
  return absl::StrFormat("%.1f MB", static_cast<double>(bytes) / 1e6);
}

std::string Millis(absl::Duration d) {
  return absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(d));
}

TopicPartition PartitionOf(const DemoConfig& config, int producer) {
  return {kDemoTopic, producer % config.partitions};
}

absl::StatusOr<std::unique_ptr<DiskEngine>> OpenEngine(
    const DemoConfig& config) {
  DiskEngine::Options options;
  options.data_dir = config.data_dir;
  options.default_config.segment_bytes = config.segment_bytes;
  options.io_threads = 2;
  return DiskEngine::Create(std::move(options));
}

// ---- 1. A fresh topic ------------------------------------------------------

absl::Status CreateTopic(DiskEngine& engine, const DemoConfig& config) {
  for (const TopicPartition& tp : engine.PartitionsOnDisk()) {
    if (tp.topic == kDemoTopic) {
      KAAS_RETURN_IF_ERROR(engine.DeletePartition(tp));
    }
  }
  for (int p = 0; p < config.partitions; ++p) {
    KAAS_RETURN_IF_ERROR(engine.CreatePartition({kDemoTopic, p}));
    KAAS_RETURN_IF_ERROR(engine.TakeOver({kDemoTopic, p}, 1).status());
  }
  std::cout << "1. Created topic " << kDemoTopic << " with "
            << config.partitions
            << " partitions (any earlier demo topic removed) and took them "
               "over at leader epoch 1.\n";
  return absl::OkStatus();
}

// ---- 2. Concurrent acks=all producers ------------------------------------

absl::StatusOr<AckMap> Produce(DiskEngine& engine, const DemoConfig& config) {
  AckMap acked;
  absl::Mutex mu;
  absl::Status error;
  std::vector<absl::Duration> latencies;
  uint64_t bytes = 0;
  const absl::Time start = absl::Now();
  {
    Progress progress("appending", config.producers * config.batches,
                      "batches");
    std::vector<std::thread> threads;
    for (int producer = 0; producer < config.producers; ++producer) {
      threads.emplace_back([&, producer] {
        AckMap mine;
        std::vector<absl::Duration> my_latencies;
        uint64_t my_bytes = 0;
        absl::Status status;
        for (int64_t n = 0; n < config.batches && status.ok(); ++n) {
          std::string batch =
              DemoBatch(config.shape, producer, n, config.base_timestamp_ms);
          absl::Time sent = absl::Now();
          absl::StatusOr<AppendResult> result = engine.AppendAndWait(
              PartitionOf(config, producer), 1, Acks::kAll, batch);
          if (!result.ok()) {
            status = result.status();
            break;
          }
          my_latencies.push_back(absl::Now() - sent);
          mine[{producer, n}] = result->base_offset;
          my_bytes += batch.size();
          progress.Add();
        }
        absl::MutexLock lock(&mu);
        if (!status.ok() && error.ok()) error = status;
        acked.insert(mine.begin(), mine.end());
        latencies.insert(latencies.end(), my_latencies.begin(),
                         my_latencies.end());
        bytes += my_bytes;
      });
    }
    for (std::thread& thread : threads) thread.join();
  }
  KAAS_RETURN_IF_ERROR(error);
  const absl::Duration elapsed = absl::Now() - start;
  std::sort(latencies.begin(), latencies.end());
  auto percentile = [&](double q) {
    return latencies[std::min(latencies.size() - 1,
                              static_cast<size_t>(q * latencies.size()))];
  };
  const double seconds = std::max(absl::ToDoubleSeconds(elapsed), 1e-9);
  std::cout << absl::StrFormat(
      "2. Appended %d batches (%d records, %s) from %d concurrent idempotent "
      "producers with acks=all in %.2f s: %.0f batches/s, %.1f MB/s; ack "
      "latency p50 %s, p99 %s.\n",
      acked.size(), acked.size() * config.shape.records_per_batch,
      Megabytes(bytes), config.producers, seconds, acked.size() / seconds,
      bytes / 1e6 / seconds, Millis(percentile(0.5)), Millis(percentile(0.99)));
  std::vector<std::string> ends;
  for (int p = 0; p < config.partitions; ++p) {
    KAAS_ASSIGN_OR_RETURN(int64_t high_watermark,
                          engine.HighWatermark({kDemoTopic, p}));
    ends.push_back(
        high_watermark == 0
            ? absl::StrCat("partition ", p, ": empty")
            : absl::StrCat("partition ", p, ": 0..", high_watermark - 1));
  }
  std::cout << "   Offsets: " << absl::StrJoin(ends, "; ") << ".\n";
  return acked;
}

// ---- 3 and 6. Read everything back and check it --------------------------

struct CheckResult {
  int64_t batches = 0;
  int64_t acknowledged = 0;
  // Batches of the crashed child that were written but whose
  // acknowledgement the parent never saw: allowed to survive.
  int64_t unacknowledged = 0;
  absl::Duration elapsed;
};

// Checks one stored batch of partition `p`.
absl::Status CheckBatch(const DemoConfig& config, int p,
                        const RecordBatchView& batch, const AckMap& acked,
                        AckMap* seen, CheckResult* result) {
  std::optional<DemoBatchId> id = IdentifyDemoBatch(config.shape, batch);
  if (!id.has_value() || id->producer % config.partitions != p) {
    return absl::DataLossError(
        absl::StrCat("partition ", p, " offset ", batch.base_offset(),
                     ": a batch that no demo producer of this partition sent"));
  }
  std::string sent = DemoBatch(config.shape, id->producer, id->n,
                               config.TimestampOf(id->producer));
  std::string where =
      absl::StrCat("partition ", p, " offset ", batch.base_offset(),
                   " (producer ", id->producer, " batch ", id->n, ")");
  if (!SameBatchButForLeaderFields(batch.bytes(), sent)) {
    return absl::DataLossError(
        absl::StrCat(where, ": the stored bytes differ from the bytes sent"));
  }
  if (!seen->emplace(std::make_pair(id->producer, id->n), batch.base_offset())
           .second) {
    return absl::DataLossError(absl::StrCat(where, ": stored twice"));
  }
  ++result->batches;
  auto ack = acked.find({id->producer, id->n});
  if (ack == acked.end()) {
    if (id->producer < config.producers) {
      return absl::DataLossError(
          absl::StrCat(where, ": never acknowledged, yet stored"));
    }
    ++result->unacknowledged;
  } else if (ack->second != batch.base_offset()) {
    return absl::DataLossError(absl::StrCat(where, ": acknowledged at offset ",
                                            ack->second, ", stored at ",
                                            batch.base_offset()));
  } else {
    ++result->acknowledged;
  }
  return absl::OkStatus();
}

absl::StatusOr<CheckResult> CheckContent(DiskEngine& engine,
                                         const DemoConfig& config,
                                         const AckMap& acked) {
  CheckResult result;
  AckMap seen;
  const absl::Time start = absl::Now();
  Progress progress("checking", static_cast<int64_t>(acked.size()), "batches");
  for (int p = 0; p < config.partitions; ++p) {
    TopicPartition tp{kDemoTopic, p};
    KAAS_ASSIGN_OR_RETURN(int64_t next, engine.LogStartOffset(tp));
    KAAS_ASSIGN_OR_RETURN(int64_t end, engine.HighWatermark(tp));
    while (next < end) {
      KAAS_ASSIGN_OR_RETURN(
          ReadResult read,
          engine.Read(tp, next, kFetchBytes, Isolation::kReadUncommitted));
      if (read.batches == 0) break;
      std::string bytes(read.records);
      absl::string_view rest = bytes;
      while (!rest.empty()) {
        KAAS_ASSIGN_OR_RETURN(size_t size, PeekBatchSize(rest));
        KAAS_ASSIGN_OR_RETURN(RecordBatchView batch,
                              RecordBatchView::Parse(rest.substr(0, size)));
        KAAS_RETURN_IF_ERROR(
            CheckBatch(config, p, batch, acked, &seen, &result));
        progress.Add();
        rest.remove_prefix(size);
      }
      next = read.next_offset;
    }
  }
  for (const auto& [id, offset] : acked) {
    if (seen.count(id) == 0) {
      return absl::DataLossError(
          absl::StrCat("acknowledged batch lost: producer ", id.first,
                       " batch ", id.second, " at offset ", offset));
    }
  }
  result.elapsed = absl::Now() - start;
  return result;
}

// ---- 4. The crash -----------------------------------------------------------

struct CrashResult {
  AckMap acked;
  pid_t pid = 0;
  std::string how_it_ended;
};

absl::StatusOr<CrashResult> CrashChild(const DemoConfig& config) {
  std::vector<std::string> argv = {
      "/proc/self/exe",
      "demo-child",
      absl::StrCat("--data_dir=", config.data_dir),
      absl::StrCat("--partitions=", config.partitions),
      absl::StrCat("--records_per_batch=", config.shape.records_per_batch),
      absl::StrCat("--value_bytes=", config.shape.value_bytes),
      absl::StrCat("--crash_writers=", config.crash_writers),
      absl::StrCat("--segment_bytes=", config.segment_bytes),
      absl::StrCat("--child_first_producer=", config.producers),
      absl::StrCat("--child_base_timestamp_ms=",
                   config.child_base_timestamp_ms),
      "--child_epoch=2"};
  KAAS_ASSIGN_OR_RETURN(ChildProcess child, ChildProcess::Spawn(argv));
  CrashResult result;
  result.pid = child.pid();
  bool killed = false;
  {
    Progress progress("child acknowledged", config.crash_after_acks, "batches");
    while (true) {
      KAAS_ASSIGN_OR_RETURN(std::optional<std::string> line,
                            child.ReadLine(kChildTimeout));
      if (!line.has_value()) break;
      int producer = 0;
      int64_t n = 0, offset = 0;
      if (std::sscanf(line->c_str(),
                      "acked producer=%d batch=%" SCNd64 " offset=%" SCNd64,
                      &producer, &n, &offset) != 3) {
        // A line cut by the kill is not an acknowledgement.
        continue;
      }
      result.acked[{producer, n}] = offset;
      progress.Add();
      if (!killed && static_cast<int64_t>(result.acked.size()) >=
                         config.crash_after_acks) {
        child.Kill();  // the lines already in the pipe are still read
        killed = true;
      }
    }
  }
  KAAS_ASSIGN_OR_RETURN(int status, child.Wait());
  result.how_it_ended = DescribeWaitStatus(status);
  if (!killed) {
    return absl::InternalError(absl::StrCat(
        "the crash child ", result.how_it_ended, " after ", result.acked.size(),
        " acknowledgements, before it was killed"));
  }
  std::cout << "4. Crash: a child process (pid " << result.pid
            << ") took the partitions over at leader epoch 2 and appended "
               "with "
            << config.crash_writers
            << " concurrent acks=all producers; it was killed with SIGKILL "
               "after "
            << config.crash_after_acks << " acknowledgements ("
            << result.acked.size() << " acknowledged in all; "
            << result.how_it_ended << ").\n";
  return result;
}

// ---- 5. Recovery
// -------------------------------------------------------------

absl::Status Recover(DiskEngine& engine, const DemoConfig& config) {
  absl::Duration recovery;
  uint64_t scanned = 0, truncated = 0;
  std::vector<std::string> problems;
  for (int p = 0; p < config.partitions; ++p) {
    TopicPartition tp{kDemoTopic, p};
    KAAS_ASSIGN_OR_RETURN(OpenReport report, engine.RecoverPartition(tp));
    recovery += report.duration;
    scanned += report.scanned_bytes;
    truncated += report.truncated_bytes;
    for (const std::string& problem : report.problems) {
      problems.push_back(absl::StrCat("partition ", p, ": ", problem));
    }
    KAAS_RETURN_IF_ERROR(engine.TakeOver(tp, 3).status());
  }
  std::cout << "5. Recovered " << config.partitions << " partitions in "
            << Millis(recovery) << " (verified " << Megabytes(scanned)
            << " written since the last recovery checkpoints, truncated "
            << truncated << " bytes) and took them over at leader epoch 3.\n";
  for (const std::string& problem : problems) {
    std::cout << "   Recovery found: " << problem << "\n";
  }
  return absl::OkStatus();
}

absl::Status RunPhases(const DemoConfig& config) {
  std::cout << "kaaslog demo: data dir " << config.data_dir << ", topic "
            << kDemoTopic << "\n";
  AckMap acked;
  {
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenEngine(config));
    KAAS_RETURN_IF_ERROR(CreateTopic(*engine, config));
    KAAS_ASSIGN_OR_RETURN(acked, Produce(*engine, config));
    KAAS_ASSIGN_OR_RETURN(CheckResult check,
                          CheckContent(*engine, config, acked));
    std::cout << "3. Read back " << check.batches << " batches in "
              << Millis(check.elapsed)
              << ": each is byte-identical to what its producer sent, at "
                 "its acknowledged offset.\n";
    KAAS_RETURN_IF_ERROR(engine->Drain());  // a clean close
  }
  KAAS_ASSIGN_OR_RETURN(CrashResult crash, CrashChild(config));
  acked.insert(crash.acked.begin(), crash.acked.end());
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine, OpenEngine(config));
  KAAS_RETURN_IF_ERROR(Recover(*engine, config));
  KAAS_ASSIGN_OR_RETURN(CheckResult check,
                        CheckContent(*engine, config, acked));
  std::cout << "6. Checked " << check.batches << " batches in "
            << Millis(check.elapsed) << ": all " << check.acknowledged
            << " acknowledged batches (" << acked.size() - crash.acked.size()
            << " before the crash, " << crash.acked.size()
            << " by the killed child) are there byte for byte; "
            << check.unacknowledged
            << " more were written by the child but not yet acknowledged "
               "when it died, and survived too.\n";
  KAAS_RETURN_IF_ERROR(engine->Drain());
  std::cout << "Demo OK. Look around: kaaslog dump "
            << fs::JoinPath(config.data_dir, kDemoTopic, "0")
            << "; kaaslog verify " << config.data_dir << "\n";
  return absl::OkStatus();
}

int RunDemo(const CommandLine& command_line) {
  const Subcommand& self = DemoSubcommand();
  DemoConfig config;
  config.data_dir = absl::GetFlag(FLAGS_data_dir);
  config.partitions = absl::GetFlag(FLAGS_partitions);
  config.producers = absl::GetFlag(FLAGS_producers);
  config.batches = absl::GetFlag(FLAGS_batches);
  config.crash_writers = absl::GetFlag(FLAGS_crash_writers);
  config.crash_after_acks = absl::GetFlag(FLAGS_crash_after_acks);
  config.shape.records_per_batch = absl::GetFlag(FLAGS_records_per_batch);
  config.shape.value_bytes = absl::GetFlag(FLAGS_value_bytes);
  int64_t segment_bytes = absl::GetFlag(FLAGS_segment_bytes);
  if (config.partitions < 1 || config.partitions > 1000) {
    return UsageError(self, "--partitions must be in [1, 1000]");
  }
  if (config.producers < 1 || config.producers > 1000 ||
      config.crash_writers < 1 || config.crash_writers > 1000) {
    return UsageError(self,
                      "--producers and --crash_writers must be in [1, 1000]");
  }
  if (config.batches < 1 || config.crash_after_acks < 1) {
    return UsageError(self, "--batches and --crash_after_acks must be >= 1");
  }
  if (config.shape.records_per_batch < 1 ||
      config.shape.records_per_batch > 10000 || config.shape.value_bytes < 0 ||
      config.shape.value_bytes > (1 << 20)) {
    return UsageError(self,
                      "--records_per_batch must be in [1, 10000] and "
                      "--value_bytes in [0, 1048576]");
  }
  if (int64_t{config.batches} * config.shape.records_per_batch > INT32_MAX) {
    return UsageError(self,
                      "too many records per producer for int32 "
                      "sequence numbers");
  }
  if (segment_bytes < 1024) {
    return UsageError(self, "--segment_bytes must be >= 1024");
  }
  config.segment_bytes = static_cast<uint64_t>(segment_bytes);
  config.base_timestamp_ms = absl::ToUnixMillis(absl::Now());
  // Distinct from the first producers' timestamps, as a later run's would be.
  config.child_base_timestamp_ms = config.base_timestamp_ms + config.batches;

  // Each step's line before the next step's progress (on stderr).
  std::cout << std::unitbuf;
  absl::Status status = RunPhases(config);
  if (!status.ok())
    return Failure(self, absl::StrCat("FAILED: ", status.ToString()));
  return kExitOk;
}

}  // namespace

const Subcommand& DemoSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "demo";
    subcommand->summary =
        "Tour the engine: append, read back, crash, recover (the default).";
    subcommand->details =
        "On --data_dir (the topic kaaslog-demo, replaced if it exists):\n"
        "  1. creates the topic and takes its partitions over at epoch 1;\n"
        "  2. appends with --producers concurrent idempotent acks=all\n"
        "     producers (--batches each), reporting throughput and latency;\n"
        "  3. reads everything back and checks every batch byte for byte;\n"
        "  4. re-runs this executable as a child that takes over at epoch 2 "
        "and\n"
        "     appends with acks=all, printing each acknowledged offset, and\n"
        "     kills it with SIGKILL after --crash_after_acks "
        "acknowledgements;\n"
        "  5. recovers the partitions (timed) and takes over at epoch 3;\n"
        "  6. checks that every acknowledged batch is there byte for byte.\n"
        "Progress goes to stderr. The defaults take a few seconds.\n";
    subcommand->exit_status = "0 every check passed, 1 a check or step failed";
    subcommand->flags = {"data_dir",      "partitions",        "producers",
                         "batches",       "records_per_batch", "value_bytes",
                         "crash_writers", "crash_after_acks",  "segment_bytes"};
    subcommand->run = RunDemo;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
