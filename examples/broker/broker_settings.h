// File: examples/broker/broker_settings.h
//
// kaas-broker's settings, named as Kafka names them where Kafka has the
// setting. They come from a server.properties-style file (--config=FILE:
// key=value lines, '#' comments) and from --key=value arguments, which win.
//
//   listeners                  PLAINTEXT://127.0.0.1:9092 (one listener)
//   advertised.listeners       default: listeners
//   log.dirs (or log.dir)      ./kaas-data (one dir)
//   node.id (or broker.id)     1
//   num.partitions             1
//   auto.create.topics.enable  true
//   log.retention.ms           604800000 (-1: keep forever)
//   log.segment.bytes          1073741824
//   socket.request.max.bytes   104857600
//   group.initial.rebalance.delay.ms  3000
//   engine                     disk | memory (kaas-broker's own)
//   format.log.dirs            false (kaas-broker's own): format a log dir
//                              that exists but is empty and unformatted
//                              (without it such a dir is refused: an
//                              unmounted volume looks like that)
//
// Thread-safety: pure functions.

#ifndef KAAS_EXAMPLES_BROKER_BROKER_SETTINGS_H_
#define KAAS_EXAMPLES_BROKER_BROKER_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kaas::broker {

struct BrokerSettings {
  std::string listen_host = "127.0.0.1";
  uint16_t listen_port = 9092;
  std::string advertised_host = "127.0.0.1";
  uint16_t advertised_port = 9092;
  std::string data_dir = "./kaas-data";
  int32_t node_id = 1;
  int32_t num_partitions = 1;
  bool auto_create_topics = true;
  std::optional<int64_t> retention_ms = int64_t{604800000};
  uint64_t segment_bytes = uint64_t{1} << 30;
  int32_t max_request_bytes = 104857600;
  int32_t group_initial_rebalance_delay_ms = 3000;
  bool memory_engine = false;
  bool format_log_dirs = false;
};

// Parses `args` (argv without the program name). Errors: kInvalidArgument
// naming the setting (unknown key, bad value, unreadable --config file).
absl::StatusOr<BrokerSettings> ParseBrokerSettings(
    const std::vector<std::string>& args);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_BROKER_SETTINGS_H_
