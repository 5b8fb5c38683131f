// ListGroups (key 16), v0-5: every group with its protocol type; the state (v4+) and type
// (v5+: "classic", "consumer") filters are case-insensitive. With DESCRIBE on the cluster every group
// is listed, else only the groups the principal may DESCRIBE (KafkaApis.handleListGroupsRequest).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/list_groups.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::ListGroupsRequest>();
  msg::ListGroupsResponse resp;
  const bool all = req.authorized_cluster(Op::kDescribe, bridge::Audit::kFilter);
  for (auto& g : groups.list_groups(body.states_filter, body.types_filter)) {
    if (!all && !req.authorized(Op::kDescribe, Res::kGroup, g.group_id, bridge::Audit::kFilter))
      continue;
    resp.groups.push_back({std::move(g.group_id), std::move(g.protocol_type), std::move(g.state), std::move(g.type)});
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec list_groups_handler() {
  return serve<msg::ListGroupsRequest>(0, 5, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
