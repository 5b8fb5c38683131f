// ListGroups (key 16), v0-5: every group with its protocol type; the state (v4+) and type
// (v5+, always "classic") filters are case-insensitive.
#include "bridge/groups/group_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/list_groups.h"
#include "kafka/services.h"

namespace kib::kafka {

void handle_list_groups(Services& s, Request&& req) {
  auto body = req.decode<msg::ListGroupsRequest>();
  msg::ListGroupsResponse resp;
  if (!s.groups) {
    resp.error_code = to_int16(ErrorCode::kCoordinatorNotAvailable);
    return req.respond.send(resp);
  }
  for (auto& g : s.groups->list_groups(body.states_filter, body.types_filter))
    resp.groups.push_back({std::move(g.group_id), std::move(g.protocol_type), std::move(g.state), "classic"});
  req.respond.send(resp);
}

}  // namespace kib::kafka
