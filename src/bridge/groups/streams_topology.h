// The topology of a streams group (KIP-1071) and its configuration against the topics that
// exist: Kafka's InternalTopicManager.configureTopics (with RepartitionTopics,
// CopartitionedTopicsEnforcer and ChangelogTopics), as a pure function of the topology a member
// sent and the partition counts of existing topics. It decides how many partitions each
// repartition and changelog topic needs, how many tasks each subtopology has, which internal
// topics are still to be created, and what keeps the group from being ready, with Kafka's
// messages in Kafka's order (streams_topology.cc says where Java's HashMap order matters).
// docs/groups.md, "Streams groups", has the design this is part of.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kib::bridge::streams {

using TopicConfigs = std::vector<std::pair<std::string, std::string>>;  // as sent, in order

// StreamsGroupHeartbeatRequest's TopicInfo.
struct TopicInfo {
  std::string name;
  int32_t partitions = 0;          // 0: not fixed by the application (always 0 for changelogs)
  int16_t replication_factor = 0;  // 0: the server's default
  TopicConfigs configs;
  bool operator==(const TopicInfo&) const = default;
};

// Indexes into the subtopology's lists.
struct CopartitionGroup {
  std::vector<int16_t> source_topics;
  std::vector<int16_t> source_topic_regex;
  std::vector<int16_t> repartition_source_topics;
  bool operator==(const CopartitionGroup&) const = default;
};

struct Subtopology {
  std::string id;
  std::vector<std::string> source_topics;  // external topics only (repartition topics below)
  std::vector<std::string> source_topic_regex;
  std::vector<TopicInfo> state_changelog_topics;
  std::vector<std::string> repartition_sink_topics;
  std::vector<TopicInfo> repartition_source_topics;
  std::vector<CopartitionGroup> copartition_groups;
  bool operator==(const Subtopology&) const = default;
};

struct Topology {
  int32_t epoch = 0;
  std::vector<Subtopology> subtopologies;  // as sent
  bool operator==(const Topology&) const = default;
};

// What keeps a group from being ready: StreamsGroupHeartbeatResponse status codes.
enum class TopicStatus : int8_t {
  kMissingSourceTopics = 1,
  kIncorrectlyPartitionedTopics = 2,
  kMissingInternalTopics = 3,
};

struct TopicProblem {
  TopicStatus status;
  std::string detail;
  bool operator==(const TopicProblem&) const = default;
};

// An internal topic to create (Kafka's CreatableTopic from ConfiguredInternalTopic).
struct InternalTopic {
  std::string name;
  int32_t partitions = 0;
  int16_t replication_factor = -1;  // -1: the server's default
  TopicConfigs configs;
  bool operator==(const InternalTopic&) const = default;
};

struct ConfiguredSubtopology {
  int32_t tasks = 0;  // tasks 0..tasks-1; task p reads partition p of each source topic that has it
  std::vector<std::string> source_topics;  // external sources, then repartition sources, as sent
  std::map<std::string, int32_t> repartition_source_partitions;
  std::map<std::string, int32_t> changelog_partitions;
  bool operator==(const ConfiguredSubtopology&) const = default;
};

struct ConfiguredTopology {
  int32_t epoch = 0;
  std::map<std::string, ConfiguredSubtopology> subtopologies;  // by id; empty if a topic problem stopped it
  std::vector<InternalTopic> missing_internal_topics;          // to create, in Kafka's order
  std::optional<TopicProblem> problem;                         // set: the group is not ready
  bool ready() const { return !problem.has_value(); }
};

// Partition count of an existing topic; nullopt when the topic does not exist.
using PartitionCountOf = std::function<std::optional<int32_t>(const std::string& topic)>;

// Kafka's InternalTopicManager.configureTopics. A topic problem (missing or wrongly partitioned
// topics) is part of the result; a topology Kafka refuses outright (a loop between repartition
// topics, a repartition source nobody writes, a copartition group of unsized topics, a
// subtopology without sources) is an Error of domain kKafka carrying STREAMS_INVALID_TOPOLOGY and
// Kafka's message, as are inputs Kafka would fail on with an internal error (duplicate
// subtopology ids, copartition indexes out of range, a config key given twice).
Result<ConfiguredTopology> configure_topology(const Topology& topology, const PartitionCountOf& partitions);

// Every topic the topology names (sources, repartition sinks and sources, changelogs), sorted,
// each once: what KafkaApis checks on a join and StreamsGroupDescribe needs DESCRIBE on.
std::vector<std::string> topology_topics(const Topology& t);

// Kafka's summarizeTopics: up to three names, then "and N additional topics"; "<none>" if empty.
std::string summarize_topics(const std::vector<std::string>& topics);

}  // namespace kib::bridge::streams
