// LeaveGroup (key 13), v0-5: one member (v0-2) or a batch by member id or group.instance.id (v3+).
// Needs READ on the group (GROUP_AUTHORIZATION_FAILED, no members answered).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/leave_group.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::LeaveGroupRequest>();
  const int16_t v = req.header.api_version;
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) {
    msg::LeaveGroupResponse resp;
    resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
    return req.respond.send(resp);
  }
  std::vector<bridge::LeavingMember> members;
  if (v <= 2) {
    members.push_back({body.member_id, std::nullopt, ""});
  } else {
    for (auto& m : body.members) members.push_back({m.member_id, m.group_instance_id, m.reason.value_or("")});
  }
  bridge::LeaveGroupResult r = groups.leave_group(body.group_id, members);

  msg::LeaveGroupResponse resp;
  if (v <= 2) {
    // One error only: the group's, else the member's (Kafka's LeaveGroupResponse.getError).
    ErrorCode e = r.error;
    for (ErrorCode m : r.member_errors)
      if (e == ErrorCode::kNone) e = m;
    resp.error_code = to_int16(e);
  } else {
    resp.error_code = to_int16(r.error);
    for (size_t i = 0; i < r.member_errors.size(); ++i)
      resp.members.push_back({members[i].member_id, members[i].group_instance_id, to_int16(r.member_errors[i])});
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec leave_group_handler() {
  return serve<msg::LeaveGroupRequest>(0, 5, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
