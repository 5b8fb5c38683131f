// StreamsGroupHeartbeat (key 88), v0-1: a Kafka Streams member of a KIP-1071 streams group joins
// with its application's topology (epoch 0), heartbeats with the tasks it owns, and leaves (-1;
// -2 a static member); the group coordinator answers with its epoch, its tasks when they changed,
// the group's statuses and the endpoints of every member (docs/groups.md, "Streams groups").
// As KafkaApis.handleStreamsGroupHeartbeat: READ on the group (GROUP_AUTHORIZATION_FAILED); on a
// join, every topic of the topology must be a valid name and no Kafka internal topic
// (STREAMS_INVALID_TOPOLOGY) and DESCRIBE-authorized (TOPIC_AUTHORIZATION_FAILED); the internal
// topics the topology still misses are created in the background (CREATE on the cluster or the
// topic; otherwise said in the MISSING_INTERNAL_TOPICS status), not waited for. Advertised while
// `[groups] streams_version` is 1 (api_versions.cc).
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "common/text.h"
#include "kafka/protocol/generated/streams_group_heartbeat.h"
#include "server/context/services.h"
#include "server/handlers/client_host.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

using Req = msg::StreamsGroupHeartbeatRequest;
using Resp = msg::StreamsGroupHeartbeatResponse;
namespace streams = bridge::streams;

streams::TopicInfo topic_info(const Req::TopicInfo& t) {
  streams::TopicInfo out{t.name, t.partitions, t.replication_factor, {}};
  for (const auto& kv : t.topic_configs) out.configs.emplace_back(kv.key, kv.value);
  return out;
}

streams::Topology topology(const Req::Topology& t) {
  streams::Topology out;
  out.epoch = t.epoch;
  for (const auto& s : t.subtopologies) {
    streams::Subtopology sub;
    sub.id = s.subtopology_id;
    sub.source_topics = s.source_topics;
    sub.source_topic_regex = s.source_topic_regex;
    for (const auto& c : s.state_changelog_topics) sub.state_changelog_topics.push_back(topic_info(c));
    sub.repartition_sink_topics = s.repartition_sink_topics;
    for (const auto& r : s.repartition_source_topics) sub.repartition_source_topics.push_back(topic_info(r));
    for (const auto& g : s.copartition_groups)
      sub.copartition_groups.push_back({g.source_topics, g.source_topic_regex, g.repartition_source_topics});
    out.subtopologies.push_back(std::move(sub));
  }
  return out;
}

streams::Tasks tasks(const std::vector<Req::TaskIds>& ids) {
  streams::Tasks out;
  for (const auto& t : ids) out[t.subtopology_id].insert(t.partitions.begin(), t.partitions.end());
  return out;
}

std::vector<Resp::TaskIds> task_ids(const streams::Tasks& t) {
  std::vector<Resp::TaskIds> out;
  for (const auto& [s, parts] : t)
    if (!parts.empty()) out.push_back({s, std::vector<int32_t>(parts.begin(), parts.end())});
  return out;
}

std::vector<Resp::TopicPartition> topic_partitions(const std::map<std::string, std::set<int32_t>>& by_topic) {
  std::vector<Resp::TopicPartition> out;
  for (const auto& [topic, parts] : by_topic) out.push_back({topic, std::vector<int32_t>(parts.begin(), parts.end())});
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

Resp answer_of(streams::StreamsHeartbeatResult r) {
  Resp resp;
  resp.error_code = to_int16(r.error);
  if (!r.message.empty()) resp.error_message = truncate_message(r.message);
  if (r.error != ErrorCode::kNone) {
    resp.status = std::nullopt;
    return resp;
  }
  resp.member_id = r.member_id;
  resp.member_epoch = r.member_epoch;
  resp.heartbeat_interval_ms = r.heartbeat_interval_ms;
  resp.status.emplace();
  for (const auto& s : r.status) resp.status->push_back({static_cast<int8_t>(s.code), truncate_message(s.detail)});
  if (r.tasks) {
    resp.active_tasks = task_ids(r.tasks->active);
    resp.standby_tasks = task_ids(r.tasks->standby);
    resp.warmup_tasks = task_ids(r.tasks->warmup);
  }
  resp.endpoint_information_epoch = r.endpoint_information_epoch;
  if (r.partitions_by_endpoint) {
    auto& out = resp.partitions_by_user_endpoint.emplace();
    for (const auto& e : *r.partitions_by_endpoint)
      out.push_back({{e.endpoint.host, e.endpoint.port}, topic_partitions(e.active), topic_partitions(e.standby)});
  }
  return resp;
}

// The internal topics the group still misses: created if this principal may, and what stands in
// the way said in the MISSING_INTERNAL_TOPICS status (Kafka's wording).
void create_internal_topics(bridge::GroupCoordinator& groups, const Request& req, streams::StreamsHeartbeatResult& r) {
  if (r.topics_to_create.empty()) return;
  const bool cluster_create = req.authorized_cluster(Op::kCreate, bridge::Audit::kFilter);
  std::vector<streams::InternalTopic> allowed;
  std::vector<std::string> denied;
  for (auto& t : r.topics_to_create) {
    if (cluster_create || req.authorized(Op::kCreate, Res::kTopic, t.name, bridge::Audit::kFilter))
      allowed.push_back(std::move(t));
    else
      denied.push_back(t.name);
  }
  const auto failures = groups.create_streams_topics(allowed, 2 * static_cast<int64_t>(r.heartbeat_interval_ms));
  auto note = [&](const std::string& text) {
    for (auto& s : r.status)
      if (s.code == streams::StreamsStatus::kMissingInternalTopics) {
        s.detail += "; " + text;
        return;
      }
    r.status.push_back({streams::StreamsStatus::kMissingInternalTopics, text});
  };
  if (!denied.empty()) note("Unauthorized to CREATE on topics " + joined(denied) + ".");
  if (!failures.empty()) note("Creation failed: " + joined(failures) + ".");
}

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<Req>();
  auto refuse = [&](ErrorCode e, std::string message = {}) {
    Resp resp;
    resp.error_code = to_int16(e);
    if (!message.empty()) resp.error_message = truncate_message(message);
    resp.status = std::nullopt;
    req.respond.send(resp);
  };
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) return refuse(ErrorCode::kGroupAuthorizationFailed);
  std::optional<streams::Topology> joined_topology;
  if (body.topology) joined_topology = topology(*body.topology);
  if (joined_topology) {
    const auto names = streams::topology_topics(*joined_topology);
    std::vector<std::string> internal, invalid;
    for (const auto& t : names) {
      if (bridge::TopicCatalog::kafka_internal(t)) internal.push_back(t);
      if (bridge::TopicCatalog::invalid_topic_name(t)) invalid.push_back(t);
    }
    if (!internal.empty())
      return refuse(ErrorCode::kStreamsInvalidTopology,
                    "Use of Kafka internal topics " + joined(internal) + " in a Kafka Streams topology is prohibited.");
    if (!invalid.empty())
      return refuse(ErrorCode::kStreamsInvalidTopology, "Topic names " + joined(invalid) + " are not valid topic names.");
    for (const auto& t : names)
      if (!req.authorized(Op::kDescribe, Res::kTopic, t)) return refuse(ErrorCode::kTopicAuthorizationFailed);
  }

  bridge::StreamsHeartbeatShape shape;
  shape.group_id = std::move(body.group_id);
  shape.instance_id = body.instance_id;
  shape.has_topology = body.topology.has_value();
  streams::StreamsHeartbeatParams p;
  p.member_id = std::move(body.member_id);
  p.member_epoch = body.member_epoch;
  p.endpoint_information_epoch = body.endpoint_information_epoch;
  p.rack_id = std::move(body.rack_id);
  p.instance_id = body.instance_id;
  p.rebalance_timeout_ms = body.rebalance_timeout_ms;
  if (body.topology) {
    for (const auto& s : body.topology->subtopologies) {
      shape.source_topic_regex.insert(shape.source_topic_regex.end(), s.source_topic_regex.begin(),
                                      s.source_topic_regex.end());
      for (const auto& c : s.state_changelog_topics) shape.changelog_partitions.emplace_back(c.name, c.partitions);
    }
    p.topology = std::move(joined_topology);
  }
  const std::optional<std::vector<Req::TaskIds>>* lists[3] = {&body.active_tasks, &body.standby_tasks,
                                                               &body.warmup_tasks};
  for (int i = 0; i < 3; ++i) {
    shape.owned_sent[i] = lists[i]->has_value();
    shape.owned_empty[i] = !lists[i]->has_value() || (*lists[i])->empty();
  }
  if (body.active_tasks && body.standby_tasks && body.warmup_tasks)
    p.owned = streams::OwnedTasks{tasks(*body.active_tasks), tasks(*body.standby_tasks), tasks(*body.warmup_tasks)};
  p.process_id = std::move(body.process_id);
  if (body.user_endpoint) p.user_endpoint = streams::Endpoint{body.user_endpoint->host, body.user_endpoint->port};
  if (body.client_tags) {
    p.client_tags.emplace();
    for (const auto& kv : *body.client_tags) (*p.client_tags)[kv.key] = kv.value;
  }
  p.shutdown_application = body.shutdown_application;
  p.client_id = req.header.client_id;
  p.client_host = client_host(req);
  groups.streams_group_heartbeat(shape, std::move(p),
                                 [respond = req.respond, req, &groups](streams::StreamsHeartbeatResult r) mutable {
                                   if (r.error == ErrorCode::kNone) create_internal_topics(groups, req, r);
                                   respond.send(answer_of(std::move(r)));
                                 });
}

}  // namespace

HandlerSpec streams_group_heartbeat_handler() {
  return serve<msg::StreamsGroupHeartbeatRequest>(0, 1, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
