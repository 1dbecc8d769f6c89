// File: tools/compact.cc
//
// `kaaslog compact PARTITION_DIR`: one compaction pass over a partition no
// engine leads (the log cleaner's work, offline, for operators): the
// partition is opened as its leader would open it (recovery first; its lock
// is taken, so a running leader makes this fail with kNotLeader and nothing
// is touched), compacted with the topic's effective config, and closed
// again. Its leader epoch does not change.

#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/clock.h"
#include "base/status_macros.h"
#include "base/thread_pool.h"
#include "base/timer_thread.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "storage/common/offset_map.h"
#include "storage/common/partition_config.h"
#include "storage/engine/topic_config.h"
#include "storage/metadata/producer_fences.h"
#include "storage/partition/partition.h"
#include "storage/partition/standalone_runtime.h"
#include "storage/segment/read_handle_cache.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

ABSL_FLAG(int64_t, dedupe_buffer_bytes, int64_t{128} << 20,
          "Memory of the offset map (Kafka log.cleaner.dedupe.buffer.size).");

namespace kaas::tools {
namespace {

absl::StatusOr<CompactionReport> CompactOffline(const std::string& dir,
                                                size_t map_bytes) {
  fs::FileSystem& fs = *fs::PosixFileSystem::Default();
  KAAS_ASSIGN_OR_RETURN(std::optional<TopicConfigOverrides> overrides,
                        ReadTopicConfig(fs, fs::Dirname(dir)));
  PartitionConfig config;
  if (overrides.has_value()) config = ApplyTopicConfig(config, *overrides);
  if (!config.cleanup_compact) {
    return absl::FailedPreconditionError(absl::StrCat(
        fs::Dirname(dir), "/.config.json: cleanup.policy is not compact"));
  }
  partition::StandaloneRuntime runtime(&fs, /*io_threads=*/1);
  partition::OpenReport report;
  KAAS_ASSIGN_OR_RETURN(
      std::shared_ptr<partition::Partition> partition,
      partition::Partition::Open(runtime.Get(), dir, config,
                                 metadata::ProducerFences(), &report));
  OffsetMap map(map_bytes);
  CompactionRequest request;
  request.now_ms = Clock::Real()->NowMillis();
  request.map = &map;
  absl::StatusOr<CompactionReport> compacted = partition->Compact(request);
  absl::Status closed = partition->Relinquish();
  if (!compacted.ok()) return compacted.status();
  KAAS_RETURN_IF_ERROR(closed);
  return compacted;
}

int RunCompact(const CommandLine& command_line) {
  const Subcommand& self = CompactSubcommand();
  const int64_t map_bytes = absl::GetFlag(FLAGS_dedupe_buffer_bytes);
  if (map_bytes < 1024) {
    return UsageError(self, "--dedupe_buffer_bytes must be at least 1024");
  }
  const std::string dir = command_line.positional[0];
  absl::StatusOr<CompactionReport> report =
      CompactOffline(dir, static_cast<size_t>(map_bytes));
  if (!report.ok()) return Failure(self, ErrorLine(report.status()));
  std::cout << absl::StrFormat(
      "%s: keys read from offset %d to %d (%d keys); %d segments rewritten "
      "into %d, %d -> %d bytes; %d of %d records removed (%d tombstones, %d "
      "markers, %d without a key)%s\n",
      dir, report->dirty_start, report->map_end, report->keys,
      report->segments_replaced, report->segments_written, report->bytes_before,
      report->bytes_after, report->records_removed, report->records_read,
      report->tombstones_removed, report->markers_removed,
      report->null_key_records_removed,
      report->complete ? "" : " (stopped early: run it again)");
  return kExitOk;
}

}  // namespace

const Subcommand& CompactSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "compact";
    subcommand->arguments = "PARTITION_DIR";
    subcommand->positional_arguments = 1;
    subcommand->summary =
        "Run one compaction pass over a partition no engine leads.";
    subcommand->details =
        "What the log cleaner does to a partition whose topic's\n"
        "cleanup.policy is compact (the topic's .config.json decides), run\n"
        "once, offline: the partition is recovered as its leader's open\n"
        "recovers it, compacted, and closed; its leader epoch is unchanged.\n"
        "Fails without touching anything while an engine leads it.\n";
    subcommand->exit_status = "0 compacted, 1 failed";
    subcommand->flags = {"dedupe_buffer_bytes"};
    subcommand->run = RunCompact;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
