// DeleteGroups (key 42), v0-2: empty groups go with their committed offsets (answered once
// that is on disk); groups with members get NON_EMPTY_GROUP.
#include "bridge/groups/group_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/delete_groups.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::DeleteGroupsRequest>();
  auto reply = [respond = req.respond, ids = body.groups_names](std::vector<ErrorCode> errors) {
    msg::DeleteGroupsResponse resp;
    for (size_t i = 0; i < ids.size(); ++i) resp.results.push_back({ids[i], to_int16(errors.at(i))});
    respond.send(resp);
  };
  groups.delete_groups(body.groups_names, std::move(reply));
}

}  // namespace

HandlerSpec delete_groups_handler() {
  return serve<msg::DeleteGroupsRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
