// Topic and broker configs (bridge/catalog/topic_configs.h): Kafka 4.1's validation texts,
// ConfigHelper's sources and synonyms, incremental ops, replace, and the Iggy mapping.
#include <boost/test/unit_test.hpp>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/catalog/topic_configs.h"
#include "bridge/errors.h"
#include "config/config.h"
#include "iggy/types.h"

using namespace kib;
using namespace kib::bridge;
using namespace kib::bridge::topic_configs;

namespace {

std::string err(const Result<std::string>& r) { return r ? "ok:" + r.value() : r.error().message; }

const Entry& entry(const std::vector<Entry>& v, const std::string& name) {
  for (const auto& e : v)
    if (e.name == name) return e;
  BOOST_FAIL("no entry " + name);
  return v.front();
}

std::string synonyms_text(const Entry& e) {
  std::string s;
  for (const auto& y : e.synonyms)
    s += (s.empty() ? "" : ", ") + std::string(source_name(y.source)) + ":" + y.name + "=" + y.value.value_or("null");
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topic_configs_suite)

BOOST_AUTO_TEST_CASE(schema_has_kafkas_33_topic_configs_then_the_iggy_keys) {
  size_t kafka = 0;
  for (const auto& d : topic_defs()) kafka += d.create_only ? 0 : 1;
  BOOST_TEST(kafka == 33u);
  BOOST_TEST(topic_defs().back().name == "iggy.messages.required.to.save");
  BOOST_TEST(find_topic_def("message.format.version") == nullptr);  // removed in Kafka 4.0
  BOOST_TEST(int(find_topic_def("segment.bytes")->type) == int(Type::kInt));
  BOOST_TEST(std::string(find_topic_def("retention.ms")->default_value) == "604800000");
}

BOOST_AUTO_TEST_CASE(validation_uses_kafkas_texts) {
  BOOST_TEST(err(validate_topic_value("retention.ms", "-2")) ==
             "Invalid value -2 for configuration retention.ms: Value must be at least -1");
  BOOST_TEST(err(validate_topic_value("retention.ms", "abc")) ==
             "Invalid value abc for configuration retention.ms: Not a number of type LONG");
  BOOST_TEST(err(validate_topic_value("retention.ms", " 100 ")) == "ok:100");
  BOOST_TEST(err(validate_topic_value("segment.bytes", "5")) ==
             "Invalid value 5 for configuration segment.bytes: Value must be at least 1048576");
  BOOST_TEST(err(validate_topic_value("compression.gzip.level", "10")) ==
             "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1");
  BOOST_TEST(err(validate_topic_value("compression.gzip.level", "-1")) == "ok:-1");
  BOOST_TEST(err(validate_topic_value("cleanup.policy", "compact,foo")) ==
             "Invalid value foo for configuration cleanup.policy: String must be one of: compact, delete");
  BOOST_TEST(err(validate_topic_value("cleanup.policy", "compact, delete")) == "ok:compact,delete");
  BOOST_TEST(err(validate_topic_value("compression.type", "foo")) ==
             "Invalid value foo for configuration compression.type: String must be one of: uncompressed, zstd, lz4, "
             "snappy, gzip, producer");
  BOOST_TEST(err(validate_topic_value("preallocate", "yes")) ==
             "Invalid value yes for configuration preallocate: Expected value to be either true or false");
  BOOST_TEST(err(validate_topic_value("preallocate", "TRUE")) == "ok:true");
  BOOST_TEST(err(validate_topic_value("min.cleanable.dirty.ratio", "2")) ==
             "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value must be no more than 1");
  BOOST_TEST(err(validate_topic_value("min.cleanable.dirty.ratio", "0.50")) == "ok:0.5");
  BOOST_TEST(err(validate_topic_value("leader.replication.throttled.replicas", "x")) ==
             "Invalid value [x] for configuration leader.replication.throttled.replicas: "
             "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
             "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
  BOOST_TEST(err(validate_topic_value("leader.replication.throttled.replicas", "0:1, 1:1")) == "ok:0:1,1:1");
  BOOST_TEST(err(validate_topic_value("max.message.bytes", "99999999999")) ==
             "Invalid value 99999999999 for configuration max.message.bytes: Not a number of type INT");
  BOOST_TEST(err(validate_topic_value("foo.bar", "1")) == "Unknown topic config name: foo.bar");
  BOOST_TEST(err(validate_topic_value("message.format.version", "3.0")) ==
             "Unknown topic config name: message.format.version");
  auto e = validate_topic_value("foo.bar", "1");
  BOOST_TEST(int(to_kafka_error(e.error())) == int(kafka::ErrorCode::kInvalidConfig));
}

BOOST_AUTO_TEST_CASE(cross_key_checks_of_log_config_validate) {
  ConfigMap out;
  auto st = validate_topic_configs({{"min.compaction.lag.ms", "10"}, {"max.compaction.lag.ms", "5"}}, &out);
  BOOST_REQUIRE(!st);
  BOOST_TEST(st.error().message == "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)");
  BOOST_TEST(!validate_topic_configs({{"remote.storage.enable", "true"}}, &out));
  BOOST_TEST(!validate_topic_configs({{"message.timestamp.type", "LogAppendTime"}}, &out));
  BOOST_TEST(bool(validate_topic_configs({{"retention.ms", "1000"}, {"cleanup.policy", "compact"}}, &out)));
  BOOST_TEST(out.at("retention.ms") == "1000");
}

BOOST_AUTO_TEST_CASE(sources_follow_config_helper_order) {
  config::Config cfg;  // [topics] retention_ms = -1 → STATIC_BROKER_CONFIG log.retention.ms=-1
  ConfigMap stat = static_broker_layer(cfg), dyn_default, dyn_broker;
  BrokerLayers l{&dyn_broker, &dyn_default, &stat};
  auto v = resolve_topic({}, l);
  const auto& r = entry(v, "retention.ms");
  BOOST_TEST(r.value.value() == "-1");
  BOOST_TEST(int(r.source) == int(Source::kStaticBroker));
  BOOST_TEST(synonyms_text(r) == "STATIC_BROKER_CONFIG:log.retention.ms=-1, DEFAULT_CONFIG:log.retention.hours=168");
  // No broker value of log.flush.interval.ms: the synonyms start at that name, so none remain.
  const auto& f = entry(v, "flush.ms");
  BOOST_TEST(int(f.source) == int(Source::kDefault));
  BOOST_TEST(f.synonyms.empty());
  BOOST_TEST(f.value.value() == "9223372036854775807");
  BOOST_TEST(synonyms_text(entry(v, "segment.bytes")) == "DEFAULT_CONFIG:log.segment.bytes=1073741824");
  BOOST_TEST(int(entry(v, "remote.storage.enable").source) == int(Source::kDefault));
  // Dynamic default, then dynamic broker, then the topic's own override.
  dyn_default["log.retention.ms"] = "5000";
  BOOST_TEST(entry(resolve_topic({}, l), "retention.ms").value.value() == "5000");
  BOOST_TEST(int(entry(resolve_topic({}, l), "retention.ms").source) == int(Source::kDynamicDefaultBroker));
  dyn_broker["log.retention.ms"] = "6000";
  auto t = resolve_topic({{"retention.ms", "7000"}}, l);
  BOOST_TEST(synonyms_text(entry(t, "retention.ms")) ==
             "DYNAMIC_TOPIC_CONFIG:retention.ms=7000, DYNAMIC_BROKER_CONFIG:log.retention.ms=6000, "
             "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=5000, STATIC_BROKER_CONFIG:log.retention.ms=-1, "
             "DEFAULT_CONFIG:log.retention.hours=168");
  BOOST_TEST(int(entry(t, "retention.ms").source) == int(Source::kTopic));
  BOOST_TEST(entry(t, "retention.ms").read_only == false);
  BOOST_TEST(int(entry(t, "retention.ms").type) == int(Type::kLong));
}

BOOST_AUTO_TEST_CASE(hours_synonym_converts_to_milliseconds) {
  ConfigMap stat{{"log.retention.hours", "2"}};
  BrokerLayers l{nullptr, nullptr, &stat};
  BOOST_TEST(effective_topic_value("retention.ms", {}, l).value() == "7200000");
  BOOST_TEST(effective_topic_value("retention.ms", {}, BrokerLayers{}).value() == "604800000");
}

BOOST_AUTO_TEST_CASE(broker_entries_read_only_and_default_entity) {
  config::Config cfg;
  ConfigMap stat = static_broker_layer(cfg), dyn_default{{"min.insync.replicas", "1"}, {"foo.bar", "3"}}, dyn_broker;
  BrokerLayers l{&dyn_broker, &dyn_default, &stat};
  auto all = resolve_broker(l, true);
  BOOST_TEST(entry(all, "num.partitions").read_only == true);
  BOOST_TEST(int(entry(all, "num.partitions").source) == int(Source::kStaticBroker));
  BOOST_TEST(entry(all, "log.retention.ms").read_only == false);
  BOOST_TEST(entry(all, "node.id").value.value() == "1");
  BOOST_TEST(entry(all, "log.dirs").value.value() == "iggy://127.0.0.1:8090/kafka");
  auto def = resolve_broker(l, false);
  BOOST_REQUIRE(def.size() == 2u);
  // An unknown key: Kafka cannot type it, so it is sensitive and shown without value.
  BOOST_TEST(def[0].name == "foo.bar");
  BOOST_TEST(def[0].sensitive == true);
  BOOST_TEST(!def[0].value.has_value());
  BOOST_TEST(synonyms_text(def[1]) == "DYNAMIC_DEFAULT_BROKER_CONFIG:min.insync.replicas=1");
}

BOOST_AUTO_TEST_CASE(incremental_ops) {
  ConfigMap cur{{"retention.ms", "1000"}, {"cleanup.policy", "delete"}};
  auto r = apply_incremental(cur, {{"retention.ms", 1, std::nullopt}, {"segment.ms", 0, std::string("5")}}, true);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->count("retention.ms") == 0u);
  BOOST_TEST(r->at("segment.ms") == "5");
  r = apply_incremental(cur, {{"cleanup.policy", 2, std::string("compact,delete")}}, true);
  BOOST_TEST(r->at("cleanup.policy") == "delete,compact");
  r = apply_incremental(*r, {{"cleanup.policy", 3, std::string("delete")}}, true);
  BOOST_TEST(r->at("cleanup.policy") == "compact");
  r = apply_incremental(cur, {{"retention.ms", 2, std::string("5")}}, true);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.error().message == "Can't APPEND to key retention.ms because its type is not LIST.");
  BOOST_TEST(int(to_kafka_error(r.error())) == int(kafka::ErrorCode::kInvalidConfig));
  auto st = check_alter_ops({{"a", 0, std::string("1")}, {"a", 1, std::nullopt}});
  BOOST_TEST(st.error().message == "Error due to duplicate config keys");
  st = check_alter_ops({{"a", 0, std::nullopt}});
  BOOST_TEST(st.error().message == "Null value not supported for : a");
  BOOST_TEST(int(to_kafka_error(st.error())) == int(kafka::ErrorCode::kInvalidRequest));
}

BOOST_AUTO_TEST_CASE(replace_drops_keys_not_sent) {
  auto r = apply_replace({{"retention.ms", std::string("5")}});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->size() == 1u);
  BOOST_TEST(!apply_replace({{"a", std::string("1")}, {"a", std::string("2")}}).ok());
  BOOST_TEST(!apply_replace({{"a", std::nullopt}}).ok());
}

BOOST_AUTO_TEST_CASE(iggy_retention_mapping_compact_and_clamps) {
  TopicSettings s;
  s.retention_ms = 60000;
  s.retention_bytes = 1000;
  s.segment_bytes = 1 << 20;
  auto r = iggy_retention(s, 3);
  BOOST_TEST(r.message_expiry_us == 60000000u);
  BOOST_TEST(r.max_topic_size == uint64_t(1) << 20);  // 3000 bytes clamped up to one segment
  s.retention_bytes = 1 << 20;
  BOOST_TEST(iggy_retention(s, 3).max_topic_size == uint64_t(3) << 20);
  s.retention_ms = 0;  // Iggy reads 0 as "keep the current value"
  BOOST_TEST(iggy_retention(s, 1).message_expiry_us == 1u);
  s.retention_ms = -1;
  s.retention_bytes = -1;
  BOOST_TEST(iggy_retention(s, 1).message_expiry_us == iggy::kNeverExpire);
  BOOST_TEST(iggy_retention(s, 1).max_topic_size == iggy::kUnlimitedSize);
  s.retention_ms = 1000;
  s.retention_bytes = 1 << 20;
  s.cleanup_policy = "compact";  // nothing is deleted, whatever retention says
  BOOST_TEST(!deletes_allowed(s));
  BOOST_TEST(iggy_retention(s, 1).message_expiry_us == iggy::kNeverExpire);
  BOOST_TEST(iggy_retention(s, 1).max_topic_size == iggy::kUnlimitedSize);
  s.cleanup_policy = "compact,delete";
  BOOST_TEST(deletes_allowed(s));
  BOOST_TEST(iggy_retention(s, 1).message_expiry_us == 1000000u);
}

BOOST_AUTO_TEST_CASE(settings_of_resolves_typed_values) {
  ConfigMap dyn_default{{"log.cleanup.policy", "compact"}, {"message.max.bytes", "2048"}};
  BrokerLayers l{nullptr, &dyn_default, nullptr};
  TopicSettings base;
  base.segment_bytes = 1 << 20;
  auto s = settings_of({{"retention.ms", "5"}}, l, base);
  BOOST_TEST(s.retention_ms == 5);
  BOOST_TEST(s.cleanup_policy == "compact");
  BOOST_TEST(s.max_message_bytes == 2048);
  BOOST_TEST(s.segment_bytes == 1 << 20);
  BOOST_TEST(s.retention_bytes == -1);
}

BOOST_AUTO_TEST_SUITE_END()
