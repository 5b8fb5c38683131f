// DescribeGroups (key 15), v0-6: state, protocol and members; metadata and assignments only
// for Stable groups. A group that does not exist is "Dead": without error up to v5, with
// GROUP_ID_NOT_FOUND and Kafka's message from v6 (KIP-1043), which Kafka 4 tools print. So is a
// KIP-848 consumer group ("Group G is not a classic group.", GroupMetadataManager.describeGroups).
// Each group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED, nothing else said about it); a
// described group carries its authorized operations when asked (v3+).
#include <limits>
#include <set>
#include <string_view>

#include "bridge/groups/group_coordinator.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "server/handlers/fanout.h"
#include "kafka/protocol/generated/describe_groups.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, bridge::Authorizer& authorizer, uint64_t max_response_bytes,
            Request&& req) {
  auto body = req.decode<msg::DescribeGroupsRequest>();
  msg::DescribeGroupsResponse resp;
  AnswerBudget budget(max_response_bytes);  // server/handlers/fanout.h
  // A group named twice is described once: each description carries every member's metadata
  // and assignment, which a request repeating one group id would otherwise multiply.
  std::set<std::string_view> seen;
  for (const auto& id : body.groups) {
    if (!seen.insert(id).second) continue;
    if (!budget.add(sizeof(msg::DescribeGroupsResponse::DescribedGroup) + id.size())) break;
    auto& g = resp.groups.emplace_back();
    g.group_id = id;
    g.authorized_operations = std::numeric_limits<int32_t>::min();
    if (!req.authorized(Op::kDescribe, Res::kGroup, id)) {
      // DescribeGroupsResponse.groupError: no state, protocol or members.
      g.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
      continue;
    }
    auto d = groups.describe_group(id);
    if (req.header.api_version >= 6 && d.state == "Dead") {
      // A consumer group (KIP-848) is described by ConsumerGroupDescribe; here it is not found,
      // with Kafka's message.
      g.error_code = to_int16(ErrorCode::kGroupIdNotFound);
      g.error_message = truncate_message(d.not_classic ? *d.not_classic : "Group " + id + " not found.");
    } else if (req.header.api_version >= 3 && body.include_authorized_operations) {
      // Only groups described without error, as Kafka (all of a group's operations when
      // authorization is off).
      g.authorized_operations = authorizer.authorized_operations(auth(req), Res::kGroup, id);
    }
    g.group_state = std::move(d.state);
    g.protocol_type = std::move(d.protocol_type);
    g.protocol_data = std::move(d.protocol_name);
    for (auto& m : d.members) {
      budget.add(sizeof(msg::DescribeGroupsResponse::DescribedGroupMember) + m.member_id.size() + m.client_id.size() +
                 m.client_host.size() + m.metadata.size() + m.assignment.size());
      g.members.push_back({std::move(m.member_id), std::move(m.group_instance_id), std::move(m.client_id),
                           std::move(m.client_host), std::move(m.metadata), std::move(m.assignment)});
    }
    if (budget.over()) break;
  }
  if (budget.over())
    return refuse_oversized_answer(req.respond, fmt::format("DescribeGroups naming {} groups", seen.size()), budget);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_groups_handler() {
  return serve<msg::DescribeGroupsRequest>(0, 6, [](const Services& s, Request&& req) {
    handle(s.groups, s.authorizer, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
