// OffsetCommit (key 8), v2-10: answered once the offsets are on disk (one fsync shared by every
// commit in the state writer's batch). Needs READ on the group (every partition
// GROUP_AUTHORIZATION_FAILED) and READ on each topic (its partitions TOPIC_AUTHORIZATION_FAILED,
// not committed), as KafkaApis.handleOffsetCommitRequest. v10 (KIP-848) names topics by id only:
// an id the catalog does not know (the zero id included) gets UNKNOWN_TOPIC_ID on each of its
// partitions, before any topic authorization, and the answer names topics by the ids asked.
#include <memory>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/offset_commit.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, const bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::OffsetCommitRequest>();
  const int16_t v = req.header.api_version;
  // The answer mirrors the request: every topic and partition, in order.
  auto resp = std::make_shared<msg::OffsetCommitResponse>();
  const bool group_allowed = req.authorized(Op::kRead, Res::kGroup, body.group_id);
  bridge::OffsetCommitParams p;
  for (auto& t : body.topics) {
    auto& rt = resp->topics.emplace_back();
    bool known = true;
    if (v >= 10) {
      rt.topic_id = t.topic_id;
      const bridge::TopicMetadata* m = catalog.find(t.topic_id);
      known = m != nullptr;
      if (known) t.name = m->name;
    }
    rt.name = t.name;
    const ErrorCode denied = !group_allowed ? ErrorCode::kGroupAuthorizationFailed
                             : !known       ? ErrorCode::kUnknownTopicId
                             : req.authorized(Op::kRead, Res::kTopic, t.name)
                                 ? ErrorCode::kNone
                                 : ErrorCode::kTopicAuthorizationFailed;
    for (auto& part : t.partitions) {
      // kNone: set in reply; a denied partition keeps its error and is not committed.
      rt.partitions.push_back({part.partition_index, to_int16(denied)});
      if (denied == ErrorCode::kNone)
        p.entries.push_back({t.name, part.partition_index, part.committed_offset, part.committed_leader_epoch,
                             std::move(part.committed_metadata)});
    }
  }
  // Nothing the principal may commit: answered without asking the coordinator, as Kafka.
  if (!group_allowed || (p.entries.empty() && !body.topics.empty())) return req.respond.send(*resp);
  auto reply = [respond = req.respond, resp](std::vector<ErrorCode> errors) {
    size_t i = 0;
    for (auto& t : resp->topics)
      for (auto& part : t.partitions)
        if (part.error_code == to_int16(ErrorCode::kNone)) part.error_code = to_int16(errors.at(i++));
    respond.send(*resp);
  };
  p.group_id = std::move(body.group_id);
  p.generation_id = body.generation_id_or_member_epoch;
  p.member_id = std::move(body.member_id);
  p.group_instance_id = std::move(body.group_instance_id);
  if (v <= 4) p.retention_time_ms = body.retention_time_ms;
  p.group_id_not_found_error = v >= 9;
  groups.commit_offsets(std::move(p), std::move(reply));
}

}  // namespace

HandlerSpec offset_commit_handler() {
  return serve<msg::OffsetCommitRequest>(2, 10, [](const Services& s, Request&& req) {
    handle(s.groups, s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
