// DescribeGroups (key 15), v0-6: state, protocol and members; metadata and assignments only
// for Stable groups. A group that does not exist is "Dead": without error up to v5, with
// GROUP_ID_NOT_FOUND and Kafka's message from v6 (KIP-1043), which Kafka 4 tools print.
#include <limits>
#include <set>
#include <string_view>

#include "bridge/groups/group_coordinator.h"
#include "common/text.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/describe_groups.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

// Without ACLs every operation on a group is allowed: READ(3), DELETE(6), DESCRIBE(8),
// DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11) as AclOperation bits (Kafka's group operations).
constexpr int32_t kGroupOperations = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::DescribeGroupsRequest>();
  msg::DescribeGroupsResponse resp;
  // A group named twice is described once: each description carries every member's metadata
  // and assignment, which a request repeating one group id would otherwise multiply.
  std::set<std::string_view> seen;
  for (const auto& id : body.groups) {
    if (!seen.insert(id).second) continue;
    auto& g = resp.groups.emplace_back();
    g.group_id = id;
    g.authorized_operations =
        body.include_authorized_operations ? kGroupOperations : std::numeric_limits<int32_t>::min();
    auto d = groups.describe_group(id);
    if (req.header.api_version >= 6 && d.state == "Dead") {
      g.error_code = to_int16(ErrorCode::kGroupIdNotFound);
      g.error_message = truncate_message("Group " + id + " not found.");
    }
    g.group_state = std::move(d.state);
    g.protocol_type = std::move(d.protocol_type);
    g.protocol_data = std::move(d.protocol_name);
    for (auto& m : d.members)
      g.members.push_back({std::move(m.member_id), std::move(m.group_instance_id), std::move(m.client_id),
                           std::move(m.client_host), std::move(m.metadata), std::move(m.assignment)});
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_groups_handler() {
  return serve<msg::DescribeGroupsRequest>(0, 6, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
