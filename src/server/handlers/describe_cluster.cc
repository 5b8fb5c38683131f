// DescribeCluster (key 60), v0-2: the cluster id and the one broker, which is also the
// controller, as a single KRaft broker answers on its broker listener
// (AuthHelper.computeDescribeClusterResponse). The bridge is never fenced, so
// include_fenced_brokers changes nothing. The cluster's authorized operations, when asked, are
// those the principal may perform, or 0 without DESCRIBE on the cluster.
#include <string>

#include "bridge/security/authorizer.h"
#include "server/security/authorization.h"
#include "server/handlers/registry.h"
#include "kafka/protocol/error_code.h"
#include "kafka/protocol/generated/describe_cluster.h"
#include "server/context/services.h"

namespace kib::kafka {
namespace {

// EndpointType ids (clients/admin/EndpointType.java).
constexpr int8_t kEndpointBroker = 1;
constexpr int8_t kEndpointController = 2;

const char* endpoint_name(int8_t type) { return type == kEndpointBroker ? "BROKER" : "CONTROLLER"; }

void handle(const config::Config& config, bridge::Authorizer& authorizer, const std::string& cluster_id,
            Request&& req) {
  auto body = req.decode<msg::DescribeClusterRequest>();
  const int16_t v = req.header.api_version;
  msg::DescribeClusterResponse resp;
  resp.error_message = std::nullopt;
  if (body.endpoint_type != kEndpointBroker) {
    // Only v1+ carry an endpoint type, so v0 always asks for brokers; Kafka still maps both
    // errors to INVALID_REQUEST on v0.
    const bool known = body.endpoint_type == kEndpointController;
    resp.error_code = to_int16(v == 0 ? ErrorCode::kInvalidRequest
                               : known ? ErrorCode::kMismatchedEndpointType
                                       : ErrorCode::kUnsupportedEndpointType);
    resp.error_message =
        known ? std::string("The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type ") +
                    endpoint_name(body.endpoint_type)
              : "Unsupported endpoint type " + std::to_string(body.endpoint_type);
    req.respond.send(resp);
    return;
  }
  auto advertised = config.advertised(req.session->listener);
  msg::DescribeClusterResponse::DescribeClusterBroker broker;
  broker.broker_id = config.kafka.node_id;
  broker.host = advertised.host;
  broker.port = advertised.port;
  broker.rack = std::nullopt;
  broker.is_fenced = false;
  resp.brokers.push_back(std::move(broker));
  resp.endpoint_type = kEndpointBroker;
  resp.cluster_id = cluster_id;
  resp.controller_id = config.kafka.node_id;
  // AuthHelper.computeDescribeClusterResponse; without authorization every operation the
  // cluster supports (AclEntry.supportedOperations(CLUSTER)).
  if (body.include_cluster_authorized_operations)
    resp.cluster_authorized_operations =
        req.authorized_cluster(Op::kDescribe)
            ? authorizer.authorized_operations(auth(req), Res::kCluster, security::kClusterName)
            : 0;
  req.respond.send(resp);
}

}  // namespace

HandlerSpec describe_cluster_handler() {
  return serve<msg::DescribeClusterRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.config, s.authorizer, s.cluster_id, std::move(req));
  });
}

}  // namespace kib::kafka
