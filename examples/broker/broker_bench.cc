// File: examples/broker/broker_bench.cc
//
// The broker rows of `./dev bench`: a librdkafka producer (acks=all,
// idempotent, 1,008-byte records, max.in.flight 5: its idempotent maximum)
// against a kaas-broker child on loopback, each beside an engine-only
// acks=all row of the same batches at the same concurrency, measured in the
// same run:
//
//   broker       one producer writing to one partition as fast as its queue
//                takes records, with librdkafka's default batching (a
//                batch per request of whatever accumulated) and, second,
//                with batches capped at 16 records (the workload's 16KiB
//                batch: many more requests for the same bytes);
//   engine-only  bench::RunAcksAllThroughput with as many producers as the
//                broker row had requests in flight and batches of the mean
//                record count it sent, both from librdkafka's statistics
//                (waitresp_cnt, batchcnt), 1,008-byte values as the
//                workload's. The concurrency is measured, not assumed:
//                librdkafka 2.0.2's idempotent producer counts its 5-request
//                budget per partition in messages (rktp_msgs_inflight in
//                rd_kafka_toppar_producer_serve), so with 5 or more records
//                per batch it keeps one request in flight.
//
// Both are counted in records per second over the same window after the
// same warm-up; MB/s are record value bytes (10^6). The ratio broker /
// engine-only is what the broker path keeps of the engine's rate (issue
// goal: >= 0.6).
//
//   broker_bench --broker=PATH [--data_dir=./kaas-data/bench] [--seconds=10]
//                [--warmup_seconds=1] [--format=table|json]
//
// Exit status: 0, or 1 if a row failed (the reason is printed).

#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_report.h"
#include "bench/scenarios.h"
#include "bench/workload_batch.h"
#include "tools/child_process.h"

ABSL_FLAG(std::string, broker, "", "the kaas-broker binary (required)");
ABSL_FLAG(std::string, data_dir, "./kaas-data/bench",
          "where both rows keep their data (removed after)");
ABSL_FLAG(double, seconds, 10, "measured window of each row, in seconds");
ABSL_FLAG(double, warmup_seconds, 1,
          "not counted, before each window, in seconds");
ABSL_FLAG(std::string, format, "table", "table or json");
ABSL_FLAG(std::string, extra_broker_flags, "",
          "for experiments: flags added to the broker's (e.g. "
          "--engine=memory), comma-separated");
ABSL_FLAG(std::string, extra_producer_config, "",
          "for experiments: key=value,... added to the producer's config");

namespace kaas::broker {
namespace {

constexpr int kMaxInFlight = 5;  // librdkafka's idempotent maximum
constexpr int kValueBytes = bench::kBatch16KiB.value_bytes;

// How the producer batches: librdkafka's default, or capped (per batch).
struct ProducerSetup {
  std::string name;
  std::optional<int> records_per_batch_cap;
};

struct BrokerRow {
  double records_per_s = 0;
  double mb_per_s = 0;
  // The means librdkafka reported: records per batch (0: no statistics)
  // and requests in flight.
  double records_per_batch = 0;
  double requests_in_flight = 0;
  std::optional<std::string> error;
};

// What the producer's callbacks record (they run on the producing thread,
// inside rd_kafka_poll / rd_kafka_flush).
struct ProducerState {
  absl::Time window_start;
  absl::Time window_end;
  int64_t in_window = 0;
  int64_t failed = 0;
  std::string first_error;
  // Over the statistics reports in the window: the sums of their mean
  // records per batch and of their requests in flight.
  double batch_records_sum = 0;
  double in_flight_sum = 0;
  int batch_reports = 0;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* state = static_cast<ProducerState*>(opaque);
  if (message->err) {
    if (state->failed++ == 0)
      state->first_error = rd_kafka_err2str(message->err);
    return;
  }
  const absl::Time now = absl::Now();
  if (now >= state->window_start && now < state->window_end) {
    ++state->in_window;
  }
}

// The "avg" of the topic's "batchcnt" window in librdkafka's statistics
// JSON ({"topics": {"bench": {"batchcnt": {"min": .., "avg": .., ...}}}}),
// or 0 if absent.
double MeanRecordsPerBatch(const std::string& statistics) {
  const size_t batchcnt = statistics.find("\"batchcnt\"");
  if (batchcnt == std::string::npos) return 0;
  const size_t avg = statistics.find("\"avg\":", batchcnt);
  if (avg == std::string::npos) return 0;
  return std::atof(statistics.c_str() + avg + 6);
}

// The requests awaiting a response, summed over every broker connection
// ("waitresp_cnt" of each entry of "brokers").
int RequestsInFlight(const std::string& statistics) {
  int total = 0;
  for (size_t at = statistics.find("\"waitresp_cnt\":");
       at != std::string::npos;
       at = statistics.find("\"waitresp_cnt\":", at + 1)) {
    total += std::atoi(statistics.c_str() + at + 15);
  }
  return total;
}

int OnStatistics(rd_kafka_t*, char* json, size_t json_len, void* opaque) {
  auto* state = static_cast<ProducerState*>(opaque);
  const absl::Time now = absl::Now();
  const std::string statistics(json, json_len);
  const double mean = MeanRecordsPerBatch(statistics);
  if (now >= state->window_start && now < state->window_end && mean > 0) {
    state->batch_records_sum += mean;
    state->in_flight_sum += RequestsInFlight(statistics);
    ++state->batch_reports;
  }
  return 0;  // librdkafka frees `json`
}

absl::StatusOr<rd_kafka_t*> NewProducer(const std::string& bootstrap,
                                        const ProducerSetup& setup,
                                        ProducerState* state) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"bootstrap.servers", bootstrap},
      {"acks", "all"},
      {"enable.idempotence", "true"},
      {"max.in.flight.requests.per.connection", absl::StrCat(kMaxInFlight)},
      {"compression.type", "none"},
      // Often enough for several reports in a short window.
      {"statistics.interval.ms", "100"}};
  if (setup.records_per_batch_cap.has_value()) {
    settings.push_back(
        {"batch.num.messages", absl::StrCat(*setup.records_per_batch_cap)});
  }
  for (absl::string_view pair :
       absl::StrSplit(absl::GetFlag(FLAGS_extra_producer_config), ',',
                      absl::SkipEmpty())) {
    settings.push_back(absl::StrSplit(pair, absl::MaxSplits('=', 1)));
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error,
                          sizeof(error)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", error));
    }
  }
  rd_kafka_conf_set_opaque(conf, state);
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_stats_cb(conf, OnStatistics);
  rd_kafka_t* producer =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (producer == nullptr) {
    rd_kafka_conf_destroy(conf);
    return absl::InternalError(absl::StrCat("rd_kafka_new: ", error));
  }
  return producer;
}

// Produces as fast as the producer's queue takes records until the window
// ends, then waits for every outstanding delivery.
absl::Status Produce(rd_kafka_t* producer, ProducerState* state) {
  const std::string value(kValueBytes, 'v');
  while (absl::Now() < state->window_end) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer, RD_KAFKA_V_TOPIC("bench"), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(producer, 1);  // serves delivery reports, frees room
    } else if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::InternalError(
          absl::StrCat("produce: ", rd_kafka_err2str(err)));
    } else {
      rd_kafka_poll(producer, 0);
    }
  }
  if (rd_kafka_flush(producer, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::DeadlineExceededError("deliveries outstanding after 60 s");
  }
  if (state->failed > 0) {
    return absl::InternalError(absl::StrCat(
        state->failed, " deliveries failed, the first: ", state->first_error));
  }
  return absl::OkStatus();
}

// Starts a broker on `dir`, produces through it, stops it with SIGTERM.
BrokerRow RunBrokerRow(const std::string& broker_binary, const std::string& dir,
                       const ProducerSetup& setup, absl::Duration warmup,
                       absl::Duration window) {
  BrokerRow row;
  absl::Status status = [&]() -> absl::Status {
    std::vector<std::string> argv = {broker_binary, "--log.dirs=" + dir,
                                     "--listeners=PLAINTEXT://127.0.0.1:0"};
    for (absl::string_view flag : absl::StrSplit(
             absl::GetFlag(FLAGS_extra_broker_flags), ',', absl::SkipEmpty())) {
      argv.emplace_back(flag);
    }
    absl::StatusOr<tools::ChildProcess> broker =
        tools::ChildProcess::Spawn(argv);
    if (!broker.ok()) return broker.status();
    // Its first line says where it listens.
    absl::StatusOr<std::optional<std::string>> line =
        broker->ReadLine(absl::Seconds(60));
    if (!line.ok()) return line.status();
    const std::string prefix = "kaas-broker: listening on ";
    if (!line->has_value() || (*line)->rfind(prefix, 0) != 0) {
      return absl::InternalError(
          absl::StrCat("the broker said: ", line->value_or("nothing")));
    }
    const std::string address = (*line)->substr(prefix.size());
    const std::string bootstrap = address.substr(0, address.find(' '));
    ProducerState state;
    state.window_start = absl::Now() + warmup;
    state.window_end = state.window_start + window;
    absl::StatusOr<rd_kafka_t*> producer =
        NewProducer(bootstrap, setup, &state);
    if (!producer.ok()) return producer.status();
    absl::Status produced = Produce(*producer, &state);
    rd_kafka_destroy(*producer);
    row.records_per_s =
        static_cast<double>(state.in_window) / absl::ToDoubleSeconds(window);
    row.mb_per_s = row.records_per_s * kValueBytes / 1e6;
    if (state.batch_reports > 0) {
      row.records_per_batch = state.batch_records_sum / state.batch_reports;
      row.requests_in_flight = state.in_flight_sum / state.batch_reports;
    }
    if (kill(broker->pid(), SIGTERM) != 0) {
      return absl::InternalError("cannot SIGTERM the broker");
    }
    absl::StatusOr<int> exited = broker->Wait();
    if (!exited.ok()) return exited.status();
    if (*exited != 0) {
      return absl::InternalError(absl::StrCat(
          "the broker ", tools::DescribeWaitStatus(*exited), " at SIGTERM"));
    }
    if (produced.ok() && row.records_per_batch < 1) {
      return absl::InternalError("librdkafka reported no batch statistics");
    }
    return produced;
  }();
  if (!status.ok()) row.error = status.ToString();
  return row;
}

struct Comparison {
  ProducerSetup setup;
  BrokerRow broker;
  int engine_records_per_batch = 0;
  int engine_producers = 0;
  double engine_records_per_s = 0;
  std::optional<std::string> engine_error;

  double engine_mb_per_s() const {
    return engine_records_per_s * kValueBytes / 1e6;
  }
  double ratio() const {
    return engine_records_per_s > 0
               ? broker.records_per_s / engine_records_per_s
               : 0;
  }
};

// The broker row of `setup`, then the engine-only row of its batches.
Comparison Compare(const ProducerSetup& setup, const std::string& broker_binary,
                   const std::filesystem::path& root, absl::Duration warmup,
                   absl::Duration window) {
  Comparison result;
  result.setup = setup;
  std::cerr << "[broker bench] librdkafka (" << setup.name
            << ") through kaas-broker\n";
  const std::filesystem::path dir = root / absl::StrCat("broker-", setup.name);
  // Not created here: the broker creates (and formats) its log dir.
  result.broker =
      RunBrokerRow(broker_binary, dir.string(), setup, warmup, window);
  std::error_code error;
  std::filesystem::remove_all(dir, error);
  if (result.broker.error.has_value()) return result;
  result.engine_records_per_batch =
      std::max(1, static_cast<int>(result.broker.records_per_batch + 0.5));
  result.engine_producers =
      std::max(1, static_cast<int>(result.broker.requests_in_flight + 0.5));
  const std::string shape_name =
      absl::StrCat(result.engine_records_per_batch, "x1008B");
  const bench::BatchShape shape{shape_name, result.engine_records_per_batch,
                                kValueBytes};
  std::cerr << "[broker bench] engine-only " << shape_name
            << " P=" << result.engine_producers << "\n";
  const bench::BenchRow engine = bench::RunAcksAllThroughput(
      bench::RealFileSystemContext(root.string(), warmup, window), shape,
      result.engine_producers);
  result.engine_records_per_s =
      engine.batches_per_s.value_or(0) * result.engine_records_per_batch;
  result.engine_error = engine.error;
  return result;
}

std::string RenderTable(const std::vector<Comparison>& comparisons) {
  std::string out = absl::StrFormat(
      "\n(k) the broker path: librdkafka acks=all idempotent (max.in.flight "
      "%d), 1,008-byte records, one partition; engine-only: the same batches "
      "at the same concurrency (records/s; MB/s of values)\n"
      "  %-14s %9s %9s %12s %8s %12s %8s %7s\n",
      kMaxInFlight, "batching", "rec/batch", "in flight", "broker rec/s",
      "MB/s", "engine rec/s", "MB/s", "ratio");
  for (const Comparison& c : comparisons) {
    absl::StrAppendFormat(
        &out, "  %-14s %9.1f %9.2f %12.0f %8.1f %12.0f %8.1f %6.2fx\n",
        c.setup.name, c.broker.records_per_batch, c.broker.requests_in_flight,
        c.broker.records_per_s, c.broker.mb_per_s, c.engine_records_per_s,
        c.engine_mb_per_s(), c.ratio());
  }
  return out;
}

std::string RenderJson(const std::vector<Comparison>& comparisons) {
  std::string out = "{\"rows\": [";
  for (size_t i = 0; i < comparisons.size(); ++i) {
    const Comparison& c = comparisons[i];
    absl::StrAppendFormat(
        &out,
        "%s{\"producer\": \"%s\", \"records_per_batch\": %.1f, "
        "\"requests_in_flight\": %.2f, \"broker_records_per_s\": %.0f, "
        "\"broker_mb_per_s\": %.1f, \"engine_records_per_batch\": %d, "
        "\"engine_producers\": %d, \"engine_records_per_s\": %.0f, "
        "\"engine_mb_per_s\": %.1f, \"ratio\": %.3f}",
        i == 0 ? "" : ", ", c.setup.name, c.broker.records_per_batch,
        c.broker.requests_in_flight, c.broker.records_per_s, c.broker.mb_per_s,
        c.engine_records_per_batch, c.engine_producers, c.engine_records_per_s,
        c.engine_mb_per_s(), c.ratio());
  }
  return out + "]}\n";
}

int Main() {
  const std::string broker_binary = absl::GetFlag(FLAGS_broker);
  const std::string format = absl::GetFlag(FLAGS_format);
  if (broker_binary.empty() || (format != "table" && format != "json")) {
    std::cerr << "broker_bench: --broker=PATH is required; --format is "
                 "table or json\n";
    return 2;
  }
  const absl::Duration window = absl::Seconds(absl::GetFlag(FLAGS_seconds));
  const absl::Duration warmup =
      absl::Seconds(absl::GetFlag(FLAGS_warmup_seconds));
  const std::filesystem::path root =
      std::filesystem::path(absl::GetFlag(FLAGS_data_dir)) /
      absl::StrCat("kaas-broker-bench-", getpid());
  std::error_code error;
  std::filesystem::create_directories(root, error);
  if (error) {
    std::cerr << "broker_bench: cannot create " << root << ": "
              << error.message() << "\n";
    return 1;
  }
  std::vector<Comparison> comparisons;
  for (const ProducerSetup& setup : {ProducerSetup{"default", std::nullopt},
                                     ProducerSetup{"16 per batch", 16}}) {
    comparisons.push_back(Compare(setup, broker_binary, root, warmup, window));
  }
  std::filesystem::remove_all(root, error);
  std::cout << (format == "json" ? RenderJson(comparisons)
                                 : RenderTable(comparisons))
            << std::flush;
  bool ok = true;
  for (const Comparison& c : comparisons) {
    for (const std::optional<std::string>& failure :
         {c.broker.error, c.engine_error}) {
      if (failure.has_value()) {
        std::cerr << "broker_bench: " << c.setup.name << ": " << *failure
                  << "\n";
        ok = false;
      }
    }
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace kaas::broker

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return kaas::broker::Main();
}
