// libFuzzer target: a request frame as a client sends it (header and body,
// without the size prefix), through the whole request path of the broker
// over the memory engine. Beyond "no crash, no hang, no allocation sized by
// an untrusted field" (ASan's allocation limit), it checks what a client
// relies on: each request gets exactly one answer, which is either "close
// the connection" (kInvalidArgument), no response (acks=0 only), or a frame
// whose size prefix matches its length and which carries the request's
// correlation id.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "examples/broker/broker.h"
#include "glog/logging.h"
#include "storage/engine/memory_engine.h"
#include "storage/engine/storage_engine.h"

namespace kaas::broker {
namespace {

uint32_t BigEndian32(const char* p) {
  return (uint32_t{static_cast<uint8_t>(p[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(p[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(p[2])} << 8) |
         uint32_t{static_cast<uint8_t>(p[3])};
}

std::unique_ptr<Broker> NewBroker(StorageEngine* engine) {
  BrokerConfig config;
  config.handler_threads = 1;
  config.max_fetch_wait_ms = 10;
  config.group_initial_rebalance_delay_ms = 0;
  absl::StatusOr<std::unique_ptr<Broker>> created =
      Broker::Create(engine, config, {});
  CHECK(created.ok()) << created.status();
  return *std::move(created);
}

// Whether the frame is a consumer-group API (keys 8-16), whose JoinGroup
// and SyncGroup may wait for other members for as long as the request's
// rebalance timeout says.
bool IsGroupApi(const std::string& frame) {
  return frame.size() >= 2 && frame[0] == 0 && frame[1] >= 8 && frame[1] <= 16;
}

void FuzzRequest(const std::string& frame) {
  static MemoryEngine* engine = new MemoryEngine();
  static Broker* shared_broker = NewBroker(engine).release();
  // A group request gets a broker of its own, whose destruction answers
  // whatever still waits (NOT_COORDINATOR); others share one broker.
  std::unique_ptr<MemoryEngine> own_engine;
  std::unique_ptr<Broker> own_broker;
  Broker* broker = shared_broker;
  if (IsGroupApi(frame)) {
    own_engine = std::make_unique<MemoryEngine>();
    own_broker = NewBroker(own_engine.get());
    broker = own_broker.get();
  }
  // A fresh session per input: no input waits behind another.
  std::shared_ptr<Broker::Session> session = broker->NewSession();
  absl::Notification done;
  absl::StatusOr<std::optional<ResponseFrame>> reply;
  int answers = 0;
  broker->Handle(session, frame,
                 [&](absl::StatusOr<std::optional<ResponseFrame>> r) {
                   ++answers;
                   reply = std::move(r);
                   done.Notify();
                 });
  own_broker.reset();
  // A fetch waits at most max_fetch_wait_ms (10 ms here) for an append.
  CHECK(done.WaitForNotificationWithTimeout(absl::Minutes(5)));
  CHECK_EQ(answers, 1);
  if (!reply.ok()) {
    CHECK(reply.status().code() == absl::StatusCode::kInvalidArgument)
        << reply.status();
    return;
  }
  if (!reply->has_value()) {
    // Only a produce (api key 0) with acks=0 gets no response.
    CHECK(frame.size() >= 2 && frame[0] == 0 && frame[1] == 0);
    return;
  }
  absl::StatusOr<std::string> flattened = (*reply)->Flatten();
  CHECK(flattened.ok()) << flattened.status();
  const std::string& response = *flattened;
  CHECK_GE(response.size(), 8u);
  CHECK_EQ(BigEndian32(response.data()), response.size() - 4);
  CHECK_GE(frame.size(), 8u);
  CHECK_EQ(BigEndian32(response.data() + 4), BigEndian32(frame.data() + 4))
      << "correlation id";
}

}  // namespace
}  // namespace kaas::broker

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kaas::broker::FuzzRequest(
      std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
