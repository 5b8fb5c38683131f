// ListConfigResources (key 74, v0-1; ListClientMetricsResources before Kafka 4.1): the config
// resources of the types asked for, as KafkaApis.handleListConfigResources answers them:
// DESCRIBE_CONFIGS on the cluster or CLUSTER_AUTHORIZATION_FAILED; v0 knows only CLIENT_METRICS,
// v1 GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER and TOPIC (an empty list: all of them); a type
// outside those gets UNSUPPORTED_VERSION. Groups are those with configs of their own
// (`kafka-configs --entity-type groups` lists them beside ListGroups' groups); the bridge has no
// client-metrics subscriptions, so that type lists nothing. An answer past [limits]
// max_response_bytes (a million topics) closes the connection (server/handlers/fanout.h).
#include <algorithm>
#include <string>
#include <vector>

#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "kafka/protocol/generated/list_config_resources.h"
#include "server/context/services.h"
#include "server/handlers/fanout.h"
#include "server/handlers/registry.h"
#include "server/security/authorization.h"

namespace kib::kafka {
namespace {

using Type = bridge::ConfigResourceType;
using Response = msg::ListConfigResourcesResponse;

void handle(const Services& s, Request&& req) {
  auto body = req.decode<msg::ListConfigResourcesRequest>();
  Response resp;
  if (!req.authorized_cluster(Op::kDescribeConfigs)) {
    resp.error_code = to_int16(ErrorCode::kClusterAuthorizationFailed);
    return req.respond.send(resp);
  }
  // ListConfigResourcesRequest.supportedResourceTypes, in the order Kafka lists them.
  std::vector<int8_t> supported{static_cast<int8_t>(Type::kClientMetrics)};
  if (req.header.api_version >= 1)
    supported = {static_cast<int8_t>(Type::kGroup), static_cast<int8_t>(Type::kClientMetrics),
                 static_cast<int8_t>(Type::kBrokerLogger), static_cast<int8_t>(Type::kBroker),
                 static_cast<int8_t>(Type::kTopic)};
  std::vector<int8_t> types = body.resource_types.empty() ? supported : body.resource_types;
  for (int8_t t : types)
    if (std::find(supported.begin(), supported.end(), t) == supported.end()) {
      resp.error_code = to_int16(ErrorCode::kUnsupportedVersion);
      return req.respond.send(resp);
    }
  auto wanted = [&](Type t) { return std::find(types.begin(), types.end(), static_cast<int8_t>(t)) != types.end(); };
  AnswerBudget budget(s.config.limits.max_response_bytes);
  auto add = [&](std::string name, Type t) {
    budget.add(sizeof(Response::ConfigResource) + name.size());
    if (budget.over()) return false;
    resp.config_resources.push_back({std::move(name), static_cast<int8_t>(t)});
    return true;
  };
  bool fits = true;
  if (wanted(Type::kGroup))
    for (const std::string& g : s.configs.configured_groups()) fits = fits && add(g, Type::kGroup);
  const std::string node = std::to_string(s.config.kafka.node_id);
  if (wanted(Type::kBrokerLogger)) fits = fits && add(node, Type::kBrokerLogger);
  if (wanted(Type::kBroker)) fits = fits && add(node, Type::kBroker);
  if (wanted(Type::kTopic))
    for (const bridge::TopicMetadata* t : s.catalog.all()) fits = fits && add(t->name, Type::kTopic);
  if (!fits) {
    resp = Response{};
    return refuse_oversized_answer(req.respond, "ListConfigResources", budget);
  }
  req.respond.send(resp);
}

}  // namespace

HandlerSpec list_config_resources_handler() {
  return serve<msg::ListConfigResourcesRequest>(0, 1, [](const Services& s, Request&& req) { handle(s, std::move(req)); });
}

}  // namespace kib::kafka
