// OffsetDelete (key 47), v0: deletes committed offsets of partitions the group does not consume
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise); answered once that is on disk.
#include "bridge/groups/group_coordinator.h"
#include "kafka/handlers/registry.h"
#include "kafka/protocol/generated/offset_delete.h"
#include "kafka/services.h"

namespace kib::kafka {
namespace {

void handle(bridge::GroupCoordinator& groups, Request&& req) {
  auto body = req.decode<msg::OffsetDeleteRequest>();
  std::vector<bridge::TopicPartitionIndex> tps;
  for (const auto& t : body.topics)
    for (const auto& p : t.partitions) tps.push_back({t.name, p.partition_index});
  auto reply = [respond = req.respond, topics = std::move(body.topics)](ErrorCode group_error,
                                                                        std::vector<ErrorCode> errors) {
    msg::OffsetDeleteResponse resp;
    resp.error_code = to_int16(group_error);
    if (group_error == ErrorCode::kNone) {
      size_t i = 0;
      for (const auto& t : topics) {
        auto& rt = resp.topics.emplace_back();
        rt.name = t.name;
        for (const auto& p : t.partitions) rt.partitions.push_back({p.partition_index, to_int16(errors.at(i++))});
      }
    }
    respond.send(resp);
  };
  groups.delete_offsets(body.group_id, tps, std::move(reply));
}

}  // namespace

HandlerSpec offset_delete_handler() {
  return serve<msg::OffsetDeleteRequest>(0, 0, [](const Services& s, Request&& req) {
    handle(s.groups, std::move(req));
  });
}

}  // namespace kib::kafka
