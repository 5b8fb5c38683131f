#include "bridge/groups/streams_group_rows.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <stdexcept>

namespace kib::bridge::streams {
namespace {

using nlohmann::json;

json topic_info(const TopicInfo& t) {
  return json{{"name", t.name}, {"partitions", t.partitions}, {"replication_factor", t.replication_factor},
              {"configs", t.configs}};
}

TopicInfo topic_info(const json& j) {
  return TopicInfo{j.at("name").get<std::string>(), j.at("partitions").get<int32_t>(),
                   j.at("replication_factor").get<int16_t>(), j.at("configs").get<TopicConfigs>()};
}

json tasks_json(const Tasks& t) {
  json j = json::object();
  for (const auto& [s, parts] : t) j[s] = parts;
  return j;
}

Tasks tasks_from(const json& j) {
  Tasks t;
  for (const auto& [s, parts] : j.items()) t[s] = parts.get<std::set<int32_t>>();
  return t;
}

json epochs_json(const TaskEpochs& t) {
  json j = json::object();
  for (const auto& [s, parts] : t) {
    json e = json::object();
    for (const auto& [p, epoch] : parts) e[std::to_string(p)] = epoch;
    j[s] = e;
  }
  return j;
}

TaskEpochs epochs_from(const json& j) {
  TaskEpochs t;
  for (const auto& [s, parts] : j.items())
    for (const auto& [p, epoch] : parts.items()) t[s][std::stoi(p)] = epoch.get<int32_t>();
  return t;
}

std::string endpoint_text(const Endpoint& e) { return e.host + ":" + std::to_string(e.port); }

Endpoint endpoint_from(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("user_endpoint without a port: " + s);
  return Endpoint{s.substr(0, colon), static_cast<uint16_t>(std::stoul(s.substr(colon + 1)))};
}

StreamsMember member_from(const state::StreamsGroupMemberRow& r, TaskAssignment* target) {
  StreamsMember m;
  m.member_id = r.member_id;
  m.rack_id = r.rack_id;
  m.instance_id = r.instance_id;
  m.client_id = r.client_id;
  m.client_host = r.client_host;
  m.rebalance_timeout_ms = r.rebalance_timeout_ms;
  m.topology_epoch = r.topology_epoch;
  if (r.user_endpoint) m.user_endpoint = endpoint_from(*r.user_endpoint);
  m.client_tags = json::parse(r.client_tags).get<std::map<std::string, std::string>>();
  m.r.process_id = r.process_id;
  m.r.member_epoch = r.member_epoch;
  m.r.previous_member_epoch = r.previous_member_epoch;
  std::string upper = r.state;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto state = streams_member_state_from_name(upper);
  if (!state) throw std::invalid_argument("unknown member state " + r.state);
  m.r.state = *state;
  m.r.assigned = MemberTasks{epochs_from(json::parse(r.tasks[0])), tasks_from(json::parse(r.tasks[1])),
                             tasks_from(json::parse(r.tasks[2]))};
  m.r.pending_revocation = MemberTasks{epochs_from(json::parse(r.tasks[3])), tasks_from(json::parse(r.tasks[4])),
                                       tasks_from(json::parse(r.tasks[5]))};
  *target = TaskAssignment{tasks_from(json::parse(r.tasks[6])), tasks_from(json::parse(r.tasks[7])),
                           tasks_from(json::parse(r.tasks[8]))};
  return m;
}

}  // namespace

std::string topology_to_json(const Topology& t) {
  json subs = json::array();
  for (const auto& s : t.subtopologies) {
    json changelogs = json::array(), repartition = json::array(), groups = json::array();
    for (const auto& c : s.state_changelog_topics) changelogs.push_back(topic_info(c));
    for (const auto& r : s.repartition_source_topics) repartition.push_back(topic_info(r));
    for (const auto& g : s.copartition_groups)
      groups.push_back({{"source_topics", g.source_topics},
                        {"source_topic_regex", g.source_topic_regex},
                        {"repartition_source_topics", g.repartition_source_topics}});
    subs.push_back({{"id", s.id},
                    {"source_topics", s.source_topics},
                    {"source_topic_regex", s.source_topic_regex},
                    {"state_changelog_topics", changelogs},
                    {"repartition_sink_topics", s.repartition_sink_topics},
                    {"repartition_source_topics", repartition},
                    {"copartition_groups", groups}});
  }
  return json{{"epoch", t.epoch}, {"subtopologies", subs}}.dump();
}

std::optional<Topology> topology_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    Topology t;
    t.epoch = j.at("epoch").get<int32_t>();
    for (const auto& s : j.at("subtopologies")) {
      Subtopology sub;
      sub.id = s.at("id").get<std::string>();
      sub.source_topics = s.at("source_topics").get<std::vector<std::string>>();
      sub.source_topic_regex = s.at("source_topic_regex").get<std::vector<std::string>>();
      for (const auto& c : s.at("state_changelog_topics")) sub.state_changelog_topics.push_back(topic_info(c));
      sub.repartition_sink_topics = s.at("repartition_sink_topics").get<std::vector<std::string>>();
      for (const auto& r : s.at("repartition_source_topics")) sub.repartition_source_topics.push_back(topic_info(r));
      for (const auto& g : s.at("copartition_groups"))
        sub.copartition_groups.push_back(
            CopartitionGroup{g.at("source_topics").get<std::vector<int16_t>>(),
                             g.at("source_topic_regex").get<std::vector<int16_t>>(),
                             g.at("repartition_source_topics").get<std::vector<int16_t>>()});
      t.subtopologies.push_back(std::move(sub));
    }
    return t;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::pair<state::StreamsGroupRow, std::vector<state::StreamsGroupMemberRow>> streams_group_rows(
    const StreamsGroupSnapshot& s, const char* state_name, int64_t now_ms) {
  state::StreamsGroupRow row;
  row.group_id = s.group_id;
  row.state = state_name;
  row.group_epoch = s.group_epoch;
  row.assignment_epoch = s.assignment_epoch;
  row.validated_topology_epoch = s.validated_topology_epoch;
  row.last_standby_replicas = s.last_standby_replicas;
  if (s.topology) row.topology = topology_to_json(*s.topology);
  row.input_partitions = json(s.configured_from).dump();
  row.updated_at_ms = now_ms;
  std::vector<state::StreamsGroupMemberRow> members;
  for (const auto& [id, m] : s.members) {
    state::StreamsGroupMemberRow r;
    r.member_id = id;
    r.process_id = m.r.process_id;
    r.rack_id = m.rack_id;
    r.instance_id = m.instance_id;
    r.client_id = m.client_id;
    r.client_host = m.client_host;
    r.rebalance_timeout_ms = m.rebalance_timeout_ms;
    r.topology_epoch = m.topology_epoch;
    if (m.user_endpoint) r.user_endpoint = endpoint_text(*m.user_endpoint);
    r.client_tags = json(m.client_tags).dump();
    r.member_epoch = m.r.member_epoch;
    r.previous_member_epoch = m.r.previous_member_epoch;
    r.state = streams_member_state_name(m.r.state);
    for (auto& c : r.state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.tasks[0] = epochs_json(m.r.assigned.active).dump();
    r.tasks[1] = tasks_json(m.r.assigned.standby).dump();
    r.tasks[2] = tasks_json(m.r.assigned.warmup).dump();
    r.tasks[3] = epochs_json(m.r.pending_revocation.active).dump();
    r.tasks[4] = tasks_json(m.r.pending_revocation.standby).dump();
    r.tasks[5] = tasks_json(m.r.pending_revocation.warmup).dump();
    auto t = s.target.find(id);
    if (t != s.target.end()) {
      r.tasks[6] = tasks_json(t->second.active).dump();
      r.tasks[7] = tasks_json(t->second.standby).dump();
      r.tasks[8] = tasks_json(t->second.warmup).dump();
    }
    members.push_back(std::move(r));
  }
  return {std::move(row), std::move(members)};
}

std::optional<StreamsGroupSnapshot> streams_group_from_rows(const state::StoredStreamsGroup& stored,
                                                            std::string* error) {
  StreamsGroupSnapshot s;
  const auto& g = stored.group;
  s.group_id = g.group_id;
  s.group_epoch = g.group_epoch;
  s.assignment_epoch = g.assignment_epoch;
  s.validated_topology_epoch = g.validated_topology_epoch;
  s.last_standby_replicas = g.last_standby_replicas;
  try {
    if (g.topology) {
      s.topology = topology_from_json(*g.topology);
      if (!s.topology) throw std::invalid_argument("topology does not parse");
    }
    s.configured_from = json::parse(g.input_partitions).get<std::map<std::string, int32_t>>();
    for (const auto& r : stored.members) {
      TaskAssignment target;
      s.members[r.member_id] = member_from(r, &target);
      s.target[r.member_id] = std::move(target);
    }
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return std::nullopt;
  }
  return s;
}

}  // namespace kib::bridge::streams
