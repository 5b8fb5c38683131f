// Kafka's group configs (bridge/catalog/group_configs.h): validation with Kafka 4.1's texts
// (GroupConfig, GroupConfigManager.validate) and the entries DescribeConfigs reports.
#include <boost/test/unit_test.hpp>

#include <string>

#include "bridge/catalog/group_configs.h"
#include "bridge/errors.h"

using namespace kib::bridge;
namespace gc = kib::bridge::group_configs;
using topic_configs::ConfigMap;

namespace {

std::string refusal(const ConfigMap& m, const gc::Broker& b = {}) {
  ConfigMap canonical;
  auto st = gc::validate(m, b, &canonical);
  if (st) return "ok";
  BOOST_TEST(static_cast<int>(to_kafka_error(st.error())) == static_cast<int>(kib::kafka::ErrorCode::kInvalidConfig));
  return st.error().message;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(group_configs)

BOOST_AUTO_TEST_CASE(kafka_41_keys_in_its_order) {
  std::string names;
  for (const auto& d : gc::defs()) names += std::string(d.name) + " ";
  BOOST_TEST(names ==
             "consumer.session.timeout.ms consumer.heartbeat.interval.ms share.session.timeout.ms "
             "share.heartbeat.interval.ms share.record.lock.duration.ms share.auto.offset.reset share.isolation.level "
             "streams.session.timeout.ms streams.heartbeat.interval.ms streams.num.standby.replicas ");
}

BOOST_AUTO_TEST_CASE(values_are_checked_as_kafka_checks_them) {
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "50000"}}) == "ok");
  BOOST_TEST(refusal({{"no.such.key", "1"}}) == "Unknown group config name: no.such.key");
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "abc"}}) ==
             "Invalid value abc for configuration consumer.session.timeout.ms: Not a number of type INT");
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "0"}}) ==
             "Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1");
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "1000"}}) ==
             "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms");
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "70000"}}) ==
             "consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms");
  BOOST_TEST(refusal({{"consumer.heartbeat.interval.ms", "20000"}}) ==
             "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms");
  gc::Broker wide;
  wide.consumer_min_session_timeout_ms = 1000;
  wide.consumer_min_heartbeat_interval_ms = 1000;
  BOOST_TEST(refusal({{"consumer.session.timeout.ms", "5000"}}, wide) ==
             "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms");
  BOOST_TEST(refusal({{"share.isolation.level", "serializable"}}) ==
             "Invalid value serializable for configuration share.isolation.level: String must be one of: "
             "read_committed, read_uncommitted");
  BOOST_TEST(refusal({{"streams.num.standby.replicas", "3"}}) ==
             "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas");
  BOOST_TEST(refusal({{"share.record.lock.duration.ms", "999"}}) ==
             "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000");
}

BOOST_AUTO_TEST_CASE(share_auto_offset_reset_takes_kafkas_strategies) {
  for (const char* ok : {"earliest", "LATEST", "by_duration:PT1H", "by_duration:P1DT2H3M4.5S", "by_duration:PT0S"})
    BOOST_TEST(refusal({{"share.auto.offset.reset", ok}}) == "ok", ok);
  for (const char* bad : {"none", "by_duration:", "by_duration:P", "by_duration:PT", "by_duration:-PT1H", "x"})
    BOOST_TEST(refusal({{"share.auto.offset.reset", bad}}).find("The value must be either 'earliest', 'latest'") !=
                   std::string::npos,
               bad);
}

BOOST_AUTO_TEST_CASE(canonical_values_and_described_entries) {
  ConfigMap canonical;
  BOOST_REQUIRE(gc::validate({{"consumer.session.timeout.ms", " 50000 "}}, {}, &canonical));
  BOOST_TEST(canonical.at("consumer.session.timeout.ms") == "50000");
  BOOST_TEST(canonical.size() == 1u);

  gc::Broker b;
  b.consumer_heartbeat_interval_ms = 7000;
  const auto entries = gc::resolve(canonical, b);
  BOOST_REQUIRE(entries.size() == 10u);
  BOOST_TEST(entries.front().name == "consumer.heartbeat.interval.ms");  // name order
  BOOST_TEST(*entries.front().value == "7000");                         // the broker's default
  BOOST_TEST(static_cast<int>(entries.front().source) == static_cast<int>(topic_configs::Source::kDefault));
  BOOST_TEST(entries[1].name == "consumer.session.timeout.ms");
  BOOST_TEST(*entries[1].value == "50000");
  BOOST_TEST(static_cast<int>(entries[1].source) == static_cast<int>(topic_configs::Source::kGroup));
  BOOST_TEST(entries[1].synonyms.size() == 1u);

  const auto t = gc::consumer_timeouts(canonical, b);
  BOOST_TEST(t.session_timeout_ms == 50000);
  BOOST_TEST(t.heartbeat_interval_ms == 7000);
}

BOOST_AUTO_TEST_SUITE_END()
