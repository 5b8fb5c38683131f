// Ported from Kafka 4.3's org.apache.kafka.coordinator.group.streams.topics (InternalTopicManager,
// RepartitionTopics, CopartitionedTopicsEnforcer, ChangelogTopics), step for step, so that the
// same topology against the same topics gives the same partition counts, the same status and
// the same message. Where Kafka iterates a java.util.HashMap or HashSet (the subtopologies by id,
// a copartition group's topics, the topics to create, the required topics) the port visits the
// keys in Java's order (common/java_hash_order.h): it decides which of several problems is
// reported and how "Internal topics are missing: ..." lists them. Kafka's
// IllegalStateExceptions, which the checks before them make unreachable, are STREAMS_INVALID_TOPOLOGY
// here, as are its failures on malformed input (duplicate ids or topic names in a subtopology,
// indexes out of range, duplicate config keys), which Kafka answers with an internal error.
#include "bridge/groups/streams_topology.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "bridge/errors.h"
#include "common/java_hash_order.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge::streams {
namespace {

// Kafka's TopicConfigurationException: the group is not ready, the heartbeat still succeeds.
struct TopicProblemThrown {
  TopicProblem problem;
};

// Kafka's StreamsInvalidTopologyException: the heartbeat fails with STREAMS_INVALID_TOPOLOGY.
struct InvalidTopologyThrown {
  std::string message;
};

[[noreturn]] void invalid(std::string message) { throw InvalidTopologyThrown{std::move(message)}; }

[[noreturn]] void incorrectly_partitioned(std::string detail) {
  throw TopicProblemThrown{{TopicStatus::kIncorrectlyPartitionedTopics, std::move(detail)}};
}

// java.util.TreeMap<String, Integer>.toString(): "{a=1, b=2}".
std::string tree_map_text(const std::map<std::string, int32_t>& m) {
  std::string out = "{";
  for (const auto& [k, v] : m) {
    if (out.size() > 1) out += ", ";
    out += k + "=" + std::to_string(v);
  }
  return out + "}";
}

// A collection's toString(): "[a, b]".
std::string list_text(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

class Configurer {
 public:
  Configurer(const Topology& t, const PartitionCountOf& existing) : topology_(t), existing_(existing) {}

  ConfiguredTopology run() {
    check_shape();
    ConfiguredTopology out;
    out.epoch = topology_.epoch;
    try {
      throw_on_missing_source_topics();
      decide_repartition_counts();
      enforce_copartitioning();
      decide_changelog_counts();
      for (const Subtopology* s : by_id_) out.subtopologies.emplace(s->id, configure(*s));
      out.missing_internal_topics = missing_internal_topics(out.subtopologies);
      if (!out.missing_internal_topics.empty()) {
        std::vector<std::string> names;
        for (const auto& t : out.missing_internal_topics) names.push_back(t.name);
        out.problem = TopicProblem{TopicStatus::kMissingInternalTopics,
                                   "Internal topics are missing: " + summarize_topics(names)};
      }
    } catch (TopicProblemThrown& p) {
      out.subtopologies.clear();
      out.missing_internal_topics.clear();
      out.problem = std::move(p.problem);
    }
    return out;
  }

 private:
  // What Kafka fails on before it gets to the topics: ids given twice (Collectors.toMap), indexes
  // out of range (List.get), a config key given twice (Collectors.toMap).
  void check_shape() {
    std::unordered_map<std::string, const Subtopology*> ids;
    std::vector<std::string> inserted;
    for (const auto& s : topology_.subtopologies) {
      if (!ids.emplace(s.id, &s).second) invalid("Duplicate subtopology id " + s.id + ".");
      inserted.push_back(s.id);
      for (const auto& g : s.copartition_groups) {
        auto in_range = [](const std::vector<int16_t>& idx, size_t n) {
          return std::all_of(idx.begin(), idx.end(), [n](int16_t i) { return i >= 0 && static_cast<size_t>(i) < n; });
        };
        if (!in_range(g.source_topics, s.source_topics.size()) ||
            !in_range(g.source_topic_regex, s.source_topic_regex.size()) ||
            !in_range(g.repartition_source_topics, s.repartition_source_topics.size()))
          invalid("A copartition group of subtopology " + s.id + " refers to a topic index out of range.");
      }
      for (const auto* list : {&s.repartition_source_topics, &s.state_changelog_topics}) {
        std::set<std::string_view> names;
        for (const auto& t : *list)
          if (!names.insert(t.name).second)
            invalid("Topic " + t.name + " is listed twice in subtopology " + s.id + ".");
      }
      for (const auto* list : {&s.repartition_source_topics, &s.state_changelog_topics})
        for (const auto& t : *list) {
          std::set<std::string_view> keys;
          for (const auto& [k, v] : t.configs)
            if (!keys.insert(k).second) invalid("Topic config " + k + " of topic " + t.name + " is given twice.");
        }
    }
    // topology.subtopologies() is a HashMap by id: every pass below visits them in its order.
    for (const auto& id : java_hash_order(inserted)) by_id_.push_back(ids.at(id));
  }

  // InternalTopicManager.getPartitionCount: an existing topic's count, else a decided one.
  std::optional<int32_t> count(const std::string& topic) const {
    if (auto n = existing_(topic)) return n;
    if (auto it = decided_.find(topic); it != decided_.end()) return it->second;
    return std::nullopt;
  }

  int32_t count_or_invalid(const std::string& topic) const {
    if (auto n = count(topic)) return *n;
    invalid("Number of partitions is not set for topic: " + topic);
  }

  void throw_on_missing_source_topics() {
    std::set<std::string> missing;
    for (const Subtopology* s : by_id_)
      for (const auto& t : s->source_topics)
        if (!existing_(t)) missing.insert(t);
    if (!missing.empty())
      throw TopicProblemThrown{{TopicStatus::kMissingSourceTopics,
                                "Source topics " + summarize_topics({missing.begin(), missing.end()}) + " are missing."}};
  }

  // RepartitionTopics.setup: fixed counts first, then a sink gets the largest input of the
  // subtopology writing it, until nothing changes.
  void decide_repartition_counts() {
    std::map<std::string, int32_t> counts;
    for (const Subtopology* s : by_id_)
      for (const auto& r : s->repartition_source_topics)
        if (r.partitions != 0) counts[r.name] = r.partitions;
    bool needed = false;
    do {
      needed = false;
      bool progress = false;
      for (const Subtopology* s : by_id_)
        for (const auto& sink : s->repartition_sink_topics) {
          if (counts.contains(sink)) continue;
          std::optional<int32_t> n;
          for (const auto& r : s->repartition_source_topics)
            if (auto it = counts.find(r.name); it != counts.end() && (!n || it->second > *n)) n = it->second;
          for (const auto& t : s->source_topics)
            if (auto c = existing_(t); c && (!n || *c > *n)) n = c;
          if (!n) {
            needed = true;
          } else {
            counts[sink] = *n;
            progress = true;
          }
        }
      if (!progress && needed)
        invalid("Failed to compute number of partitions for all repartition topics. There may be loops in the topology "
                "that cannot be resolved.");
    } while (needed);
    for (const Subtopology* s : by_id_)
      for (const auto& r : s->repartition_source_topics)
        if (!counts.contains(r.name))
          invalid("Failed to compute number of partitions for all repartition topics, because a repartition source "
                  "topic is never used as a sink topic.");
    for (const auto& [k, v] : counts) decided_[k] = v;
  }

  // InternalTopicManager.enforceCopartitioning with CopartitionedTopicsEnforcer.enforce.
  void enforce_copartitioning() {
    std::vector<std::string> fixed_inserted;
    std::unordered_set<std::string> fixed, flexible;
    for (const Subtopology* s : by_id_)
      for (const auto& r : s->repartition_source_topics) {
        if (r.partitions != 0) {
          fixed.insert(r.name);
          fixed_inserted.push_back(r.name);
        } else {
          flexible.insert(r.name);
        }
      }
    const std::vector<std::string> fixed_order = java_hash_order(fixed_inserted);
    for (const Subtopology* s : by_id_)
      for (const auto& g : s->copartition_groups) {
        std::vector<std::string> names;
        for (int16_t i : g.source_topics) names.push_back(s->source_topics[i]);
        for (int16_t i : g.repartition_source_topics) names.push_back(s->repartition_source_topics[i].name);
        enforce(java_hash_order(names), fixed, flexible, fixed_order);
      }
  }

  void enforce(const std::vector<std::string>& group, const std::unordered_set<std::string>& fixed,
               const std::unordered_set<std::string>& flexible, const std::vector<std::string>& fixed_order) {
    if (group.empty()) return;
    std::vector<std::pair<std::string, int32_t>> repartition;  // in the group's (Java) order
    std::map<std::string, int32_t> repartition_sorted, others_sorted;
    std::optional<int32_t> first_other;
    for (const auto& t : group) {
      const int32_t n = count_or_invalid(t);
      if (fixed.contains(t) || flexible.contains(t)) {
        repartition.emplace_back(t, n);
        repartition_sorted[t] = n;
      } else {
        if (!first_other) first_other = n;
        others_sorted[t] = n;
      }
    }
    int32_t decided = 0;
    if (others_sorted.empty()) {
      if (!fixed_order.empty()) {
        decided = count_or_invalid(fixed_order.front());
        for (const auto& t : fixed_order)
          if (count_or_invalid(t) != decided)
            incorrectly_partitioned("Following topics do not have the same number of partitions: [" +
                                    tree_map_text(repartition_sorted) + "]");
      } else {
        for (const auto& [t, n] : repartition) decided = std::max(decided, n);
        if (decided == 0) {
          std::vector<std::string> names;
          for (const auto& [t, n] : repartition) names.push_back(t);
          invalid("All topics in the copartition group had undefined partition number: " + list_text(names));
        }
      }
    } else {
      decided = *first_other;
      for (const auto& [t, n] : others_sorted)
        if (n != decided)
          incorrectly_partitioned("Following topics do not have the same number of partitions: [" +
                                  tree_map_text(others_sorted) + "]");
    }
    std::map<std::string, int32_t> result;
    for (const auto& [t, n] : repartition) {
      result[t] = decided;
      if (fixed.contains(t) && n != decided)
        incorrectly_partitioned("Number of partitions [" + std::to_string(n) + "] of repartition topic [" + t +
                                "] doesn't match number of partitions [" + std::to_string(decided) +
                                "] of the source topic.");
    }
    for (const auto& [t, n] : result) decided_[t] = n;
  }

  // The largest input of a subtopology: its changelogs' partitions and its task count.
  std::optional<int32_t> largest_input(const Subtopology& s) const {
    std::optional<int32_t> n;
    auto take = [&](const std::string& t) {
      const int32_t c = count_or_invalid(t);
      if (!n || c > *n) n = c;
    };
    for (const auto& t : s.source_topics) take(t);
    for (const auto& r : s.repartition_source_topics) take(r.name);
    return n;
  }

  // ChangelogTopics.setup.
  void decide_changelog_counts() {
    std::map<std::string, int32_t> changelogs;
    for (const Subtopology* s : by_id_) {
      const auto n = largest_input(*s);
      if (!n) invalid("No source topics found for subtopology " + s->id);
      for (const auto& c : s->state_changelog_topics) changelogs[c.name] = *n;
    }
    for (const auto& [k, v] : changelogs) decided_[k] = v;
  }

  int32_t partitions_of(const TopicInfo& t) const {
    if (t.partitions != 0) return t.partitions;
    auto it = decided_.find(t.name);
    if (it == decided_.end()) invalid("Number of partitions must be set for topic " + t.name);
    return it->second;
  }

  ConfiguredSubtopology configure(const Subtopology& s) const {
    ConfiguredSubtopology c;
    c.tasks = largest_input(s).value_or(0);
    c.source_topics = s.source_topics;
    for (const auto& r : s.repartition_source_topics) {
      c.source_topics.push_back(r.name);
      c.repartition_source_partitions[r.name] = partitions_of(r);
    }
    for (const auto& t : s.state_changelog_topics) c.changelog_partitions[t.name] = partitions_of(t);
    return c;
  }

  // InternalTopicManager.missingInternalTopics: every repartition source and changelog as a
  // topic to create (per subtopology in id order, each kind in its HashMap's order, a later
  // put of a name replacing its value in place), less those that exist, checked in the order
  // of requiredTopics() (a HashSet) for a partition count other than the one decided.
  std::vector<InternalTopic> missing_internal_topics(const std::map<std::string, ConfiguredSubtopology>& configured) {
    std::vector<std::string> inserted;
    std::unordered_map<std::string, InternalTopic> to_create;
    const std::unordered_map<std::string, const Subtopology*> ids = [&] {
      std::unordered_map<std::string, const Subtopology*> m;
      for (const Subtopology* s : by_id_) m.emplace(s->id, s);
      return m;
    }();
    for (const auto& [id, c] : configured) {
      const Subtopology& s = *ids.at(id);
      for (const auto* list : {&s.repartition_source_topics, &s.state_changelog_topics}) {
        std::vector<std::string> names;
        for (const auto& t : *list) names.push_back(t.name);
        for (const auto& name : java_hash_order(names)) {
          const TopicInfo& t = *std::find_if(list->begin(), list->end(), [&](const TopicInfo& x) { return x.name == name; });
          InternalTopic it{t.name, partitions_of(t), t.replication_factor != 0 ? t.replication_factor : int16_t{-1},
                           t.configs};
          inserted.push_back(t.name);
          to_create[t.name] = std::move(it);
        }
      }
    }
    std::vector<std::string> required;
    for (const Subtopology* s : by_id_) {
      for (const auto& t : s->source_topics) required.push_back(t);
      for (const auto& r : s->repartition_source_topics) required.push_back(r.name);
      for (const auto& c : s->state_changelog_topics) required.push_back(c.name);
    }
    std::unordered_set<std::string> exists;
    for (const auto& t : java_hash_order(required)) {
      const auto n = existing_(t);
      if (!n) continue;
      exists.insert(t);
      if (auto it = to_create.find(t); it != to_create.end() && it->second.partitions != *n)
        incorrectly_partitioned("Existing topic " + t + " has different number of partitions: expected " +
                                std::to_string(it->second.partitions) + ", found " + std::to_string(*n));
    }
    std::vector<InternalTopic> out;
    for (const auto& name : java_hash_order(inserted))
      if (!exists.contains(name)) out.push_back(std::move(to_create.at(name)));
    return out;
  }

  const Topology& topology_;
  const PartitionCountOf& existing_;
  std::vector<const Subtopology*> by_id_;  // Java's HashMap order of the ids
  std::map<std::string, int32_t> decided_;  // partition counts decided for internal topics
};

}  // namespace

std::string summarize_topics(const std::vector<std::string>& topics) {
  if (topics.empty()) return "<none>";
  std::string out;
  for (size_t i = 0; i < topics.size() && i < 3; ++i) out += (i ? ", " : "") + topics[i];
  if (topics.size() > 3) out += " and " + std::to_string(topics.size() - 3) + " additional topics";
  return out;
}

Result<ConfiguredTopology> configure_topology(const Topology& topology, const PartitionCountOf& partitions) {
  try {
    return Configurer(topology, partitions).run();
  } catch (InvalidTopologyThrown& e) {
    return kafka_error(kafka::ErrorCode::kStreamsInvalidTopology, std::move(e.message));
  }
}

std::vector<std::string> topology_topics(const Topology& t) {
  std::set<std::string> names;
  for (const auto& s : t.subtopologies) {
    names.insert(s.source_topics.begin(), s.source_topics.end());
    names.insert(s.repartition_sink_topics.begin(), s.repartition_sink_topics.end());
    for (const auto& r : s.repartition_source_topics) names.insert(r.name);
    for (const auto& c : s.state_changelog_topics) names.insert(c.name);
  }
  return {names.begin(), names.end()};
}

}  // namespace kib::bridge::streams
