// DescribeConfigs, IncrementalAlterConfigs and AlterConfigs through the real KafkaServer on a
// loopback port, at their lowest and highest versions, for the broker resources (the topic side
// needs Iggy: tests/system/test_admin_configs.py). Dynamic broker configs go to SQLite.
#include <boost/test/unit_test.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "handler_services_support.h"
#include "server/kafka_server.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/api_keys.h"
#include "kafka/protocol/generated/alter_configs.h"
#include "kafka/protocol/generated/describe_configs.h"
#include "kafka/protocol/generated/incremental_alter_configs.h"
#include "kafka/protocol/generated/request_header.h"
#include "kafka/protocol/generated/response_header.h"
#include "state/state_store.h"
#include "state/topic_store.h"
#include "support/kafka_test_client.h"

using namespace kib;
using namespace kib::kafka;

namespace {


struct Server : test::IdleKafkaServer {};

struct Client : test::KafkaTestClient {
  explicit Client(Server& s) : test::KafkaTestClient(s.loop, s.port, "config-test") {}
};

msg::DescribeConfigsRequest describe(const std::string& name, std::optional<std::vector<std::string>> keys,
                                     bool synonyms = true, bool docs = true) {
  msg::DescribeConfigsRequest r;
  msg::DescribeConfigsRequest::DescribeConfigsResource res;
  res.resource_type = 4;
  res.resource_name = name;
  res.configuration_keys = std::move(keys);
  r.resources.push_back(res);
  r.include_synonyms = synonyms;
  r.include_documentation = docs;
  return r;
}

msg::IncrementalAlterConfigsRequest incremental(const std::string& name, const std::string& key, int8_t op,
                                                std::optional<std::string> value, bool validate_only = false) {
  msg::IncrementalAlterConfigsRequest r;
  msg::IncrementalAlterConfigsRequest::AlterConfigsResource res;
  res.resource_type = 4;
  res.resource_name = name;
  res.configs.push_back({key, op, std::move(value)});
  r.resources.push_back(res);
  r.validate_only = validate_only;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_handlers)

BOOST_AUTO_TEST_CASE(describe_broker_v1_and_v4) {
  Server s;
  Client c(s);
  for (int16_t v : {1, 4}) {
    auto r = c.call<msg::DescribeConfigsResponse>(describe("1", std::vector<std::string>{"log.retention.ms"}), v);
    BOOST_REQUIRE(r.results.size() == 1u);
    BOOST_TEST(r.results[0].error_code == 0);
    BOOST_REQUIRE(r.results[0].configs.size() == 1u);
    const auto& e = r.results[0].configs[0];
    BOOST_TEST(e.name == "log.retention.ms");
    BOOST_TEST(e.value.value() == "-1");
    BOOST_TEST(e.config_source == 4);
    BOOST_TEST(e.read_only == false);
    BOOST_REQUIRE(e.synonyms.size() == 2u);
    BOOST_TEST(e.synonyms[1].name == "log.retention.hours");
    if (v >= 3) {
      BOOST_TEST(e.config_type == 5);
      BOOST_TEST(e.documentation.value().find("milliseconds") != std::string::npos);
    }
  }
  auto d = c.call<msg::DescribeConfigsResponse>(describe("", std::nullopt, false, false), 4);
  BOOST_REQUIRE(d.results[0].configs.size() == 1u);
  BOOST_TEST(d.results[0].configs[0].name == "min.insync.replicas");
  BOOST_TEST(d.results[0].configs[0].config_source == 3);
  BOOST_TEST(d.results[0].configs[0].synonyms.empty());
  BOOST_TEST(!d.results[0].configs[0].documentation.has_value());
  auto bad = c.call<msg::DescribeConfigsResponse>(describe("2", std::nullopt), 4);
  BOOST_TEST(bad.results[0].error_code == to_int16(ErrorCode::kInvalidRequest));
  BOOST_TEST(bad.results[0].error_message.value() == "Unexpected broker id, expected 1 or empty string, but received 2");
}

BOOST_AUTO_TEST_CASE(incremental_alter_broker_v0_v1_persists_and_validates) {
  Server s;
  Client c(s);
  auto r = c.call<msg::IncrementalAlterConfigsResponse>(incremental("", "log.retention.ms", 0, "5000", true), 0);
  BOOST_TEST(r.responses[0].error_code == 0);
  r = c.call<msg::IncrementalAlterConfigsResponse>(incremental("", "log.retention.ms", 0, "5000"), 1);
  BOOST_TEST(r.responses[0].error_code == 0);
  BOOST_TEST(r.responses[0].resource_type == 4);
  auto d = c.call<msg::DescribeConfigsResponse>(describe("1", std::vector<std::string>{"log.retention.ms"}), 4);
  BOOST_TEST(d.results[0].configs[0].value.value() == "5000");
  BOOST_TEST(d.results[0].configs[0].config_source == 3);
  std::map<std::string, std::map<std::string, std::string>> stored;
  BOOST_REQUIRE(s.store->run_blocking([&](SQLite::Database& db) { stored = state::load_broker_configs(db); }).ok());
  BOOST_TEST(stored[""]["log.retention.ms"] == "5000");

  r = c.call<msg::IncrementalAlterConfigsResponse>(incremental("1", "num.partitions", 0, "3"), 1);
  BOOST_TEST(r.responses[0].error_code == to_int16(ErrorCode::kInvalidRequest));
  BOOST_TEST(r.responses[0].error_message.value() == "Cannot update these configs dynamically: Set(num.partitions)");
  r = c.call<msg::IncrementalAlterConfigsResponse>(incremental("1", "log.retention.ms", 0, "abc"), 1);
  BOOST_TEST(r.responses[0].error_message.value() ==
             "Invalid value abc for configuration log.retention.ms: Not a number of type LONG");
  r = c.call<msg::IncrementalAlterConfigsResponse>(incremental("7", "log.retention.ms", 0, "1"), 1);
  BOOST_TEST(r.responses[0].error_message.value() == "Unexpected broker id, expected 1, but received 7");
}

BOOST_AUTO_TEST_CASE(alter_configs_v0_v2_replaces_the_broker_set) {
  Server s;
  Client c(s);
  for (int16_t v : {0, 2}) {
    msg::AlterConfigsRequest req;
    msg::AlterConfigsRequest::AlterConfigsResource res;
    res.resource_type = 4;
    res.resource_name = "1";
    res.configs.push_back({"log.cleanup.policy", std::string("compact")});
    req.resources.push_back(res);
    auto r = c.call<msg::AlterConfigsResponse>(req, v);
    BOOST_TEST(r.responses[0].error_code == 0);
    auto d = c.call<msg::DescribeConfigsResponse>(describe("1", std::vector<std::string>{"log.cleanup.policy"}), 4);
    BOOST_TEST(d.results[0].configs[0].value.value() == "compact");
    BOOST_TEST(d.results[0].configs[0].config_source == 2);
    req.resources[0].configs.clear();  // replace with nothing: the key is gone
    r = c.call<msg::AlterConfigsResponse>(req, v);
    BOOST_TEST(r.responses[0].error_code == 0);
    d = c.call<msg::DescribeConfigsResponse>(describe("1", std::vector<std::string>{"log.cleanup.policy"}), 4);
    BOOST_TEST(d.results[0].configs[0].config_source == 5);
  }
}

BOOST_AUTO_TEST_SUITE_END()
