// File: examples/broker/broker_settings.cc

#include "examples/broker/broker_settings.h"

#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace kaas::broker {
namespace {

absl::Status Bad(absl::string_view key, absl::string_view value,
                 absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("setting ", key, "=", value, ": ", why));
}

// "PLAINTEXT://host:port" (or "host:port").
absl::Status ParseListener(absl::string_view key, absl::string_view value,
                           std::string* host, uint16_t* port) {
  absl::string_view rest = value;
  if (absl::StrContains(rest, ",")) {
    return Bad(key, value, "only one listener is supported");
  }
  if (absl::StrContains(rest, "://")) {
    if (!absl::ConsumePrefix(&rest, "PLAINTEXT://")) {
      return Bad(key, value, "only PLAINTEXT listeners are supported");
    }
  }
  const size_t colon = rest.rfind(':');
  uint32_t parsed = 0;
  if (colon == absl::string_view::npos ||
      !absl::SimpleAtoi(rest.substr(colon + 1), &parsed) || parsed > 65535) {
    return Bad(key, value, "expected PLAINTEXT://HOST:PORT");
  }
  *host = std::string(rest.substr(0, colon));
  if (host->empty()) *host = "0.0.0.0";
  *port = static_cast<uint16_t>(parsed);
  return absl::OkStatus();
}

absl::Status ReadPropertiesFile(const std::string& path,
                                std::map<std::string, std::string>* out) {
  std::ifstream file(path);
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("--config: cannot read ", path));
  }
  std::string line;
  while (std::getline(file, line)) {
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#' || text[0] == '!') continue;
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(text, absl::MaxSplits('=', 1));
    (*out)[std::string(absl::StripAsciiWhitespace(kv.first))] =
        std::string(absl::StripAsciiWhitespace(kv.second));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BrokerSettings> ParseBrokerSettings(
    const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  std::map<std::string, std::string> from_args;
  for (const std::string& arg : args) {
    absl::string_view text = arg;
    if (!absl::ConsumePrefix(&text, "--") || !absl::StrContains(text, "=")) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected --key=value, got ", arg));
    }
    std::pair<std::string, std::string> kv =
        absl::StrSplit(text, absl::MaxSplits('=', 1));
    if (kv.first == "config") {
      absl::Status status = ReadPropertiesFile(kv.second, &values);
      if (!status.ok()) return status;
    } else {
      from_args[kv.first] = kv.second;
    }
  }
  for (auto& [key, value] : from_args) values[key] = value;

  BrokerSettings settings;
  bool advertised = false;
  for (const auto& [key, value] : values) {
    absl::Status status;
    if (key == "listeners") {
      status = ParseListener(key, value, &settings.listen_host,
                             &settings.listen_port);
    } else if (key == "advertised.listeners") {
      status = ParseListener(key, value, &settings.advertised_host,
                             &settings.advertised_port);
      advertised = true;
    } else if (key == "log.dirs" || key == "log.dir") {
      if (absl::StrContains(value, ",")) {
        status = Bad(key, value, "only one log dir is supported");
      }
      settings.data_dir = value;
    } else if (key == "node.id" || key == "broker.id") {
      if (!absl::SimpleAtoi(value, &settings.node_id) || settings.node_id < 0) {
        status = Bad(key, value, "expected a non-negative integer");
      }
    } else if (key == "num.partitions") {
      if (!absl::SimpleAtoi(value, &settings.num_partitions) ||
          settings.num_partitions < 1 || settings.num_partitions > 100000) {
        status = Bad(key, value, "expected 1..100000");
      }
    } else if (key == "auto.create.topics.enable") {
      if (!absl::SimpleAtob(value, &settings.auto_create_topics)) {
        status = Bad(key, value, "expected true or false");
      }
    } else if (key == "log.retention.ms") {
      int64_t ms = 0;
      if (!absl::SimpleAtoi(value, &ms) || ms < -1 || ms == 0) {
        status = Bad(key, value, "expected -1 or a positive integer");
      } else if (ms == -1) {
        settings.retention_ms.reset();
      } else {
        settings.retention_ms = ms;
      }
    } else if (key == "log.segment.bytes") {
      if (!absl::SimpleAtoi(value, &settings.segment_bytes) ||
          settings.segment_bytes < 1024) {
        status = Bad(key, value, "expected an integer >= 1024");
      }
    } else if (key == "socket.request.max.bytes") {
      if (!absl::SimpleAtoi(value, &settings.max_request_bytes) ||
          settings.max_request_bytes < 1024) {
        status = Bad(key, value, "expected an integer >= 1024");
      }
    } else if (key == "group.initial.rebalance.delay.ms") {
      if (!absl::SimpleAtoi(value,
                            &settings.group_initial_rebalance_delay_ms) ||
          settings.group_initial_rebalance_delay_ms < 0) {
        status = Bad(key, value, "expected a non-negative integer");
      }
    } else if (key == "format.log.dirs") {
      if (!absl::SimpleAtob(value, &settings.format_log_dirs)) {
        status = Bad(key, value, "expected true or false");
      }
    } else if (key == "engine") {
      if (value != "disk" && value != "memory") {
        status = Bad(key, value, "expected disk or memory");
      }
      settings.memory_engine = value == "memory";
    } else {
      status =
          absl::InvalidArgumentError(absl::StrCat("unknown setting ", key));
    }
    if (!status.ok()) return status;
  }
  if (!advertised) {
    settings.advertised_host =
        settings.listen_host == "0.0.0.0" ? "127.0.0.1" : settings.listen_host;
    settings.advertised_port = settings.listen_port;
  }
  return settings;
}

}  // namespace kaas::broker
