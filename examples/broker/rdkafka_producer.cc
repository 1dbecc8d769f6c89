// File: examples/broker/rdkafka_producer.cc
//
// A test client on Debian's librdkafka: produces --count records ("value
// <i>", key "key <i>") to --topic with acks=all (idempotent unless
// --idempotent=false) and prints one line per delivery report as it comes:
//   delivered <i> <partition> <offset>
//   failed <i> <error name>
// kcat cannot say which records were acknowledged; this can, so a test can
// kill the broker mid-stream and check every acknowledged record afterwards
// (examples/broker/rdkafka_kill_test.sh).
//
//   rdkafka_producer --bootstrap=HOST:PORT --topic=T --count=N
//                    [--idempotent=true] [--message_timeout_ms=60000]

#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::string Flag(int argc, char** argv, const std::string& name,
                 const std::string& fallback) {
  const std::string prefix = "--" + name + "=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) {
      return argv[i] + prefix.size();
    }
  }
  return fallback;
}

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  const long index = reinterpret_cast<long>(message->_private);
  if (message->err) {
    std::printf("failed %ld %s\n", index, rd_kafka_err2name(message->err));
  } else {
    std::printf("delivered %ld %d %lld\n", index,
                static_cast<int>(message->partition),
                static_cast<long long>(message->offset));
  }
  std::fflush(stdout);
}

bool Set(rd_kafka_conf_t* conf, const char* name, const std::string& value) {
  char error[256];
  if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof(error)) !=
      RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "rdkafka_producer: %s: %s\n", name, error);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string bootstrap = Flag(argc, argv, "bootstrap", "");
  const std::string topic = Flag(argc, argv, "topic", "");
  const long count = std::atol(Flag(argc, argv, "count", "1000").c_str());
  if (bootstrap.empty() || topic.empty() || count < 1) {
    std::fprintf(stderr,
                 "usage: rdkafka_producer --bootstrap=HOST:PORT --topic=T "
                 "--count=N\n");
    return 2;
  }
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (!Set(conf, "bootstrap.servers", bootstrap) || !Set(conf, "acks", "all") ||
      !Set(conf, "enable.idempotence",
           Flag(argc, argv, "idempotent", "true")) ||
      !Set(conf, "message.timeout.ms",
           Flag(argc, argv, "message_timeout_ms", "60000")) ||
      !Set(conf, "linger.ms", "2") ||
      !Set(conf, "reconnect.backoff.max.ms", "200")) {
    return 2;
  }
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  char error[256];
  rd_kafka_t* producer =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (producer == nullptr) {
    std::fprintf(stderr, "rdkafka_producer: %s\n", error);
    return 2;
  }
  for (long i = 0; i < count; ++i) {
    const std::string key = "key " + std::to_string(i);
    const std::string value = "value " + std::to_string(i);
    while (true) {
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          producer, RD_KAFKA_V_TOPIC(topic.c_str()),
          RD_KAFKA_V_KEY(key.data(), key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(i)), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer, 100);  // delivery reports make room
        continue;
      }
      if (err) {
        std::fprintf(stderr, "rdkafka_producer: produce %ld: %s\n", i,
                     rd_kafka_err2str(err));
        return 1;
      }
      break;
    }
    rd_kafka_poll(producer, 0);
  }
  // Every record gets its report (delivered, or failed at its timeout).
  while (rd_kafka_outq_len(producer) > 0) rd_kafka_poll(producer, 100);
  const rd_kafka_resp_err_t fatal =
      rd_kafka_fatal_error(producer, error, sizeof(error));
  rd_kafka_destroy(producer);
  if (fatal) {
    std::fprintf(stderr, "rdkafka_producer: fatal: %s\n", error);
    return 1;
  }
  return 0;
}
