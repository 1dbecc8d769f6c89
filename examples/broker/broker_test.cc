// The broker's request handling, in process over the memory engine: what a
// client gets for each served API, for versions and keys not served, for
// malformed requests, for acks=0, for an empty fetch that must wait for an
// append, and for pipelined appends (handled in arrival order). The real
// clients' view is examples/broker/kcat_test.sh.
#include "examples/broker/broker.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "examples/broker/api_keys.h"
#include "examples/broker/group_messages.h"
#include "examples/broker/txn_messages.h"
#include "examples/broker/wire.h"
#include "gtest/gtest.h"
#include "storage/engine/memory_engine.h"
#include "storage/engine/topic_config.h"
#include "testing/batch_builder.h"
#include "testing/status_matchers.h"

namespace kaas::broker {
namespace {

using ::kaas::test::IsOkAndHolds;
using ::kaas::test::StatusIs;

// Generous: only a broken broker waits this long.
constexpr absl::Duration kDeadline = absl::Seconds(60);

// One response, as the server would receive it.
struct Reply {
  absl::Notification done;
  absl::StatusOr<std::optional<ResponseFrame>> response;
};

class BrokerTest : public ::testing::Test {
 protected:
  void StartBroker(BrokerConfig config = BrokerConfig()) {
    config.num_partitions = 2;
    absl::StatusOr<std::unique_ptr<Broker>> broker =
        Broker::Create(&engine_, config, {});
    ASSERT_OK(broker.status());
    broker_ = *std::move(broker);
    session_ = broker_->NewSession();
  }

  void SetUp() override { StartBroker(); }

  // Sends a request (header v1, or v2 if `flexible`) and returns its reply.
  std::shared_ptr<Reply> Send(int16_t api_key, int16_t version,
                              const std::string& body, bool flexible = false) {
    std::string frame;
    WireWriter writer(&frame);
    writer.Int16(api_key);
    writer.Int16(version);
    writer.Int32(next_correlation_id_++);
    writer.String("broker-test");
    if (flexible) writer.EmptyTaggedFields();
    frame += body;
    auto reply = std::make_shared<Reply>();
    broker_->Handle(session_, frame,
                    [reply](absl::StatusOr<std::optional<ResponseFrame>> r) {
                      reply->response = std::move(r);
                      reply->done.Notify();
                    });
    return reply;
  }

  // Waits for the reply and returns the response body after the size and
  // correlation id (response header v0).
  std::string Body(const std::shared_ptr<Reply>& reply) {
    EXPECT_TRUE(reply->done.WaitForNotificationWithTimeout(kDeadline));
    if (!reply->response.ok() || !reply->response->has_value()) {
      ADD_FAILURE() << "no response: "
                    << (reply->response.ok()
                            ? "none"
                            : reply->response.status().ToString());
      return "";
    }
    // Fetched records are regions of the engine's files (the memory engine:
    // its bytes); flattened, the frame is what the server writes.
    absl::StatusOr<std::string> frame = (*reply->response)->Flatten();
    EXPECT_OK(frame.status());
    if (!frame.ok()) return "";
    EXPECT_GE(frame->size(), 8u);
    const auto byte = [&](int i) { return uint32_t{uint8_t((*frame)[i])}; };
    EXPECT_EQ(byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3),
              frame->size() - 4)
        << "the size prefix";
    return frame->substr(8);
  }

  static std::string ProduceBody(int16_t acks, const std::string& topic,
                                 int32_t partition, const std::string& batch) {
    std::string body;
    WireWriter writer(&body);
    writer.NullableString(std::nullopt);  // transactional_id
    writer.Int16(acks);
    writer.Int32(30000);
    writer.ArrayLength(1);
    writer.String(topic);
    writer.ArrayLength(1);
    writer.Int32(partition);
    writer.Bytes(batch);
    return body;
  }

  // Produce v8 response of one partition: error code and base offset.
  static std::pair<int16_t, int64_t> ProduceResult(const std::string& body) {
    WireReader reader(body);
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("index");
    const int16_t error = *reader.Int16("error_code");
    const int64_t offset = *reader.Int64("base_offset");
    return {error, offset};
  }

  static std::string FetchBody(const std::string& topic, int32_t partition,
                               int64_t offset, int32_t max_wait_ms) {
    std::string body;
    WireWriter writer(&body);
    writer.Int32(-1);           // replica_id
    writer.Int32(max_wait_ms);  // max_wait_ms
    writer.Int32(1);            // min_bytes
    writer.Int32(1 << 20);      // max_bytes
    writer.Int8(0);             // isolation_level
    writer.ArrayLength(1);
    writer.String(topic);
    writer.ArrayLength(1);
    writer.Int32(partition);
    writer.Int64(offset);
    writer.Int64(-1);  // log_start_offset (v5+)
    writer.Int32(1 << 20);
    return body;
  }

  // Fetch v5 response of one partition: error, high watermark, records.
  struct Fetched {
    int16_t error = 0;
    int64_t high_watermark = -1;
    std::string records;
  };
  static Fetched FetchResult(const std::string& body) {
    WireReader reader(body);
    Fetched fetched;
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("index");
    fetched.error = *reader.Int16("error_code");
    fetched.high_watermark = *reader.Int64("high_watermark");
    (void)*reader.Int64("last_stable_offset");
    (void)*reader.Int64("log_start_offset");
    (void)*reader.ArrayLength("aborted", 0, /*nullable=*/true);
    std::optional<absl::string_view> records = *reader.NullableBytes("records");
    if (records.has_value()) fetched.records = std::string(*records);
    return fetched;
  }

  static std::string Batch(absl::string_view value) {
    return test::BatchBuilder().AddRecord("key", value).Build();
  }

  MemoryEngine engine_;
  std::unique_ptr<Broker> broker_;
  std::shared_ptr<Broker::Session> session_;
  int32_t next_correlation_id_ = 1;
};

TEST_F(BrokerTest, ApiVersionsV3AdvertisesExactlyTheServedRanges) {
  std::string body;
  WireWriter writer(&body);
  writer.CompactString("broker-test");
  writer.CompactString("1.0");
  writer.EmptyTaggedFields();
  const std::string response =
      Body(Send(kApiVersions, 3, body, /*flexible=*/true));
  WireReader reader(response);
  EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  const int32_t count = *reader.CompactArrayLength("api_keys", 0);
  ASSERT_EQ(count, static_cast<int32_t>(SupportedApis().size()));
  for (const ApiVersionRange& expected : SupportedApis()) {
    EXPECT_EQ(*reader.Int16("api_key"), expected.api_key);
    EXPECT_EQ(*reader.Int16("min"), expected.min_version);
    EXPECT_EQ(*reader.Int16("max"), expected.max_version);
    EXPECT_OK(reader.SkipTaggedFields("tags"));
  }
  EXPECT_EQ(*reader.Int32("throttle_time_ms"), 0);
  EXPECT_OK(reader.SkipTaggedFields("tags"));
  EXPECT_EQ(reader.remaining(), 0u);
}

TEST_F(BrokerTest, AnUnsupportedApiVersionsVersionIsAnsweredInV0Form) {
  const std::string response = Body(Send(kApiVersions, 99, ""));
  WireReader reader(response);
  EXPECT_EQ(*reader.Int16("error_code"), kErrorUnsupportedVersion);
  EXPECT_EQ(*reader.ArrayLength("api_keys", 6),
            static_cast<int32_t>(SupportedApis().size()));
}

TEST_F(BrokerTest, AnUnknownApiOrVersionClosesTheConnection) {
  for (auto [key, version] : {std::pair<int16_t, int16_t>{kProduce, 2},
                              {kProduce, 9},
                              {kFetch, 3},
                              {77, 0}}) {
    std::shared_ptr<Reply> reply = Send(key, version, "");
    ASSERT_TRUE(reply->done.WaitForNotificationWithTimeout(kDeadline));
    // (Produce v9 is flexible: its header's tags are missing here.)
    EXPECT_THAT(reply->response,
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_))
        << key << " v" << version;
  }
}

TEST_F(BrokerTest, AMalformedRequestClosesTheConnection) {
  std::string body = ProduceBody(-1, "orders", 0, Batch("v"));
  body.resize(body.size() - 5);  // the batch is cut short
  std::shared_ptr<Reply> reply = Send(kProduce, 8, body);
  ASSERT_TRUE(reply->done.WaitForNotificationWithTimeout(kDeadline));
  EXPECT_THAT(reply->response,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("truncated request: records")));
}

TEST_F(BrokerTest, ProducedBatchesAreFetchedByteForByte) {
  const std::string batch = Batch("hello");
  EXPECT_EQ(ProduceResult(
                Body(Send(kProduce, 8, ProduceBody(-1, "orders", 1, batch)))),
            (std::pair<int16_t, int64_t>{kErrorNone, 0}));
  EXPECT_EQ(ProduceResult(
                Body(Send(kProduce, 8, ProduceBody(1, "orders", 1, batch)))),
            (std::pair<int16_t, int64_t>{kErrorNone, 1}));
  Fetched fetched =
      FetchResult(Body(Send(kFetch, 5, FetchBody("orders", 1, 0, 0))));
  EXPECT_EQ(fetched.error, kErrorNone);
  EXPECT_EQ(fetched.high_watermark, 2);
  ASSERT_EQ(fetched.records.size(), 2 * batch.size());
  // Equal but for the base offset and leader epoch the broker assigned.
  for (size_t at : {size_t{0}, batch.size()}) {
    EXPECT_EQ(fetched.records.substr(at + 8, 4), batch.substr(8, 4));
    EXPECT_EQ(fetched.records.substr(at + 16, batch.size() - 16),
              batch.substr(16));
  }
}

TEST_F(BrokerTest, AcksZeroGetsNoResponse) {
  std::shared_ptr<Reply> reply =
      Send(kProduce, 8, ProduceBody(0, "orders", 0, Batch("v")));
  ASSERT_TRUE(reply->done.WaitForNotificationWithTimeout(kDeadline));
  ASSERT_OK(reply->response.status());
  EXPECT_FALSE(reply->response->has_value());
  EXPECT_EQ(*engine_.HighWatermark({"orders", 0}), 1);
}

TEST_F(BrokerTest, InvalidAcksAreRefused) {
  EXPECT_EQ(ProduceResult(Body(Send(kProduce, 8,
                                    ProduceBody(2, "orders", 0, Batch("v")))))
                .first,
            kErrorInvalidRequiredAcks);
}

TEST_F(BrokerTest, WithoutAutoCreateAnUnknownTopicIsUnknown) {
  BrokerConfig config;
  config.auto_create_topics = false;
  StartBroker(config);
  EXPECT_EQ(ProduceResult(
                Body(Send(kProduce, 8, ProduceBody(-1, "nope", 0, Batch("v")))))
                .first,
            kErrorUnknownTopicOrPartition);
  EXPECT_EQ(
      FetchResult(Body(Send(kFetch, 5, FetchBody("nope", 0, 0, 0)))).error,
      kErrorUnknownTopicOrPartition);
}

TEST_F(BrokerTest, AnInvalidTopicNameIsRefused) {
  EXPECT_EQ(ProduceResult(
                Body(Send(kProduce, 8, ProduceBody(-1, "../x", 0, Batch("v")))))
                .first,
            kErrorInvalidTopic);
}

TEST_F(BrokerTest, AnEmptyFetchWaitsUntilAnAppend) {
  // Creates the topic.
  Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("first"))));
  // A second session, as a consumer's connection: it waits at the log end.
  std::shared_ptr<Broker::Session> producer = session_;
  session_ = broker_->NewSession();
  std::shared_ptr<Reply> fetch =
      Send(kFetch, 5, FetchBody("orders", 0, 1, /*max_wait_ms=*/600000));
  session_ = producer;
  Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("second"))));
  Fetched fetched = FetchResult(Body(fetch));
  EXPECT_EQ(fetched.error, kErrorNone);
  EXPECT_EQ(fetched.high_watermark, 2);
  EXPECT_NE(fetched.records.find("second"), std::string::npos);
}

TEST_F(BrokerTest, PipelinedIdempotentAppendsKeepTheirOrder) {
  // Sent without waiting; handled out of order, sequence 1 would be refused.
  std::vector<std::shared_ptr<Reply>> replies;
  for (int i = 0; i < 50; ++i) {
    replies.push_back(
        Send(kProduce, 8,
             ProduceBody(-1, "orders", 0,
                         test::BatchBuilder()
                             .Producer(/*producer_id=*/9, /*producer_epoch=*/0,
                                       /*base_sequence=*/i)
                             .AddRecord("k", "v")
                             .Build())));
  }
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(ProduceResult(Body(replies[i])),
              (std::pair<int16_t, int64_t>{kErrorNone, i}));
  }
}

TEST_F(BrokerTest, ListOffsetsAnswersEarliestAndLatest) {
  for (int i = 0; i < 3; ++i) {
    Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("v"))));
  }
  for (auto [timestamp, expected] :
       {std::pair<int64_t, int64_t>{-2, 0}, {-1, 3}}) {
    std::string body;
    WireWriter writer(&body);
    writer.Int32(-1);
    writer.Int8(0);
    writer.ArrayLength(1);
    writer.String("orders");
    writer.ArrayLength(1);
    writer.Int32(0);
    writer.Int32(-1);  // current_leader_epoch (v4+)
    writer.Int64(timestamp);
    const std::string response = Body(Send(kListOffsets, 5, body));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("index");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
    (void)*reader.Int64("timestamp");
    EXPECT_EQ(*reader.Int64("offset"), expected) << timestamp;
  }
}

TEST_F(BrokerTest, MetadataCreatesTopicsAndNamesTheLeader) {
  std::string body;
  WireWriter writer(&body);
  writer.ArrayLength(1);
  writer.String("fresh");
  writer.Bool(true);  // allow_auto_topic_creation (v4+)
  writer.Bool(false);
  writer.Bool(false);
  const std::string response = Body(Send(kMetadata, 8, body));
  WireReader reader(response);
  (void)*reader.Int32("throttle");
  EXPECT_EQ(*reader.ArrayLength("brokers", 0), 1);
  EXPECT_EQ(*reader.Int32("node_id"), 1);
  EXPECT_EQ(*reader.String("host"), "127.0.0.1");
  EXPECT_EQ(*reader.Int32("port"), 9092);
  (void)*reader.NullableString("rack");
  EXPECT_EQ(**reader.NullableString("cluster_id"), "kaas-storage");
  EXPECT_EQ(*reader.Int32("controller_id"), 1);
  EXPECT_EQ(*reader.ArrayLength("topics", 0), 1);
  EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  EXPECT_EQ(*reader.String("name"), "fresh");
  (void)*reader.Bool("is_internal");
  EXPECT_EQ(*reader.ArrayLength("partitions", 0), 2);
  EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  EXPECT_EQ(*reader.Int32("partition"), 0);
  EXPECT_EQ(*reader.Int32("leader"), 1);
  EXPECT_EQ(*reader.Int32("leader_epoch"), 1);
}

std::string CreateTopicsBody(
    const std::string& name, int32_t partitions, int16_t replication,
    const std::vector<std::pair<std::string, std::string>>& configs = {},
    bool validate_only = false) {
  std::string body;
  WireWriter writer(&body);
  writer.ArrayLength(1);
  writer.String(name);
  writer.Int32(partitions);
  writer.Int16(replication);
  writer.ArrayLength(0);  // assignments
  writer.ArrayLength(static_cast<int32_t>(configs.size()));
  for (const auto& [key, value] : configs) {
    writer.String(key);
    writer.NullableString(value);
  }
  writer.Int32(10000);
  writer.Bool(validate_only);
  return body;
}

// CreateTopics v4: the one topic's error code.
int16_t CreateTopicsError(const std::string& body) {
  WireReader reader(body);
  (void)*reader.Int32("throttle");
  (void)*reader.ArrayLength("topics", 0);
  (void)*reader.String("name");
  return *reader.Int16("error_code");
}

TEST_F(BrokerTest, CreateTopicsCreatesOnceAndRefusesWhatOneBrokerCannotDo) {
  EXPECT_EQ(CreateTopicsError(
                Body(Send(kCreateTopics, 4, CreateTopicsBody("made", 3, 1)))),
            kErrorNone);
  EXPECT_EQ(*engine_.HighWatermark({"made", 2}), 0);
  EXPECT_EQ(CreateTopicsError(
                Body(Send(kCreateTopics, 4, CreateTopicsBody("made", 3, 1)))),
            kErrorTopicAlreadyExists);
  EXPECT_EQ(CreateTopicsError(Body(
                Send(kCreateTopics, 4, CreateTopicsBody("replicated", 1, 3)))),
            kErrorInvalidReplicationFactor);
  EXPECT_EQ(CreateTopicsError(
                Body(Send(kCreateTopics, 4, CreateTopicsBody("none", 0, 1)))),
            kErrorInvalidPartitions);
  EXPECT_EQ(CreateTopicsError(Body(Send(
                kCreateTopics, 4,
                CreateTopicsBody("dry", 1, -1, {}, /*validate_only=*/true)))),
            kErrorNone);
  EXPECT_FALSE(engine_.HighWatermark({"dry", 0}).ok());
}

TEST_F(BrokerTest, CreateTopicsKeepsTheTopicConfigsInTheEngine) {
  EXPECT_EQ(CreateTopicsError(
                Body(Send(kCreateTopics, 4,
                          CreateTopicsBody("configured", 1, 1,
                                           {{"retention.ms", "1000"},
                                            {"cleanup.policy", "compact"}})))),
            kErrorNone);
  ASSERT_OK_AND_ASSIGN(std::optional<TopicConfigOverrides> config,
                       engine_.GetTopicConfig("configured"));
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ(config->retention_ms, 1000);
  EXPECT_EQ(config->cleanup_policy, "compact");
  // Without configs, a created topic gets `{}`: the broker's defaults.
  Body(Send(kCreateTopics, 4, CreateTopicsBody("plain", 1, 1)));
  EXPECT_THAT(engine_.GetTopicConfig("plain"),
              IsOkAndHolds(
                  std::optional<TopicConfigOverrides>(TopicConfigOverrides())));
}

TEST_F(BrokerTest, CreateTopicsRefusesAConfigItCannotHonour) {
  // A key the broker does not serve, a value out of the engine's range, and
  // either in a validate-only request: refused, nothing created.
  for (bool validate_only : {false, true}) {
    EXPECT_EQ(
        CreateTopicsError(Body(
            Send(kCreateTopics, 4,
                 CreateTopicsBody("zipped", 1, 1, {{"compression.type", "lz4"}},
                                  validate_only)))),
        kErrorInvalidConfig);
    EXPECT_EQ(CreateTopicsError(Body(
                  Send(kCreateTopics, 4,
                       CreateTopicsBody("tiny", 1, 1, {{"segment.bytes", "10"}},
                                        validate_only)))),
              kErrorInvalidConfig);
  }
  EXPECT_FALSE(engine_.HighWatermark({"zipped", 0}).ok());
  EXPECT_FALSE(engine_.HighWatermark({"tiny", 0}).ok());
}

TEST_F(BrokerTest, DeleteTopicsRemovesEveryPartition) {
  Body(Send(kCreateTopics, 4, CreateTopicsBody("doomed", 2, 1)));
  Body(Send(kProduce, 8, ProduceBody(-1, "doomed", 1, Batch("v"))));
  std::string body;
  WireWriter writer(&body);
  writer.ArrayLength(2);
  writer.String("doomed");
  writer.String("never");
  writer.Int32(10000);
  const std::string response = Body(Send(kDeleteTopics, 3, body));
  WireReader reader(response);
  (void)*reader.Int32("throttle");
  EXPECT_EQ(*reader.ArrayLength("responses", 0), 2);
  EXPECT_EQ(*reader.String("name"), "doomed");
  EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  EXPECT_EQ(*reader.String("name"), "never");
  EXPECT_EQ(*reader.Int16("error_code"), kErrorUnknownTopicOrPartition);
  EXPECT_FALSE(engine_.HighWatermark({"doomed", 1}).ok());
}

TEST_F(BrokerTest, DeleteTopicsClearsTheTopicConfig) {
  Body(Send(kCreateTopics, 4,
            CreateTopicsBody("doomed", 1, 1, {{"retention.ms", "1000"}})));
  std::string body;
  WireWriter writer(&body);
  writer.ArrayLength(1);
  writer.String("doomed");
  writer.Int32(10000);
  Body(Send(kDeleteTopics, 3, body));
  // A topic auto-created later under the name starts from the defaults.
  EXPECT_THAT(engine_.GetTopicConfig("doomed"),
              IsOkAndHolds(
                  std::optional<TopicConfigOverrides>(TopicConfigOverrides())));
}

TEST_F(BrokerTest, DeleteRecordsMovesTheLogStart) {
  for (int i = 0; i < 4; ++i) {
    Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("v"))));
  }
  std::string body;
  WireWriter writer(&body);
  writer.ArrayLength(1);
  writer.String("orders");
  writer.ArrayLength(1);
  writer.Int32(0);
  writer.Int64(3);
  writer.Int32(10000);
  const std::string response = Body(Send(kDeleteRecords, 1, body));
  WireReader reader(response);
  (void)*reader.Int32("throttle");
  (void)*reader.ArrayLength("topics", 0);
  (void)*reader.String("name");
  (void)*reader.ArrayLength("partitions", 0);
  (void)*reader.Int32("partition");
  EXPECT_EQ(*reader.Int64("low_watermark"), 3);
  EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  EXPECT_EQ(*engine_.LogStartOffset({"orders", 0}), 3);
}

TEST_F(BrokerTest, InitProducerIdHandsOutDistinctIds) {
  std::string body;
  WireWriter writer(&body);
  writer.NullableString(std::nullopt);
  writer.Int32(60000);
  std::set<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    const std::string response = Body(Send(kInitProducerId, 1, body));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
    ids.insert(*reader.Int64("producer_id"));
    EXPECT_EQ(*reader.Int16("producer_epoch"), 0);
  }
  EXPECT_EQ(ids.size(), 3u);
}

// InitProducerId with a transactional id, AddPartitionsToTxn, a
// transactional Produce, EndTxn: the marker makes the data stable; a second
// InitProducerId fences the first producer's produce.
TEST_F(BrokerTest, TransactionCommitsAndFences) {
  auto init = [&]() {
    std::string body;
    WireWriter writer(&body);
    writer.NullableString(std::string("tx"));
    writer.Int32(60000);
    const std::string response = Body(Send(kInitProducerId, 1, body));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
    const int64_t id = *reader.Int64("producer_id");
    const int16_t epoch = *reader.Int16("producer_epoch");
    return std::make_pair(id, epoch);
  };
  auto [id, epoch] = init();
  // Produce creates the topic; the transaction then adds its partition.
  Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("plain"))));
  std::string add;
  WireWriter aw(&add);
  aw.String("tx");
  aw.Int64(id);
  aw.Int16(epoch);
  aw.ArrayLength(1);
  aw.String("orders");
  aw.ArrayLength(1);
  aw.Int32(0);
  {
    const std::string response =
        Body(Send(txn_api::kAddPartitionsToTxn, 2, add));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("partition");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  }
  const std::string txn_batch = test::BatchBuilder()
                                    .Producer(id, epoch, 0)
                                    .Transactional()
                                    .AddRecord("k", "in-txn")
                                    .Build();
  EXPECT_EQ(ProduceResult(Body(Send(kProduce, 8,
                                    ProduceBody(-1, "orders", 0, txn_batch))))
                .first,
            kErrorNone);
  EXPECT_EQ(*engine_.LastStableOffset({"orders", 0}), 1);
  std::string end;
  WireWriter ew(&end);
  ew.String("tx");
  ew.Int64(id);
  ew.Int16(epoch);
  ew.Bool(true);
  {
    const std::string response = Body(Send(txn_api::kEndTxn, 2, end));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  }
  EXPECT_EQ(*engine_.HighWatermark({"orders", 0}), 3);  // + COMMIT marker
  EXPECT_EQ(*engine_.LastStableOffset({"orders", 0}), 3);

  auto [id2, epoch2] = init();
  EXPECT_EQ(id2, id);
  EXPECT_EQ(epoch2, epoch + 1);
  const std::string zombie = test::BatchBuilder()
                                 .Producer(id, epoch, 1)
                                 .Transactional()
                                 .AddRecord("k", "zombie")
                                 .Build();
  EXPECT_EQ(ProduceResult(
                Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, zombie))))
                .first,
            47);  // INVALID_PRODUCER_EPOCH
  // A truncated EndTxn closes the connection.
  auto reply = Send(txn_api::kEndTxn, 2, end.substr(0, end.size() - 1));
  ASSERT_TRUE(reply->done.WaitForNotificationWithTimeout(kDeadline));
  EXPECT_FALSE(reply->response.ok());
}

// TxnOffsetCommit'd offsets reach the group (OffsetFetch) only when the
// transaction commits.
TEST_F(BrokerTest, TransactionalOffsetsCommitOnlyWithTheTransaction) {
  std::string init;
  WireWriter iw(&init);
  iw.NullableString(std::string("offsets-tx"));
  iw.Int32(60000);
  const std::string init_response = Body(Send(kInitProducerId, 1, init));
  WireReader ir(init_response);
  (void)*ir.Int32("throttle");
  ASSERT_EQ(*ir.Int16("error_code"), kErrorNone);
  const int64_t id = *ir.Int64("producer_id");
  const int16_t epoch = *ir.Int16("producer_epoch");
  auto producer = [&](WireWriter& w) {
    w.String("offsets-tx");
    w.Int64(id);
    w.Int16(epoch);
  };
  auto error_of = [](const std::string& response) {
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    return *reader.Int16("error_code");
  };
  auto stage = [&](int64_t offset) {
    std::string add;
    WireWriter aw(&add);
    producer(aw);
    aw.String("grp");
    EXPECT_EQ(error_of(Body(Send(txn_api::kAddOffsetsToTxn, 2, add))),
              kErrorNone);
    std::string commit;
    WireWriter cw(&commit);
    cw.String("offsets-tx");
    cw.String("grp");
    cw.Int64(id);
    cw.Int16(epoch);
    cw.ArrayLength(1);
    cw.String("input");
    cw.ArrayLength(1);
    cw.Int32(0);
    cw.Int64(offset);
    cw.Int32(-1);  // committed_leader_epoch (v2)
    cw.NullableString(std::string("m"));
    const std::string response =
        Body(Send(txn_api::kTxnOffsetCommit, 2, commit));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("partition");
    EXPECT_EQ(*reader.Int16("error_code"), kErrorNone);
  };
  auto end = [&](bool commit) {
    std::string body;
    WireWriter w(&body);
    producer(w);
    w.Bool(commit);
    EXPECT_EQ(error_of(Body(Send(txn_api::kEndTxn, 2, body))), kErrorNone);
  };
  auto fetched = [&]() {
    std::string body;
    WireWriter w(&body);
    w.String("grp");
    w.ArrayLength(1);
    w.String("input");
    w.ArrayLength(1);
    w.Int32(0);
    const std::string response = Body(Send(group_api::kOffsetFetch, 5, body));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    (void)*reader.Int32("partition");
    return *reader.Int64("committed_offset");
  };
  stage(10);
  end(/*commit=*/false);
  EXPECT_EQ(fetched(), -1);
  stage(20);
  EXPECT_EQ(fetched(), -1);  // staged, not committed
  end(/*commit=*/true);
  EXPECT_EQ(fetched(), 20);
}

TEST_F(BrokerTest, OffsetForLeaderEpochAnswersAndFencesStaleEpochs) {
  for (int i = 0; i < 2; ++i) {
    Body(Send(kProduce, 8, ProduceBody(-1, "orders", 0, Batch("v"))));
  }
  for (auto [current, expected_error] :
       {std::pair<int32_t, int16_t>{1, kErrorNone},
        {-1, kErrorNone},
        {0, kErrorFencedLeaderEpoch},
        {7, kErrorUnknownLeaderEpoch}}) {
    std::string body;
    WireWriter writer(&body);
    writer.Int32(-1);  // replica_id (v3+)
    writer.ArrayLength(1);
    writer.String("orders");
    writer.ArrayLength(1);
    writer.Int32(0);
    writer.Int32(current);
    writer.Int32(1);  // leader_epoch asked about
    const std::string response = Body(Send(kOffsetForLeaderEpoch, 3, body));
    WireReader reader(response);
    (void)*reader.Int32("throttle");
    (void)*reader.ArrayLength("topics", 0);
    (void)*reader.String("name");
    (void)*reader.ArrayLength("partitions", 0);
    EXPECT_EQ(*reader.Int16("error_code"), expected_error) << current;
    (void)*reader.Int32("partition");
    const int32_t epoch = *reader.Int32("leader_epoch");
    const int64_t end = *reader.Int64("end_offset");
    if (expected_error == kErrorNone) {
      EXPECT_EQ(epoch, 1);
      EXPECT_EQ(end, 2);
    }
  }
}

}  // namespace
}  // namespace kaas::broker
