// DescribeClientQuotas (key 48), v0-1: the bridge enforces no client quotas, so no entity has
// any, and the answer is Kafka's for a cluster without quotas: no entries, after the filter was
// checked as ClientQuotasImage.describe checks it. `kafka-configs --describe --entity-type
// users` asks it before it describes the users' SCRAM credentials.
#include <set>
#include <string>

#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/describe_client_quotas.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

constexpr int8_t kMatchExact = 0, kMatchDefault = 1, kMatchSpecified = 2;

struct Refusal {
  ErrorCode code;
  std::string message;
};

std::optional<Refusal> check_filter(const msg::DescribeClientQuotasRequest& req) {
  std::set<std::string> types;
  for (const auto& c : req.components) {
    if (c.entity_type.empty()) return Refusal{ErrorCode::kInvalidRequest, "Invalid empty entity type."};
    if (types.count(c.entity_type))
      return Refusal{ErrorCode::kInvalidRequest,
                     "Entity type " + c.entity_type + " cannot appear more than once in the filter."};
    if (c.entity_type != "ip" && c.entity_type != "user" && c.entity_type != "client-id")
      return Refusal{ErrorCode::kUnsupportedVersion, "Unsupported entity type " + c.entity_type};
    switch (c.match_type) {
      case kMatchExact:
        if (!c.match)
          return Refusal{ErrorCode::kInvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null."};
        break;
      case kMatchDefault:
        if (c.match)
          return Refusal{ErrorCode::kInvalidRequest,
                         "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."};
        break;
      case kMatchSpecified:
        if (c.match)
          return Refusal{ErrorCode::kInvalidRequest,
                         "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."};
        break;
      default:
        return Refusal{ErrorCode::kInvalidRequest, "Unknown match type " + std::to_string(c.match_type)};
    }
    types.insert(c.entity_type);
  }
  if (types.count("ip") && (types.count("user") || types.count("client-id")))
    return Refusal{ErrorCode::kInvalidRequest,
                   "Invalid entity filter component combination. IP filter component should not be used with user or "
                   "clientId filter component."};
  return std::nullopt;
}

void handle(Request&& req) {
  auto body = req.decode<msg::DescribeClientQuotasRequest>();
  msg::DescribeClientQuotasResponse resp;
  // KafkaApis: DESCRIBE_CONFIGS on the cluster, else getErrorResponse (no entries).
  if (!req.authorized_cluster(Op::kDescribeConfigs)) {
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    resp.error_message = error_message(ErrorCode::kClusterAuthorizationFailed);
    resp.entries = std::nullopt;
  } else if (auto refusal = check_filter(body)) {
    resp.error_code = to_int16(refusal->code);
    resp.error_message = refusal->message;
    resp.entries = std::nullopt;
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_client_quotas_handler() {
  return serve<msg::DescribeClientQuotasRequest>(0, 1, [](const Services&, Request&& req) {
    handle(std::move(req));
  });
}

}  // namespace kib::kafka
