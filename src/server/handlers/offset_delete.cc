// OffsetDelete (key 47), v0: deletes committed offsets of partitions the group does not consume
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise); answered once that is on disk. Needs DELETE on the
// group (GROUP_AUTHORIZATION_FAILED) and READ on each topic (TOPIC_AUTHORIZATION_FAILED for its
// partitions, which are left alone), as KafkaApis.handleOffsetDeleteRequest.
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/offset_delete.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::OffsetDeleteRequest>();
  if (!req.authorized(Op::kDelete, Res::kGroup, body.group_id)) {
    msg::OffsetDeleteResponse resp;
    resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
    return req.respond.send(resp);
  }
  std::vector<bridge::TopicPartitionIndex> tps;
  std::vector<bool> may_read;
  for (const auto& t : body.topics) {
    may_read.push_back(req.authorized(Op::kRead, Res::kTopic, t.name));
    if (may_read.back())
      for (const auto& p : t.partitions) tps.push_back({t.name, p.partition_index});
  }
  auto reply = [respond = req.respond, topics = std::move(body.topics), may_read](ErrorCode group_error,
                                                                                  std::vector<ErrorCode> errors) {
    msg::OffsetDeleteResponse resp;
    resp.error_code = to_int16(group_error);
    if (group_error == ErrorCode::kNone) {
      size_t i = 0;
      for (size_t t = 0; t < topics.size(); ++t) {
        auto& rt = resp.topics.emplace_back();
        rt.name = topics[t].name;
        for (const auto& p : topics[t].partitions)
          rt.partitions.push_back(
              {p.partition_index, to_int16(may_read[t] ? errors.at(i++) : ErrorCode::kTopicAuthorizationFailed)});
      }
    }
    respond.send(resp);
  };
  groups.delete_offsets(body.group_id, tps, std::move(reply));
}

}  // namespace

HandlerSpec offset_delete_handler() {
  return serve<msg::OffsetDeleteRequest>(0, 0, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
