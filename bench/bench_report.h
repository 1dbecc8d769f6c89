// File: bench/bench_report.h
//
// The results of a benchmark run and their two renderings:
//   * RenderTable: one table per scenario, mirroring ../shared/bench/
//     workload.md, each row with its ratio to the matching raw baseline;
//   * RenderJson: one JSON object
//       {"raw": {fdatasync_ops_per_s, fdatasync_p50_us, seq_write_mb_per_s,
//                seq_read_warm_mb_per_s, seq_read_cold_mb_per_s} | null,
//        "rows": [{scenario, name, batch, producers, partitions,
//                  producers_per_partition, flush_interval, acks, io,
//                  close, cache, path, batches_per_s, mb_per_s, p50_us, p99_us,
//                  p999_us, fsyncs_per_s, batches_per_fsync,
//                  fsync_mean_us, open_ms,
//                  takeover_ms, recovery_scanned_bytes, hwm_ok, ratio,
//                  ratio_to, adjacent_fdatasync_ops_per_s, adjacent_ratio,
//                  open_fds, threads, rss_bytes_per_partition,
//                  sendfile_mb_per_s, error}, ...]}
//     where every field that does not apply to a row is null.
//
// Ratios (RatioToBaseline): acks=all with 1KiB batches -> batches/s over
// fdatasync ops/s (for (e), many partitions: over the raw rate of 64
// threads each syncing its own file); other appends -> MB/s over
// sequential-write MB/s (with direct I/O: over the raw O_DIRECT sequential
// write, where the run measured it); reads
// ((c)) and recovery ((d): the active segment's MB over the open time) ->
// MB/s over the sequential read of the same cache state; fetches to a
// socket ((f)) -> MB/s over the raw sendfile of the same files measured in
// the same case (BenchRow::sendfile_mb_per_s). The 1-producer
// acks=all row also gets a ratio to the raw probes run around it
// (RatioToAdjacentBaseline), shown after its ratio.
//
// Thread-safety: plain values and pure functions.

#ifndef KAAS_BENCH_BENCH_REPORT_H_
#define KAAS_BENCH_BENCH_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "bench/raw_baselines.h"

namespace kaas::bench {

struct BenchRow {
  std::string scenario;          // "a" ... "f"
  std::string name;              // unique in a run, e.g. "(a) 1KiB P=4"
  std::string batch;             // "1KiB" or "16KiB"
  std::optional<int> producers;  // (e): in total
  // (e): partitions of the topic, and producers appending to each.
  std::optional<int> partitions;
  std::optional<int> producers_per_partition;
  std::optional<int64_t> flush_interval;  // flush.messages; 0 = never
  std::optional<std::string> acks;        // "all" or "1"
  // (a): how the engine wrote the log: "buffered" (through the page cache,
  // the default) or "direct" (DiskEngine::Options::direct_io).
  std::optional<std::string> io;
  // (b): "on" when the engine validated every batch's records
  // (PartitionConfig::validate_records), else "off".
  std::optional<std::string> records;
  std::optional<std::string> close;  // (d): "clean" or "crash"
  std::optional<std::string> cache;  // (c), (d), (f): "warm" or "cold"
  // (f): how the fetched batches reached the socket: "copy" (Read, then
  // write(2) of the bytes) or "zero-copy" (ReadRegions, sendfile inside the
  // engine).
  std::optional<std::string> path;
  // (f): raw sendfile(2) of the same segment files to the same kind of
  // socket, measured in the same case right before the row (its baseline).
  std::optional<double> sendfile_mb_per_s;
  std::optional<double> batches_per_s;
  std::optional<double> mb_per_s;
  std::optional<double> p50_us;
  std::optional<double> p99_us;
  std::optional<double> p999_us;
  std::optional<double> fsyncs_per_s;
  std::optional<double> batches_per_fsync;
  std::optional<double> fsync_mean_us;  // mean engine fsync duration
  std::optional<double> open_ms;
  std::optional<double> takeover_ms;
  std::optional<int64_t> recovery_scanned_bytes;
  std::optional<bool> hwm_ok;
  // (a) 1KiB P=1 with the raw baselines: the raw 1 KiB pwrite+fdatasync
  // rate measured right before and right after the row (their mean), so
  // the row's floor is taken while it ran, not minutes before.
  std::optional<double> adjacent_fdatasync_ops_per_s;
  // (e): the process while every partition was led and idle, before the
  // producers started: open descriptors and threads, and resident memory
  // per led partition (the growth from taking them over, divided by their
  // number).
  std::optional<int> open_fds;
  std::optional<int> threads;
  std::optional<double> rss_bytes_per_partition;
  // Set when the case failed; the figures above are then partial (e.g.
  // hwm_ok false with the open time that was measured).
  std::optional<std::string> error;
};

struct BenchReport {
  // How the run was made (shown in the table's header).
  std::string data_dir;
  absl::Duration window;
  absl::Duration warmup;
  uint64_t data_set_bytes = 0;        // written by the (c)/(d) child
  uint64_t raw_sequential_bytes = 0;  // of the raw sequential write/read
  int driver_threads = 0;
  bool quick = false;
  std::optional<RawBaselines> raw;
  std::vector<BenchRow> rows;
};

struct Ratio {
  double value = 0;
  std::string basis;  // e.g. "fdatasync ops/s"
};

// The row's ratio to its baseline (see the file comment); nullopt when the
// row failed, has no figure, or the baseline is missing or zero.
std::optional<Ratio> RatioToBaseline(const BenchRow& row,
                                     const std::optional<RawBaselines>& raw);

// batches/s over adjacent_fdatasync_ops_per_s; nullopt without them.
std::optional<Ratio> RatioToAdjacentBaseline(const BenchRow& row);

std::string RenderTable(const BenchReport& report);
std::string RenderJson(const BenchReport& report);

// `text` as a JSON string literal (quotes included). Invalid UTF-8 bytes
// are replaced with U+FFFD so the output is always valid JSON.
std::string JsonQuote(absl::string_view text);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_BENCH_REPORT_H_
