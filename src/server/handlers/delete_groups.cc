// DeleteGroups (key 42), v0-2: empty groups go with their committed offsets (answered once
// that is on disk); groups with members get NON_EMPTY_GROUP. Each group needs DELETE
// (GROUP_AUTHORIZATION_FAILED, and it is left alone).
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/delete_groups.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::DeleteGroupsRequest>();
  std::vector<std::string> allowed;
  std::vector<bool> denied(body.groups_names.size(), false);
  for (size_t i = 0; i < body.groups_names.size(); ++i) {
    if (req.authorized(Op::kDelete, Res::kGroup, body.groups_names[i])) allowed.push_back(body.groups_names[i]);
    else denied[i] = true;
  }
  auto reply = [respond = req.respond, ids = body.groups_names, denied](std::vector<ErrorCode> errors) {
    msg::DeleteGroupsResponse resp;
    size_t k = 0;
    for (size_t i = 0; i < ids.size(); ++i)
      resp.results.push_back(
          {ids[i], to_int16(denied[i] ? ErrorCode::kGroupAuthorizationFailed : errors.at(k++)), std::nullopt});
    respond.send(resp);
  };
  groups.delete_groups(std::move(allowed), std::move(reply));
}

}  // namespace

HandlerSpec delete_groups_handler() {
  return serve<msg::DeleteGroupsRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
