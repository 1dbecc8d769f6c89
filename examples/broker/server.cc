// File: examples/broker/server.cc

#include "examples/broker/server.h"

#include <signal.h>

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

// Threads that send fetched records from the segment files to sockets.
constexpr int kTransferThreads = 2;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, asio::thread_pool* transfer_pool,
             Broker* broker, int32_t max_request_bytes,
             absl::flat_hash_set<std::shared_ptr<Connection>>* live)
      : socket_(std::move(socket)),
        transfer_pool_(*transfer_pool),
        broker_(*broker),
        session_(broker->NewSession()),
        max_request_bytes_(max_request_bytes),
        live_(*live) {}

  void CloseSocket() {
    asio::error_code ignored;
    socket_.close(ignored);
  }

  void Start() {
    // Record regions are sent on the descriptor itself: it must not block
    // the io thread when the client reads slowly.
    asio::error_code ignored;
    socket_.native_non_blocking(true, ignored);
    ReadSize();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    asio::error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    // A transfer thread may be sending on the descriptor: it is closed
    // when that send returns (SendRegions), never under it, so that its
    // number is not reused meanwhile. The shutdown makes the send end.
    if (!transferring_) CloseSocket();
    live_.erase(shared_from_this());
  }

 private:
  // A response slot, in request order.
  struct Slot {
    bool ready = false;
    absl::StatusOr<std::optional<ResponseFrame>> response;
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
              [self, sequence, executor](
                  absl::StatusOr<std::optional<ResponseFrame>> response) {
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
                absl::StatusOr<std::optional<ResponseFrame>> response) {
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

  // Writes the queued frames in order: each frame's bytes with asio, its
  // record regions with RecordRegions::SendTo (sendfile) on the
  // non-blocking socket, waiting for it to be writable when it is full.
  void Write() {
    while (!writing_ && !writes_.empty() && !closed_) {
      const ResponseFrame& frame = writes_.front();
      const bool at_splice = next_splice_ < frame.splices.size();
      const size_t bytes_end =
          at_splice ? frame.splices[next_splice_].at : frame.bytes.size();
      auto self = shared_from_this();
      if (bytes_written_ < bytes_end) {
        writing_ = true;
        asio::async_write(
            socket_,
            asio::buffer(frame.bytes.data() + bytes_written_,
                         bytes_end - bytes_written_),
            [this, self](const asio::error_code& error, size_t written) {
              writing_ = false;
              if (error) return Close();
              bytes_written_ += written;
              Write();
            });
        return;
      }
      if (at_splice) {
        if (region_bytes_written_ ==
            frame.splices[next_splice_].regions.size()) {
          ++next_splice_;
          region_bytes_written_ = 0;
          continue;
        }
        SendRegions(frame.splices[next_splice_].regions);
        return;
      }
      // The frame is written: its regions (and their files) go.
      writes_.pop_front();
      next_splice_ = 0;
      bytes_written_ = 0;
    }
  }

  // Sends what the socket takes of `regions` (from region_bytes_written_)
  // on a transfer thread: sendfile reads the segment files, which may not
  // be cached, and the loop thread does no file I/O. Back on the loop, it
  // waits for the socket to be writable if the regions did not all go.
  void SendRegions(const RecordRegions& regions) {
    writing_ = true;
    transferring_ = true;
    auto self = shared_from_this();
    // The io_context keeps running (Run does not return) while this runs.
    auto work = asio::make_work_guard(socket_.get_executor());
    asio::post(transfer_pool_, [this, self, work, &regions,
                                fd = socket_.native_handle(),
                                from = region_bytes_written_]() {
      absl::StatusOr<uint64_t> sent = regions.SendTo(fd, from);
      asio::post(work.get_executor(), [this, self, sent = std::move(sent)] {
        transferring_ = false;
        writing_ = false;
        if (closed_) return CloseSocket();  // deferred while sending
        if (!sent.ok()) {
          // The frame is cut short: the connection cannot continue.
          LOG(WARNING) << "closing a connection: sending fetched records: "
                       << sent.status();
          return Close();
        }
        region_bytes_written_ += *sent;
        const ResponseFrame& frame = writes_.front();
        if (region_bytes_written_ <
            frame.splices[next_splice_].regions.size()) {
          writing_ = true;
          socket_.async_wait(asio::ip::tcp::socket::wait_write,
                             [this, self](const asio::error_code& error) {
                               writing_ = false;
                               if (error) return Close();
                               Write();
                             });
          return;
        }
        Write();
      });
    });
  }

  asio::ip::tcp::socket socket_;
  asio::thread_pool& transfer_pool_;
  Broker& broker_;
  const std::shared_ptr<Broker::Session> session_;
  const int32_t max_request_bytes_;
  absl::flat_hash_set<std::shared_ptr<Connection>>& live_;
  uint8_t size_bytes_[4];
  std::string frame_;
  bool reading_ = false;
  bool writing_ = false;
  bool transferring_ = false;  // SendRegions is sending on the descriptor
  bool closed_ = false;
  std::deque<Slot> slots_;
  uint64_t first_sequence_ = 0;  // of slots_.front()
  uint64_t next_sequence_ = 0;
  std::deque<ResponseFrame> writes_;
  // Progress through writes_.front(): its bytes written so far, the splice
  // that comes next, and the bytes of that splice's regions already sent.
  size_t bytes_written_ = 0;
  size_t next_splice_ = 0;
  uint64_t region_bytes_written_ = 0;
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
    transfer_pool_.join();  // their completions are posted to io_
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
    // A peer that closes while fetched records are sent to it must fail the
    // send (EPIPE), not kill the process: sendfile has no MSG_NOSIGNAL.
    ::signal(SIGPIPE, SIG_IGN);
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
              std::move(socket), &transfer_pool_, broker_,
              options_.max_request_bytes, &live_);
          live_.insert(connection);
          connection->Start();
          Accept();
        });
  }

  Broker* broker_ = nullptr;  // set by Run
  const ServerOptions options_;
  asio::io_context io_;
  // Sends fetched records (sendfile) off the loop thread.
  asio::thread_pool transfer_pool_{kTransferThreads};
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
