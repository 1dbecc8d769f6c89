// File: examples/broker/broker_main.cc
//
// kaas-broker: a single-node Kafka broker keeping every partition in a
// kaas-storage engine. See examples/broker/README.md.
//
//   kaas-broker [--config=server.properties] [--key=value ...]
//
// Settings are Kafka's (broker_settings.h). Prints where it listens, its
// data dir and leader epoch, then serves until SIGTERM or SIGINT: it stops
// accepting, closes connections, drains the engine (every append waiting
// for durability completes or fails), relinquishes every partition and
// exits 0.

#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "examples/broker/broker.h"
#include "examples/broker/broker_epoch.h"
#include "examples/broker/broker_settings.h"
#include "examples/broker/server.h"
#include "glog/logging.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/memory_engine.h"

namespace kaas::broker {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << "kaas-broker: " << status << std::endl;
  return 1;
}

int Run(const std::vector<std::string>& args) {
  absl::StatusOr<BrokerSettings> settings = ParseBrokerSettings(args);
  if (!settings.ok()) return Fail(settings.status());

  PartitionConfig partition_config;
  partition_config.retention_ms =
      settings->retention_ms.has_value()
          ? std::optional<absl::Duration>(
                absl::Milliseconds(*settings->retention_ms))
          : std::nullopt;
  partition_config.segment_bytes = settings->segment_bytes;

  std::unique_ptr<StorageEngine> engine;
  std::vector<TopicPartition> existing;
  int64_t epoch = 1;
  if (settings->memory_engine) {
    MemoryEngine::Options options;
    options.partition_config = partition_config;
    engine = std::make_unique<MemoryEngine>(std::move(options));
  } else {
    DiskEngine::Options options;
    options.data_dir = settings->data_dir;
    options.format_log_dirs = settings->format_log_dirs;
    options.default_config = partition_config;
    absl::StatusOr<std::unique_ptr<DiskEngine>> disk =
        DiskEngine::Create(std::move(options));
    if (!disk.ok()) return Fail(disk.status());
    existing = (*disk)->PartitionsOnDisk();
    absl::StatusOr<int64_t> next = NextBrokerEpoch(settings->data_dir);
    if (!next.ok()) return Fail(next.status());
    epoch = *next;
    engine = *std::move(disk);
  }

  BrokerConfig config;
  config.advertised_host = settings->advertised_host;
  config.node_id = settings->node_id;
  config.num_partitions = settings->num_partitions;
  config.auto_create_topics = settings->auto_create_topics;
  config.leader_epoch = epoch;
  config.group_initial_rebalance_delay_ms =
      settings->group_initial_rebalance_delay_ms;
  if (!settings->memory_engine) config.state_dir = settings->data_dir;

  ServerOptions server_options;
  server_options.host = settings->listen_host;
  server_options.port = settings->listen_port;
  server_options.max_request_bytes = settings->max_request_bytes;
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Listen(server_options);
  if (!server.ok()) return Fail(server.status());
  // Listening on port 0 advertises the port the kernel chose.
  config.advertised_port = settings->advertised_port != 0
                               ? settings->advertised_port
                               : (*server)->port();

  absl::StatusOr<std::unique_ptr<Broker>> broker =
      Broker::Create(engine.get(), config, existing);
  if (!broker.ok()) return Fail(broker.status());

  std::cout << "kaas-broker: listening on " << settings->listen_host << ":"
            << (*server)->port() << " (advertised " << config.advertised_host
            << ":" << config.advertised_port << "), "
            << (settings->memory_engine ? std::string("memory engine")
                                        : "data dir " + settings->data_dir)
            << ", leader epoch " << epoch << ", " << existing.size()
            << " partitions" << std::endl;

  // SIGTERM and SIGINT are taken by one thread (blocked in all others).
  std::thread signals([&server] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int signal = 0;
    sigwait(&set, &signal);
    LOG(INFO) << "signal " << signal << ": stopping";
    (*server)->Stop();
  });
  (*server)->Run(broker->get());
  signals.join();

  absl::Status drained = engine->Drain();
  if (!drained.ok()) LOG(ERROR) << "drain: " << drained;
  broker->reset();
  engine.reset();
  std::cout << "kaas-broker: stopped" << std::endl;
  return drained.ok() ? 0 : 1;
}

}  // namespace
}  // namespace kaas::broker

int main(int argc, char** argv) {
  // Before any thread starts, so that every thread inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  return kaas::broker::Run(std::vector<std::string>(argv + 1, argv + argc));
}
