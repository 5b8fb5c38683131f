// AlterConfigs (key 33): legacy replace of a topic's or the broker's whole config set
// (bridge/catalog/config_service.h); confluent-kafka alter_configs and older clients use it.
// Each resource needs ALTER_CONFIGS on itself (topics, groups) or on the cluster (broker configs).
#include <memory>
#include <set>

#include "bridge/catalog/config_service.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/generated/alter_configs.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

using Response = msg::AlterConfigsResponse;

void handle(bridge::ConfigService& configs, bridge::Authorizer& authorizer, Request&& req) {
  auto body = req.decode<msg::AlterConfigsRequest>();
  struct Call {
    Request req;
    Response resp;
    size_t pending = 0;
  };
  auto call = std::make_shared<Call>();
  call->resp.responses.resize(body.resources.size());
  call->pending = body.resources.size();
  call->req = std::move(req);
  if (call->pending == 0) return call->req.respond.send(call->resp);
  // A resource named twice: every copy fails (ConfigAdminManager.preprocess).
  std::multiset<std::pair<int8_t, std::string>> seen;
  for (const auto& r : body.resources) seen.insert({r.resource_type, r.resource_name});
  for (size_t i = 0; i < body.resources.size(); ++i) {
    const auto& res = body.resources[i];
    auto& out = call->resp.responses[i];
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    auto finish = [call, i](Status s) {
      auto& o = call->resp.responses[i];
      o.error_code = s ? to_int16(ErrorCode::kNone) : to_int16(bridge::to_kafka_error(s.error()));
      o.error_message = s ? std::nullopt : std::optional<std::string>(truncate_message(s.error().message));
      if (--call->pending == 0) call->req.respond.send(call->resp);
    };
    if (seen.count({res.resource_type, res.resource_name}) > 1) {
      finish(bridge::kafka_error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys"));
      continue;
    }
    if (const ErrorCode e =
            config_resource_denial(authorizer, call->req, res.resource_type, res.resource_name, Op::kAlterConfigs);
        e != ErrorCode::kNone) {
      finish(bridge::kafka_error(e, error_message(e)));
      continue;
    }
    std::vector<std::pair<std::string, std::optional<std::string>>> values;
    for (const auto& c : res.configs) values.emplace_back(c.name, c.value);
    configs.alter_replace(res.resource_type, res.resource_name, values, body.validate_only, finish);
  }
}

}  // namespace

HandlerSpec alter_configs_handler() {
  return serve<msg::AlterConfigsRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.configs, s.authorizer, std::move(req));
  });
}

}  // namespace kib::kafka
