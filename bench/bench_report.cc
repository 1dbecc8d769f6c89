#include "bench/bench_report.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kaas::bench {
namespace {

// ---- Formatting helpers -----------------------------------------------------

std::string Fixed(const std::optional<double>& value, int precision) {
  if (!value.has_value() || !std::isfinite(*value)) return "-";
  return absl::StrFormat("%.*f", precision, *value);
}

std::string Mib(uint64_t bytes) {
  return absl::StrFormat("%.0f MiB", static_cast<double>(bytes) / (1 << 20));
}

std::string FormatRatio(const std::optional<Ratio>& ratio) {
  if (!ratio.has_value()) return "-";
  return absl::StrFormat("%.2fx %s", ratio->value, ratio->basis);
}

// One column of a scenario table.
struct Column {
  std::string header;
  int width;  // negative: left-aligned
  std::function<std::string(const BenchRow&)> cell;
};

std::string Pad(const std::string& text, int width) {
  return width < 0 ? absl::StrFormat("%-*s", -width, text)
                   : absl::StrFormat("%*s", width, text);
}

void AppendTable(absl::string_view title, const std::vector<Column>& columns,
                 const std::vector<const BenchRow*>& rows,
                 const std::optional<RawBaselines>& raw, std::string* out) {
  if (rows.empty()) return;
  absl::StrAppend(out, "\n", title, "\n ");
  for (const Column& column : columns) {
    absl::StrAppend(out, " ", Pad(column.header, column.width));
  }
  absl::StrAppend(out, "  ratio\n");
  for (const BenchRow* row : rows) {
    if (row->error.has_value()) {
      absl::StrAppend(out, "  ", row->name, ": FAILED: ", *row->error, "\n");
      continue;
    }
    absl::StrAppend(out, " ");
    for (const Column& column : columns) {
      absl::StrAppend(out, " ", Pad(column.cell(*row), column.width));
    }
    absl::StrAppend(out, "  ", FormatRatio(RatioToBaseline(*row, raw)));
    if (std::optional<Ratio> adjacent = RatioToAdjacentBaseline(*row)) {
      absl::StrAppendFormat(out, " (%.2fx the %.0f ops/s measured around it)",
                            adjacent->value,
                            *row->adjacent_fdatasync_ops_per_s);
    }
    absl::StrAppend(out, "\n");
  }
}

std::vector<const BenchRow*> RowsOf(const BenchReport& report,
                                    absl::string_view scenario) {
  std::vector<const BenchRow*> rows;
  for (const BenchRow& row : report.rows) {
    if (row.scenario == scenario) rows.push_back(&row);
  }
  return rows;
}

std::vector<Column> AppendMetricColumns() {
  return {
      {"batches/s", 10,
       [](const BenchRow& r) { return Fixed(r.batches_per_s, 0); }},
      {"MB/s", 8, [](const BenchRow& r) { return Fixed(r.mb_per_s, 1); }},
      {"p50 us", 8, [](const BenchRow& r) { return Fixed(r.p50_us, 0); }},
      {"p99 us", 8, [](const BenchRow& r) { return Fixed(r.p99_us, 0); }},
      {"p99.9 us", 9, [](const BenchRow& r) { return Fixed(r.p999_us, 0); }},
      {"fsyncs/s", 9,
       [](const BenchRow& r) { return Fixed(r.fsyncs_per_s, 0); }},
      {"batches/fsync", 14,
       [](const BenchRow& r) { return Fixed(r.batches_per_fsync, 2); }},
      {"fsync us", 9,
       [](const BenchRow& r) { return Fixed(r.fsync_mean_us, 0); }},
  };
}

std::string FlushName(const std::optional<int64_t>& flush) {
  if (!flush.has_value()) return "-";
  return *flush <= 0 ? "never" : absl::StrCat(*flush);
}

// ---- JSON
// ---------------------------------------------------------------------

// The length of the well-formed UTF-8 sequence at the front of `text`, or 0.
size_t Utf8SequenceLength(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  size_t length;
  uint8_t second_min = 0x80, second_max = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_min = 0xA0;  // no overlong forms
    if (lead == 0xED) second_max = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_min = 0x90;  // no overlong forms
    if (lead == 0xF4) second_max = 0x8F;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < second_min || byte(1) > second_max) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

class JsonObject {
 public:
  void Raw(absl::string_view key, absl::string_view json) {
    absl::StrAppend(&out_, out_.empty() ? "{" : ", ", JsonQuote(key), ": ",
                    json);
  }
  void Number(absl::string_view key, const std::optional<double>& value) {
    Raw(key, value.has_value() && std::isfinite(*value)
                 ? absl::StrFormat("%.10g", *value)
                 : "null");
  }
  void Integer(absl::string_view key, const std::optional<int64_t>& value) {
    Raw(key, value.has_value() ? absl::StrCat(*value) : "null");
  }
  void String(absl::string_view key, const std::optional<std::string>& value) {
    Raw(key, value.has_value() ? JsonQuote(*value) : "null");
  }
  void Bool(absl::string_view key, const std::optional<bool>& value) {
    Raw(key, value.has_value() ? (*value ? "true" : "false") : "null");
  }
  std::string Finish() { return out_.empty() ? "{}" : out_ + "}"; }

 private:
  std::string out_;
};

std::string RawJson(const std::optional<RawBaselines>& raw) {
  if (!raw.has_value()) return "null";
  JsonObject object;
  object.Number("fdatasync_ops_per_s", raw->fdatasync_ops_per_s);
  object.Number("fdatasync_p50_us", raw->fdatasync_p50_us);
  object.Number("seq_write_mb_per_s", raw->seq_write_mb_per_s);
  object.Number("seq_read_warm_mb_per_s", raw->seq_read_warm_mb_per_s);
  object.Number("seq_read_cold_mb_per_s", raw->seq_read_cold_mb_per_s);
  object.Number("fdatasync_ops_per_s_t4", raw->fdatasync_ops_per_s_t4);
  object.Number("fdatasync_ops_per_s_t16", raw->fdatasync_ops_per_s_t16);
  object.Number("fdatasync_ops_per_s_t64", raw->fdatasync_ops_per_s_t64);
  object.Number("direct_write_mb_per_s", raw->direct_write_mb_per_s);
  return object.Finish();
}

std::string RowJson(const BenchRow& row,
                    const std::optional<RawBaselines>& raw) {
  JsonObject object;
  object.String("scenario", row.scenario);
  object.String("name", row.name);
  object.String("batch", row.batch);
  object.Integer("producers", row.producers);
  object.Integer("partitions", row.partitions);
  object.Integer("producers_per_partition", row.producers_per_partition);
  object.Integer("flush_interval", row.flush_interval);
  object.String("acks", row.acks);
  object.String("io", row.io);
  object.String("records", row.records);
  object.String("close", row.close);
  object.String("cache", row.cache);
  object.String("path", row.path);
  object.Number("batches_per_s", row.batches_per_s);
  object.Number("mb_per_s", row.mb_per_s);
  object.Number("p50_us", row.p50_us);
  object.Number("p99_us", row.p99_us);
  object.Number("p999_us", row.p999_us);
  object.Number("fsyncs_per_s", row.fsyncs_per_s);
  object.Number("batches_per_fsync", row.batches_per_fsync);
  object.Number("fsync_mean_us", row.fsync_mean_us);
  object.Number("open_ms", row.open_ms);
  object.Number("takeover_ms", row.takeover_ms);
  object.Integer("recovery_scanned_bytes", row.recovery_scanned_bytes);
  object.Bool("hwm_ok", row.hwm_ok);
  std::optional<Ratio> ratio = RatioToBaseline(row, raw);
  object.Number("ratio", ratio.has_value() ? std::optional<double>(ratio->value)
                                           : std::nullopt);
  object.String("ratio_to", ratio.has_value()
                                ? std::optional<std::string>(ratio->basis)
                                : std::nullopt);
  object.Number("adjacent_fdatasync_ops_per_s",
                row.adjacent_fdatasync_ops_per_s);
  std::optional<Ratio> adjacent = RatioToAdjacentBaseline(row);
  object.Number("adjacent_ratio", adjacent.has_value()
                                      ? std::optional<double>(adjacent->value)
                                      : std::nullopt);
  object.Integer("open_fds", row.open_fds);
  object.Integer("threads", row.threads);
  object.Number("rss_bytes_per_partition", row.rss_bytes_per_partition);
  object.Number("sendfile_mb_per_s", row.sendfile_mb_per_s);
  object.String("error", row.error);
  return object.Finish();
}

}  // namespace

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  while (!text.empty()) {
    const unsigned char c = static_cast<unsigned char>(text[0]);
    size_t length = 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else if ((length = Utf8SequenceLength(text)) > 0) {
          out.append(text.data(), length);
        } else {
          out += "\\ufffd";  // not UTF-8: replaced, one byte at a time
          length = 1;
        }
    }
    text.remove_prefix(length);
  }
  out += "\"";
  return out;
}

std::optional<Ratio> RatioToBaseline(const BenchRow& row,
                                     const std::optional<RawBaselines>& raw) {
  if (row.error.has_value()) return std::nullopt;
  auto ratio = [](const std::optional<double>& value, double baseline,
                  std::string basis) -> std::optional<Ratio> {
    if (!value.has_value() || !(baseline > 0)) return std::nullopt;
    return Ratio{*value / baseline, std::move(basis)};
  };
  // (f) carries its own baseline, measured beside it.
  if (row.scenario == "f") {
    return ratio(row.mb_per_s, row.sendfile_mb_per_s.value_or(0),
                 "raw sendfile MB/s");
  }
  if (!raw.has_value()) return std::nullopt;
  if (row.scenario == "a" || row.scenario == "b") {
    if (row.acks == "all" && row.batch == "1KiB") {
      return ratio(row.batches_per_s, raw->fdatasync_ops_per_s,
                   "fdatasync ops/s");
    }
    if (row.io == "direct" && raw->direct_write_mb_per_s.has_value()) {
      return ratio(row.mb_per_s, *raw->direct_write_mb_per_s,
                   "O_DIRECT seq write MB/s");
    }
    return ratio(row.mb_per_s, raw->seq_write_mb_per_s, "seq write MB/s");
  }
  if (row.scenario == "e") {
    return ratio(row.batches_per_s, raw->fdatasync_ops_per_s_t64,
                 "fdatasync ops/s, 64 files");
  }
  if (row.scenario == "c" || row.scenario == "d") {
    if (row.cache == "cold") {
      return ratio(row.mb_per_s, raw->seq_read_cold_mb_per_s,
                   "seq read cold MB/s");
    }
    return ratio(row.mb_per_s, raw->seq_read_warm_mb_per_s,
                 "seq read warm MB/s");
  }
  return std::nullopt;
}

std::optional<Ratio> RatioToAdjacentBaseline(const BenchRow& row) {
  if (row.error.has_value() || !row.batches_per_s.has_value() ||
      !row.adjacent_fdatasync_ops_per_s.has_value() ||
      !(*row.adjacent_fdatasync_ops_per_s > 0)) {
    return std::nullopt;
  }
  return Ratio{*row.batches_per_s / *row.adjacent_fdatasync_ops_per_s,
               "adjacent fdatasync ops/s"};
}

std::string RenderTable(const BenchReport& report) {
  std::string out = absl::StrFormat(
      "kaas-storage standard benchmark%s: data dir %s, window %s, warm-up "
      "%s, data set %s\n"
      "Producers in (a)/(b) are logical: one append in flight each, issued "
      "by %d event-loop driver threads;\nan ack's durability callback hands "
      "its producer back to its driver (P=1: one thread blocking in "
      "AppendAndWait).\nMB = 10^6 bytes of batch.\n",
      report.quick ? " (quick)" : "", report.data_dir,
      absl::FormatDuration(report.window), absl::FormatDuration(report.warmup),
      Mib(report.data_set_bytes), report.driver_threads);

  if (report.raw.has_value()) {
    const RawBaselines& raw = *report.raw;
    absl::StrAppend(
        &out, "\nRaw device baselines\n",
        absl::StrFormat("  1 KiB pwrite+fdatasync          %10.0f ops/s  "
                        "p50 %.0f us\n",
                        raw.fdatasync_ops_per_s, raw.fdatasync_p50_us),
        absl::StrFormat("  sequential write %-12s   %10.1f MB/s\n",
                        Mib(report.raw_sequential_bytes),
                        raw.seq_write_mb_per_s),
        absl::StrFormat("  sequential read, warm           %10.1f MB/s\n",
                        raw.seq_read_warm_mb_per_s),
        absl::StrFormat("  sequential read, cold           %10.1f MB/s\n",
                        raw.seq_read_cold_mb_per_s),
        absl::StrFormat("  1 KiB pwrite+fdatasync, T files %10.0f / %.0f / "
                        "%.0f ops/s (T=4/16/64, total)\n",
                        raw.fdatasync_ops_per_s_t4, raw.fdatasync_ops_per_s_t16,
                        raw.fdatasync_ops_per_s_t64),
        raw.direct_write_mb_per_s.has_value()
            ? absl::StrFormat("  sequential write, O_DIRECT      %10.1f MB/s "
                              "(preallocated)\n",
                              *raw.direct_write_mb_per_s)
            : std::string("  sequential write, O_DIRECT      n/a (refused "
                          "by the filesystem)\n"));
  }

  std::vector<Column> a_columns = {
      {"io", -8, [](const BenchRow& r) { return r.io.value_or("-"); }},
      {"batch", -5, [](const BenchRow& r) { return r.batch; }},
      {"P", 3,
       [](const BenchRow& r) {
         return r.producers.has_value() ? absl::StrCat(*r.producers) : "-";
       }},
  };
  for (Column& c : AppendMetricColumns()) a_columns.push_back(std::move(c));
  AppendTable("(a) acks=all throughput, one partition, flush interval 1",
              a_columns, RowsOf(report, "a"), report.raw, &out);

  std::vector<Column> b_columns = {
      {"batch", -5, [](const BenchRow& r) { return r.batch; }},
      {"flush", 5,
       [](const BenchRow& r) { return FlushName(r.flush_interval); }},
      {"validate", 8,
       [](const BenchRow& r) { return r.records.value_or("off"); }},
  };
  for (Column& c : AppendMetricColumns()) b_columns.push_back(std::move(c));
  AppendTable("(b) acks=1, single producer", b_columns, RowsOf(report, "b"),
              report.raw, &out);

  AppendTable(
      "(c) sequential read from offset 0, max_bytes 1 MiB",
      {
          {"batch", -5, [](const BenchRow& r) { return r.batch; }},
          {"cache", -5,
           [](const BenchRow& r) { return r.cache.value_or("-"); }},
          {"MB/s", 9, [](const BenchRow& r) { return Fixed(r.mb_per_s, 1); }},
          {"batches/s", 10,
           [](const BenchRow& r) { return Fixed(r.batches_per_s, 0); }},
          {"to end", 6,
           [](const BenchRow& r) {
             return r.hwm_ok.has_value() ? (*r.hwm_ok ? "ok" : "SHORT") : "-";
           }},
      },
      RowsOf(report, "c"), report.raw, &out);

  AppendTable(
      "(d) reopen with the data set in the active segment (open = recovery; "
      "MB/s = data set / open time)",
      {
          {"written", -16,
           [](const BenchRow& r) {
             if (r.close == "clean") return std::string("clean close");
             return absl::StrCat("crash, ", r.flush_interval.value_or(0) > 0
                                                ? "flush 1"
                                                : "no fsync");
           }},
          {"batch", -5, [](const BenchRow& r) { return r.batch; }},
          {"cache", -5,
           [](const BenchRow& r) { return r.cache.value_or("-"); }},
          {"open ms", 9, [](const BenchRow& r) { return Fixed(r.open_ms, 1); }},
          {"take-over ms", 12,
           [](const BenchRow& r) { return Fixed(r.takeover_ms, 1); }},
          {"scanned MB", 10,
           [](const BenchRow& r) {
             return r.recovery_scanned_bytes.has_value()
                        ? absl::StrFormat("%.1f",
                                          *r.recovery_scanned_bytes / 1e6)
                        : "-";
           }},
          {"MB/s", 9, [](const BenchRow& r) { return Fixed(r.mb_per_s, 0); }},
          {"hwm", 4,
           [](const BenchRow& r) {
             return r.hwm_ok.has_value() ? (*r.hwm_ok ? "ok" : "BAD") : "-";
           }},
      },
      RowsOf(report, "d"), report.raw, &out);

  std::vector<Column> e_columns = {
      {"partitions", 10,
       [](const BenchRow& r) {
         return r.partitions.has_value() ? absl::StrCat(*r.partitions) : "-";
       }},
      {"P/part", 6,
       [](const BenchRow& r) {
         return r.producers_per_partition.has_value()
                    ? absl::StrCat(*r.producers_per_partition)
                    : "-";
       }},
  };
  for (Column& c : AppendMetricColumns()) e_columns.push_back(std::move(c));
  e_columns.push_back({"fds", 5, [](const BenchRow& r) {
                         return r.open_fds.has_value()
                                    ? absl::StrCat(*r.open_fds)
                                    : "-";
                       }});
  e_columns.push_back({"threads", 7, [](const BenchRow& r) {
                         return r.threads.has_value() ? absl::StrCat(*r.threads)
                                                      : "-";
                       }});
  e_columns.push_back(
      {"KiB/part", 8, [](const BenchRow& r) {
         return r.rss_bytes_per_partition.has_value()
                    ? absl::StrFormat("%.1f", *r.rss_bytes_per_partition / 1024)
                    : "-";
       }});
  AppendTable(
      "(e) acks=all 1KiB, many partitions of one topic (fds, threads and "
      "resident KiB per partition: all led, idle)",
      e_columns, RowsOf(report, "e"), report.raw, &out);

  AppendTable(
      "(f) fetch to a loopback TCP socket from offset 0, max_bytes 1 MiB "
      "(sendfile MB/s: raw sendfile of the same files, same case)",
      {
          {"batch", -5, [](const BenchRow& r) { return r.batch; }},
          {"cache", -5,
           [](const BenchRow& r) { return r.cache.value_or("-"); }},
          {"path", -9, [](const BenchRow& r) { return r.path.value_or("-"); }},
          {"MB/s", 9, [](const BenchRow& r) { return Fixed(r.mb_per_s, 1); }},
          {"batches/s", 10,
           [](const BenchRow& r) { return Fixed(r.batches_per_s, 0); }},
          {"sendfile MB/s", 13,
           [](const BenchRow& r) { return Fixed(r.sendfile_mb_per_s, 1); }},
          {"to end", 6,
           [](const BenchRow& r) {
             return r.hwm_ok.has_value() ? (*r.hwm_ok ? "ok" : "SHORT") : "-";
           }},
      },
      RowsOf(report, "f"), report.raw, &out);
  return out;
}

std::string RenderJson(const BenchReport& report) {
  std::vector<std::string> rows;
  for (const BenchRow& row : report.rows)
    rows.push_back(RowJson(row, report.raw));
  return absl::StrCat("{\"raw\": ", RawJson(report.raw), ", \"rows\": [",
                      absl::StrJoin(rows, ", "), "]}\n");
}

}  // namespace kaas::bench
