// ConsumerGroupDescribe (key 69), v0-1: KIP-848 consumer groups with their epochs, assignor and
// members (each with its current and target assignment), as GroupMetadataManager
// .consumerGroupDescribe answers: a group that does not exist or is not a consumer group gets
// GROUP_ID_NOT_FOUND with Kafka's message. Each group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED);
// authorized operations when asked. `kafka-consumer-groups --describe` and the admin client's
// describeConsumerGroups use it first, and fall back to DescribeGroups for classic groups.
#include <limits>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/security/authorizer.h"
#include "common/text.h"
#include "kafka/protocol/generated/consumer_group_describe.h"
#include "server/context/services.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

using Resp = msg::ConsumerGroupDescribeResponse;

template <typename Assignment>
Resp::Assignment to_assignment(const bridge::TopicCatalog& catalog, const Assignment& by_topic) {
  Resp::Assignment a;
  for (const auto& [topic, parts] : by_topic) {
    Resp::TopicPartitions tp;
    if (const bridge::TopicMetadata* t = catalog.find(topic)) tp.topic_id = t->topic_id;
    tp.topic_name = topic;
    for (const auto& p : parts) {
      if constexpr (std::is_same_v<std::decay_t<decltype(p)>, int32_t>)
        tp.partitions.push_back(p);
      else
        tp.partitions.push_back(p.first);
    }
    if (!tp.partitions.empty()) a.topic_partitions.push_back(std::move(tp));
  }
  return a;
}

void handle(const bridge::GroupCoordinator& groups, const bridge::TopicCatalog& catalog,
            bridge::Authorizer& authorizer, uint64_t max_response_bytes, Request&& req) {
  auto body = req.decode<msg::ConsumerGroupDescribeRequest>();
  Resp resp;
  AnswerBudget budget(max_response_bytes);  // server/handlers/fanout.h
  std::set<std::string> seen;
  for (const auto& id : body.group_ids) {
    if (!seen.insert(id).second) continue;
    if (!budget.add(sizeof(Resp::DescribedGroup) + id.size())) break;
    auto& g = resp.groups.emplace_back();
    g.group_id = id;
    g.authorized_operations = std::numeric_limits<int32_t>::min();
    if (!req.authorized(Op::kDescribe, Res::kGroup, id)) {
      g.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
      continue;
    }
    bridge::ConsumerGroupDescribeResult r = groups.consumer_group_describe(id);
    if (r.error != ErrorCode::kNone) {
      g.error_code = to_int16(r.error);
      g.error_message = truncate_message(r.message);
      continue;
    }
    g.group_state = r.group.state;
    g.group_epoch = r.group.group_epoch;
    g.assignment_epoch = r.group.assignment_epoch;
    g.assignor_name = r.group.assignor;
    if (body.include_authorized_operations)
      g.authorized_operations = authorizer.authorized_operations(auth(req), Res::kGroup, id);
    for (const auto& mv : r.group.members) {
      const bridge::ConsumerMember& m = mv.member;
      Resp::Member out;
      out.member_id = m.member_id;
      out.instance_id = m.instance_id;
      out.rack_id = m.rack_id;
      out.member_epoch = m.member_epoch;
      out.client_id = m.client_id;
      out.client_host = m.client_host;
      out.subscribed_topic_names.assign(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
      if (!m.subscribed_topic_regex.empty()) out.subscribed_topic_regex = m.subscribed_topic_regex;
      out.assignment = to_assignment(catalog, m.assigned);
      out.target_assignment = to_assignment(catalog, mv.target);
      out.member_type = m.classic ? 0 : 1;  // KIP-848: 0 a member using the classic protocol, 1 the consumer protocol
      budget.add(sizeof(Resp::Member) + out.member_id.size() + out.client_id.size() + out.client_host.size() +
                 64 * (out.assignment.topic_partitions.size() + out.target_assignment.topic_partitions.size()));
      g.members.push_back(std::move(out));
    }
    if (budget.over()) break;
  }
  if (budget.over())
    return refuse_oversized_answer(req.respond, fmt::format("ConsumerGroupDescribe naming {} groups", seen.size()),
                                   budget);
  req.respond.send(resp);
}

}  // namespace

HandlerSpec consumer_group_describe_handler() {
  return serve<msg::ConsumerGroupDescribeRequest>(0, 1, [](const Services& s, Request&& req) {
    handle(s.groups, s.catalog, s.authorizer, s.config.limits.max_response_bytes, std::move(req));
  });
}

}  // namespace kib::kafka
