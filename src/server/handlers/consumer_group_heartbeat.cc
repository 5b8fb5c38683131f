// ConsumerGroupHeartbeat (key 68), v0-1: a KIP-848 consumer group member joins (epoch 0),
// heartbeats, reports the partitions it owns, and leaves (-1; -2 a static member that will come
// back); the group coordinator answers with its epoch and, when it changed, its assignment
// (docs/groups.md, "Consumer groups (KIP-848)"). v1 members bring their own member id.
// Topics travel by id: owned partitions of ids the bridge does not know are left out (the topic
// was deleted), assignments name each topic by its id.
// Needs READ on the group (GROUP_AUTHORIZATION_FAILED) and DESCRIBE on every subscribed topic
// (TOPIC_AUTHORIZATION_FAILED), as KafkaApis.handleConsumerGroupHeartbeat. Advertised while
// `[groups] group_version` is 1 (api_versions.cc).
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "common/text.h"
#include "kafka/protocol/generated/consumer_group_heartbeat.h"
#include "server/context/services.h"
#include "server/handlers/client_host.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, const bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::ConsumerGroupHeartbeatRequest>();
  auto refuse = [&](ErrorCode e) {
    msg::ConsumerGroupHeartbeatResponse resp;
    resp.error_code = to_int16(e);
    req.respond.send(resp);
  };
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) return refuse(ErrorCode::kGroupAuthorizationFailed);
  if (body.subscribed_topic_names)
    for (const auto& t : *body.subscribed_topic_names)
      if (!req.authorized(Op::kDescribe, Res::kTopic, t)) return refuse(ErrorCode::kTopicAuthorizationFailed);

  bridge::ConsumerHeartbeatParams p;
  p.group_id = std::move(body.group_id);
  p.member_id = std::move(body.member_id);
  p.member_epoch = body.member_epoch;
  p.instance_id = std::move(body.instance_id);
  p.rack_id = std::move(body.rack_id);
  p.rebalance_timeout_ms = body.rebalance_timeout_ms;
  p.subscribed_topic_names = std::move(body.subscribed_topic_names);
  p.subscribed_topic_regex = std::move(body.subscribed_topic_regex);
  p.server_assignor = std::move(body.server_assignor);
  if (body.topic_partitions) {
    p.owned.emplace();
    for (const auto& tp : *body.topic_partitions)
      if (const bridge::TopicMetadata* t = catalog.find(tp.topic_id))
        (*p.owned)[t->name].insert(tp.partitions.begin(), tp.partitions.end());
  }
  p.client_id = req.header.client_id;
  p.client_host = client_host(req);
  // Topics a regular expression resolves to: only those this principal may DESCRIBE (Kafka's
  // filterTopicDescribeAuthorizedTopics); a filter, so a denial is not logged as a refusal.
  p.may_describe_topic = [req](const std::string& topic) {
    return req.authorized(Op::kDescribe, Res::kTopic, topic, bridge::Audit::kFilter);
  };
  groups.consumer_group_heartbeat(
      std::move(p), req.header.api_version, [respond = req.respond, &catalog](bridge::ConsumerHeartbeatResult r) {
        msg::ConsumerGroupHeartbeatResponse resp;
        resp.error_code = to_int16(r.error);
        if (!r.message.empty()) resp.error_message = truncate_message(r.message);
        if (r.error == ErrorCode::kNone) {
          resp.member_id = r.member_id;
          resp.member_epoch = r.member_epoch;
          resp.heartbeat_interval_ms = r.heartbeat_interval_ms;
          if (r.assignment) {
            auto& a = resp.assignment.emplace();
            for (const auto& [topic, parts] : *r.assignment) {
              const bridge::TopicMetadata* t = catalog.find(topic);
              if (!t || parts.empty()) continue;  // deleted meanwhile: the next heartbeat drops it
              a.topic_partitions.push_back({t->topic_id, std::vector<int32_t>(parts.begin(), parts.end())});
            }
          }
        }
        respond.send(resp);
      });
}

}  // namespace

HandlerSpec consumer_group_heartbeat_handler() {
  return serve<msg::ConsumerGroupHeartbeatRequest>(0, 1, [](const Services& s, Request&& req) {
    handle(s.groups, s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
