// StreamsGroupTopologyDescriptionUpdate (key 93), v0 (KIP-1331): a streams group member pushes its
// topology's description for StreamsGroupDescribe v1 to show. Kafka 4.4 keeps descriptions only
// through a broker plugin; without one, its default, it never asks for a description
// (StreamsGroupHeartbeat v1's TopologyDescriptionRequired stays false, StreamsGroupDescribe v1
// answers NOT_STORED) and answers a push, after READ on the group (GROUP_AUTHORIZATION_FAILED),
// UNSUPPORTED_VERSION "The broker has no streams group topology description plugin configured."
// (GroupCoordinatorService.throwIfStreamsGroupTopologyDescriptionUpdateInvalid). The bridge has no
// such plugin and answers as that Kafka does. Advertised with the other streams group APIs while
// `[groups] streams_version` is 1.
#include "kafka/protocol/generated/streams_group_topology_description_update.h"
#include "server/context/services.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

void handle(Request&& req) {
  auto body = req.decode<msg::StreamsGroupTopologyDescriptionUpdateRequest>();
  msg::StreamsGroupTopologyDescriptionUpdateResponse resp;
  if (!req.authorized(Op::kRead, Res::kGroup, body.group_id)) {
    resp.error_code = to_int16(ErrorCode::kGroupAuthorizationFailed);
  } else {
    resp.error_code = to_int16(ErrorCode::kUnsupportedVersion);
    resp.error_message = "The broker has no streams group topology description plugin configured.";
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec streams_group_topology_description_update_handler() {
  return serve<msg::StreamsGroupTopologyDescriptionUpdateRequest>(0, 0,
                                                                 [](const Services&, Request&& req) { handle(std::move(req)); });
}

}  // namespace kib::kafka
