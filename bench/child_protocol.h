// File: bench/child_protocol.h
//
// The protocol between the benchmark and its writer child (scenarios (c)
// and (d)): the parent re-executes its own binary as
//
//   <self> bench-child --data_dir=DIR --topic=NAME --batch=1KiB|16KiB
//          --bytes=N --flush_interval=N --end=close|crash
//
// The child writes batches of that shape with acks=1 to partition 0 of a
// fresh topic taken over at epoch 1, as many as fit in N bytes, then either
// closes cleanly (relinquish) or "crashes" (exits at once: nothing
// relinquished, persisted or synced), after printing one report line on
// stdout:
//
//   bench-child end_offset=E high_watermark=H batches=B bytes=N
//
// Thread-safety: pure functions.

#ifndef KAAS_BENCH_CHILD_PROTOCOL_H_
#define KAAS_BENCH_CHILD_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/workload_batch.h"

namespace kaas::bench {

// The hidden subcommand's name (argv[1] of the child).
inline constexpr absl::string_view kBenchChildCommand = "bench-child";

struct ChildWriteSpec {
  std::string data_dir;
  std::string topic;
  BatchShape shape = kBatch16KiB;
  uint64_t bytes = 0;                   // write at most this many batch bytes
  int64_t flush_interval_messages = 0;  // <= 0: never
  bool crash = false;                   // exit without closing
};

struct ChildWriteReport {
  int64_t end_offset = 0;      // one past the last appended offset
  int64_t high_watermark = 0;  // the child's high watermark at the end
  int64_t batches = 0;
  uint64_t bytes = 0;
};

// The arguments after the subcommand name, and their inverse. Parsing fails
// (InvalidArgument naming the argument) on unknown, missing or malformed
// arguments.
std::vector<std::string> ChildWriteArgs(const ChildWriteSpec& spec);
absl::StatusOr<ChildWriteSpec> ParseChildWriteArgs(
    const std::vector<std::string>& args);

// The report line (with its newline), and its parser, which finds the line
// anywhere in the child's stdout.
std::string FormatChildReport(const ChildWriteReport& report);
absl::StatusOr<ChildWriteReport> ParseChildReport(
    absl::string_view stdout_text);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_CHILD_PROTOCOL_H_
