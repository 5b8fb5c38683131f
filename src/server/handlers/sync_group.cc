// SyncGroup (key 14), v0-5: the leader hands in the assignment; every member gets its own,
// byte for byte, once the leader's is stored (followers wait for it). Needs READ on the group
// (GROUP_AUTHORIZATION_FAILED).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/sync_group.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::SyncGroupRequest>();
  const int16_t v = req.header.api_version;
  auto reply = [respond = req.respond](bridge::SyncGroupResult r) {
    msg::SyncGroupResponse resp;
    resp.error_code = to_int16(r.error);
    resp.protocol_type = std::move(r.protocol_type);
    resp.protocol_name = std::move(r.protocol_name);
    resp.assignment = std::move(r.assignment);
    respond.send(resp);
  };
  // KafkaApis checks the v5 protocol fields first, then the group's READ.
  if (!(v >= 5 && (!body.protocol_type || !body.protocol_name)) &&
      !req.authorized(Op::kRead, Res::kGroup, body.group_id)) {
    bridge::SyncGroupResult error;
    error.error = ErrorCode::kGroupAuthorizationFailed;
    return reply(std::move(error));
  }
  // From v5 the protocol type and name are mandatory (KafkaApis.handleSyncGroupRequest).
  if (v >= 5 && (!body.protocol_type || !body.protocol_name)) {
    bridge::SyncGroupResult error;
    error.error = ErrorCode::kInconsistentGroupProtocol;
    return reply(std::move(error));
  }
  bridge::SyncGroupParams p;
  p.group_id = std::move(body.group_id);
  p.generation_id = body.generation_id;
  p.member_id = std::move(body.member_id);
  p.group_instance_id = std::move(body.group_instance_id);
  p.protocol_type = std::move(body.protocol_type);
  p.protocol_name = std::move(body.protocol_name);
  for (auto& a : body.assignments) p.assignments.emplace_back(std::move(a.member_id), std::move(a.assignment));
  groups.sync_group(std::move(p), std::move(reply));
}

}  // namespace

HandlerSpec sync_group_handler() {
  return serve<msg::SyncGroupRequest>(0, 5, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
