// StreamsGroupDescribe (key 89), v0-1: KIP-1071 streams groups with their epochs, topology and
// members (each with its current and target tasks), as GroupMetadataManager.streamsGroupDescribe
// and KafkaApis answer: a group that does not exist or is not a streams group gets
// GROUP_ID_NOT_FOUND with Kafka's message; DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) and
// on every topic of its topology (TOPIC_AUTHORIZATION_FAILED, no members, no topology). The
// topology is the configured one (partition counts decided) once the group is ready, else the one
// its first member sent. v1's topology description is never stored here (NOT_STORED when asked,
// as Kafka 4.4 without a description plugin: streams_group_topology_description_update.cc); the
// assignor is "sticky". Advertised
// while `[groups] streams_version` is 1. `kafka-streams-groups --describe` uses it.
#include <algorithm>
#include <limits>

#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "common/text.h"
#include "kafka/protocol/generated/streams_group_describe.h"
#include "server/context/services.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

using Resp = msg::StreamsGroupDescribeResponse;
namespace streams = bridge::streams;

std::vector<Resp::TaskIds> task_ids(const streams::Tasks& t) {
  std::vector<Resp::TaskIds> out;
  for (const auto& [s, parts] : t)
    if (!parts.empty()) out.push_back({s, std::vector<int32_t>(parts.begin(), parts.end())});
  return out;
}

Resp::Assignment assignment(const streams::TaskAssignment& a) {
  return {task_ids(a.active), task_ids(a.standby), task_ids(a.warmup)};
}

Resp::TopicInfo topic_info(const streams::TopicInfo& t, std::optional<int32_t> partitions) {
  Resp::TopicInfo out{t.name, partitions.value_or(t.partitions), t.replication_factor, {}};
  auto configs = t.configs;
  std::sort(configs.begin(), configs.end());
  for (const auto& [k, v] : configs) out.topic_configs.push_back({k, v});
  return out;
}

std::vector<Resp::TopicInfo> topic_infos(std::vector<streams::TopicInfo> topics, const std::map<std::string, int32_t>* counts) {
  std::sort(topics.begin(), topics.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<Resp::TopicInfo> out;
  for (const auto& t : topics) {
    std::optional<int32_t> n;
    if (counts)
      if (auto it = counts->find(t.name); it != counts->end()) n = it->second;
    out.push_back(topic_info(t, n));
  }
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The configured topology once the group is ready, else the topology as its first member sent it.
Resp::Topology topology(const streams::StreamsGroup& g) {
  Resp::Topology out;
  out.epoch = g.topology()->epoch;
  auto& subs = out.subtopologies.emplace();
  std::vector<const streams::Subtopology*> raw;
  for (const auto& s : g.topology()->subtopologies) raw.push_back(&s);
  std::sort(raw.begin(), raw.end(), [](const auto* a, const auto* b) { return a->id < b->id; });
  const auto& configured = g.configured();
  const bool ready = configured && configured->ready();
  for (const streams::Subtopology* s : raw) {
    Resp::Subtopology sub;
    sub.subtopology_id = s->id;
    const streams::ConfiguredSubtopology* c = nullptr;
    if (ready)
      if (auto it = configured->subtopologies.find(s->id); it != configured->subtopologies.end()) c = &it->second;
    if (c) {
      sub.source_topics = sorted(c->source_topics);
    } else {
      sub.source_topics = s->source_topics;
      for (const auto& r : s->repartition_source_topics) sub.source_topics.push_back(r.name);
      sub.source_topics = sorted(sub.source_topics);
    }
    sub.repartition_sink_topics = sorted(s->repartition_sink_topics);
    sub.state_changelog_topics = topic_infos(s->state_changelog_topics, c ? &c->changelog_partitions : nullptr);
    sub.repartition_source_topics =
        topic_infos(s->repartition_source_topics, c ? &c->repartition_source_partitions : nullptr);
    subs.push_back(std::move(sub));
  }
  return out;
}

Resp::Member member(const streams::StreamsGroup& g, const streams::StreamsMember& m) {
  Resp::Member out;
  out.member_id = m.member_id;
  out.member_epoch = m.r.member_epoch;
  out.rack_id = m.rack_id;
  out.instance_id = m.instance_id;
  out.client_id = m.client_id;
  out.client_host = m.client_host;
  out.topology_epoch = m.topology_epoch;
  out.process_id = m.r.process_id;
  if (m.user_endpoint) out.user_endpoint = Resp::Endpoint{m.user_endpoint->host, m.user_endpoint->port};
  for (const auto& [k, v] : m.client_tags) out.client_tags.push_back({k, v});
  out.assignment = assignment(streams::current_tasks(m));
  if (const streams::TaskAssignment* t = g.target(m.member_id)) out.target_assignment = assignment(*t);
  return out;
}

void handle(const bridge::GroupCoordinator& groups, bridge::Authorizer& authorizer, uint64_t max_response_bytes,
            Request&& req) {
  auto body = req.decode<msg::StreamsGroupDescribeRequest>();
  Resp resp;
  AnswerBudget budget(max_response_bytes);  // server/handlers/fanout.h
  std::set<std::string> seen;
  for (const auto& id : body.group_ids) {
    if (!seen.insert(id).second) continue;
    if (!budget.add(sizeof(Resp::DescribedGroup) + id.size())) break;
    auto& g = resp.groups.emplace_back();
    g.group_id = id;
    if (id.empty()) {
      g.error_code = to_int16(ErrorCode::kInvalidGroupId);
      continue;
    }
    if (!req.authorized(Op::kDescribe, Res::kGroup, id)) {
      g.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
      continue;
    }
    bridge::StreamsGroupDescribeResult r = groups.streams_group_describe(id);
    if (r.error != ErrorCode::kNone) {
      g.error_code = to_int16(r.error);
      g.error_message = truncate_message(r.message);
      continue;
    }
    const streams::StreamsGroup& sg = *r.group;
    g.group_state = sg.state_name();
    g.group_epoch = sg.group_epoch();
    g.assignment_epoch = sg.assignment_epoch();
    g.assignor_name = "sticky";
    if (body.include_topology_description) g.topology_description_status = 1;  // NOT_STORED
    if (sg.topology()) {
      bool topics_ok = true;
      for (const auto& t : streams::topology_topics(*sg.topology()))
        topics_ok = topics_ok && req.authorized(Op::kDescribe, Res::kTopic, t, bridge::Audit::kFilter);
      if (!topics_ok) {
        g.error_code = to_int16(ErrorCode::kTopicAuthorizationFailed);
        g.error_message = "The described group uses topics that the client is not authorized to describe.";
        continue;
      }
      g.topology = topology(sg);
    }
    if (body.include_authorized_operations)
      g.authorized_operations = authorizer.authorized_operations(auth(req), Res::kGroup, id);
    for (const auto& [mid, m] : sg.members()) {
      g.members.push_back(member(sg, m));
      const auto& out = g.members.back();
      budget.add(sizeof(Resp::Member) + out.member_id.size() + out.client_id.size() + out.client_host.size() +
                 out.process_id.size() + 32 * (out.assignment.active_tasks.size() + out.target_assignment.active_tasks.size()));
    }
    if (budget.over()) break;
  }
  if (budget.over())
    return refuse_oversized_answer(req.respond, fmt::format("StreamsGroupDescribe naming {} groups", seen.size()),
                                   budget);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec streams_group_describe_handler() {
  return serve<msg::StreamsGroupDescribeRequest>(0, 1, [](const Services& s, Request&& req) {
    handle(s.groups, s.authorizer, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
