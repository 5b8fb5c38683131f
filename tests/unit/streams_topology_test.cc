// A streams group's topology configured against existing topics (src/bridge/groups/streams_topology.h),
// with Kafka 4.3's InternalTopicManagerTest, RepartitionTopicsTest, CopartitionedTopicsEnforcerTest
// and ChangelogTopicsTest cases ported through configure_topology (their inputs and expected counts
// and messages verbatim), and the Java HashMap order the messages depend on
// (src/common/java_hash_order.h) checked against what java.util.HashMap printed for the same keys.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bridge/groups/streams_topology.h"
#include "common/java_hash_order.h"
#include "kafka/protocol/error_code.h"

using namespace kib;
using namespace kib::bridge::streams;

namespace {

PartitionCountOf existing(std::map<std::string, int32_t> topics) {
  return [topics = std::move(topics)](const std::string& t) -> std::optional<int32_t> {
    auto it = topics.find(t);
    return it == topics.end() ? std::nullopt : std::optional<int32_t>(it->second);
  };
}

TopicInfo topic(std::string name, int32_t partitions = 0, int16_t replication = 0, TopicConfigs configs = {}) {
  return TopicInfo{std::move(name), partitions, replication, std::move(configs)};
}

Subtopology sub(std::string id, std::vector<std::string> sources = {}, std::vector<std::string> sinks = {},
                std::vector<TopicInfo> repartition_sources = {}, std::vector<TopicInfo> changelogs = {}) {
  Subtopology s;
  s.id = std::move(id);
  s.source_topics = std::move(sources);
  s.repartition_sink_topics = std::move(sinks);
  s.repartition_source_topics = std::move(repartition_sources);
  s.state_changelog_topics = std::move(changelogs);
  return s;
}

std::string invalid_message(const Result<ConfiguredTopology>& r) {
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST((r.error().domain == ErrorDomain::kKafka));
  BOOST_TEST(r.error().code == static_cast<uint32_t>(kafka::to_int16(kafka::ErrorCode::kStreamsInvalidTopology)));
  return r.error().message;
}

// InternalTopicManagerTest.makeTestTopology.
Topology kafka_test_topology() {
  Subtopology one = sub("subtopology1", {"source_topic1"}, {"repartition_topic"}, {},
                        {topic("state_changelog_topic1", 0, 0, {{"cleanup.policy", "compact"}})});
  Subtopology two = sub("subtopology2", {"source_topic2"}, {}, {topic("repartition_topic", 0, 3)},
                        {topic("state_changelog_topic2")});
  two.copartition_groups.push_back({{0}, {}, {0}});
  return Topology{3, {one, two}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(streams_topology)

BOOST_AUTO_TEST_CASE(java_hash_order_is_java_util_hashmaps) {
  // What `new HashMap<String, Integer>()` with these keys put in this order iterated, printed by
  // java.util.HashMap.keySet() on OpenJDK 17.
  BOOST_TEST(java_string_hash("source_topic1") == 270346630);  // "source_topic1".hashCode()
  BOOST_TEST(java_string_hash("") == 0);
  BOOST_TEST((java_hash_order({"app-counts-repartition", "app-counts-changelog"}) ==
              std::vector<std::string>{"app-counts-repartition", "app-counts-changelog"}));
  BOOST_TEST((java_hash_order({"wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition",
                               "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog"}) ==
              std::vector<std::string>{"wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog",
                                       "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"}));
  BOOST_TEST((java_hash_order({"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13"}) ==
              std::vector<std::string>{"11", "12", "13", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  // 14 keys: the table grew to 32 buckets.
  BOOST_TEST((java_hash_order({"t-5", "t-4", "t-3", "t-2", "t-1", "x", "y", "z", "orders", "payments", "customers",
                               "shipments", "returns", "audit"}) ==
              std::vector<std::string>{"payments", "shipments", "audit", "t-2", "x", "t-1", "y", "t-4", "z", "orders",
                                       "returns", "t-3", "customers", "t-5"}));
  BOOST_TEST((java_hash_order({"b", "a", "b"}) == std::vector<std::string>{"a", "b"}));
}

BOOST_AUTO_TEST_CASE(kafka_configure_topics_test) {
  // testConfigureTopics: the repartition topic takes its copartitioned source's 2 partitions and
  // keeps the client's replication factor; the changelog that exists is not created again.
  auto r = configure_topology(kafka_test_topology(),
                              existing({{"source_topic1", 2}, {"source_topic2", 2}, {"state_changelog_topic2", 2}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->epoch == 3);
  BOOST_REQUIRE(r->problem.has_value());
  BOOST_TEST((r->problem->status == TopicStatus::kMissingInternalTopics));
  std::map<std::string, InternalTopic> created;
  for (const auto& t : r->missing_internal_topics) created[t.name] = t;
  BOOST_REQUIRE(created.size() == 2u);
  BOOST_TEST((created["repartition_topic"] == InternalTopic{"repartition_topic", 2, 3, {}}));
  BOOST_TEST((created["state_changelog_topic1"] ==
              InternalTopic{"state_changelog_topic1", 2, -1, {{"cleanup.policy", "compact"}}}));
  BOOST_REQUIRE(r->subtopologies.size() == 2u);
  const auto& one = r->subtopologies.at("subtopology1");
  BOOST_TEST(one.tasks == 2);
  BOOST_TEST((one.changelog_partitions == std::map<std::string, int32_t>{{"state_changelog_topic1", 2}}));
  const auto& two = r->subtopologies.at("subtopology2");
  BOOST_TEST(two.tasks == 2);
  BOOST_TEST((two.source_topics == std::vector<std::string>{"source_topic2", "repartition_topic"}));
  BOOST_TEST((two.repartition_source_partitions == std::map<std::string, int32_t>{{"repartition_topic", 2}}));

  // Once both exist the group is ready.
  r = configure_topology(kafka_test_topology(),
                         existing({{"source_topic1", 2}, {"source_topic2", 2}, {"state_changelog_topic2", 2},
                                   {"state_changelog_topic1", 2}, {"repartition_topic", 2}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->ready());
  BOOST_TEST(r->missing_internal_topics.empty());
}

BOOST_AUTO_TEST_CASE(kafka_missing_source_topic_test) {
  // testConfigureTopicsSetsConfigurationExceptionWhenSourceTopicIsMissing.
  auto r = configure_topology(kafka_test_topology(), existing({{"source_topic1", 2}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->subtopologies.empty());
  BOOST_TEST((r->problem == TopicProblem{TopicStatus::kMissingSourceTopics, "Source topics source_topic2 are missing."}));
  // At most three names (sorted), then a count.
  Topology t{0, {sub("0", {"d", "c", "b", "a"})}};
  r = configure_topology(t, existing({}));
  BOOST_TEST(r->problem->detail == "Source topics a, b, c and 1 additional topics are missing.");
}

BOOST_AUTO_TEST_CASE(kafka_repartition_topics_tests) {
  const auto sources = existing({{"source1", 3}, {"source2", 3}});
  // shouldSetupRepartitionTopics: a fixed count (4) wins over the upstream sources' 3.
  Topology t{0, {sub("subtopology1", {"source1", "source2"}, {"repartition1"}),
                 sub("subtopology2", {}, {}, {topic("repartition1", 4)})}};
  auto r = configure_topology(t, sources);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->subtopologies.at("subtopology2").repartition_source_partitions.at("repartition1") == 4);
  BOOST_TEST(r->subtopologies.at("subtopology2").tasks == 4);

  // ...DueToLoops.
  t = Topology{0, {sub("subtopology1", {}, {"repartitionWithoutPartitionCount"}, {topic("repartitionWithoutPartitionCount")})}};
  BOOST_TEST(invalid_message(configure_topology(t, sources)) ==
             "Failed to compute number of partitions for all repartition topics. There may be loops in the topology "
             "that cannot be resolved.");

  // ...DueToMissingSinks.
  t = Topology{0, {sub("subtopology1", {}, {}, {topic("repartitionWithoutPartitionCount")})}};
  BOOST_TEST(invalid_message(configure_topology(t, sources)) ==
             "Failed to compute number of partitions for all repartition topics, because a repartition source topic "
             "is never used as a sink topic.");

  // shouldSetRepartitionTopicPartitionCountFromUpstreamExternalSourceTopic.
  t = Topology{0, {sub("subtopology0", {"source1"}, {"repartition1", "repartitionWithoutPartitionCount"},
                       {topic("repartition2", 2)}),
                   sub("subtopologyWithoutPartitionCount", {}, {},
                       {topic("repartition1", 4), topic("repartitionWithoutPartitionCount")})}};
  r = configure_topology(t, sources);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((r->subtopologies.at("subtopologyWithoutPartitionCount").repartition_source_partitions ==
              std::map<std::string, int32_t>{{"repartition1", 4}, {"repartitionWithoutPartitionCount", 3}}));

  // shouldSetRepartitionTopicPartitionCountFromUpstreamInternalRepartitionSourceTopic.
  t = Topology{0, {sub("subtopology0", {"source1"}, {"repartitionWithoutPartitionCount"}, {topic("repartition1", 4)}),
                   sub("subtopologyWithoutPartitionCount", {}, {"repartition1"},
                       {topic("repartitionWithoutPartitionCount")})}};
  r = configure_topology(t, sources);
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->subtopologies.at("subtopologyWithoutPartitionCount").repartition_source_partitions.at(
                 "repartitionWithoutPartitionCount") == 4);
}

BOOST_AUTO_TEST_CASE(kafka_copartitioned_topics_tests) {
  auto copartitioned = [](Subtopology s, std::vector<int16_t> sources, std::vector<int16_t> repartitions) {
    s.copartition_groups.push_back({std::move(sources), {}, std::move(repartitions)});
    return s;
  };
  // shouldThrowTopicConfigurationExceptionIfPartitionCountsForCoPartitionedTopicsDontMatch.
  Topology t{0, {copartitioned(sub("0", {"source-1", "source-2"}), {0, 1}, {})}};
  auto r = configure_topology(t, existing({{"source-1", 2}, {"source-2", 1}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((r->problem == TopicProblem{TopicStatus::kIncorrectlyPartitionedTopics,
                                         "Following topics do not have the same number of partitions: "
                                         "[{source-1=2, source-2=1}]"}));

  // shouldEnforceCopartitioningOnRepartitionTopics: a flexible repartition topic copartitioned with
  // 2-partition sources gets 2 even where its upstream would give it 10.
  t = Topology{0, {sub("up", {"big"}, {"repartitioned-1"}),
                   copartitioned(sub("down", {"source-1", "source-2"}, {}, {topic("repartitioned-1")}), {0, 1}, {0})}};
  r = configure_topology(t, existing({{"source-1", 2}, {"source-2", 2}, {"big", 10}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->subtopologies.at("down").repartition_source_partitions.at("repartitioned-1") == 2);

  // shouldThrowAnExceptionWhenNumberOfPartitionsOfNonRepartitionTopicAndRepartitionTopicWithEnforcedNumOfPartitionsDoNotMatch.
  t = Topology{0, {sub("up", {"source-1"}, {"repartitioned-1"}),
                   copartitioned(sub("down", {"source-1"}, {}, {topic("repartitioned-1", 10)}), {0}, {0})}};
  r = configure_topology(t, existing({{"source-1", 2}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->problem->detail ==
             "Number of partitions [10] of repartition topic [repartitioned-1] doesn't match number of partitions [2] "
             "of the source topic.");

  // shouldThrowAnExceptionIfTopicInfosWithEnforcedNumOfPartitionsHaveDifferentNumOfPartitions.
  t = Topology{0, {sub("up", {"s"}, {"repartitioned-1", "repartitioned-2"}),
                   copartitioned(sub("down", {}, {}, {topic("repartitioned-1", 10), topic("repartitioned-2", 5)}), {},
                                 {0, 1})}};
  r = configure_topology(t, existing({{"s", 1}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->problem->detail ==
             "Following topics do not have the same number of partitions: [{repartitioned-1=10, repartitioned-2=5}]");

  // shouldSetNumPartitionsToMaximumPartitionsWhenAllTopicsAreRepartitionTopics.
  t = Topology{0, {sub("a", {"one"}, {"repartitioned-1"}), sub("b", {"fifteen"}, {"repartitioned-2"}),
                   sub("c", {"five"}, {"repartitioned-3"}),
                   copartitioned(sub("d", {}, {},
                                     {topic("repartitioned-1"), topic("repartitioned-2"), topic("repartitioned-3")}),
                                 {}, {0, 1, 2})}};
  r = configure_topology(t, existing({{"one", 1}, {"fifteen", 15}, {"five", 5}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((r->subtopologies.at("d").repartition_source_partitions ==
              std::map<std::string, int32_t>{{"repartitioned-1", 15}, {"repartitioned-2", 15}, {"repartitioned-3", 15}}));
  BOOST_TEST(r->subtopologies.at("d").tasks == 15);
}

BOOST_AUTO_TEST_CASE(changelogs_take_their_subtopologys_largest_input) {
  // ChangelogTopicsTest: a changelog gets the largest of its subtopology's source and repartition
  // source topics; a subtopology without any source is refused.
  Topology t{0, {sub("0", {"a", "b"}, {}, {}, {topic("store-changelog")})}};
  auto r = configure_topology(t, existing({{"a", 3}, {"b", 7}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->subtopologies.at("0").changelog_partitions.at("store-changelog") == 7);
  BOOST_TEST(r->subtopologies.at("0").tasks == 7);
  t = Topology{0, {sub("lonely", {}, {}, {}, {topic("store-changelog")})}};
  BOOST_TEST(invalid_message(configure_topology(t, existing({}))) == "No source topics found for subtopology lonely");
}

BOOST_AUTO_TEST_CASE(missing_internal_topics_are_listed_in_javas_order) {
  // Kafka Streams' word count: subtopology 0 reads the input and writes the repartition topic,
  // subtopology 1 reads it and keeps a store. Kafka lists the two in its HashMap's order.
  const std::string rep = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition";
  const std::string log = "wc-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog";
  Topology t{0, {sub("0", {"words"}, {rep}), sub("1", {}, {}, {topic(rep, 0, -1, {{"cleanup.policy", "delete"}})},
                                                 {topic(log, 0, -1, {{"cleanup.policy", "compact"}})})}};
  auto r = configure_topology(t, existing({{"words", 3}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->problem->detail == "Internal topics are missing: " + log + ", " + rep);
  BOOST_REQUIRE(r->missing_internal_topics.size() == 2u);
  BOOST_TEST(r->missing_internal_topics[0].name == log);
  BOOST_TEST(r->missing_internal_topics[0].partitions == 3);
  BOOST_TEST(r->missing_internal_topics[0].replication_factor == -1);
  BOOST_TEST(r->subtopologies.at("1").tasks == 3);

  // An existing internal topic with another partition count.
  r = configure_topology(t, existing({{"words", 3}, {rep, 5}}));
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((r->problem == TopicProblem{TopicStatus::kIncorrectlyPartitionedTopics,
                                         "Existing topic " + rep + " has different number of partitions: expected 3, "
                                         "found 5"}));
  BOOST_TEST(r->missing_internal_topics.empty());
}

BOOST_AUTO_TEST_CASE(malformed_topologies_are_invalid_not_a_crash) {
  Topology t{0, {sub("0", {"a"}), sub("0", {"b"})}};
  BOOST_TEST(invalid_message(configure_topology(t, existing({{"a", 1}, {"b", 1}}))) == "Duplicate subtopology id 0.");
  Subtopology s = sub("0", {"a"});
  s.copartition_groups.push_back({{0, 1}, {}, {}});
  BOOST_TEST(invalid_message(configure_topology(Topology{0, {s}}, existing({{"a", 1}}))) ==
             "A copartition group of subtopology 0 refers to a topic index out of range.");
  s = sub("0", {"a"}, {}, {}, {topic("c", 0, 0, {{"k", "1"}, {"k", "2"}})});
  BOOST_TEST(invalid_message(configure_topology(Topology{0, {s}}, existing({{"a", 1}}))) ==
             "Topic config k of topic c is given twice.");
  s = sub("0", {"a"}, {}, {}, {topic("c"), topic("c")});
  BOOST_TEST(invalid_message(configure_topology(Topology{0, {s}}, existing({{"a", 1}}))) ==
             "Topic c is listed twice in subtopology 0.");
}

BOOST_AUTO_TEST_SUITE_END()
