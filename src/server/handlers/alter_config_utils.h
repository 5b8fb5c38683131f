// What AlterConfigs (key 33) and IncrementalAlterConfigs (key 44) share, as Redpanda's
// handlers/details/alter_config_utils.h: per resource the same checks in the same order, and one
// answer once every resource's change is in. Only how a resource's configs reach the config
// service differs (a whole set replaced, or SET/DELETE/APPEND/SUBTRACT), and that is the
// caller's `alter`.
//
// Per resource, as Kafka's ConfigAdminManager.preprocess and ControllerApis do:
//   1. a resource named twice fails, every copy, INVALID_REQUEST "Error due to duplicate config
//      keys", and is not altered;
//   2. ALTER_CONFIGS on the resource itself (topics, groups) or on the cluster (broker configs,
//      config_resource_denial in server/security/authorization.h), else its *_AUTHORIZATION_FAILED;
//   3. the change, by the config service, whose error (or none) is the resource's answer.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "bridge/errors.h"
#include "common/text.h"
#include "server/context/request.h"
#include "server/handlers/fan_in_answer.h"
#include "server/security/authorization.h"

namespace kib::kafka {

// Answers `body`'s resources in request order. `alter(resource, validate_only, finish)` starts
// one resource's change and calls finish(Status) once, when it is in (or at once).
template <typename Response, typename Body, typename Alter>
void alter_config_resources(Request& req, const Body& body, Alter alter) {
  auto call = std::make_shared<FanInAnswer<Response>>(req.respond);
  call->resp.responses.resize(body.resources.size());
  std::multiset<std::pair<int8_t, std::string>> seen;
  for (const auto& r : body.resources) seen.insert({r.resource_type, r.resource_name});
  for (size_t i = 0; i < body.resources.size(); ++i) {
    const auto& res = body.resources[i];
    auto& out = call->resp.responses[i];
    out.resource_type = res.resource_type;
    out.resource_name = res.resource_name;
    call->add();
    auto finish = [call, i](Status s) {
      auto& o = call->resp.responses[i];
      o.error_code = s ? to_int16(ErrorCode::kNone) : to_int16(bridge::to_kafka_error(s.error()));
      o.error_message = s ? std::nullopt : std::optional<std::string>(truncate_message(s.error().message));
      call->done();
    };
    if (seen.count({res.resource_type, res.resource_name}) > 1) {
      finish(bridge::kafka_error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys"));
      continue;
    }
    if (const ErrorCode e = config_resource_denial(req, res.resource_type, res.resource_name, Op::kAlterConfigs);
        e != ErrorCode::kNone) {
      finish(bridge::kafka_error(e, error_message(e)));
      continue;
    }
    alter(res, body.validate_only, std::move(finish));
  }
  call->done();
}

}  // namespace kib::kafka
