// The data path against a real iggy-server (tests/support/iggy_harness): PartitionLog with a real
// IggyPool and TopicCatalog. Produce decoded batches, fetch them back byte-exact, and check the
// Kafka behaviours clients depend on: offset range errors, a fetch inside a batch, long-poll
// wake-ups on own and native Iggy appends, ListOffsets.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "bridge/security/sasl_authenticator.h"
#include "bridge/security/scram_credentials.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_timers.h"
#include "bridge/log/batch_cache.h"
#include "bridge/log/partition_log.h"
#include "bridge/mapping/generation_mapping.h"
#include "bridge/producers/producer_registry.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/iggy_identities.h"
#include "config/config.h"
#include "iggy/client.h"
#include "server/kafka_server.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/fetch.h"
#include "kafka/protocol/generated/list_offsets.h"
#include "kafka/protocol/generated/produce.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "kafka/records/record_batch.h"
#include "server/context/services.h"
#include "state/state_store.h"
#include "support/iggy_harness.h"
#include "uvx/timer.h"

using namespace kib;
using namespace kib::bridge;
using kib::kafka::ErrorCode;
using kib::kafka::to_int16;
namespace msg = kib::kafka::msg;
using kib::test::IggyTestContext;
using namespace std::chrono_literals;
namespace utf = boost::unit_test;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(const std::optional<ByteSpan>& s) {
  return s ? std::string(reinterpret_cast<const char*>(s->data()), s->size()) : "<null>";
}

// A record to produce, owning its bytes.
struct TestRecord {
  int64_t timestamp = 1'700'000'000'000;
  std::optional<std::string> key;
  std::optional<std::string> value = std::string("v");
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

// Encodes records the way a client would; `header_storage` keeps header views alive.
// How a Kafka broker encodes fetched records of a partition whose leader never changed: base
// offset as given, partition leader epoch 0, uncompressed, CreateTime.
kafka::BatchSettings as_fetched(int64_t base_offset) {
  kafka::BatchSettings s;
  s.base_offset = base_offset;
  s.partition_leader_epoch = 0;
  return s;
}

Bytes encode(const std::vector<TestRecord>& records, const kafka::BatchSettings& settings) {
  std::vector<std::vector<kafka::RecordHeader>> headers(records.size());
  std::vector<kafka::RecordToEncode> enc;
  for (size_t i = 0; i < records.size(); ++i) {
    const TestRecord& r = records[i];
    for (const auto& [k, v] : r.headers)
      headers[i].push_back({k, v ? std::optional<ByteSpan>(span_of(*v)) : std::nullopt});
    enc.push_back({r.timestamp, r.key ? std::optional<ByteSpan>(span_of(*r.key)) : std::nullopt,
                   r.value ? std::optional<ByteSpan>(span_of(*r.value)) : std::nullopt, headers[i]});
  }
  ByteWriter w;
  kafka::encode_record_batch(w, settings, enc);
  return w.take();
}

// Idempotence as the registry decides it, kept in memory: enough to drive the log's paths.
class FakeProducers : public ProducerRegistry {
 public:
  std::vector<ProducerOnPartition> producers_on(const std::string&, PartitionId) const override { return {}; }
  Status load() override { return ok_status(); }
  void init_producer(std::optional<ProducerIdAndEpoch>, std::function<void(Result<ProducerIdAndEpoch>)> done) override {
    done(ProducerIdAndEpoch{ProducerId(1), ProducerEpoch(0)});
  }
  SequenceCheck check(ProducerId pid, ProducerEpoch, const std::string& topic, PartitionId partition, int32_t first,
                      int32_t count) override {
    ++checks;
    auto& s = state_[{pid, topic, partition}];
    for (const auto& b : s.batches)
      if (b.first == first && b.count == count) return {SequenceVerdict::kDuplicate, b.offset};
    if (first != s.next) return {SequenceVerdict::kOutOfOrder, kNoOffset};
    return {SequenceVerdict::kAppend, kNoOffset};
  }
  bool is_reserved(ProducerId, const std::string&, PartitionId, int32_t) const override { return true; }
  void record_append(ProducerId pid, ProducerEpoch, const std::string& topic, PartitionId partition, int32_t first,
                     int32_t count, KafkaOffset base_offset, std::function<void(Status)> durable) override {
    auto& s = state_[{pid, topic, partition}];
    s.batches.push_back({first, count, base_offset});
    s.next = first + count;
    ++appended;
    if (durable) durable(ok_status());
  }
  void abort_append(ProducerId, const std::string&, PartitionId, int32_t) override { ++aborted; }

  int checks = 0, appended = 0, aborted = 0;

 private:
  struct Batch {
    int32_t first, count;
    KafkaOffset offset;
  };
  struct State {
    int32_t next = 0;
    std::vector<Batch> batches;
  };
  std::map<std::tuple<ProducerId, std::string, PartitionId>, State> state_;
};

struct DataPath {
  IggyTestContext ctx;
  config::Config cfg;
  std::string db_path;
  std::unique_ptr<state::StateStore> state;
  std::unique_ptr<TopicCatalog> catalog;
  FakeProducers producers;
  std::unique_ptr<PartitionLog> log;

  // `cache_bytes`: [limits] produced_batch_cache_bytes. Off by default: these tests pin what a
  // Fetch rebuilds from Iggy; CachedDataPath's tests what it answers from the cache.
  explicit DataPath(uint64_t cache_bytes = 0) {
    cfg.iggy.stream = kib::test::unique_name("kafka");
    cfg.topics.enforce_fsync = false;  // tests need no disk durability, and run faster
    cfg.limits.produced_batch_cache_bytes = cache_bytes;
    db_path = "/tmp/" + kib::test::unique_name("data-path") + ".db";
    auto st = state::StateStore::open(db_path, ctx.loop());
    BOOST_REQUIRE_MESSAGE(st.ok(), (st.ok() ? "" : st.error().message));
    state = std::move(st.value());
    catalog = std::make_unique<TopicCatalog>(cfg, ctx.client(), *state, ctx.loop());
    auto started = ctx.await<Unit>([&](auto cb) { catalog->start([cb](Status s) { cb(s); }); });
    BOOST_REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().message));
    log = std::make_unique<PartitionLog>(ctx.loop(), ctx.client(), *catalog, &producers, cfg);
  }

  ~DataPath() {
    log.reset();
    auto r = ctx.await<Unit>(
        [&](auto cb) { ctx.client().delete_stream(iggy::Identifier::named(cfg.iggy.stream), cb); });
    BOOST_TEST(r.ok());
    catalog->stop();
    catalog.reset();
    state->close();
    state.reset();
    std::remove(db_path.c_str());
    std::remove((db_path + "-wal").c_str());
    std::remove((db_path + "-shm").c_str());
  }

  std::string create_topic(int32_t partitions = 1, std::vector<std::pair<std::string, std::optional<std::string>>> configs = {}) {
    CreateTopicRequest req;
    req.name = kib::test::unique_name("t");
    req.partitions = partitions;
    req.configs = std::move(configs);
    std::optional<Result<TopicMetadata>> out;
    catalog->create(req, [&](Result<TopicMetadata> r) { out.emplace(std::move(r)); });
    ctx.run_until([&] { return out.has_value(); });
    BOOST_REQUIRE(out.has_value());
    BOOST_REQUIRE_MESSAGE(out->ok(), (out->ok() ? "" : out->error().message));
    return req.name;
  }

  // Starts a produce; the result lands in `out`.
  void start_produce(const std::string& topic, int32_t partition, const Bytes& wire, std::optional<ProduceResult>& out,
                     int16_t acks = -1) {
    auto input = std::make_shared<Bytes>(wire);
    kafka::DecompressionBudget budget{64u << 20};
    auto decoded = kafka::decode_record_batches(*input, budget);
    BOOST_REQUIRE_MESSAGE(decoded.ok(), (decoded.ok() ? "" : decoded.error().message));
    log->produce(topic, PartitionId(partition), std::move(decoded.value()), SharedSpan{input, *input}, acks,
                 [&out](ProduceResult r) { out.emplace(std::move(r)); });
  }

  ProduceResult produce(const std::string& topic, int32_t partition, const Bytes& wire, int16_t acks = -1) {
    std::optional<ProduceResult> out;
    start_produce(topic, partition, wire, out, acks);
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 20s));
    return *out;
  }

  ProduceResult produce(const std::string& topic, int32_t partition, const std::vector<TestRecord>& records,
                        kafka::BatchSettings settings = {}) {
    return produce(topic, partition, encode(records, settings));
  }

  static FetchPartitionRequest part(const std::string& topic, int32_t partition, int64_t offset, int32_t max_bytes) {
    return {topic, PartitionId(partition), KafkaOffset(offset), max_bytes};
  }

  std::vector<FetchPartitionResult> fetch(std::vector<FetchPartitionRequest> parts, FetchParams params = {}) {
    std::optional<std::vector<FetchPartitionResult>> out;
    log->fetch(std::move(parts), params, [&out](std::vector<FetchPartitionResult> r) { out.emplace(std::move(r)); });
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 30s));
    return std::move(*out);
  }

  FetchPartitionResult fetch_one(const std::string& topic, int32_t partition, int64_t offset,
                                 int32_t max_bytes = 1 << 20, FetchParams params = {}) {
    auto r = fetch({part(topic, partition, offset, max_bytes)}, params);
    BOOST_REQUIRE(r.size() == 1u);
    return std::move(r[0]);
  }

  OffsetLookup list_offsets(const std::string& topic, int32_t partition, TimestampMs timestamp) {
    std::optional<OffsetLookup> out;
    log->list_offsets(topic, PartitionId(partition), timestamp, [&out](OffsetLookup r) { out.emplace(r); });
    BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 30s));
    return *out;
  }
  OffsetLookup list_offsets(const std::string& topic, int32_t partition, int64_t timestamp_ms) {
    return list_offsets(topic, partition, TimestampMs(timestamp_ms));
  }

  void native_send(const std::string& topic, uint32_t partition, const std::string& payload) {
    iggy::OutgoingMessage m;
    m.payload = span_of(payload);
    std::vector<iggy::OutgoingMessage> msgs{m};
    auto r = ctx.await<iggy::SendConfirmation>([&](auto cb) {
      ctx.client().send_messages(iggy::Identifier::named(cfg.iggy.stream), iggy::Identifier::named(topic),
                                 iggy::Partitioning::partition(partition), msgs, cb);
    });
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  }
};

std::vector<kafka::DecodedBatch> decode(const ChunkedBytes& bytes) {
  kafka::DecompressionBudget budget{1u << 30};
  auto r = kafka::decode_record_batches(bytes.span(), budget);
  BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return std::move(r.value());
}
// The batches point into `bytes`: decoding a temporary would leave them dangling.
std::vector<kafka::DecodedBatch> decode(ChunkedBytes&&) = delete;

std::vector<TestRecord> sample_records() {
  std::vector<TestRecord> rs(5);
  rs[0].key = "k0";
  rs[0].value = "hello";
  rs[0].headers = {{"trace", std::string("abc")}, {"trace", std::nullopt}, {"empty", std::string("")}};
  rs[1].value = std::nullopt;  // tombstone
  rs[1].key = "k1";
  rs[1].timestamp += 5;
  rs[2].value = std::string("");  // empty, not null
  rs[2].timestamp -= 1000;         // CreateTime need not grow
  rs[3].value = std::string(3000, 'x');
  rs[3].headers = {{"long", std::string(600, 'h')}};
  rs[4].key = std::string("");
  rs[4].value = "last";
  return rs;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(data_path, *utf::precondition(kib::test::iggy_available))

// A client that connects as the bridge starts (the listener opens before Iggy is set up) may
// create a topic before the stream exists; on a fresh Iggy that used to fail with
// StreamIdNotFound, as UNKNOWN_TOPIC_OR_PARTITION.
BOOST_FIXTURE_TEST_CASE(topics_created_while_the_catalog_starts_wait_for_the_stream, DataPath) {
  config::Config fresh = cfg;
  fresh.iggy.stream = kib::test::unique_name("kafka-fresh");
  TopicCatalog early(fresh, ctx.client(), *state, ctx.loop());
  CreateTopicRequest req;
  req.name = kib::test::unique_name("t");
  req.partitions = 3;
  std::optional<Result<TopicMetadata>> before_start, during_start;
  early.create(req, [&](Result<TopicMetadata> r) { before_start.emplace(std::move(r)); });
  BOOST_REQUIRE(before_start.has_value());
  BOOST_TEST((!before_start->ok() && kib::bridge::to_kafka_error(before_start->error()) == ErrorCode::kLeaderNotAvailable));

  std::optional<Status> started;
  early.start([&](Status s) { started.emplace(std::move(s)); });
  early.create(req, [&](Result<TopicMetadata> r) { during_start.emplace(std::move(r)); });
  ctx.run_until([&] { return during_start.has_value(); });
  BOOST_REQUIRE(started.has_value() && started->ok());
  BOOST_REQUIRE(during_start.has_value());
  BOOST_REQUIRE_MESSAGE(during_start->ok(), (during_start->ok() ? "" : during_start->error().message));
  BOOST_TEST(during_start->value().partitions == 3);
  BOOST_TEST(early.find(req.name) != nullptr);
  early.stop();
  auto r = ctx.await<Unit>([&](auto cb) { ctx.client().delete_stream(iggy::Identifier::named(fresh.iggy.stream), cb); });
  BOOST_TEST(r.ok());
}

BOOST_FIXTURE_TEST_CASE(produced_records_fetch_back_byte_exact_across_batches, DataPath) {
  const std::string topic = create_topic();
  auto rs = sample_records();
  std::vector<TestRecord> first(rs.begin(), rs.begin() + 2), second(rs.begin() + 2, rs.end());

  ProduceResult a = produce(topic, 0, first);
  BOOST_TEST((a.error == ErrorCode::kNone), a.message);
  BOOST_TEST(a.base_offset() == 0);
  BOOST_TEST(a.log_append_time_ms() == -1);
  BOOST_TEST(a.log_start_offset() == 0);
  kafka::BatchSettings gzip;
  gzip.compression = kafka::Compression::kGzip;
  ProduceResult b = produce(topic, 0, encode(second, gzip));
  BOOST_TEST((b.error == ErrorCode::kNone), b.message);
  BOOST_TEST(b.base_offset() == 2);

  FetchPartitionResult f = fetch_one(topic, 0, 0);
  BOOST_TEST((f.error == ErrorCode::kNone));
  BOOST_TEST(f.high_watermark() == 5);
  BOOST_TEST(f.last_stable_offset() == 5);
  BOOST_TEST(f.log_start_offset() == 0);
  // One uncompressed batch at offset 0 holding all five records, exactly as Kafka encodes it.
  BOOST_TEST(f.records.to_bytes() == encode(rs, as_fetched(0)), boost::test_tools::per_element());
  auto batches = decode(f.records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(str(batches[0].records[1].value) == "<null>");
  BOOST_TEST(str(batches[0].records[2].value) == "");
}

BOOST_FIXTURE_TEST_CASE(a_fetch_inside_a_produced_batch_starts_at_the_requested_offset, DataPath) {
  const std::string topic = create_topic();
  auto rs = sample_records();
  BOOST_TEST(produce(topic, 0, rs).base_offset() == 0);
  FetchPartitionResult f = fetch_one(topic, 0, 3);
  BOOST_TEST((f.error == ErrorCode::kNone));
  auto batches = decode(f.records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(batches[0].header.base_offset == 3);
  BOOST_REQUIRE(batches[0].records.size() == 2u);
  BOOST_TEST(str(batches[0].records[0].value) == std::string(3000, 'x'));
  BOOST_TEST(batches[0].offset_of(batches[0].records[1]) == 4);
  BOOST_TEST(f.records.to_bytes() == encode({rs[3], rs[4]}, as_fetched(3)), boost::test_tools::per_element());
}

// The same appends with the produced-batch cache on (bridge/log/batch_cache.h).
struct CachedDataPath : DataPath {
  CachedDataPath() : DataPath(1u << 20) {}
};

BOOST_FIXTURE_TEST_CASE(recent_batches_fetch_back_as_produced_with_their_offsets_set, CachedDataPath) {
  const std::string topic = create_topic();
  auto rs = sample_records();
  std::vector<TestRecord> first(rs.begin(), rs.begin() + 2), second(rs.begin() + 2, rs.end());
  kafka::BatchSettings idempotent;  // what the producer sent: its ids, base offset 0, epoch -1
  idempotent.producer_id = 42;
  idempotent.producer_epoch = 0;
  idempotent.base_sequence = 0;
  BOOST_TEST(produce(topic, 0, encode(first, idempotent)).base_offset() == 0);
  kafka::BatchSettings gzip = idempotent;
  gzip.compression = kafka::Compression::kGzip;
  gzip.base_sequence = 2;
  BOOST_TEST(produce(topic, 0, encode(second, gzip)).base_offset() == 2);

  // Both batches byte for byte as produced, only the base offset and leader epoch set (the CRC
  // covers neither, so encoding them with those values gives the same bytes).
  kafka::BatchSettings a = idempotent, b = gzip;
  a.partition_leader_epoch = b.partition_leader_epoch = 0;
  b.base_offset = 2;
  Bytes want = encode(first, a);
  Bytes tail = encode(second, b);
  want.insert(want.end(), tail.begin(), tail.end());
  FetchPartitionResult f = fetch_one(topic, 0, 0);
  BOOST_TEST((f.error == ErrorCode::kNone));
  BOOST_TEST(f.high_watermark() == 5);
  BOOST_TEST(f.records.to_bytes() == want, boost::test_tools::per_element());
  BOOST_TEST(log->batch_cache().stats().hits == 1u);
  // Inside the gzip batch: the whole batch, as a Kafka broker answers; the same records as the
  // rebuilt batch from offset 0 would hold.
  FetchPartitionResult g = fetch_one(topic, 0, 3);
  BOOST_TEST(g.records.to_bytes() == tail, boost::test_tools::per_element());
  auto decoded = decode(g.records);
  BOOST_REQUIRE(decoded.size() == 1u);
  BOOST_TEST(decoded[0].offset_of(decoded[0].records[1]) == 3);
  BOOST_TEST(str(decoded[0].records[1].value) == std::string(3000, 'x'));
}

BOOST_FIXTURE_TEST_CASE(records_of_native_producers_between_cached_batches_come_from_iggy, CachedDataPath) {
  const std::string topic = create_topic();
  auto rs = sample_records();
  BOOST_TEST(produce(topic, 0, std::vector<TestRecord>{rs[0]}).base_offset() == 0);
  native_send(topic, 0, "n");
  BOOST_TEST(produce(topic, 0, std::vector<TestRecord>{rs[3]}).base_offset() == 2);
  // From 0: the cached batch only, the gap (the native record) stops the cached run.
  FetchPartitionResult f = fetch_one(topic, 0, 0);
  BOOST_TEST(decode(f.records).size() == 1u);
  BOOST_TEST(f.records.to_bytes() == encode({rs[0]}, as_fetched(0)), boost::test_tools::per_element());
  // From 1: rebuilt from Iggy, the native record and the next one.
  FetchPartitionResult g = fetch_one(topic, 0, 1);
  auto batches = decode(g.records);
  BOOST_REQUIRE(!batches.empty());
  BOOST_TEST(batches[0].header.base_offset == 1);
  BOOST_TEST(str(batches[0].records[0].value) == "n");
  BOOST_TEST(batches[0].header.producer_id == -1);
}

BOOST_FIXTURE_TEST_CASE(offsets_beyond_the_high_watermark_are_out_of_range_and_the_end_is_empty, DataPath) {
  const std::string topic = create_topic();
  // Empty partition: offset 0 is the end, no error (librdkafka reports EOF).
  FetchPartitionResult empty = fetch_one(topic, 0, 0);
  BOOST_TEST((empty.error == ErrorCode::kNone));
  BOOST_TEST(empty.high_watermark() == 0);
  BOOST_TEST(empty.records.empty());
  BOOST_TEST((fetch_one(topic, 0, 1).error == ErrorCode::kOffsetOutOfRange));

  produce(topic, 0, std::vector<TestRecord>(3));
  FetchPartitionResult at_end = fetch_one(topic, 0, 3);
  BOOST_TEST((at_end.error == ErrorCode::kNone));
  BOOST_TEST(at_end.high_watermark() == 3);
  BOOST_TEST(at_end.records.empty());
  FetchPartitionResult beyond = fetch_one(topic, 0, 4);
  BOOST_TEST((beyond.error == ErrorCode::kOffsetOutOfRange));
  BOOST_TEST((fetch_one(topic, 0, -1).error == ErrorCode::kOffsetOutOfRange));
}

BOOST_FIXTURE_TEST_CASE(unknown_topics_and_partitions_are_reported_per_partition, DataPath) {
  const std::string topic = create_topic(2);
  auto missing = kib::test::unique_name("missing");
  BOOST_TEST((produce(missing, 0, std::vector<TestRecord>(1)).error == ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST((produce(topic, 2, std::vector<TestRecord>(1)).error == ErrorCode::kUnknownTopicOrPartition));
  auto results = fetch({part(missing, 0, 0, 1000), part(topic, 1, 0, 1000), part(topic, 5, 0, 1000)});
  BOOST_TEST((results[0].error == ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST((results[1].error == ErrorCode::kNone));
  BOOST_TEST((results[2].error == ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST((list_offsets(missing, 0, kLatestTimestamp).error == ErrorCode::kUnknownTopicOrPartition));
}

BOOST_FIXTURE_TEST_CASE(kafka_produce_rules_are_enforced_before_iggy, DataPath) {
  const std::string topic = create_topic(1, {{"max.message.bytes", std::string("2000")}});
  std::vector<TestRecord> big(1);
  big[0].value = std::string(3000, 'b');
  ProduceResult too_large = produce(topic, 0, big);
  BOOST_TEST((too_large.error == ErrorCode::kMessageTooLarge));
  BOOST_TEST(too_large.base_offset() == -1);

  Bytes two = encode(std::vector<TestRecord>(1), {});
  Bytes second = encode(std::vector<TestRecord>(1), {});
  two.insert(two.end(), second.begin(), second.end());
  BOOST_TEST((produce(topic, 0, two).error == ErrorCode::kInvalidRecord));

  kafka::BatchSettings txn;
  txn.transactional = true;
  txn.producer_id = 1;
  txn.producer_epoch = 0;
  txn.base_sequence = 0;
  BOOST_TEST((produce(topic, 0, std::vector<TestRecord>(1), txn).error == ErrorCode::kInvalidTxnState));
  kafka::BatchSettings control;
  control.control = true;
  BOOST_TEST((produce(topic, 0, std::vector<TestRecord>(1), control).error == ErrorCode::kInvalidRecord));
  BOOST_TEST((produce(topic, 0, encode(std::vector<TestRecord>(1), {}), 2).error == ErrorCode::kInvalidRequiredAcks));
  // Nothing of the above reached Iggy.
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 0);
}

BOOST_FIXTURE_TEST_CASE(acks_zero_still_appends, DataPath) {
  const std::string topic = create_topic();
  ProduceResult r = produce(topic, 0, encode(std::vector<TestRecord>(2), {}), 0);
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 2);
}

BOOST_FIXTURE_TEST_CASE(pipelined_appends_to_one_partition_keep_their_order, DataPath) {
  const std::string topic = create_topic(2);
  constexpr int kN = 30;
  std::vector<std::optional<ProduceResult>> results(kN);
  for (int i = 0; i < kN; ++i) {
    std::vector<TestRecord> one(1);
    one[0].value = "m" + std::to_string(i);
    start_produce(topic, i % 2, encode(one, {}), results[static_cast<size_t>(i)]);
  }
  BOOST_REQUIRE(ctx.run_until([&] {
    for (auto& r : results)
      if (!r) return false;
    return true;
  }));
  for (int i = 0; i < kN; ++i) {
    BOOST_TEST((results[static_cast<size_t>(i)]->error == ErrorCode::kNone));
    BOOST_TEST(results[static_cast<size_t>(i)]->base_offset() == i / 2);
  }
  const FetchPartitionResult all = fetch_one(topic, 0, 0);
  auto batches = decode(all.records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_REQUIRE(batches[0].records.size() == static_cast<size_t>(kN / 2));
  for (size_t k = 0; k < batches[0].records.size(); ++k)
    BOOST_TEST(str(batches[0].records[k].value) == "m" + std::to_string(2 * k));
}

BOOST_FIXTURE_TEST_CASE(appends_queued_behind_a_send_share_the_next_iggy_send_with_their_own_offsets, DataPath) {
  const std::string topic = create_topic();
  produce(topic, 0, std::vector<TestRecord>(1));  // offsets loaded, the partition is idle
  constexpr int kN = 20;
  std::vector<std::optional<ProduceResult>> results(kN);
  const uint64_t sends_before = ctx.pool().stats().submitted;
  for (int i = 0; i < kN; ++i) {
    std::vector<TestRecord> recs(static_cast<size_t>(i % 3 + 1));
    for (size_t k = 0; k < recs.size(); ++k) recs[k].value = "r" + std::to_string(i) + "." + std::to_string(k);
    start_produce(topic, 0, encode(recs, {}), results[static_cast<size_t>(i)]);
  }
  BOOST_REQUIRE(ctx.run_until([&] {
    for (auto& r : results)
      if (!r) return false;
    return true;
  }));
  // The first send carries the first request; the other 19 waited behind it and went together.
  BOOST_TEST(ctx.pool().stats().submitted - sends_before < static_cast<uint64_t>(kN));
  int64_t expected = 1;
  std::vector<std::string> values;
  for (int i = 0; i < kN; ++i) {
    BOOST_TEST((results[static_cast<size_t>(i)]->error == ErrorCode::kNone));
    BOOST_TEST(results[static_cast<size_t>(i)]->base_offset() == expected);
    for (int k = 0; k < i % 3 + 1; ++k) values.push_back("r" + std::to_string(i) + "." + std::to_string(k));
    expected += i % 3 + 1;
  }
  const FetchPartitionResult fetched = fetch_one(topic, 0, 1, 10 << 20);
  auto batches = decode(fetched.records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_REQUIRE(batches[0].records.size() == values.size());
  for (size_t k = 0; k < values.size(); ++k) BOOST_TEST(str(batches[0].records[k].value) == values[k]);
}

BOOST_FIXTURE_TEST_CASE(idempotent_retries_get_the_original_offset_without_a_second_append, DataPath) {
  const std::string topic = create_topic();
  kafka::BatchSettings s;
  s.producer_id = 1;
  s.producer_epoch = 0;
  s.base_sequence = 0;
  produce(topic, 0, std::vector<TestRecord>(1));  // a non-idempotent record first: offsets shift
  ProduceResult first = produce(topic, 0, std::vector<TestRecord>(3), s);
  BOOST_TEST((first.error == ErrorCode::kNone));
  BOOST_TEST(first.base_offset() == 1);
  ProduceResult retry = produce(topic, 0, std::vector<TestRecord>(3), s);
  BOOST_TEST((retry.error == ErrorCode::kNone));
  BOOST_TEST(retry.base_offset() == 1);
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 4);
  s.base_sequence = 7;  // gap
  BOOST_TEST((produce(topic, 0, std::vector<TestRecord>(1), s).error == ErrorCode::kOutOfOrderSequenceNumber));
  BOOST_TEST(producers.appended == 1);
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 4);
}

BOOST_FIXTURE_TEST_CASE(byte_limits_cut_at_records_but_return_a_large_first_record, DataPath) {
  const std::string topic = create_topic(2);
  std::vector<TestRecord> rs(10);
  for (auto& r : rs) r.value = std::string(1000, 'p');
  produce(topic, 0, rs);
  produce(topic, 1, rs);

  const FetchPartitionResult first_two = fetch_one(topic, 0, 0, 2500);
  auto two = decode(first_two.records);
  BOOST_REQUIRE(two.size() == 1u);
  BOOST_TEST(two[0].records.size() == 2u);
  // KIP-74: a limit below one record still returns that record.
  const FetchPartitionResult just_one = fetch_one(topic, 0, 4, 10);
  auto one = decode(just_one.records);
  BOOST_REQUIRE(one.size() == 1u);
  BOOST_TEST(one[0].header.base_offset == 4);
  BOOST_TEST(one[0].records.size() == 1u);

  // Response limit: the first partition with data fills it; the next gets nothing, no error.
  FetchParams params;
  params.max_bytes = 1500;
  auto both = fetch({part(topic, 0, 0, 1 << 20), part(topic, 1, 0, 1 << 20)}, params);
  BOOST_TEST(decode(both[0].records)[0].records.size() == 1u);
  BOOST_TEST(both[1].records.empty());
  BOOST_TEST((both[1].error == ErrorCode::kNone));
  BOOST_TEST(both[1].high_watermark() == 10);
}

BOOST_FIXTURE_TEST_CASE(a_long_poll_wakes_as_soon_as_the_bridge_appends, DataPath) {
  const std::string topic = create_topic(2);
  produce(topic, 1, std::vector<TestRecord>(2));
  FetchParams params;
  params.max_wait_ms = 10000;
  params.min_bytes = 1;
  std::optional<std::vector<FetchPartitionResult>> out;
  const auto started = std::chrono::steady_clock::now();
  log->fetch({part(topic, 0, 0, 1 << 20), part(topic, 1, 2, 1 << 20)}, params,
             [&](std::vector<FetchPartitionResult> r) { out.emplace(std::move(r)); });
  uv::Timer later(ctx.loop());
  std::optional<ProduceResult> produced;
  later.start(300ms, [&] {
    std::vector<TestRecord> one(1);
    one[0].value = "wake";
    start_produce(topic, 1, encode(one, {}), produced);
  });
  BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 15s));
  const auto waited = std::chrono::steady_clock::now() - started;
  BOOST_TEST((waited >= 250ms));
  BOOST_TEST((waited < 3s));
  BOOST_TEST((*out)[0].records.empty());
  auto batches = decode((*out)[1].records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(batches[0].header.base_offset == 2);
  BOOST_TEST(str(batches[0].records[0].value) == "wake");
  BOOST_TEST((*out)[1].high_watermark() == 3);
  BOOST_TEST(log->waiting_fetches() == 0u);
}

BOOST_FIXTURE_TEST_CASE(a_long_poll_sees_appends_by_native_iggy_producers, DataPath) {
  const std::string topic = create_topic();
  FetchParams params;
  params.max_wait_ms = 10000;
  std::optional<std::vector<FetchPartitionResult>> out;
  const auto started = std::chrono::steady_clock::now();
  log->fetch({part(topic, 0, 0, 1 << 20)}, params,
             [&](std::vector<FetchPartitionResult> r) { out.emplace(std::move(r)); });
  uv::Timer later(ctx.loop());
  bool sent = false;
  later.start(300ms, [&] {
    iggy::OutgoingMessage m;
    static const std::string payload = "from iggy";
    m.payload = span_of(payload);
    std::vector<iggy::OutgoingMessage> msgs{m};
    ctx.client().send_messages(iggy::Identifier::named(cfg.iggy.stream), iggy::Identifier::named(topic),
                               iggy::Partitioning::partition(0), msgs,
                               [&](Result<iggy::SendConfirmation> r) { sent = r.ok(); });
  });
  BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 15s));
  BOOST_TEST(sent);
  BOOST_TEST((std::chrono::steady_clock::now() - started < 3s));
  auto batches = decode((*out)[0].records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(str(batches[0].records[0].key) == "<null>");
  BOOST_TEST(str(batches[0].records[0].value) == "from iggy");
  BOOST_TEST((*out)[0].high_watermark() == 1);
}

BOOST_FIXTURE_TEST_CASE(a_long_poll_without_data_answers_empty_after_max_wait, DataPath) {
  const std::string topic = create_topic();
  FetchParams params;
  params.max_wait_ms = 400;
  const auto started = std::chrono::steady_clock::now();
  FetchPartitionResult r = fetch_one(topic, 0, 0, 1 << 20, params);
  const auto waited = std::chrono::steady_clock::now() - started;
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(r.records.empty());
  BOOST_TEST((waited >= 350ms));
  BOOST_TEST((waited < 3s));
}

BOOST_FIXTURE_TEST_CASE(stop_waiting_answers_long_polls_at_once, DataPath) {
  const std::string topic = create_topic();
  FetchParams params;
  params.max_wait_ms = 30000;
  std::optional<std::vector<FetchPartitionResult>> out;
  log->fetch({part(topic, 0, 0, 1 << 20)}, params,
             [&](std::vector<FetchPartitionResult> r) { out.emplace(std::move(r)); });
  ctx.run_until([&] { return out.has_value(); }, 300ms);
  BOOST_REQUIRE(!out.has_value());
  BOOST_TEST(log->waiting_fetches() == 1u);
  log->stop_waiting();
  BOOST_REQUIRE(ctx.run_until([&] { return out.has_value(); }, 5s));
  BOOST_TEST((*out)[0].records.empty());
}

BOOST_FIXTURE_TEST_CASE(list_offsets_earliest_latest_and_by_timestamp, DataPath) {
  const std::string topic = create_topic();
  OffsetLookup empty_latest = list_offsets(topic, 0, kLatestTimestamp);
  BOOST_TEST((empty_latest.error == ErrorCode::kNone));
  BOOST_TEST(empty_latest.offset() == 0);
  BOOST_TEST(list_offsets(topic, 0, kEarliestTimestamp).offset() == 0);
  OffsetLookup empty_max = list_offsets(topic, 0, kMaxTimestamp);
  BOOST_TEST(empty_max.offset() == -1);
  BOOST_TEST(empty_max.timestamp() == -1);
  BOOST_TEST(list_offsets(topic, 0, 0).offset() == -1);

  // CreateTime out of offset order, as producers may set it.
  std::vector<TestRecord> rs(5);
  const int64_t ts[] = {1000, 9000, 2000, 7000, 3000};
  for (size_t i = 0; i < rs.size(); ++i) rs[i].timestamp = ts[i];
  produce(topic, 0, rs);

  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 5);
  BOOST_TEST(list_offsets(topic, 0, kEarliestTimestamp).offset() == 0);
  BOOST_TEST(list_offsets(topic, 0, kEarliestLocalTimestamp).offset() == 0);
  OffsetLookup max = list_offsets(topic, 0, kMaxTimestamp);
  BOOST_TEST(max.offset() == 1);
  BOOST_TEST(max.timestamp() == 9000);
  OffsetLookup t0 = list_offsets(topic, 0, 0);
  BOOST_TEST(t0.offset() == 0);
  BOOST_TEST(t0.timestamp() == 1000);
  OffsetLookup t1500 = list_offsets(topic, 0, 1500);
  BOOST_TEST(t1500.offset() == 1);
  BOOST_TEST(t1500.timestamp() == 9000);
  BOOST_TEST(list_offsets(topic, 0, 9000).offset() == 1);
  BOOST_TEST(list_offsets(topic, 0, 9001).offset() == -1);

  // The index extends incrementally with later appends, native ones included.
  std::vector<TestRecord> later(1);
  later[0].timestamp = 20000;
  produce(topic, 0, later);
  OffsetLookup t10k = list_offsets(topic, 0, 10000);
  BOOST_TEST(t10k.offset() == 5);
  BOOST_TEST(t10k.timestamp() == 20000);
  native_send(topic, 0, "native");  // Iggy stamps it now: far above 20000 ms
  OffsetLookup max2 = list_offsets(topic, 0, kMaxTimestamp);
  BOOST_TEST(max2.offset() == 6);
  BOOST_TEST(max2.timestamp() > 20000);
  BOOST_TEST(list_offsets(topic, 0, 20001).offset() == 6);
}

// A compacted partition's cleaned head (docs/compaction.md), written by hand: the generation
// topic keeps copies of the live records 2 and 7 with their Kafka offsets; below the cleaner
// point 8 a Fetch reads the generation (offsets unchanged, gaps between), from it the live log.
BOOST_FIXTURE_TEST_CASE(reads_below_the_cleaner_point_come_from_the_generation_topic, DataPath) {
  const std::string topic = create_topic();
  std::vector<TestRecord> rs(10);
  for (size_t i = 0; i < rs.size(); ++i) {
    rs[i].key = "k" + std::to_string(i);
    rs[i].value = "v" + std::to_string(i);
  }
  BOOST_REQUIRE((produce(topic, 0, rs).error == ErrorCode::kNone));

  const std::string stream = kib::test::unique_name("kc");
  BOOST_REQUIRE(ctx.await<iggy::StreamInfo>([&](auto cb) { ctx.client().create_stream(stream, cb); }).ok());
  iggy::TopicConfig gen;
  gen.name = "gen-1";
  BOOST_REQUIRE(ctx.await<iggy::TopicInfo>([&](auto cb) {
                   ctx.client().create_topic(iggy::Identifier::named(stream), gen, cb);
                 }).ok());
  iggy::PollRequest q;
  q.consumer = iggy::Consumer::consumer(iggy::Identifier::numeric(0));
  q.stream = iggy::Identifier::named(cfg.iggy.stream);
  q.topic = iggy::Identifier::named(topic);
  q.partition_id = 0;
  q.strategy = iggy::PollingStrategy::offset(0);
  q.count = 10;
  auto live = ctx.await<iggy::PolledMessages>([&](auto cb) { ctx.client().poll_messages(q, cb); });
  BOOST_REQUIRE(live.ok() && live->messages.size() == 10u);
  std::vector<Bytes> blocks;
  std::vector<iggy::OutgoingMessage> copies;
  for (uint64_t kept : {2u, 7u}) {
    auto block = generation_header_block(live->messages[kept].user_headers, static_cast<int64_t>(kept), std::nullopt);
    BOOST_REQUIRE(block.ok());
    blocks.push_back(std::move(block.value()));
  }
  for (size_t i = 0; i < blocks.size(); ++i) {
    iggy::OutgoingMessage m;
    const iggy::MessageView& src = live->messages[i == 0 ? 2 : 7];
    m.payload = src.payload;
    m.origin_timestamp_us = src.origin_timestamp_us;
    m.user_headers = blocks[i];
    copies.push_back(m);
  }
  BOOST_REQUIRE(ctx.await<iggy::SendConfirmation>([&](auto cb) {
                   ctx.client().send_messages(iggy::Identifier::named(stream), iggy::Identifier::named("gen-1"),
                                              iggy::Partitioning::partition(0), copies, cb);
                 }).ok());

  auto head = std::make_shared<compaction::CleanedHead>();
  head->generation = 1;
  head->stream = stream;
  head->topic = "gen-1";
  head->cleaner_point = 8;
  head->log_start = 0;
  log->set_cleaned_head(topic, PartitionId(0), head);

  auto offsets_and_keys = [](const FetchPartitionResult& f) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (const auto& b : decode(f.records))
      for (const auto& r : b.records) out.emplace_back(b.offset_of(r), str(r.key) + "=" + str(r.value));
    return out;
  };
  FetchPartitionResult from0 = fetch_one(topic, 0, 0);
  BOOST_TEST((from0.error == ErrorCode::kNone));
  BOOST_TEST(from0.log_start_offset() == 0);
  BOOST_TEST(from0.high_watermark() == 10);
  const std::vector<std::pair<int64_t, std::string>> kept = {{2, "k2=v2"}, {7, "k7=v7"}};
  BOOST_TEST((offsets_and_keys(from0) == kept));
  FetchPartitionResult from3 = fetch_one(topic, 0, 3);
  BOOST_TEST((offsets_and_keys(from3) == std::vector<std::pair<int64_t, std::string>>{{7, "k7=v7"}}));
  FetchPartitionResult gap = fetch_one(topic, 0, 8);
  BOOST_TEST((offsets_and_keys(gap) == std::vector<std::pair<int64_t, std::string>>{{8, "k8=v8"}, {9, "k9=v9"}}));
  BOOST_TEST(list_offsets(topic, 0, kEarliestTimestamp).offset() == 0);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { ctx.client().delete_stream(iggy::Identifier::named(stream), cb); }).ok());
}

BOOST_FIXTURE_TEST_CASE(native_appends_move_the_high_watermark_seen_by_fetch, DataPath) {
  const std::string topic = create_topic();
  produce(topic, 0, std::vector<TestRecord>(1));
  native_send(topic, 0, "n1");
  native_send(topic, 0, "n2");
  // The cache says HW = 1; a fetch at 2 must not be out of range.
  FetchPartitionResult r = fetch_one(topic, 0, 2);
  BOOST_TEST((r.error == ErrorCode::kNone));
  BOOST_TEST(r.high_watermark() == 3);
  auto batches = decode(r.records);
  BOOST_REQUIRE(batches.size() == 1u);
  BOOST_TEST(batches[0].header.base_offset == 2);
  BOOST_TEST(str(batches[0].records[0].value) == "n2");
}


// ---- the same path through the Kafka dispatcher and the Produce/Fetch/ListOffsets handlers ----

namespace {

// The data path behind a real KafkaServer on a loopback port, driven by a plain socket. The
// socket is non-blocking and read from the loop's predicate, with a ticking timer so the loop
// never sleeps while a response is on its way.
struct WirePath : DataPath {
  // The group services are bound but unused here (tests/unit/group_handlers_test.cc drives them).
  std::unique_ptr<bridge::GroupTimers> group_timers;
  std::unique_ptr<bridge::CommittedOffsets> offsets;
  std::unique_ptr<bridge::GroupCoordinator> groups;
  std::unique_ptr<bridge::ConfigService> configs;
  std::unique_ptr<bridge::PersistentTransactionCoordinator> transactions;
  std::unique_ptr<bridge::IggyIdentities> identities;
  std::unique_ptr<bridge::SaslAuthenticator> sasl;
  std::unique_ptr<bridge::ScramCredentials> scram_credentials;
  std::unique_ptr<bridge::Authorizer> authorizer;
  std::unique_ptr<kafka::Services> services;
  std::unique_ptr<kafka::KafkaServer> server;
  int fd = -1;
  int32_t correlation = 0;
  Bytes inbox;
  uint16_t port_ = 0;

  WirePath() {
    group_timers = bridge::make_uv_group_timers(ctx.loop());
    offsets = std::make_unique<bridge::CommittedOffsets>(*state, *group_timers);
    groups = std::make_unique<bridge::GroupCoordinator>(*state, *group_timers, *offsets);
    configs = std::make_unique<bridge::ConfigService>(cfg, *catalog, *state);
    transactions = bridge::make_transaction_coordinator(
        bridge::TransactionServices{*state, ctx.loop(), producers, *log, *offsets, *groups, cfg.transactions});
    identities = std::make_unique<bridge::IggyIdentities>(ctx.loop(), cfg, *state, ctx.client(), kib::test::harness_pool_config());
    sasl = std::make_unique<bridge::SaslAuthenticator>(*state, ctx.loop(), cfg.sasl);
    scram_credentials = std::make_unique<bridge::ScramCredentials>(*state);
    authorizer = std::make_unique<bridge::Authorizer>(cfg.authorization, *state, ctx.loop());
    services = std::make_unique<kafka::Services>(kafka::Services{.config = cfg,
                                                                 .catalog = *catalog,
                                                                 .producers = producers,
                                                                 .log = *log,
                                                                 .groups = *groups,
                                                                 .offsets = *offsets,
                                                                 .configs = *configs,
                                                                 .transactions = *transactions,
                                                                 .identities = *identities,
                                                                 .sasl = *sasl,
                                                                 .scram_credentials = *scram_credentials,
                                                                 .authorizer = *authorizer,
                                                                 .cluster_id = ""});
    server = std::make_unique<kafka::KafkaServer>(*services, ctx.loop(), net::ServerLimits{});
    auto port = server->listen({"127.0.0.1", 0});
    BOOST_REQUIRE_MESSAGE(port.ok(), (port.ok() ? "" : port.error().message));
    port_ = port.value();
    connect();
  }

  // A new connection (the previous one, if any, is closed).
  void connect() {
    if (fd >= 0) ::close(fd);
    inbox.clear();
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }

  ~WirePath() {
    if (fd >= 0) ::close(fd);
    bool down = false;
    server->shutdown(1000, [&] { down = true; });
    ctx.run_until([&] { return down; }, 5s);
    server.reset();
    bool closed = false;
    identities->close([&] { closed = true; });
    ctx.run_until([&] { return closed; }, 5s);
    identities.reset();
    transactions.reset();
    groups.reset();
    offsets.reset();
  }

  template <typename Msg>
  int32_t send(const Msg& body, int16_t version) {
    msg::RequestHeader h;
    h.request_api_key = Msg::kApiKey;
    h.request_api_version = version;
    h.correlation_id = ++correlation;
    h.client_id = "data-path-test";
    ByteWriter w;
    w.be<int32_t>(0);
    h.encode(w, msg::request_header_version(Msg::kApiKey, version));
    body.encode(w, version);
    w.patch_be<int32_t>(0, static_cast<int32_t>(w.size() - 4));
    const Bytes frame = w.take();
    size_t sent = 0;
    while (sent < frame.size()) {
      ssize_t n = ::write(fd, frame.data() + sent, frame.size() - sent);
      if (n > 0) sent += static_cast<size_t>(n);
      else ctx.run_until([] { return false; }, 1ms);
    }
    return h.correlation_id;
  }

  // Reads what the server wrote; false when the connection was closed.
  bool drain() {
    uint8_t buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) inbox.insert(inbox.end(), buf, buf + n);
      if (n == 0) return false;
      if (n < 0) return true;
    }
  }

  // The next response frame (without its length), or nullopt if the server closed the connection.
  std::optional<Bytes> next_frame(std::chrono::milliseconds limit = 20s) {
    uv::Timer tick(ctx.loop());
    std::function<void()> rearm = [&] { tick.start(2ms, rearm); };
    rearm();
    bool open = true;
    auto have_frame = [&] {
      if (inbox.size() < 4) return false;
      const uint32_t len = (uint32_t(inbox[0]) << 24) | (uint32_t(inbox[1]) << 16) | (uint32_t(inbox[2]) << 8) | inbox[3];
      return inbox.size() >= 4 + len;
    };
    ctx.run_until([&] {
      open = drain() && open;
      return have_frame() || !open;
    }, limit);
    tick.stop();
    if (!have_frame()) return std::nullopt;
    const uint32_t len = (uint32_t(inbox[0]) << 24) | (uint32_t(inbox[1]) << 16) | (uint32_t(inbox[2]) << 8) | inbox[3];
    Bytes frame(inbox.begin() + 4, inbox.begin() + 4 + len);
    inbox.erase(inbox.begin(), inbox.begin() + 4 + len);
    return frame;
  }

  template <typename Msg>
  Msg receive(int32_t correlation_id, int16_t version) {
    auto frame = next_frame();
    BOOST_REQUIRE_MESSAGE(frame.has_value(), "the bridge closed the connection");
    ByteReader r(*frame);
    msg::ResponseHeader h;
    h.decode(r, msg::response_header_version(Msg::kApiKey, version));
    BOOST_REQUIRE(h.correlation_id == correlation_id);
    Msg m;
    m.decode(r, version);
    BOOST_TEST(r.empty());
    return m;
  }

  msg::ProduceResponse produce_wire(const std::string& topic, const Bytes& records, int16_t version, int16_t acks = -1) {
    msg::ProduceRequest req;
    req.acks = acks;
    req.timeout_ms = 30000;
    auto& t = req.topic_data.emplace_back();
    t.name = topic;
    auto& p = t.partition_data.emplace_back();
    p.index = 0;
    p.records = records;
    return receive<msg::ProduceResponse>(send(req, version), version);
  }

  msg::FetchRequest fetch_request(const std::string& topic, int64_t offset) {
    msg::FetchRequest req;
    req.max_wait_ms = 0;
    req.min_bytes = 1;
    req.max_bytes = 50 << 20;
    req.session_id = 0;
    req.session_epoch = -1;
    auto& t = req.topics.emplace_back();
    t.topic = topic;
    auto& p = t.partitions.emplace_back();
    p.partition = 0;
    p.fetch_offset = offset;
    p.partition_max_bytes = 1 << 20;
    return req;
  }

  msg::ListOffsetsResponse list_offsets_wire(const std::string& topic, std::vector<int64_t> timestamps, int16_t version) {
    msg::ListOffsetsRequest req;
    req.replica_id = -1;
    auto& t = req.topics.emplace_back();
    t.name = topic;
    for (int64_t ts : timestamps) {
      auto& p = t.partitions.emplace_back();
      p.partition_index = 0;
      p.timestamp = ts;
    }
    return receive<msg::ListOffsetsResponse>(send(req, version), version);
  }
};

}  // namespace

BOOST_FIXTURE_TEST_CASE(kafka_clients_produce_fetch_and_list_offsets_through_the_handlers, WirePath) {
  const std::string topic = create_topic();
  auto rs = sample_records();
  for (int16_t version : {3, 7, 9, 11}) {
    auto resp = produce_wire(topic, encode({rs[0]}, {}), version);
    BOOST_REQUIRE(resp.responses.size() == 1u);
    const auto& pr = resp.responses[0].partition_responses.at(0);
    BOOST_TEST(pr.error_code == 0);
    BOOST_TEST(pr.base_offset == (version == 3 ? 0 : version == 7 ? 1 : version == 9 ? 2 : 3));
    BOOST_TEST(pr.log_append_time_ms == -1);
  }
  for (int16_t version : {4, 7, 11, 12}) {
    msg::FetchRequest req = fetch_request(topic, 1);
    auto resp = receive<msg::FetchResponse>(send(req, version), version);
    BOOST_TEST(resp.error_code == 0);
    BOOST_TEST(resp.session_id == 0);
    BOOST_REQUIRE(resp.responses.size() == 1u);
    const auto& pd = resp.responses[0].partitions.at(0);
    BOOST_TEST(pd.error_code == 0);
    BOOST_TEST(pd.high_watermark == 4);
    BOOST_TEST(pd.last_stable_offset == 4);
    BOOST_REQUIRE(pd.records.has_value());
    BOOST_TEST(pd.records->to_bytes() == encode({rs[0], rs[0], rs[0]}, as_fetched(1)), boost::test_tools::per_element());
  }
  for (int16_t version : {1, 5, 7, 8}) {
    auto one = [&](int64_t ts) {
      auto resp = list_offsets_wire(topic, {ts}, version);
      BOOST_REQUIRE(resp.topics.at(0).partitions.size() == 1u);
      return resp.topics[0].partitions[0];
    };
    auto latest = one(kLatestTimestamp());
    BOOST_TEST(latest.error_code == 0);
    BOOST_TEST(latest.offset == 4);
    BOOST_TEST(latest.timestamp == -1);
    BOOST_TEST(one(kEarliestTimestamp()).offset == 0);
    BOOST_TEST(one(rs[0].timestamp).offset == 0);
    BOOST_TEST(one(rs[0].timestamp + 1).offset == -1);
    if (version >= 4) {  // Kafka: the leader epoch of the offset found, -1 when none is
      BOOST_TEST(latest.leader_epoch == 0);
      BOOST_TEST(one(kEarliestTimestamp()).leader_epoch == 0);
      BOOST_TEST(one(rs[0].timestamp + 1).leader_epoch == -1);
    }
    if (version >= 7) {
      auto max = one(kMaxTimestamp());
      BOOST_TEST(max.offset == 0);
      BOOST_TEST(max.timestamp == rs[0].timestamp);
    }
  }
}

BOOST_FIXTURE_TEST_CASE(produce_errors_are_per_partition_and_decoding_rules_hold, WirePath) {
  const std::string topic = create_topic();
  kafka::BatchSettings zstd;
  zstd.compression = kafka::Compression::kZstd;
  const Bytes zstd_batch = encode(std::vector<TestRecord>(2), zstd);
  auto old = produce_wire(topic, zstd_batch, 3);
  BOOST_TEST(old.responses[0].partition_responses[0].error_code == to_int16(ErrorCode::kUnsupportedCompressionType));
  BOOST_TEST(old.responses[0].partition_responses[0].base_offset == -1);
  auto ok = produce_wire(topic, zstd_batch, 7);
  BOOST_TEST(ok.responses[0].partition_responses[0].error_code == 0);

  Bytes corrupt = encode(std::vector<TestRecord>(1), {});
  corrupt.back() ^= 0xff;
  auto crc = produce_wire(topic, corrupt, 9);
  BOOST_TEST(crc.responses[0].partition_responses[0].error_code == to_int16(ErrorCode::kCorruptMessage));
  BOOST_TEST(crc.responses[0].partition_responses[0].error_message.has_value());

  auto unknown = produce_wire(kib::test::unique_name("nope"), encode(std::vector<TestRecord>(1), {}), 7);
  BOOST_TEST(unknown.responses[0].partition_responses[0].error_code ==
             to_int16(ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(list_offsets_wire(topic, {kLatestTimestamp()}, 5).topics[0].partitions[0].offset == 2);
}

BOOST_FIXTURE_TEST_CASE(acks_zero_gets_no_response_but_appends, WirePath) {
  const std::string topic = create_topic();
  msg::ProduceRequest req;
  req.acks = 0;
  req.timeout_ms = 1000;
  auto& t = req.topic_data.emplace_back();
  t.name = topic;
  auto& p = t.partition_data.emplace_back();
  p.index = 0;
  p.records = encode(std::vector<TestRecord>(3), {});
  send(req, 7);
  // The next response on the connection is the ListOffsets one. Requests are pipelined, so it
  // may be answered before the acks=0 append lands: ask until it shows.
  int64_t latest = -1;
  for (int i = 0; i < 100 && latest != 3; ++i) {
    latest = list_offsets_wire(topic, {kLatestTimestamp()}, 5).topics[0].partitions[0].offset;
    if (latest != 3) ctx.run_until([] { return false; }, 20ms);
  }
  BOOST_TEST(latest == 3);
}

BOOST_FIXTURE_TEST_CASE(fetch_sessions_are_never_created_and_unknown_ones_are_refused, WirePath) {
  const std::string topic = create_topic();
  produce_wire(topic, encode(std::vector<TestRecord>(1), {}), 7);
  // A client asking for a new session gets session 0 ("none") and full data.
  msg::FetchRequest open = fetch_request(topic, 0);
  open.session_epoch = 0;
  auto& forgotten = open.forgotten_topics_data.emplace_back();
  forgotten.topic = "ignored";
  forgotten.partitions = {3};
  auto first = receive<msg::FetchResponse>(send(open, 12), 12);
  BOOST_TEST(first.error_code == 0);
  BOOST_TEST(first.session_id == 0);
  BOOST_TEST(first.responses.at(0).partitions.at(0).records.value_or(Bytes()).size() > 0u);
  // An incremental request names a session this bridge never issued.
  msg::FetchRequest incremental = fetch_request(topic, 1);
  incremental.session_id = 1234;
  incremental.session_epoch = 1;
  auto refused = receive<msg::FetchResponse>(send(incremental, 11), 11);
  BOOST_TEST(refused.error_code == to_int16(ErrorCode::kFetchSessionIdNotFound));
  BOOST_TEST(refused.responses.empty());
  // Closing a session (epoch -1) is a full sessionless fetch.
  msg::FetchRequest close = fetch_request(topic, 0);
  close.session_id = 1234;
  close.session_epoch = -1;
  auto closed = receive<msg::FetchResponse>(send(close, 11), 11);
  BOOST_TEST(closed.error_code == 0);
  BOOST_TEST(closed.responses.at(0).partitions.at(0).error_code == 0);
}

BOOST_FIXTURE_TEST_CASE(list_offsets_refuses_a_partition_listed_twice, WirePath) {
  const std::string topic = create_topic();
  auto resp = list_offsets_wire(topic, {kLatestTimestamp(), kEarliestTimestamp()}, 5);
  for (const auto& p : resp.topics[0].partitions) BOOST_TEST(p.error_code == to_int16(ErrorCode::kInvalidRequest));
}

// DeleteTopics' service: the Iggy topic goes, then in one state job every row of the topic
// (topics, committed offsets, producer batches; other topics' rows stay), then each listener
// hears of it once; the log forgets the partition's offsets, so the topic created again under
// the name starts at 0 with a new topic id.
BOOST_FIXTURE_TEST_CASE(remove_deletes_state_tells_listeners_and_a_recreated_topic_starts_afresh, DataPath) {
  struct Recorder final : TopicListener {
    std::vector<std::string> deleted;
    std::vector<std::pair<std::string, int32_t>> grown;
    void on_topic_deleted(const std::string& n) override { deleted.push_back(n); }
    void on_partitions_added(const std::string& n, int32_t total) override { grown.emplace_back(n, total); }
  } rec;
  catalog->add_listener(&rec);
  const std::string topic = create_topic(2);
  const std::string other = create_topic(1);
  const TopicId old_id = catalog->find(topic)->topic_id;
  BOOST_TEST((produce(topic, 0, sample_records()).error == ErrorCode::kNone));
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 5);
  auto exec = [&](const std::string& sql) {
    BOOST_REQUIRE(state->run_blocking([&](SQLite::Database& db) { db.exec(sql); }).ok());
  };
  auto count = [&](const std::string& sql) {
    int64_t n = -1;
    BOOST_REQUIRE(state->run_blocking([&](SQLite::Database& db) { n = db.execAndGet(sql).getInt64(); }).ok());
    return n;
  };
  for (const auto& t : {topic, other}) {
    exec("INSERT INTO committed_offsets(group_id, topic, partition, committed_offset, commit_time) VALUES ('g', '" + t +
         "', 0, 3, 0)");
    exec("INSERT INTO producer_batches(producer_id, topic, partition, producer_epoch, first_sequence, last_sequence, "
         "base_offset, appended_at) VALUES (7, '" + t + "', 1, 0, 0, 4, 0, 0)");
  }

  // Grow first: the listener hears the new count, and the KRaft texts for same and fewer.
  auto grow = [&](int32_t total, bool validate_only = false) {
    std::optional<Status> out;
    catalog->create_partitions(topic, total, validate_only, [&](Status s) { out.emplace(std::move(s)); });
    ctx.run_until([&] { return out.has_value(); });
    BOOST_REQUIRE(out.has_value());
    return *out;
  };
  BOOST_TEST(grow(3).ok());
  BOOST_TEST(catalog->find(topic)->partitions == 3);
  BOOST_TEST((rec.grown == std::vector<std::pair<std::string, int32_t>>{{topic, 3}}));
  Status same = grow(3);
  BOOST_TEST((!same.ok() && bridge::to_kafka_error(same.error()) == ErrorCode::kInvalidPartitions));
  BOOST_TEST((!same.ok() && same.error().message == "Topic already has 3 partition(s)."));
  Status fewer = grow(2, true);
  BOOST_TEST((!fewer.ok() && fewer.error().message ==
                                 "The topic " + topic + " currently has 3 partition(s); 2 would not be an increase."));

  std::optional<Result<RemovedTopic>> removed;
  catalog->remove(topic, [&](Result<RemovedTopic> r) { removed.emplace(std::move(r)); });
  ctx.run_until([&] { return removed.has_value(); });
  BOOST_REQUIRE(removed.has_value());
  BOOST_REQUIRE_MESSAGE(removed->ok(), (removed->ok() ? "" : removed->error().message));
  BOOST_TEST(removed->value().name == topic);
  BOOST_TEST((removed->value().topic_id == old_id));
  BOOST_TEST((rec.deleted == std::vector<std::string>{topic}));
  BOOST_TEST(catalog->find(topic) == nullptr);
  BOOST_TEST(count("SELECT count(*) FROM topics WHERE name = '" + topic + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM committed_offsets WHERE topic = '" + topic + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM producer_batches WHERE topic = '" + topic + "'") == 0);
  BOOST_TEST(count("SELECT count(*) FROM committed_offsets WHERE topic = '" + other + "'") == 1);
  BOOST_TEST(count("SELECT count(*) FROM producer_batches WHERE topic = '" + other + "'") == 1);
  BOOST_TEST((list_offsets(topic, 0, kLatestTimestamp).error == ErrorCode::kUnknownTopicOrPartition));

  // Gone: a second delete is UNKNOWN_TOPIC_OR_PARTITION, and the listener is not told again.
  std::optional<Result<RemovedTopic>> again;
  catalog->remove(topic, [&](Result<RemovedTopic> r) { again.emplace(std::move(r)); });
  ctx.run_until([&] { return again.has_value(); });
  BOOST_TEST((again.has_value() && !again->ok() &&
              bridge::to_kafka_error(again->error()) == ErrorCode::kUnknownTopicOrPartition));
  BOOST_TEST(rec.deleted.size() == 1u);

  // The same name again: a new topic id, offsets from 0.
  CreateTopicRequest req;
  req.name = topic;
  req.partitions = 1;
  std::optional<Result<TopicMetadata>> made;
  catalog->create(req, [&](Result<TopicMetadata> r) { made.emplace(std::move(r)); });
  ctx.run_until([&] { return made.has_value(); });
  BOOST_REQUIRE((made.has_value() && made->ok()));
  BOOST_TEST((made->value().topic_id != old_id));
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 0);
  std::vector<TestRecord> one(1);
  one[0].value = "again";
  ProduceResult pr = produce(topic, 0, one);
  BOOST_TEST((pr.error == ErrorCode::kNone));
  BOOST_TEST(pr.base_offset() == 0);
  BOOST_TEST(list_offsets(topic, 0, kLatestTimestamp).offset() == 1);
  catalog->remove_listener(&rec);
}

// Kafka 4 refuses Produce v0-2 (KIP-896) while advertising them (KAFKA-18659): the request's
// header is rejected and the connection closed, before the body is read.
BOOST_FIXTURE_TEST_CASE(produce_below_v3_closes_the_connection_and_nothing_is_written, WirePath) {
  const std::string topic = create_topic();
  msg::ProduceRequest req;
  req.acks = 1;
  auto& t = req.topic_data.emplace_back();
  t.name = topic;
  auto& p = t.partition_data.emplace_back();
  p.index = 0;
  p.records = Bytes{0, 0, 0, 0};  // a legacy message set is never looked at
  send(req, 2);
  BOOST_TEST(!next_frame(5s).has_value());  // closed, no answer
  connect();
  auto latest = list_offsets_wire(topic, {kLatestTimestamp()}, 5);
  BOOST_TEST(latest.topics[0].partitions[0].offset == 0);
}

BOOST_AUTO_TEST_SUITE_END()
