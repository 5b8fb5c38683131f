// What handlers hand the authorizer (bridge/security/authorizer.h): who sends the request, from
// where, and which API it is; and the names of Kafka's ACL types, so a handler reads
// `s.authorizer.authorize(auth(req), Op::kWrite, Res::kTopic, name)` as KafkaApis does.
#pragma once

#include "bridge/security/authorizer.h"
#include "kafka/protocol/error_code.h"
#include "server/context/request.h"
#include "security/acl.h"

namespace kib::kafka {

using Op = security::AclOperation;
using Res = security::ResourceType;

inline bridge::AuthContext auth(const Request& req) {
  return bridge::AuthContext{req.session->principal, req.session->client_host, req.header.api_key};
}

// What a config resource needs (ConfigHelper.handleDescribeConfigsRequest with
// DESCRIBE_CONFIGS, ControllerApis.authorizeAlterResource with ALTER_CONFIGS): BROKER,
// BROKER_LOGGER and CLIENT_METRICS resources the cluster's, TOPIC and GROUP their own. The error
// a refusal gets, or kNone (allowed, or a type left to the config service to refuse).
inline ErrorCode config_resource_denial(bridge::Authorizer& authorizer, const Request& req, int8_t resource_type,
                                        const std::string& name, Op op) {
  switch (resource_type) {
    case 4:   // BROKER
    case 8:   // BROKER_LOGGER
    case 16:  // CLIENT_METRICS
      return authorizer.authorize_cluster(auth(req), op) ? ErrorCode::kNone : ErrorCode::kClusterAuthorizationFailed;
    case 2:  // TOPIC
      return authorizer.authorize(auth(req), op, Res::kTopic, name) ? ErrorCode::kNone
                                                                    : ErrorCode::kTopicAuthorizationFailed;
    case 32:  // GROUP
      return authorizer.authorize(auth(req), op, Res::kGroup, name) ? ErrorCode::kNone
                                                                    : ErrorCode::kGroupAuthorizationFailed;
    default:
      return ErrorCode::kNone;
  }
}

}  // namespace kib::kafka
