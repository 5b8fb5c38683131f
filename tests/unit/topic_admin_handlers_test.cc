// DeleteTopics, CreatePartitions and DescribeTopicPartitions through the real KafkaServer on a
// loopback port, frames in and frames out, at the lowest and highest served versions. The
// catalog is idle (no Iggy), so these are the answers decided before Iggy is asked: Kafka's
// request checks (duplicates, name and id, cursor), unknown topic ids, an empty topic list, and
// LEADER_NOT_AVAILABLE for a topic that needs Iggy. The paths through Iggy are in
// tests/integration/data_path_test.cc and tests/system/test_admin_topics.py.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "handler_services_support.h"
#include "server/handlers/registry.h"
#include "server/kafka_server.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/create_partitions.h"
#include "kafka/protocol/generated/delete_topics.h"
#include "kafka/protocol/generated/describe_topic_partitions.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "state/state_store.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;

namespace {

int16_t code(ErrorCode c) { return to_int16(c); }


struct Server : test::IdleKafkaServer {};

struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "topic-admin-test") {}
};

msg::Uuid id_of(uint8_t b) {
  msg::Uuid u{};
  u.fill(b);
  return u;
}

msg::DeleteTopicsRequest::DeleteTopicState entry(std::optional<std::string> name, msg::Uuid id) {
  msg::DeleteTopicsRequest::DeleteTopicState e;
  e.name = std::move(name);
  e.topic_id = id;
  return e;
}

using DeleteResult = msg::DeleteTopicsResponse::DeletableTopicResult;

const DeleteResult* find_result(const msg::DeleteTopicsResponse& r, const std::optional<std::string>& name,
                                const msg::Uuid& id, int16_t error) {
  for (const auto& x : r.responses)
    if (x.name == name && x.topic_id == id && x.error_code == error) return &x;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topic_admin_handlers)

BOOST_AUTO_TEST_CASE(topic_admin_apis_are_registered_with_the_served_versions) {
  struct Expect {
    int16_t key, min, max, advertised_min;
  };
  for (auto e : {Expect{20, 1, 6, 1}, Expect{37, 0, 3, 0}, Expect{75, 0, 0, 0}}) {
    const HandlerSpec* spec = find_handler(e.key);
    BOOST_REQUIRE(spec);
    BOOST_TEST(spec->min_version == e.min);
    BOOST_TEST(spec->max_version == e.max);
    BOOST_TEST(spec->advertised_min == e.advertised_min);
  }
}

BOOST_AUTO_TEST_CASE(delete_topics_v6_checks_entries_as_the_kraft_controller_does) {
  Server s;
  Client c(s);
  msg::DeleteTopicsRequest req;
  req.timeout_ms = 1000;
  const msg::Uuid zero{}, dup = id_of(7), unknown = id_of(9);
  req.topics = {entry("a", zero),     entry("a", zero), entry("a", zero),   entry(std::nullopt, dup),
                entry(std::nullopt, dup), entry("b", dup), entry(std::nullopt, zero), entry(std::nullopt, unknown),
                entry("c", zero)};
  auto r = c.call<msg::DeleteTopicsResponse>(req, 6);
  // Two repeats of "a": two answers; "a" itself is not deleted.
  BOOST_TEST(std::count_if(r.responses.begin(), r.responses.end(), [](const DeleteResult& x) {
               return x.name == std::optional<std::string>("a");
             }) == 2);
  const auto* d = find_result(r, "a", zero, code(ErrorCode::kInvalidRequest));
  BOOST_REQUIRE(d);
  BOOST_TEST(d->error_message.value_or("") == "Duplicate topic name.");
  d = find_result(r, std::nullopt, dup, code(ErrorCode::kInvalidRequest));
  BOOST_REQUIRE(d);
  BOOST_TEST(d->error_message.value_or("") == "Duplicate topic id.");
  d = find_result(r, "b", dup, code(ErrorCode::kInvalidRequest));
  BOOST_REQUIRE(d);
  BOOST_TEST(d->error_message.value_or("") == "You may not specify both topic name and topic id.");
  d = find_result(r, std::nullopt, zero, code(ErrorCode::kInvalidRequest));
  BOOST_REQUIRE(d);
  BOOST_TEST(d->error_message.value_or("") == "Neither topic name nor id were specified.");
  d = find_result(r, std::nullopt, unknown, code(ErrorCode::kUnknownTopicId));
  BOOST_REQUIRE(d);
  BOOST_TEST(d->error_message.value_or("") == "This server does not host this topic ID.");
  // "c" needs Iggy, which this idle catalog does not reach: a retriable error, named.
  d = find_result(r, "c", zero, code(ErrorCode::kLeaderNotAvailable));
  BOOST_REQUIRE(d);
  BOOST_TEST(r.responses.size() == 7u);
}

BOOST_AUTO_TEST_CASE(delete_topics_v1_names_and_duplicates) {
  Server s;
  Client c(s);
  msg::DeleteTopicsRequest req;
  req.topic_names = {"x", "x", "y"};
  auto r = c.call<msg::DeleteTopicsResponse>(req, 1);
  BOOST_REQUIRE(r.responses.size() == 2u);
  BOOST_TEST(r.responses[0].name.value_or("") == "x");
  BOOST_TEST(r.responses[0].error_code == code(ErrorCode::kInvalidRequest));
  BOOST_TEST(r.responses[1].name.value_or("") == "y");
  BOOST_TEST(r.responses[1].error_code == code(ErrorCode::kLeaderNotAvailable));
  // Nothing at all: an empty answer.
  auto empty = c.call<msg::DeleteTopicsResponse>(msg::DeleteTopicsRequest{}, 6);
  BOOST_TEST(empty.responses.empty());
}

BOOST_AUTO_TEST_CASE(create_partitions_duplicates_are_invalid_request_at_v0_and_v3) {
  for (int16_t v : {int16_t{0}, int16_t{3}}) {
    Server s;
    Client c(s);
    msg::CreatePartitionsRequest req;
    req.timeout_ms = 1000;
    for (const char* n : {"a", "b", "a"}) {
      msg::CreatePartitionsRequest::CreatePartitionsTopic t;
      t.name = n;
      t.count = 3;
      t.assignments = std::nullopt;
      req.topics.push_back(t);
    }
    auto r = c.call<msg::CreatePartitionsResponse>(req, v);
    BOOST_REQUIRE(r.results.size() == 2u);
    BOOST_TEST(r.results[0].name == "a");
    BOOST_TEST(r.results[0].error_code == code(ErrorCode::kInvalidRequest));
    BOOST_TEST(r.results[0].error_message.value_or("") == "Duplicate topic name.");
    BOOST_TEST(r.results[1].name == "b");
    BOOST_TEST(r.results[1].error_code == code(ErrorCode::kLeaderNotAvailable));
  }
}

BOOST_AUTO_TEST_CASE(describe_topic_partitions_cursor_checks_and_empty_catalog) {
  Server s;
  Client c(s);
  msg::DescribeTopicPartitionsRequest req;
  req.topics = {{"a"}, {"b"}};
  req.cursor = msg::DescribeTopicPartitionsRequest::Cursor{"c", 0};  // not in the list
  auto r = c.call<msg::DescribeTopicPartitionsResponse>(req, 0);
  BOOST_REQUIRE(r.topics.size() == 2u);
  for (const auto& t : r.topics) {
    BOOST_TEST(t.error_code == code(ErrorCode::kInvalidRequest));
    BOOST_TEST((t.topic_id == msg::Uuid{}));
  }
  BOOST_TEST(!r.next_cursor.has_value());
  req.cursor = msg::DescribeTopicPartitionsRequest::Cursor{"a", -1};
  r = c.call<msg::DescribeTopicPartitionsResponse>(req, 0);
  BOOST_TEST(r.topics.size() == 2u);
  BOOST_TEST(r.topics[0].error_code == code(ErrorCode::kInvalidRequest));
  // Every topic of an empty catalog: nothing, no cursor.
  msg::DescribeTopicPartitionsRequest all;
  r = c.call<msg::DescribeTopicPartitionsResponse>(all, 0);
  BOOST_TEST(r.topics.empty());
  BOOST_TEST(!r.next_cursor.has_value());
  // Named topics the idle catalog cannot look up (no Iggy): the retriable error, sorted by name,
  // id zero.
  msg::DescribeTopicPartitionsRequest named;
  named.topics = {{"zz"}, {"aa"}};
  r = c.call<msg::DescribeTopicPartitionsResponse>(named, 0);
  BOOST_REQUIRE(r.topics.size() == 2u);
  BOOST_TEST(r.topics[0].name.value_or("") == "aa");
  BOOST_TEST(r.topics[1].name.value_or("") == "zz");
  BOOST_TEST(r.topics[0].error_code == code(ErrorCode::kLeaderNotAvailable));
  BOOST_TEST((r.topics[1].topic_id == msg::Uuid{}));
}

BOOST_AUTO_TEST_SUITE_END()
