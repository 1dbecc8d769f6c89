// File: examples/broker/server.h
//
// The network side of kaas-broker: a TCP listener and its connections on
// one event-loop thread (Asio). Each connection reads size-prefixed request
// frames, hands them to the Broker (broker.h) without waiting for the
// answers, and writes the responses back in request order, as the Kafka
// protocol requires of pipelined requests. A frame whose size is not
// positive or exceeds socket.request.max.bytes closes the connection, as
// does any request the broker refuses (malformed, unknown API).
//
// Fetched records go out as the engine's record regions (response_frame.h):
// two transfer threads send them with sendfile, so the loop never reads a
// segment file. Run() therefore ignores SIGPIPE for the process (a peer
// that closes mid-send fails the send with EPIPE instead).
//
// Threads: Run() runs the event loop on the calling thread; Stop() may be
// called from any thread (a signal watcher) and makes Run() return once
// every connection is closed. No file I/O or fsync ever runs on the loop.

#ifndef KAAS_EXAMPLES_BROKER_SERVER_H_
#define KAAS_EXAMPLES_BROKER_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "examples/broker/broker.h"

namespace kaas::broker {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9092;  // 0: any free port (see Server::port())
  int32_t max_request_bytes = 100 * 1024 * 1024;  // socket.request.max.bytes
};

class Server {
 public:
  // Binds and listens (connections wait in the backlog until Run).
  static absl::StatusOr<std::unique_ptr<Server>> Listen(
      const ServerOptions& options);
  ~Server();

  // The bound port.
  uint16_t port() const;

  // Serves connections with `broker` (not owned; must outlive Run) until
  // Stop().
  void Run(Broker* broker);
  void Stop();

 private:
  class Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_SERVER_H_
