// DescribeCluster (key 60) through the real KafkaServer on a loopback port at v0, v1 and v2:
// the one broker with the advertised address, controller = own node id, the authorized
// operations field, and the EndpointType errors, as Kafka 4.1's single KRaft broker answers
// (checked on the reference broker: tests/system/test_describe_cluster.py).
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "handler_services_support.h"
#include "server/handlers/registry.h"
#include "server/kafka_server.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/describe_cluster.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "state/state_store.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;

namespace {

constexpr int32_t kNotAsked = -2147483647 - 1;
// CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE:
// Kafka 4.1 without an authorizer answers 8096.
constexpr int32_t kAllClusterOperations = 8096;

// Every service idle except the config (node 7, advertised kafka.example:19092) and the
// cluster id.
struct Server : test::IdleKafkaServer {
  Server()
      : IdleKafkaServer(
            [](config::Config& c) {
              c.kafka.node_id = 7;
              c.kafka.advertised_host = "kafka.example";
              c.kafka.advertised_port = 19092;
            },
            "test-cluster-id") {}
};

// One connection; the loop runs while it waits for the answer.
struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "describe-cluster-test") {}
  msg::DescribeClusterResponse call(const msg::DescribeClusterRequest& body, int16_t version) {
    return KafkaTestClient::call<msg::DescribeClusterResponse>(body, version);
  }
};

msg::DescribeClusterRequest request(bool include_ops = false, int8_t endpoint_type = 1, bool include_fenced = false) {
  msg::DescribeClusterRequest r;
  r.include_cluster_authorized_operations = include_ops;
  r.endpoint_type = endpoint_type;
  r.include_fenced_brokers = include_fenced;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(describe_cluster_handler)

BOOST_AUTO_TEST_CASE(registered_for_v0_to_v2) {
  const HandlerSpec* h = find_handler(msg::DescribeClusterRequest::kApiKey);
  BOOST_REQUIRE(h);
  BOOST_TEST(h->min_version == 0);
  BOOST_TEST(h->max_version == 2);
  BOOST_TEST(h->advertised_min == 0);
}

BOOST_AUTO_TEST_CASE(the_one_broker_is_the_controller_at_every_version) {
  Server s;
  Client c(s);
  for (int16_t v = 0; v <= 2; ++v) {
    BOOST_TEST_CONTEXT("v" << v) {
      for (bool fenced : {false, true}) {
        auto r = c.call(request(false, 1, fenced), v);
        BOOST_TEST(r.error_code == 0);
        BOOST_TEST(!r.error_message.has_value());
        BOOST_TEST(r.throttle_time_ms == 0);
        BOOST_TEST(r.endpoint_type == 1);
        BOOST_TEST(r.cluster_id == "test-cluster-id");
        BOOST_TEST(r.controller_id == 7);
        BOOST_REQUIRE(r.brokers.size() == 1u);
        BOOST_TEST(r.brokers[0].broker_id == 7);
        BOOST_TEST(r.brokers[0].host == "kafka.example");
        BOOST_TEST(r.brokers[0].port == 19092);
        BOOST_TEST(!r.brokers[0].rack.has_value());
        BOOST_TEST(r.brokers[0].is_fenced == false);
        BOOST_TEST(r.cluster_authorized_operations == kNotAsked);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(authorized_operations_only_when_asked) {
  Server s;
  Client c(s);
  for (int16_t v = 0; v <= 2; ++v) {
    BOOST_TEST(c.call(request(true), v).cluster_authorized_operations == kAllClusterOperations);
    BOOST_TEST(c.call(request(false), v).cluster_authorized_operations == kNotAsked);
  }
}

BOOST_AUTO_TEST_CASE(controller_endpoint_is_mismatched) {
  Server s;
  Client c(s);
  for (int16_t v = 1; v <= 2; ++v) {
    auto r = c.call(request(true, 2), v);
    BOOST_TEST(r.error_code == to_int16(ErrorCode::kMismatchedEndpointType));
    BOOST_TEST(r.error_message.value_or("") ==
               "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER");
    BOOST_TEST(r.brokers.empty());
    BOOST_TEST(r.cluster_id.empty());
    BOOST_TEST(r.controller_id == -1);
    BOOST_TEST(r.cluster_authorized_operations == kNotAsked);
  }
}

BOOST_AUTO_TEST_CASE(unknown_endpoint_type_is_unsupported) {
  Server s;
  Client c(s);
  for (int8_t t : {int8_t{0}, int8_t{3}, int8_t{-1}}) {
    auto r = c.call(request(false, t), 1);
    BOOST_TEST(r.error_code == to_int16(ErrorCode::kUnsupportedEndpointType));
    BOOST_TEST(r.error_message.value_or("") == "Unsupported endpoint type " + std::to_string(t));
    BOOST_TEST(r.brokers.empty());
  }
}

BOOST_AUTO_TEST_SUITE_END()
