// Heartbeat (key 12), v0-4: keeps a member's session alive; REBALANCE_IN_PROGRESS tells it to rejoin.
// Needs READ on the group (GROUP_AUTHORIZATION_FAILED).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/heartbeat.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::HeartbeatRequest>();
  msg::HeartbeatResponse resp;
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) {
    resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
    return req.respond.send(resp);
  }
  resp.error_code =
      to_int16(groups.heartbeat(body.group_id, body.member_id, body.group_instance_id, body.generation_id));
  req.respond.send(resp);
}

}  // namespace

HandlerSpec heartbeat_handler() {
  return serve<msg::HeartbeatRequest>(0, 4, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
