// File: examples/broker/server.cc

#include "examples/broker/server.h"

#include <asio.hpp>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace kaas::broker {
namespace {

// Requests read ahead of their responses on one connection before reading
// pauses (librdkafka pipelines 5 by default).
constexpr size_t kMaxInFlight = 64;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, Broker* broker,
             int32_t max_request_bytes,
             absl::flat_hash_set<std::shared_ptr<Connection>>* live)
      : socket_(std::move(socket)),
        broker_(*broker),
        session_(broker->NewSession()),
        max_request_bytes_(max_request_bytes),
        live_(*live) {}

  void Start() { ReadSize(); }

  void Close() {
    if (closed_) return;
    closed_ = true;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    live_.erase(shared_from_this());
  }

 private:
  // A response slot, in request order.
  struct Slot {
    bool ready = false;
    absl::StatusOr<std::optional<std::string>> response;
  };

  void ReadSize() {
    if (closed_ || reading_ || slots_.size() >= kMaxInFlight) return;
    reading_ = true;
    auto self = shared_from_this();
    asio::async_read(
        socket_, asio::buffer(size_bytes_),
        [this, self](const asio::error_code& error, size_t) {
          reading_ = false;
          if (error) return Close();
          const int32_t size = static_cast<int32_t>(
              (uint32_t{size_bytes_[0]} << 24) |
              (uint32_t{size_bytes_[1]} << 16) |
              (uint32_t{size_bytes_[2]} << 8) | uint32_t{size_bytes_[3]});
          if (size <= 0 || size > max_request_bytes_) {
            LOG(WARNING) << "closing a connection: request size " << size;
            return Close();
          }
          ReadBody(size);
        });
  }

  void ReadBody(int32_t size) {
    reading_ = true;
    frame_.resize(static_cast<size_t>(size));
    auto self = shared_from_this();
    asio::async_read(
        socket_, asio::buffer(frame_),
        [this, self](const asio::error_code& error, size_t) {
          reading_ = false;
          if (error) return Close();
          slots_.emplace_back();
          const uint64_t sequence = next_sequence_++;
          asio::any_io_executor executor = socket_.get_executor();
          broker_.Handle(
              session_, frame_,
              [self, sequence,
               executor](absl::StatusOr<std::optional<std::string>> response) {
                asio::post(
                    executor,
                    [self, sequence, response = std::move(response)]() mutable {
                      self->Complete(sequence, std::move(response));
                    });
              });
          ReadSize();
        });
  }

  void Complete(uint64_t sequence,
                absl::StatusOr<std::optional<std::string>> response) {
    if (closed_) return;
    Slot& slot = slots_[sequence - first_sequence_];
    slot.ready = true;
    slot.response = std::move(response);
    while (!slots_.empty() && slots_.front().ready) {
      Slot front = std::move(slots_.front());
      slots_.pop_front();
      ++first_sequence_;
      if (!front.response.ok()) {
        LOG(WARNING) << "closing a connection: " << front.response.status();
        return Close();
      }
      if (front.response->has_value()) {
        writes_.push_back(std::move(**front.response));
      }
    }
    Write();
    ReadSize();
  }

  void Write() {
    if (writing_ || writes_.empty() || closed_) return;
    writing_ = true;
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(writes_.front()),
                      [this, self](const asio::error_code& error, size_t) {
                        writing_ = false;
                        if (error) return Close();
                        writes_.pop_front();
                        Write();
                      });
  }

  asio::ip::tcp::socket socket_;
  Broker& broker_;
  const std::shared_ptr<Broker::Session> session_;
  const int32_t max_request_bytes_;
  absl::flat_hash_set<std::shared_ptr<Connection>>& live_;
  uint8_t size_bytes_[4];
  std::string frame_;
  bool reading_ = false;
  bool writing_ = false;
  bool closed_ = false;
  std::deque<Slot> slots_;
  uint64_t first_sequence_ = 0;  // of slots_.front()
  uint64_t next_sequence_ = 0;
  std::deque<std::string> writes_;
};

}  // namespace

class Server::Impl {
 public:
  explicit Impl(const ServerOptions& options)
      : options_(options), acceptor_(io_) {}

  // Responses posted after Run returned (the broker completing requests of
  // closed connections) still hold their connections: run them now, while
  // the socket services are alive, so each connection closes its socket
  // before the io_context goes.
  ~Impl() {
    io_.restart();
    io_.poll();
  }

  absl::Status Listen() {
    asio::error_code error;
    const asio::ip::address address =
        asio::ip::make_address(options_.host, error);
    if (error) {
      return absl::InvalidArgumentError(
          absl::StrCat("listener host ", options_.host, ": ", error.message()));
    }
    const asio::ip::tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol(), error);
    if (!error) acceptor_.set_option(asio::socket_base::reuse_address(true));
    if (!error) acceptor_.bind(endpoint, error);
    if (!error)
      acceptor_.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
      return absl::UnavailableError(absl::StrCat("listen on ", options_.host,
                                                 ":", options_.port, ": ",
                                                 error.message()));
    }
    return absl::OkStatus();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  void Run(Broker* broker) {
    broker_ = broker;
    Accept();
    io_.run();
  }

  void Stop() {
    asio::post(io_, [this] {
      asio::error_code ignored;
      acceptor_.close(ignored);
      // Close() erases from live_: iterate over a copy.
      std::vector<std::shared_ptr<Connection>> connections(live_.begin(),
                                                           live_.end());
      for (const std::shared_ptr<Connection>& c : connections) c->Close();
    });
  }

 private:
  void Accept() {
    acceptor_.async_accept(
        [this](const asio::error_code& error, asio::ip::tcp::socket socket) {
          if (error) {
            if (error != asio::error::operation_aborted) {
              LOG(WARNING) << "accept: " << error.message();
              Accept();
            }
            return;
          }
          socket.set_option(asio::ip::tcp::no_delay(true));
          auto connection = std::make_shared<Connection>(
              std::move(socket), broker_, options_.max_request_bytes, &live_);
          live_.insert(connection);
          connection->Start();
          Accept();
        });
  }

  Broker* broker_ = nullptr;  // set by Run
  const ServerOptions options_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  absl::flat_hash_set<std::shared_ptr<Connection>> live_;  // loop thread only
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() = default;

absl::StatusOr<std::unique_ptr<Server>> Server::Listen(
    const ServerOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  absl::Status status = impl->Listen();
  if (!status.ok()) return status;
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

uint16_t Server::port() const { return impl_->port(); }
void Server::Run(Broker* broker) { impl_->Run(broker); }
void Server::Stop() { impl_->Stop(); }

}  // namespace kaas::broker
