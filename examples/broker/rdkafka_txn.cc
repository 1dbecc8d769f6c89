// File: examples/broker/rdkafka_txn.cc
//
// A transactional test client on Debian's librdkafka (C API), for
// rdkafka_txn_test.sh. Two modes:
//
//   --mode=interleave --transactions=N --records=M
//       One transactional producer runs N transactions of M records each
//       to --topic; transaction i commits when i is even and aborts when it
//       is odd. Values are "txn <i> rec <j> commit|abort". Prints
//       "committed <i>" / "aborted <i>" as each ends; exits 0 if all ended
//       as asked. With --group=G each transaction i also sends the offset
//       10 * (i + 1) of --source_topic partition 0 for group G
//       (send_offsets_to_transaction), and at the end a consumer of G prints
//       "group_offset <offset>": what the group committed, which must be the
//       last committed transaction's.
//   --mode=fence
//       Producer A begins a transaction and produces (flushed, so the data
//       is in the log); producer B inits the same transactional.id; A's next
//       produce and commit must then fail with a fatal (fenced) error.
//       Prints "fenced <error name>" and B then commits one transaction
//       ("txn fence rec 0 commit"); exits 0 if A was fenced and B committed.
//
//   rdkafka_txn --bootstrap=HOST:PORT --topic=T --transactional_id=ID
//               --mode=interleave|fence [--transactions=N] [--records=M]
//               [--group=G --source_topic=S]
//
// Exit codes: 0 as described, 1 an unexpected outcome (on stderr), 2 usage.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kTimeoutMs = 60000;

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

bool Set(rd_kafka_conf_t* conf, const char* name, const std::string& value) {
  char error[256];
  if (rd_kafka_conf_set(conf, name, value.c_str(), error, sizeof(error)) !=
      RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "rdkafka_txn: %s: %s\n", name, error);
    return false;
  }
  return true;
}

rd_kafka_t* NewProducer(const std::string& bootstrap,
                        const std::string& transactional_id) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (!Set(conf, "bootstrap.servers", bootstrap) ||
      !Set(conf, "transactional.id", transactional_id) ||
      !Set(conf, "transaction.timeout.ms", "60000") ||
      !Set(conf, "linger.ms", "2") ||
      !Set(conf, "reconnect.backoff.max.ms", "200")) {
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  char error[256];
  rd_kafka_t* producer =
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
  if (producer == nullptr) std::fprintf(stderr, "rdkafka_txn: %s\n", error);
  return producer;
}

// Consumes `error`; true if it was none. Otherwise reports it under `what`.
bool Ok(rd_kafka_error_t* error, const char* what) {
  if (error == nullptr) return true;
  std::fprintf(stderr, "rdkafka_txn: %s: %s (%s)%s\n", what,
               rd_kafka_error_string(error), rd_kafka_error_name(error),
               rd_kafka_error_is_fatal(error) ? " [fatal]" : "");
  rd_kafka_error_destroy(error);
  return false;
}

rd_kafka_resp_err_t Produce(rd_kafka_t* producer, const std::string& topic,
                            const std::string& value) {
  return rd_kafka_producev(
      producer, RD_KAFKA_V_TOPIC(topic.c_str()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
}

// Sends offset `offset` of `source` partition 0 for `group` with the
// transaction in progress.
bool SendOffsets(rd_kafka_t* producer, const std::string& group,
                 const std::string& source, int64_t offset) {
  rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(offsets, source.c_str(), 0)->offset =
      offset;
  rd_kafka_consumer_group_metadata_t* metadata =
      rd_kafka_consumer_group_metadata_new(group.c_str());
  const bool ok = Ok(rd_kafka_send_offsets_to_transaction(producer, offsets,
                                                          metadata, kTimeoutMs),
                     "send_offsets_to_transaction");
  rd_kafka_consumer_group_metadata_destroy(metadata);
  rd_kafka_topic_partition_list_destroy(offsets);
  return ok;
}

// Prints "group_offset <offset>": `group`'s committed offset of `source`
// partition 0 (-1001, librdkafka's "invalid", if none).
bool PrintGroupOffset(const std::string& bootstrap, const std::string& group,
                      const std::string& source) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  if (!Set(conf, "bootstrap.servers", bootstrap) ||
      !Set(conf, "group.id", group)) {
    rd_kafka_conf_destroy(conf);
    return false;
  }
  char error[256];
  rd_kafka_t* consumer =
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
  if (consumer == nullptr) {
    std::fprintf(stderr, "rdkafka_txn: %s\n", error);
    return false;
  }
  rd_kafka_topic_partition_list_t* partitions =
      rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(partitions, source.c_str(), 0);
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer, partitions, kTimeoutMs);
  if (err) {
    std::fprintf(stderr, "rdkafka_txn: committed: %s\n", rd_kafka_err2str(err));
  } else {
    std::printf("group_offset %lld\n",
                static_cast<long long>(partitions->elems[0].offset));
  }
  rd_kafka_topic_partition_list_destroy(partitions);
  rd_kafka_destroy(consumer);
  return !err;
}

int Interleave(const std::string& bootstrap, const std::string& topic,
               const std::string& id, long transactions, long records,
               const std::string& group, const std::string& source) {
  rd_kafka_t* producer = NewProducer(bootstrap, id);
  if (producer == nullptr) return 2;
  if (!Ok(rd_kafka_init_transactions(producer, kTimeoutMs), "init")) return 1;
  for (long i = 0; i < transactions; ++i) {
    const bool commit = i % 2 == 0;
    if (!Ok(rd_kafka_begin_transaction(producer), "begin")) return 1;
    for (long j = 0; j < records; ++j) {
      const std::string value = "txn " + std::to_string(i) + " rec " +
                                std::to_string(j) +
                                (commit ? " commit" : " abort");
      if (rd_kafka_resp_err_t err = Produce(producer, topic, value); err) {
        std::fprintf(stderr, "rdkafka_txn: produce: %s\n",
                     rd_kafka_err2str(err));
        return 1;
      }
      rd_kafka_poll(producer, 0);
    }
    if (!group.empty() && !SendOffsets(producer, group, source, 10 * (i + 1))) {
      return 1;
    }
    if (commit) {
      if (!Ok(rd_kafka_commit_transaction(producer, kTimeoutMs), "commit")) {
        return 1;
      }
      std::printf("committed %ld\n", i);
    } else {
      // Delivered first: abort_transaction purges what is still queued, and
      // the aborted records must be in the log for the test to mean much.
      if (rd_kafka_flush(producer, kTimeoutMs) != 0) {
        std::fprintf(stderr, "rdkafka_txn: flush before abort timed out\n");
        return 1;
      }
      if (!Ok(rd_kafka_abort_transaction(producer, kTimeoutMs), "abort")) {
        return 1;
      }
      std::printf("aborted %ld\n", i);
    }
    std::fflush(stdout);
  }
  rd_kafka_destroy(producer);
  if (!group.empty() && !PrintGroupOffset(bootstrap, group, source)) return 1;
  return 0;
}

int Fence(const std::string& bootstrap, const std::string& topic,
          const std::string& id) {
  rd_kafka_t* a = NewProducer(bootstrap, id);
  if (a == nullptr) return 2;
  if (!Ok(rd_kafka_init_transactions(a, kTimeoutMs), "A init") ||
      !Ok(rd_kafka_begin_transaction(a), "A begin")) {
    return 1;
  }
  if (Produce(a, topic, "txn zombie rec 0 abort") != 0) return 1;
  rd_kafka_flush(a, kTimeoutMs);  // A's data is in the log, transaction open

  rd_kafka_t* b = NewProducer(bootstrap, id);
  if (b == nullptr) return 2;
  if (!Ok(rd_kafka_init_transactions(b, kTimeoutMs), "B init")) return 1;

  // A is a zombie now: its produce or its commit must fail fatally.
  Produce(a, topic, "txn zombie rec 1 abort");
  rd_kafka_flush(a, kTimeoutMs);
  rd_kafka_error_t* error = rd_kafka_commit_transaction(a, kTimeoutMs);
  char fatal[512];
  const rd_kafka_resp_err_t fatal_err =
      rd_kafka_fatal_error(a, fatal, sizeof(fatal));
  if (error == nullptr) {
    std::fprintf(stderr, "rdkafka_txn: the zombie committed\n");
    return 1;
  }
  const bool fenced = rd_kafka_error_is_fatal(error) || fatal_err != 0;
  std::printf("fenced %s\n", fatal_err != 0 ? rd_kafka_err2name(fatal_err)
                                            : rd_kafka_error_name(error));
  std::fflush(stdout);
  if (!fenced) {
    Ok(error, "A commit (expected a fatal error)");
    return 1;
  }
  rd_kafka_error_destroy(error);
  rd_kafka_destroy(a);

  if (!Ok(rd_kafka_begin_transaction(b), "B begin") ||
      Produce(b, topic, "txn fence rec 0 commit") != 0 ||
      !Ok(rd_kafka_commit_transaction(b, kTimeoutMs), "B commit")) {
    return 1;
  }
  std::printf("committed fence\n");
  rd_kafka_destroy(b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string bootstrap = Flag(argc, argv, "bootstrap", "");
  const std::string topic = Flag(argc, argv, "topic", "");
  const std::string id = Flag(argc, argv, "transactional_id", "");
  const std::string mode = Flag(argc, argv, "mode", "");
  const long transactions =
      std::atol(Flag(argc, argv, "transactions", "10").c_str());
  const long records = std::atol(Flag(argc, argv, "records", "10").c_str());
  const std::string group = Flag(argc, argv, "group", "");
  const std::string source = Flag(argc, argv, "source_topic", "");
  if (bootstrap.empty() || topic.empty() || id.empty() || transactions < 1 ||
      records < 1 || (mode != "interleave" && mode != "fence") ||
      group.empty() != source.empty()) {
    std::fprintf(stderr,
                 "usage: rdkafka_txn --bootstrap=HOST:PORT --topic=T "
                 "--transactional_id=ID --mode=interleave|fence "
                 "[--transactions=N] [--records=M] "
                 "[--group=G --source_topic=S]\n");
    return 2;
  }
  return mode == "interleave" ? Interleave(bootstrap, topic, id, transactions,
                                           records, group, source)
                              : Fence(bootstrap, topic, id);
}
