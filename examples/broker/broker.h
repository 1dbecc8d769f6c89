// File: examples/broker/broker.h
//
// The request handling of kaas-broker: Kafka requests in, engine calls,
// Kafka responses out. The network side (server.h) hands each request frame
// to Handle() and writes what comes back; everything between is here.
//
// Every partition of every topic is led by this broker at one leader epoch,
// chosen at start (broker_epoch.h makes it grow across restarts). Topics are
// what the engine has on disk at start plus what Metadata or Produce
// auto-create (num.partitions partitions each).
//
// Served: ApiVersions 0-3, Metadata 0-8, Produce 3-8 (acks 0, 1, -1; a
// response for acks=-1 waits for durability without holding a thread),
// Fetch 4-11 (both isolation levels; an empty fetch waits up to max_wait_ms,
// woken by durable appends), ListOffsets 1-5, OffsetForLeaderEpoch 0-3,
// DeleteRecords 0-1, CreateTopics 0-4 (no topic configs yet), DeleteTopics
// 0-3, InitProducerId 0-1 (idempotent producers; ids never reused,
// producer_ids.h; no transactional ids yet). Other API keys and versions
// close the connection, as Kafka does, except that an unsupported
// ApiVersions version is answered in v0 form with UNSUPPORTED_VERSION and
// the supported ranges.
//
// Threads: NewSession() and Handle() may be called from any thread; Handle()
// does the engine work
// (file I/O, fsyncs when a topic is created) on the broker's handler pool,
// never on the caller's thread, and calls the responder from a handler
// thread, an engine I/O thread (durability) or a timer.

#ifndef KAAS_EXAMPLES_BROKER_BROKER_H_
#define KAAS_EXAMPLES_BROKER_BROKER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "examples/broker/response_frame.h"
#include "storage/common/api_types.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {

struct BrokerConfig {
  // What Metadata advertises as this broker's address.
  std::string advertised_host = "127.0.0.1";
  int32_t advertised_port = 9092;
  int32_t node_id = 1;
  std::string cluster_id = "kaas-storage";
  // Kafka's num.partitions and auto.create.topics.enable.
  int32_t num_partitions = 1;
  bool auto_create_topics = true;
  // The epoch every partition is led at.
  int64_t leader_epoch = 1;
  // Where the producer-id block is kept (producer_ids.h); empty: in memory.
  std::string state_dir;
  // Kafka's group.initial.rebalance.delay.ms.
  int32_t group_initial_rebalance_delay_ms = 3000;
  // Threads doing engine work.
  int handler_threads = 4;
  // A fetch waits at most this long for data, whatever its max_wait_ms
  // (clients ask for 500 ms by default; this bounds a hostile request).
  int32_t max_fetch_wait_ms = 60000;
};

class Broker {
 public:
  // The whole response frame (size prefix included; fetched records as
  // regions of the segment files: response_frame.h); nullopt: the request
  // gets no response (Produce with acks=0); an error: close the connection
  // (malformed request, unknown API key or version).
  using Responder =
      absl::AnyInvocable<void(absl::StatusOr<std::optional<ResponseFrame>>) &&>;

  // Leads every partition in `existing` at config.leader_epoch. `engine` is
  // not owned and must outlive the broker.
  static absl::StatusOr<std::unique_ptr<Broker>> Create(
      StorageEngine* engine, BrokerConfig config,
      const std::vector<TopicPartition>& existing);

  // Completes pending requests (fetches answer what they have; produces
  // waiting for durability are answered when it comes) and joins the
  // handler pool.
  ~Broker();

  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // One client connection's requests. They are handled one after another,
  // in arrival order (so pipelined appends keep their order); their
  // responses may complete in any order (the server writes them in order).
  class Session;
  std::shared_ptr<Session> NewSession();

  // Handles one request frame (header and body, without the size prefix),
  // which the broker copies; calls `respond` exactly once.
  void Handle(const std::shared_ptr<Session>& session, absl::string_view frame,
              Responder respond);

 private:
  class Impl;
  explicit Broker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_BROKER_H_
