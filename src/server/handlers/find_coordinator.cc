// FindCoordinator (key 10): the bridge coordinates every group (key type 0) and transactional id
// (key type 1); other key types (share groups, 2) get INVALID_REQUEST, as Kafka answers an
// unknown one. A group key needs DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED), a
// transactional id DESCRIBE on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), per key, as
// KafkaApis.getCoordinator.
#include "bridge/catalog/topic_catalog.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/find_coordinator.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

// The error a key's coordinator lookup gets from the authorizer (kNone when allowed).
ErrorCode denial(const Request& req, int8_t key_type, const std::string& key) {
  if (key_type == 0 && !req.authorized(Op::kDescribe, Res::kGroup, key))
    return ErrorCode::kGroupAuthorizationFailed;
  if (key_type == 1 && !req.authorized(Op::kDescribe, Res::kTransactionalId, key))
    return ErrorCode::kTransactionalIdAuthorizationFailed;
  return ErrorCode::kNone;
}

void handle(const config::Config& config, bridge::TopicCatalog& catalog, Request&& req) {
  auto body = req.decode<msg::FindCoordinatorRequest>();
  auto adv = config.advertised(req.session->listener);
  msg::FindCoordinatorResponse resp;
  if (body.key_type != 0 && body.key_type != 1) {
    const std::string why = "key type " + std::to_string(body.key_type) + " is not served";
    if (req.header.api_version >= 4) {
      req.respond.count_error(to_int16(ErrorCode::kInvalidRequest));
      for (const auto& key : body.coordinator_keys) {
        msg::FindCoordinatorResponse::Coordinator c;
        c.key = key;
        c.node_id = -1;
        c.port = -1;
        c.error_code = to_int16(ErrorCode::kInvalidRequest);
        c.error_message = why;
        resp.coordinators.push_back(std::move(c));
      }
    } else {
      resp.error_code = to_int16(ErrorCode::kInvalidRequest);
      resp.error_message = why;
      resp.node_id = -1;
      resp.port = -1;
    }
    return req.respond.send(resp);
  }
  if (req.header.api_version >= 4) {
    for (const auto& key : body.coordinator_keys) {
      msg::FindCoordinatorResponse::Coordinator c;
      c.key = key;
      if (const ErrorCode e = denial(req, body.key_type, key); e != ErrorCode::kNone) {
        c.error_code = to_int16(e);
        c.node_id = -1;
        c.host = "";
        c.port = -1;
        resp.coordinators.push_back(std::move(c));
        continue;
      }
      // Kafka creates __consumer_offsets on the first (authorized) group coordinator lookup.
      if (body.key_type == 0) catalog.use_offsets_topic();
      c.node_id = config.kafka.node_id;
      c.host = adv.host;
      c.port = adv.port;
      c.error_message = std::nullopt;
      resp.coordinators.push_back(std::move(c));
    }
  } else if (const ErrorCode e = denial(req, body.key_type, body.key); e != ErrorCode::kNone) {
    // FindCoordinatorResponse.prepareOldResponse(error, Node.noNode()).
    resp.error_code = to_int16(e);
    resp.error_message = error_message(e);
    resp.node_id = -1;
    resp.host = "";
    resp.port = -1;
  } else {
    if (body.key_type == 0) catalog.use_offsets_topic();
    resp.node_id = config.kafka.node_id;
    resp.host = adv.host;
    resp.port = adv.port;
    resp.error_message = std::nullopt;
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec find_coordinator_handler() {
  return serve<msg::FindCoordinatorRequest>(0, 6, [](const Services& s, Request&& req) {
    handle(s.config, s.catalog, std::move(req));
  });
}

}  // namespace kib::kafka
