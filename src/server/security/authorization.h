// What handlers hand the authorizer (bridge/security/authorizer.h) beyond Request::authorized
// (server/context/request.h, defined in authorization.cc): who sends the request, from where,
// and which API it is, for the questions a handler asks the authorizer itself (authorized
// operations, enabled()); and the config resources' checks, shared by the config APIs.
#pragma once

#include <string>

#include "bridge/security/authorizer.h"
#include "kafka/protocol/error_code.h"
#include "server/context/request.h"
#include "security/acl.h"

namespace kib::kafka {

inline bridge::AuthContext auth(const Request& req) {
  return bridge::AuthContext{req.session->principal, req.session->client_host, req.header.api_key};
}

// What a config resource needs (ConfigHelper.handleDescribeConfigsRequest with
// DESCRIBE_CONFIGS, ControllerApis.authorizeAlterResource with ALTER_CONFIGS): BROKER,
// BROKER_LOGGER and CLIENT_METRICS resources the cluster's, TOPIC and GROUP their own. The error
// a refusal gets, or kNone (allowed, or a type left to the config service to refuse).
inline ErrorCode config_resource_denial(const Request& req, int8_t resource_type, const std::string& name, Op op) {
  switch (resource_type) {
    case 4:   // BROKER
    case 8:   // BROKER_LOGGER
    case 16:  // CLIENT_METRICS
      return req.authorized_cluster(op) ? ErrorCode::kNone : ErrorCode::kClusterAuthorizationFailed;
    case 2:  // TOPIC
      return req.authorized(op, Res::kTopic, name) ? ErrorCode::kNone : ErrorCode::kTopicAuthorizationFailed;
    case 32:  // GROUP
      return req.authorized(op, Res::kGroup, name) ? ErrorCode::kNone : ErrorCode::kGroupAuthorizationFailed;
    default:
      return ErrorCode::kNone;
  }
}

}  // namespace kib::kafka
