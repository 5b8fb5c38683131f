// IggyClient against a real iggy-server (tests/support/iggy_harness): every command, its reply
// and its documented error paths.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "iggy/client.h"
#include "iggy/errors.h"
#include "iggy/user_headers.h"
#include "support/iggy_harness.h"

using namespace kib;
using namespace kib::iggy;
using kib::test::IggyTestContext;
namespace utf = boost::unit_test;

namespace {

ByteSpan span_of(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
std::string str(ByteSpan s) { return std::string(s.begin(), s.end()); }

// A test with its own stream (deleted afterwards) and helpers that run one call to completion.
struct StreamFixture {
  IggyTestContext ctx;
  IggyClient& client = ctx.client();
  std::string stream_name = kib::test::unique_name("s");
  Identifier stream = Identifier::named(stream_name);

  StreamFixture() {
    auto s = ctx.await<StreamInfo>([&](auto cb) { client.create_stream(stream_name, cb); });
    BOOST_REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
    BOOST_TEST(s->name == stream_name);
  }
  ~StreamFixture() {
    auto r = ctx.await<Unit>([&](auto cb) { client.delete_stream(stream, cb); });
    BOOST_TEST(r.ok());
  }

  TopicInfo create_topic(const std::string& name, uint32_t partitions = 1) {
    TopicConfig c;
    c.name = name;
    c.partitions_count = partitions;
    auto t = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
    BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
    return *t;
  }

  SendConfirmation send(const std::string& topic, uint32_t partition, const std::vector<std::string>& payloads) {
    std::vector<OutgoingMessage> msgs(payloads.size());
    for (size_t i = 0; i < payloads.size(); ++i) msgs[i].payload = span_of(payloads[i]);
    auto r = ctx.await<SendConfirmation>([&](auto cb) {
      client.send_messages(stream, Identifier::named(topic), Partitioning::partition(partition), msgs, cb);
    });
    BOOST_REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return *r;
  }

  Result<PolledMessages> poll(const std::string& topic, uint32_t partition, PollingStrategy strategy,
                              uint32_t count = 100, Consumer consumer = Consumer::consumer(Identifier::numeric(1))) {
    PollRequest q;
    q.consumer = consumer;
    q.stream = stream;
    q.topic = Identifier::named(topic);
    q.partition_id = partition;
    q.strategy = strategy;
    q.count = count;
    return ctx.await<PolledMessages>([&](auto cb) { client.poll_messages(q, cb); });
  }
};

void expect_iggy_error(const Error& e, uint32_t code) {
  BOOST_TEST((e.domain == ErrorDomain::kIggy), e.message);
  BOOST_TEST(e.code == code, e.message);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(iggy_client, *utf::precondition(kib::test::iggy_available))

BOOST_AUTO_TEST_CASE(ping_get_me_and_stats_work_as_root) {
  IggyTestContext ctx;
  auto p = ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); });
  BOOST_TEST(p.ok());
  auto me = ctx.await<ClientInfo>([&](auto cb) { ctx.client().get_me(cb); });
  BOOST_REQUIRE_MESSAGE(me.ok(), (me.ok() ? "" : me.error().message));
  BOOST_TEST(me->user_id == 0u);
  BOOST_TEST(me->transport == 1);
  BOOST_TEST(!me->address.empty());
  auto stats = ctx.await<Stats>([&](auto cb) { ctx.client().get_stats(cb); });
  BOOST_REQUIRE_MESSAGE(stats.ok(), (stats.ok() ? "" : stats.error().message));
  BOOST_TEST(stats->server_version == "0.9.0-edge.5");
  BOOST_TEST(stats->clients_count >= 1u);
  BOOST_TEST(ctx.pool().connection(0).login_info().server_version == "0.9.0-edge.5");
  BOOST_TEST(ctx.pool().connection(0).login_info().server_protocol_version == wire::kProtocolVersion);
}

BOOST_AUTO_TEST_CASE(callbacks_never_run_inside_the_call) {
  IggyTestContext ctx;
  bool called = false;
  ctx.client().ping([&](Result<Unit>) { called = true; });
  BOOST_TEST(!called);
  bool invalid_called = false;
  ctx.client().create_stream("", [&](Result<StreamInfo> r) {
    invalid_called = true;
    BOOST_TEST((r.error().domain == ErrorDomain::kInvalid));
  });
  BOOST_TEST(!invalid_called);
  ctx.run_until([&] { return called && invalid_called; });
  BOOST_TEST(called);
  BOOST_TEST(invalid_called);
}

BOOST_FIXTURE_TEST_CASE(streams_get_update_purge_and_duplicate_name, StreamFixture) {
  auto got = ctx.await<std::optional<StreamInfo>>([&](auto cb) { client.get_stream(stream, cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->name == stream_name);
  BOOST_TEST((*got)->topics_count == 0u);

  auto dup = ctx.await<StreamInfo>([&](auto cb) { client.create_stream(stream_name, cb); });
  BOOST_REQUIRE(!dup.ok());
  expect_iggy_error(dup.error(), code::kStreamNameAlreadyExists);

  auto all = ctx.await<std::vector<StreamInfo>>([&](auto cb) { client.get_streams(cb); });
  BOOST_REQUIRE(all.ok());
  bool found = false;
  for (const auto& s : *all) found |= s.name == stream_name;
  BOOST_TEST(found);

  std::string renamed = stream_name + "-r";
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.update_stream(stream, renamed, cb); }).ok());
  auto by_new = ctx.await<std::optional<StreamInfo>>([&](auto cb) { client.get_stream(Identifier::named(renamed), cb); });
  BOOST_REQUIRE(by_new.ok());
  BOOST_TEST(by_new->has_value());
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.update_stream(Identifier::named(renamed), stream_name, cb); }).ok());
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.purge_stream(stream, cb); }).ok());
}

BOOST_AUTO_TEST_CASE(missing_stream_reads_as_empty_and_writes_fail_with_stream_not_found) {
  IggyTestContext ctx;
  IggyClient& client = ctx.client();
  auto missing = Identifier::named(kib::test::unique_name("nope"));
  auto got = ctx.await<std::optional<StreamInfo>>([&](auto cb) { client.get_stream(missing, cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_TEST(!got->has_value());
  auto del = ctx.await<Unit>([&](auto cb) { client.delete_stream(missing, cb); });
  BOOST_REQUIRE(!del.ok());
  expect_iggy_error(del.error(), code::kStreamIdNotFound);
  auto topics = ctx.await<std::vector<TopicInfo>>([&](auto cb) { client.get_topics(missing, cb); });
  BOOST_REQUIRE(topics.ok());
  BOOST_TEST(topics->empty());
  TopicConfig c;
  c.name = "t";
  auto t = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(missing, c, cb); });
  BOOST_REQUIRE(!t.ok());
  expect_iggy_error(t.error(), code::kStreamIdNotFound);
  PollRequest q;
  q.stream = missing;
  q.topic = Identifier::named("t");
  q.partition_id = 0;
  auto p = ctx.await<PolledMessages>([&](auto cb) { client.poll_messages(q, cb); });
  BOOST_REQUIRE(!p.ok());
  expect_iggy_error(p.error(), code::kStreamIdNotFound);
  uint8_t b = 1;
  OutgoingMessage m;
  m.payload = ByteSpan(&b, 1);
  auto s = ctx.await<SendConfirmation>([&](auto cb) {
    client.send_messages(missing, Identifier::named("t"), Partitioning::partition(0),
                         std::span<const OutgoingMessage>(&m, 1), cb);
  });
  BOOST_REQUIRE(!s.ok());
  expect_iggy_error(s.error(), code::kResourceNotFound);
}

BOOST_FIXTURE_TEST_CASE(topics_create_with_options_get_update_duplicate_purge_delete, StreamFixture) {
  TopicConfig c;
  c.name = "orders";
  c.partitions_count = 3;
  c.compression = CompressionAlgorithm::kGzip;
  c.message_expiry_us = 3'600'000'000ull;
  c.max_topic_size = 2ull * 1024 * 1024 * 1024;
  c.segment_size = 1024 * 1024;
  c.enforce_fsync = true;
  c.messages_required_to_save = 1;
  c.replication_factor = 1;
  auto t = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
  BOOST_REQUIRE_MESSAGE(t.ok(), (t.ok() ? "" : t.error().message));
  BOOST_TEST(t->name == "orders");
  BOOST_TEST(t->partitions_count == 3u);
  BOOST_REQUIRE(t->partitions.size() == 3u);
  BOOST_TEST(t->partitions[2].id == 2u);
  BOOST_TEST((t->compression == CompressionAlgorithm::kGzip));
  BOOST_TEST(t->message_expiry_us == 3'600'000'000ull);
  BOOST_TEST(t->max_topic_size == 2ull * 1024 * 1024 * 1024);
  auto explicit_opts = parse_user_headers(t->explicit_options);
  BOOST_REQUIRE(explicit_opts.ok());
  bool saw_fsync = false, saw_required = false;
  for (const auto& e : *explicit_opts) {
    saw_fsync |= e.key_string() == "enforce_fsync";
    saw_required |= e.key_string() == "messages_required_to_save";
  }
  BOOST_TEST(saw_fsync);
  BOOST_TEST(saw_required);

  auto dup = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
  BOOST_REQUIRE(!dup.ok());
  expect_iggy_error(dup.error(), code::kTopicNameAlreadyExists);

  TopicUpdate u;
  u.name = "orders";
  u.message_expiry_us = 7'200'000'000ull;
  u.compression = CompressionAlgorithm::kNone;
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.update_topic(stream, Identifier::named("orders"), u, cb); }).ok());
  auto got = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, Identifier::named("orders"), cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->message_expiry_us == 7'200'000'000ull);
  BOOST_TEST(((*got)->compression == CompressionAlgorithm::kNone));

  auto list = ctx.await<std::vector<TopicInfo>>([&](auto cb) { client.get_topics(stream, cb); });
  BOOST_REQUIRE(list.ok());
  BOOST_REQUIRE(list->size() == 1u);
  BOOST_TEST((*list)[0].name == "orders");

  auto details = ctx.await<std::optional<StreamInfo>>([&](auto cb) { client.get_stream(stream, cb); });
  BOOST_REQUIRE(details.ok());
  BOOST_REQUIRE((*details)->topics.size() == 1u);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.purge_topic(stream, Identifier::named("orders"), cb); }).ok());
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_topic(stream, Identifier::named("orders"), cb); }).ok());
  auto gone = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, Identifier::named("orders"), cb); });
  BOOST_REQUIRE(gone.ok());
  BOOST_TEST(!gone->has_value());
  auto del = ctx.await<Unit>([&](auto cb) { client.delete_topic(stream, Identifier::named("orders"), cb); });
  BOOST_REQUIRE(!del.ok());
  expect_iggy_error(del.error(), code::kTopicIdNotFound);
}

BOOST_FIXTURE_TEST_CASE(topic_option_errors_come_back_as_iggy_codes, StreamFixture) {
  TopicConfig c;
  c.name = "bad";
  c.messages_required_to_save = 0;
  auto r = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, c, cb); });
  BOOST_REQUIRE(!r.ok());
  expect_iggy_error(r.error(), code::kInvalidOptionValue);
  TopicConfig big;
  big.name = "big";
  big.replication_factor = 3;
  auto rf = ctx.await<TopicInfo>([&](auto cb) { client.create_topic(stream, big, cb); });
  BOOST_REQUIRE(!rf.ok());
  BOOST_TEST((rf.error().domain == ErrorDomain::kInvalid));
}

BOOST_FIXTURE_TEST_CASE(partitions_create_delete_and_segments, StreamFixture) {
  create_topic("p", 2);
  auto topic = Identifier::named("p");
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.create_partitions(stream, topic, 3, cb); }).ok());
  auto t = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, topic, cb); });
  BOOST_REQUIRE(t.ok());
  BOOST_TEST((*t)->partitions_count == 5u);
  BOOST_TEST((*t)->partitions.back().id == 4u);
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_partitions(stream, topic, 2, cb); }).ok());
  t = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, topic, cb); });
  BOOST_REQUIRE(t.ok());
  BOOST_TEST((*t)->partitions_count == 3u);
  auto too_many = ctx.await<Unit>([&](auto cb) { client.delete_partitions(stream, topic, 10, cb); });
  BOOST_REQUIRE(!too_many.ok());
  expect_iggy_error(too_many.error(), code::kInvalidPartitionsCount);
  // No sealed segment yet: a successful no-op.
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_segments(stream, topic, 0, 1, cb); }).ok());
  auto missing = ctx.await<Unit>([&](auto cb) { client.delete_segments(stream, topic, 42, 1, cb); });
  BOOST_REQUIRE(!missing.ok());
  expect_iggy_error(missing.error(), code::kPartitionNotFound);
}

BOOST_FIXTURE_TEST_CASE(send_then_poll_by_offset_first_last_next_and_timestamp, StreamFixture) {
  create_topic("m", 2);
  auto c1 = send("m", 1, {"a", "b", "c"});
  BOOST_TEST(c1.reported);
  BOOST_TEST(c1.base_offset == 0u);
  BOOST_TEST(c1.partition_id == 1u);
  BOOST_TEST(c1.message_count == 3u);
  auto c2 = send("m", 1, {"d", "e"});
  BOOST_TEST(c2.base_offset == 3u);

  auto all = poll("m", 1, PollingStrategy::offset(0));
  BOOST_REQUIRE_MESSAGE(all.ok(), (all.ok() ? "" : all.error().message));
  BOOST_REQUIRE(all->messages.size() == 5u);
  BOOST_TEST(all->current_offset == 4u);
  for (uint64_t i = 0; i < 5; ++i) BOOST_TEST(all->messages[i].offset == i);
  BOOST_TEST(str(all->messages[3].payload) == "d");
  BOOST_TEST(all->messages[0].timestamp_us > 0u);

  auto mid = poll("m", 1, PollingStrategy::offset(2), 2);
  BOOST_REQUIRE(mid.ok());
  BOOST_REQUIRE(mid->messages.size() == 2u);
  BOOST_TEST(str(mid->messages[0].payload) == "c");
  BOOST_TEST(str(mid->messages[1].payload) == "d");

  auto first = poll("m", 1, PollingStrategy::first(), 1);
  BOOST_REQUIRE(first.ok());
  BOOST_REQUIRE(first->messages.size() == 1u);
  BOOST_TEST(first->messages[0].offset == 0u);

  auto last = poll("m", 1, PollingStrategy::last(), 2);
  BOOST_REQUIRE(last.ok());
  BOOST_REQUIRE(last->messages.size() == 2u);
  BOOST_TEST(last->messages[0].offset == 3u);

  auto ts = poll("m", 1, PollingStrategy::timestamp(all->messages[3].timestamp_us), 10);
  BOOST_REQUIRE(ts.ok());
  BOOST_REQUIRE(!ts->messages.empty());
  BOOST_TEST(ts->messages[0].offset == 3u);

  // Next = stored offset + 1 (0 when nothing stored).
  auto consumer = Consumer::consumer(Identifier::named("reader"));
  auto next = poll("m", 1, PollingStrategy::next(), 2, consumer);
  BOOST_REQUIRE(next.ok());
  BOOST_REQUIRE(!next->messages.empty());
  BOOST_TEST(next->messages[0].offset == 0u);

  // The other partition is empty; beyond the end is empty, not an error.
  auto empty = poll("m", 0, PollingStrategy::first());
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->messages.empty());
  auto beyond = poll("m", 1, PollingStrategy::offset(100));
  BOOST_REQUIRE(beyond.ok());
  BOOST_TEST(beyond->messages.empty());
  BOOST_TEST(beyond->current_offset == 4u);

  auto t = ctx.await<std::optional<TopicInfo>>([&](auto cb) { client.get_topic(stream, Identifier::named("m"), cb); });
  BOOST_REQUIRE(t.ok());
  BOOST_TEST((*t)->partitions[1].messages_count == 5u);
  BOOST_TEST((*t)->partitions[1].current_offset == 4u);
  BOOST_TEST((*t)->partitions[0].messages_count == 0u);

  auto missing_partition = poll("m", 9, PollingStrategy::first());
  BOOST_REQUIRE(!missing_partition.ok());
  expect_iggy_error(missing_partition.error(), code::kPartitionNotFound);
}

BOOST_FIXTURE_TEST_CASE(messages_keep_ids_origin_timestamps_and_user_headers, StreamFixture) {
  create_topic("h");
  UserHeadersBuilder hb;
  BOOST_REQUIRE(hb.add_string("kafka.key", "k-1").ok());
  const uint8_t raw[] = {0, 255, 7};
  BOOST_REQUIRE(hb.add_raw("blob", ByteSpan(raw, 3)).ok());
  Bytes headers = hb.take();
  std::string p1 = "payload-1", p2 = "payload-2";
  std::vector<OutgoingMessage> msgs(2);
  msgs[0].id = U128{0xDEADBEEF, 0xCAFE};
  msgs[0].payload = span_of(p1);
  msgs[0].user_headers = headers;
  msgs[0].origin_timestamp_us = 1'600'000'000'000'000ull;
  msgs[1].id = U128{2, 0};
  msgs[1].payload = span_of(p2);
  msgs[1].origin_timestamp_us = 1'600'000'000'000'500ull;
  auto sent = ctx.await<SendConfirmation>([&](auto cb) {
    client.send_messages(stream, Identifier::named("h"), Partitioning::partition(0), msgs, cb);
  });
  BOOST_REQUIRE_MESSAGE(sent.ok(), (sent.ok() ? "" : sent.error().message));

  auto polled = poll("h", 0, PollingStrategy::first());
  BOOST_REQUIRE(polled.ok());
  BOOST_REQUIRE(polled->messages.size() == 2u);
  const MessageView& m = polled->messages[0];
  BOOST_TEST((m.id == U128{0xDEADBEEF, 0xCAFE}));
  BOOST_TEST(m.origin_timestamp_us == 1'600'000'000'000'000ull);
  BOOST_TEST(polled->messages[1].origin_timestamp_us == 1'600'000'000'000'500ull);
  BOOST_TEST(str(m.payload) == p1);
  auto parsed = parse_user_headers(m.user_headers);
  BOOST_REQUIRE(parsed.ok());
  BOOST_REQUIRE(parsed->size() == 2u);
  BOOST_TEST((*parsed)[0].value_string() == "k-1");
  BOOST_TEST((*parsed)[1].value.size() == 3u);
  BOOST_TEST(polled->messages[1].user_headers.empty());
  // Views stay valid as long as the PolledMessages (its buffer) lives.
  PolledMessages kept = std::move(polled.value());
  BOOST_TEST(str(kept.messages[1].payload) == p2);
}

BOOST_FIXTURE_TEST_CASE(many_messages_in_one_batch_and_balanced_and_key_partitioning, StreamFixture) {
  create_topic("bulk", 3);
  std::vector<std::string> payloads;
  for (int i = 0; i < 500; ++i) payloads.push_back("m" + std::to_string(i) + std::string(static_cast<size_t>(i % 50), 'x'));
  auto c = send("bulk", 2, payloads);
  BOOST_TEST(c.base_offset == 0u);
  auto polled = poll("bulk", 2, PollingStrategy::offset(0), 1000);
  BOOST_REQUIRE(polled.ok());
  BOOST_REQUIRE(polled->messages.size() == 500u);
  BOOST_TEST(str(polled->messages[499].payload) == payloads[499]);

  uint8_t one = 1;
  OutgoingMessage m;
  m.payload = ByteSpan(&one, 1);
  auto balanced = ctx.await<SendConfirmation>([&](auto cb) {
    client.send_messages(stream, Identifier::named("bulk"), Partitioning::balanced(), std::span<const OutgoingMessage>(&m, 1), cb);
  });
  BOOST_REQUIRE_MESSAGE(balanced.ok(), (balanced.ok() ? "" : balanced.error().message));
  const uint8_t key[] = {'k'};
  auto keyed = ctx.await<SendConfirmation>([&](auto cb) {
    client.send_messages(stream, Identifier::named("bulk"), Partitioning::messages_key(ByteSpan(key, 1)),
                         std::span<const OutgoingMessage>(&m, 1), cb);
  });
  BOOST_REQUIRE_MESSAGE(keyed.ok(), (keyed.ok() ? "" : keyed.error().message));
  BOOST_TEST(keyed->partition_id < 3u);
}

BOOST_FIXTURE_TEST_CASE(consumer_offsets_store_get_delete_and_beyond_end, StreamFixture) {
  create_topic("o", 1);
  auto topic = Identifier::named("o");
  auto consumer = Consumer::consumer(Identifier::named("c1"));
  auto none = ctx.await<std::optional<ConsumerOffsetInfo>>(
      [&](auto cb) { client.get_consumer_offset(consumer, stream, topic, 0u, cb); });
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(!none->has_value());

  auto empty_store = ctx.await<Unit>([&](auto cb) { client.store_consumer_offset(consumer, stream, topic, 0u, 0, cb); });
  BOOST_REQUIRE(!empty_store.ok());
  expect_iggy_error(empty_store.error(), code::kInvalidOffset);

  send("o", 0, {"a", "b", "c"});
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.store_consumer_offset(consumer, stream, topic, 0u, 1, cb); }).ok());
  auto got = ctx.await<std::optional<ConsumerOffsetInfo>>(
      [&](auto cb) { client.get_consumer_offset(consumer, stream, topic, 0u, cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST((*got)->stored_offset == 1u);
  BOOST_TEST((*got)->current_offset == 2u);

  auto next = poll("o", 0, PollingStrategy::next(), 10, consumer);
  BOOST_REQUIRE(next.ok());
  BOOST_REQUIRE(!next->messages.empty());
  BOOST_TEST(next->messages[0].offset == 2u);

  auto beyond = ctx.await<Unit>([&](auto cb) { client.store_consumer_offset(consumer, stream, topic, 0u, 3, cb); });
  BOOST_REQUIRE(!beyond.ok());
  expect_iggy_error(beyond.error(), code::kInvalidOffset);

  auto no_partition = ctx.await<Unit>(
      [&](auto cb) { client.store_consumer_offset(consumer, stream, topic, std::nullopt, 1, cb); });
  BOOST_REQUIRE(!no_partition.ok());
  expect_iggy_error(no_partition.error(), code::kResourceNotFound);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_consumer_offset(consumer, stream, topic, 0u, cb); }).ok());
  auto again = ctx.await<Unit>([&](auto cb) { client.delete_consumer_offset(consumer, stream, topic, 0u, cb); });
  BOOST_REQUIRE(!again.ok());
  expect_iggy_error(again.error(), code::kConsumerOffsetNotFound);

  auto missing_partition = ctx.await<std::optional<ConsumerOffsetInfo>>(
      [&](auto cb) { client.get_consumer_offset(consumer, stream, topic, 5u, cb); });
  BOOST_REQUIRE(!missing_partition.ok());
  expect_iggy_error(missing_partition.error(), code::kPartitionNotFound);
}

BOOST_FIXTURE_TEST_CASE(consumer_groups_create_join_sync_poll_store_leave_delete, StreamFixture) {
  create_topic("g", 2);
  auto topic = Identifier::named("g");
  send("g", 0, {"x0"});
  send("g", 1, {"y0", "y1"});
  auto g = ctx.await<ConsumerGroupInfo>([&](auto cb) { client.create_consumer_group(stream, topic, "workers", cb); });
  BOOST_REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message));
  BOOST_TEST(g->name == "workers");
  BOOST_TEST(g->partitions_count == 2u);
  BOOST_TEST(g->members_count == 0u);
  auto group = Identifier::named("workers");

  auto dup = ctx.await<ConsumerGroupInfo>([&](auto cb) { client.create_consumer_group(stream, topic, "workers", cb); });
  BOOST_REQUIRE(!dup.ok());
  expect_iggy_error(dup.error(), code::kConsumerGroupNameAlreadyExists);

  // Membership is per connection: pin every group call to connection 0.
  IggyClient member = client.pinned(0);
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { member.join_consumer_group(stream, topic, group, cb); }).ok());
  auto details = ctx.await<std::optional<ConsumerGroupInfo>>(
      [&](auto cb) { client.get_consumer_group(stream, topic, group, cb); });
  BOOST_REQUIRE(details.ok());
  BOOST_REQUIRE(details->has_value());
  BOOST_TEST((*details)->members_count == 1u);
  BOOST_REQUIRE((*details)->members.size() == 1u);
  BOOST_TEST((*details)->members[0].partitions.size() == 2u);

  auto sync = ctx.await<std::optional<ConsumerGroupAssignment>>(
      [&](auto cb) { member.sync_consumer_group(stream, topic, group, cb); });
  BOOST_REQUIRE(sync.ok());
  BOOST_REQUIRE(sync->has_value());
  BOOST_TEST((*sync)->partitions.size() == 2u);

  PollRequest q;
  q.consumer = Consumer::group(group);
  q.stream = stream;
  q.topic = topic;
  q.partition_id = 1;
  q.strategy = PollingStrategy::next();
  q.count = 10;
  auto polled = ctx.await<PolledMessages>([&](auto cb) { member.poll_messages(q, cb); });
  BOOST_REQUIRE(polled.ok());
  BOOST_TEST(!polled->fenced());
  BOOST_TEST(polled->messages.size() == 2u);
  BOOST_TEST(ctx.await<Unit>([&](auto cb) {
                  member.store_consumer_offset(Consumer::group(group), stream, topic, 1u, 1, cb);
                }).ok());
  auto stored = ctx.await<std::optional<ConsumerOffsetInfo>>(
      [&](auto cb) { member.get_consumer_offset(Consumer::group(group), stream, topic, 1u, cb); });
  BOOST_REQUIRE(stored.ok());
  BOOST_REQUIRE(stored->has_value());
  BOOST_TEST((*stored)->stored_offset == 1u);

  auto groups = ctx.await<std::vector<ConsumerGroupInfo>>([&](auto cb) { client.get_consumer_groups(stream, topic, cb); });
  BOOST_REQUIRE(groups.ok());
  BOOST_TEST(groups->size() == 1u);

  auto me = ctx.await<ClientInfo>([&](auto cb) { member.get_me(cb); });
  BOOST_REQUIRE(me.ok());
  BOOST_TEST(me->consumer_groups.size() == 1u);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { member.leave_consumer_group(stream, topic, group, cb); }).ok());
  auto not_member = ctx.await<std::optional<ConsumerGroupAssignment>>(
      [&](auto cb) { member.sync_consumer_group(stream, topic, group, cb); });
  BOOST_REQUIRE(not_member.ok());
  BOOST_TEST(!not_member->has_value());
  auto leave_again = ctx.await<Unit>([&](auto cb) { member.leave_consumer_group(stream, topic, group, cb); });
  BOOST_REQUIRE(!leave_again.ok());
  expect_iggy_error(leave_again.error(), code::kConsumerGroupMemberNotFound);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_consumer_group(stream, topic, group, cb); }).ok());
  auto gone = ctx.await<std::optional<ConsumerGroupInfo>>([&](auto cb) { client.get_consumer_group(stream, topic, group, cb); });
  BOOST_REQUIRE(gone.ok());
  BOOST_TEST(!gone->has_value());
  auto missing_topic = ctx.await<std::optional<ConsumerGroupInfo>>(
      [&](auto cb) { client.get_consumer_group(stream, Identifier::named("nope"), group, cb); });
  BOOST_REQUIRE(!missing_topic.ok());
  expect_iggy_error(missing_topic.error(), code::kTopicIdNotFound);
}

BOOST_AUTO_TEST_CASE(users_create_get_update_permissions_password_delete) {
  IggyTestContext ctx;
  IggyClient& client = ctx.client();
  std::string name = kib::test::unique_name("user");
  Permissions perms;
  perms.global.read_streams = true;
  perms.streams[0].poll_messages = true;
  perms.streams[0].topics[1].read_topic = true;
  auto u = ctx.await<UserInfo>([&](auto cb) { client.create_user(name, "secret1", UserStatus::kActive, perms, cb); });
  BOOST_REQUIRE_MESSAGE(u.ok(), (u.ok() ? "" : u.error().message));
  BOOST_TEST(u->username == name);
  BOOST_REQUIRE(u->permissions.has_value());
  BOOST_TEST((*u->permissions == perms));
  auto user = Identifier::named(name);

  auto dup = ctx.await<UserInfo>([&](auto cb) { client.create_user(name, "secret1", UserStatus::kActive, std::nullopt, cb); });
  BOOST_REQUIRE(!dup.ok());
  expect_iggy_error(dup.error(), code::kUserAlreadyExists);

  auto got = ctx.await<std::optional<UserInfo>>([&](auto cb) { client.get_user(user, cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_REQUIRE(got->has_value());
  BOOST_TEST(((*got)->status == UserStatus::kActive));

  auto all = ctx.await<std::vector<UserInfo>>([&](auto cb) { client.get_users(cb); });
  BOOST_REQUIRE(all.ok());
  BOOST_TEST(all->size() >= 2u);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.update_user(user, std::nullopt, UserStatus::kInactive, cb); }).ok());
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.update_permissions(user, std::nullopt, cb); }).ok());
  got = ctx.await<std::optional<UserInfo>>([&](auto cb) { client.get_user(user, cb); });
  BOOST_REQUIRE(got.ok());
  BOOST_TEST(((*got)->status == UserStatus::kInactive));
  BOOST_TEST(!(*got)->permissions.has_value());

  auto wrong = ctx.await<Unit>([&](auto cb) { client.change_password(user, "wrong-pw", "newsecret", cb); });
  BOOST_REQUIRE(!wrong.ok());
  expect_iggy_error(wrong.error(), code::kInvalidCredentials);
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.change_password(user, "secret1", "newsecret", cb); }).ok());

  auto root = ctx.await<Unit>([&](auto cb) { client.delete_user(Identifier::numeric(0), cb); });
  BOOST_REQUIRE(!root.ok());
  expect_iggy_error(root.error(), code::kCannotDeleteUser);

  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_user(user, cb); }).ok());
  auto missing = ctx.await<std::optional<UserInfo>>([&](auto cb) { client.get_user(user, cb); });
  BOOST_REQUIRE(missing.ok());
  BOOST_TEST(!missing->has_value());
  auto del_missing = ctx.await<Unit>([&](auto cb) { client.delete_user(user, cb); });
  BOOST_REQUIRE(!del_missing.ok());
  expect_iggy_error(del_missing.error(), code::kResourceNotFound);
}

BOOST_AUTO_TEST_CASE(bad_credentials_fail_queued_requests_with_invalid_credentials) {
  IggyTestContext ctx(kib::test::harness_pool_config(1, Credentials::password_login("iggy", "not-the-password")));
  auto r = ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); });
  BOOST_REQUIRE(!r.ok());
  expect_iggy_error(r.error(), code::kInvalidCredentials);
  BOOST_TEST(!is_retriable(r.error()));
  BOOST_TEST(ctx.pool().stats().login_refused);
  // Later calls fail fast with the same error while no connection is logged in.
  auto again = ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); });
  BOOST_REQUIRE(!again.ok());
  expect_iggy_error(again.error(), code::kInvalidCredentials);
}

BOOST_AUTO_TEST_CASE(user_without_permissions_is_refused_reads_and_sends) {
  IggyTestContext admin;
  std::string stream_name = kib::test::unique_name("perm");
  BOOST_REQUIRE(admin.await<StreamInfo>([&](auto cb) { admin.client().create_stream(stream_name, cb); }).ok());
  TopicConfig c;
  c.name = "t";
  BOOST_REQUIRE(admin.await<TopicInfo>([&](auto cb) { admin.client().create_topic(Identifier::named(stream_name), c, cb); }).ok());
  std::string name = kib::test::unique_name("nobody");
  BOOST_REQUIRE(admin.await<UserInfo>([&](auto cb) {
                       admin.client().create_user(name, "nobody-pw", UserStatus::kActive, std::nullopt, cb);
                     }).ok());
  {
    IggyTestContext ctx(kib::test::harness_pool_config(1, Credentials::password_login(name, "nobody-pw")));
    BOOST_TEST(ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); }).ok());
    uint8_t b = 1;
    OutgoingMessage m;
    m.payload = ByteSpan(&b, 1);
    auto s = ctx.await<SendConfirmation>([&](auto cb) {
      ctx.client().send_messages(Identifier::named(stream_name), Identifier::named("t"), Partitioning::partition(0),
                                 std::span<const OutgoingMessage>(&m, 1), cb);
    });
    BOOST_REQUIRE(!s.ok());
    expect_iggy_error(s.error(), code::kUnauthorized);
    auto st = ctx.await<Stats>([&](auto cb) { ctx.client().get_stats(cb); });
    BOOST_REQUIRE(!st.ok());
    expect_iggy_error(st.error(), code::kUnauthorized);
    auto cs = ctx.await<StreamInfo>([&](auto cb) { ctx.client().create_stream(kib::test::unique_name("x"), cb); });
    BOOST_REQUIRE(!cs.ok());
    expect_iggy_error(cs.error(), code::kUnauthorized);
  }
  BOOST_TEST(admin.await<Unit>([&](auto cb) { admin.client().delete_user(Identifier::named(name), cb); }).ok());
  BOOST_TEST(admin.await<Unit>([&](auto cb) { admin.client().delete_stream(Identifier::named(stream_name), cb); }).ok());
}

BOOST_AUTO_TEST_CASE(inactive_user_cannot_log_in) {
  IggyTestContext admin;
  std::string name = kib::test::unique_name("sleeper");
  BOOST_REQUIRE(admin.await<UserInfo>([&](auto cb) {
                       admin.client().create_user(name, "sleeper-pw", UserStatus::kInactive, std::nullopt, cb);
                     }).ok());
  {
    IggyTestContext ctx(kib::test::harness_pool_config(1, Credentials::password_login(name, "sleeper-pw")));
    auto r = ctx.await<Unit>([&](auto cb) { ctx.client().ping(cb); });
    BOOST_REQUIRE(!r.ok());
    expect_iggy_error(r.error(), code::kInvalidCredentials);  // inactive users look like bad credentials
  }
  BOOST_TEST(admin.await<Unit>([&](auto cb) { admin.client().delete_user(Identifier::named(name), cb); }).ok());
}

BOOST_AUTO_TEST_CASE(personal_access_tokens_create_list_login_delete) {
  IggyTestContext ctx;
  IggyClient& client = ctx.client();
  std::string name = kib::test::unique_name("pat");
  auto token = ctx.await<std::string>([&](auto cb) { client.create_personal_access_token(name, 0, cb); });
  BOOST_REQUIRE_MESSAGE(token.ok(), (token.ok() ? "" : token.error().message));
  BOOST_TEST(!token->empty());
  auto dup = ctx.await<std::string>([&](auto cb) { client.create_personal_access_token(name, 0, cb); });
  BOOST_REQUIRE(!dup.ok());
  expect_iggy_error(dup.error(), code::kPersonalAccessTokenAlreadyExists);
  auto list = ctx.await<std::vector<PersonalAccessTokenInfo>>([&](auto cb) { client.get_personal_access_tokens(cb); });
  BOOST_REQUIRE(list.ok());
  bool found = false;
  for (const auto& t : *list) found |= t.name == name && t.expiry_at_us == 0;
  BOOST_TEST(found);

  {
    IggyTestContext pat(kib::test::harness_pool_config(1, Credentials::personal_access_token(*token)));
    auto me = pat.await<ClientInfo>([&](auto cb) { pat.client().get_me(cb); });
    BOOST_REQUIRE_MESSAGE(me.ok(), (me.ok() ? "" : me.error().message));
    BOOST_TEST(me->user_id == 0u);
  }
  {
    IggyTestContext bad(kib::test::harness_pool_config(1, Credentials::personal_access_token("not-a-token")));
    auto r = bad.await<Unit>([&](auto cb) { bad.client().ping(cb); });
    BOOST_REQUIRE(!r.ok());
    expect_iggy_error(r.error(), code::kInvalidPersonalAccessToken);
  }
  BOOST_TEST(ctx.await<Unit>([&](auto cb) { client.delete_personal_access_token(name, cb); }).ok());
  list = ctx.await<std::vector<PersonalAccessTokenInfo>>([&](auto cb) { client.get_personal_access_tokens(cb); });
  BOOST_REQUIRE(list.ok());
  for (const auto& t : *list) BOOST_TEST(t.name != name);
}

BOOST_AUTO_TEST_CASE(identity_pools_keep_one_pool_per_credentials) {
  uv_loop_t loop;
  uv_loop_init(&loop);
  {
    IggyIdentityPools pools(&loop, kib::test::harness_pool_config(1));
    auto& root = pools.pool_for(Credentials::password_login("iggy", "iggy"));
    auto& same = pools.pool_for(Credentials::password_login("iggy", "iggy"));
    auto& other = pools.pool_for(Credentials::password_login("iggy", "wrong"), 1);
    BOOST_TEST(&root == &same);
    BOOST_TEST(&root != &other);
    BOOST_TEST(pools.identities() == 2u);
    std::optional<Result<Unit>> a, b;
    IggyClient(root).ping([&](Result<Unit> r) { a = std::move(r); });
    IggyClient(other).ping([&](Result<Unit> r) { b = std::move(r); });
    while (!a || !b) uv_run(&loop, UV_RUN_ONCE);
    BOOST_TEST(a->ok());
    BOOST_TEST(!b->ok());
    auto stats = pools.stats();
    BOOST_TEST(stats.size() == 2u);
    bool closed = false;
    pools.close([&] { closed = true; });
    while (!closed) uv_run(&loop, UV_RUN_ONCE);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  BOOST_TEST(uv_loop_close(&loop) == 0);
}

BOOST_AUTO_TEST_SUITE_END()
