// JoinGroup (key 11), v0-9: hands the member to the group coordinator; the answer is sent
// when the rebalance completes (or at once on MEMBER_ID_REQUIRED and errors). Needs READ on the
// group (GROUP_AUTHORIZATION_FAILED, answered as JoinGroupRequest.getErrorResponse).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/client_host.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/join_group.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::JoinGroupRequest>();
  const int16_t v = req.header.api_version;
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) {
    msg::JoinGroupResponse resp;
    resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
    resp.generation_id = -1;
    resp.protocol_name = v >= 7 ? std::nullopt : std::optional<std::string>("");
    resp.leader = "";
    resp.member_id = "";
    return req.respond.send(resp);
  }
  auto reply = [respond = req.respond, v](bridge::JoinGroupResult r) {
    msg::JoinGroupResponse resp;
    resp.error_code = to_int16(r.error);
    resp.generation_id = r.generation_id;
    resp.protocol_type = r.protocol_type;
    // Non-nullable before v7: "" when no protocol was selected.
    resp.protocol_name = v >= 7 ? r.protocol_name : std::optional<std::string>(r.protocol_name.value_or(""));
    resp.leader = r.leader_id;
    resp.skip_assignment = r.skip_assignment;
    resp.member_id = r.member_id;
    for (auto& m : r.members) resp.members.push_back({m.member_id, m.group_instance_id, std::move(m.metadata)});
    respond.send(resp);
  };
  bridge::JoinGroupParams p;
  p.group_id = std::move(body.group_id);
  p.member_id = std::move(body.member_id);
  p.group_instance_id = std::move(body.group_instance_id);
  p.require_known_member_id = v >= 4 && !p.group_instance_id;  // KIP-394
  p.supports_skip_assignment = v >= 9;
  p.client_id = req.header.client_id;
  p.client_host = client_host(req);
  p.session_timeout_ms = body.session_timeout_ms;
  // v0 has no rebalance timeout: the session timeout serves as both (KafkaApis).
  p.rebalance_timeout_ms = v == 0 ? body.session_timeout_ms : body.rebalance_timeout_ms;
  p.protocol_type = std::move(body.protocol_type);
  for (auto& proto : body.protocols) p.protocols.push_back({std::move(proto.name), std::move(proto.metadata)});
  p.reason = body.reason.value_or("");
  groups.join_group(std::move(p), std::move(reply));
}

}  // namespace

HandlerSpec join_group_handler() {
  return serve<msg::JoinGroupRequest>(0, 9, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
