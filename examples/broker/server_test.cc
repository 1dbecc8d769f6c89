// The server writing fetched records from the segment files (sendfile on
// its transfer threads) to real sockets: a reader slower than the socket
// buffers, and a reader that goes away in the middle of a response.
#include "examples/broker/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/cord.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/broker.h"
#include "examples/broker/wire.h"
#include "fs/test_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

constexpr int64_t kEpoch = 1;
const TopicPartition kOrders0{"orders", 0};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DiskEngine::Options options;
    options.data_dir = dir_.path();
    options.format_log_dirs = true;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    ASSERT_OK(engine.status());
    engine_ = *std::move(engine);
    ASSERT_OK(engine_->CreatePartition(kOrders0));
    ASSERT_OK(engine_->TakeOver(kOrders0, kEpoch).status());
    BrokerConfig config;
    config.leader_epoch = kEpoch;
    absl::StatusOr<std::unique_ptr<Broker>> broker =
        Broker::Create(engine_.get(), config, {kOrders0});
    ASSERT_OK(broker.status());
    broker_ = *std::move(broker);
    ServerOptions server_options;
    server_options.port = 0;
    absl::StatusOr<std::unique_ptr<Server>> server =
        Server::Listen(server_options);
    ASSERT_OK(server.status());
    server_ = *std::move(server);
    loop_ = std::thread([this] { server_->Run(broker_.get()); });
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
    if (loop_.joinable()) loop_.join();
    server_.reset();
    broker_.reset();
    engine_.reset();
  }

  // Appends `count` batches of about 16 KiB; returns the log's bytes.
  std::string Fill(int count) {
    for (int i = 0; i < count; ++i) {
      const std::string batch =
          test::BatchBuilder().AddRandomRecords(4, 4000, /*seed=*/i).Build();
      EXPECT_OK(
          engine_->AppendAndWait(kOrders0, kEpoch, Acks::kAll, batch).status());
    }
    absl::StatusOr<ReadResult> read = engine_->Read(
        kOrders0, 0, size_t{64} << 20, Isolation::kReadUncommitted);
    EXPECT_OK(read.status());
    return read.ok() ? std::string(read->records) : "";
  }

  // A connected client whose receive buffer is `receive_buffer` bytes.
  int Connect(int receive_buffer) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                           sizeof(receive_buffer)),
              0);
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(server_->port());
    EXPECT_EQ(
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
        0);
    return fd;
  }

  // Sends a Fetch v5 of the whole partition (max_bytes 64 MiB).
  static void SendFetch(int fd) {
    std::string frame;
    WireWriter writer(&frame);
    writer.Int32(0);  // size, patched below
    writer.Int16(kFetch);
    writer.Int16(5);
    writer.Int32(7);  // correlation id
    writer.String("server-test");
    writer.Int32(-1);  // replica_id
    writer.Int32(0);   // max_wait_ms
    writer.Int32(1);   // min_bytes
    writer.Int32(64 << 20);
    writer.Int8(0);  // isolation_level
    writer.ArrayLength(1);
    writer.String(kOrders0.topic);
    writer.ArrayLength(1);
    writer.Int32(kOrders0.partition);
    writer.Int64(0);   // fetch_offset
    writer.Int64(-1);  // log_start_offset
    writer.Int32(64 << 20);
    writer.PatchInt32(0, static_cast<int32_t>(frame.size() - 4));
    ASSERT_EQ(::write(fd, frame.data(), frame.size()),
              static_cast<ssize_t>(frame.size()));
  }

  // Reads exactly `n` bytes in small reads (a slow reader).
  static std::string ReadSlowly(int fd, size_t n) {
    std::string out;
    char buffer[4096];
    while (out.size() < n) {
      const ssize_t got =
          ::read(fd, buffer, std::min(sizeof(buffer), n - out.size()));
      if (got <= 0) break;
      out.append(buffer, static_cast<size_t>(got));
    }
    return out;
  }

  // The records of a Fetch v5 response body of one partition.
  static std::string RecordsOf(const std::string& body) {
    WireReader reader(body);
    (void)*reader.Int32("correlation_id");
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("index");
    EXPECT_EQ(*reader.Int16("error_code"), 0);
    (void)*reader.Int64("high_watermark");
    (void)*reader.Int64("last_stable_offset");
    (void)*reader.Int64("log_start_offset");
    (void)*reader.ArrayLength("aborted", 0, /*nullable=*/true);
    std::optional<absl::string_view> records = *reader.NullableBytes("records");
    EXPECT_EQ(reader.remaining(), 0u);
    return records.has_value() ? std::string(*records) : "";
  }

  std::string FetchWhole(int receive_buffer) {
    const int fd = Connect(receive_buffer);
    SendFetch(fd);
    const std::string size_bytes = ReadSlowly(fd, 4);
    EXPECT_EQ(size_bytes.size(), 4u);
    WireReader size_reader(size_bytes);
    const int32_t size = *size_reader.Int32("size");
    const std::string body = ReadSlowly(fd, static_cast<size_t>(size));
    EXPECT_EQ(body.size(), static_cast<size_t>(size));
    ::close(fd);
    return RecordsOf(body);
  }

  fs::ScopedTempDir dir_;
  std::unique_ptr<DiskEngine> engine_;
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<Server> server_;
  std::thread loop_;
};

// 8 MiB of records against a 4 KiB receive buffer: the socket fills many
// times over, and each time the send resumes where it stopped.
TEST_F(ServerTest, AFetchLargerThanTheSocketBuffersArrivesWhole) {
  const std::string log = Fill(540);
  ASSERT_GT(log.size(), size_t{8} << 20);
  EXPECT_EQ(FetchWhole(4096), log);
}

// A client that goes away in the middle of a response ends only its own
// connection (the send fails with EPIPE, not a signal); the next one is
// served whole.
TEST_F(ServerTest, AReaderThatLeavesMidResponseEndsOnlyItsConnection) {
  const std::string log = Fill(256);
  for (int i = 0; i < 3; ++i) {
    const int fd = Connect(4096);
    SendFetch(fd);
    EXPECT_EQ(ReadSlowly(fd, 100 * 1024).size(), 100u * 1024);
    ::close(fd);
  }
  EXPECT_EQ(FetchWhole(1 << 20), log);
}

}  // namespace
}  // namespace kaas::broker
