// IncrementalAlterConfigs (key 44): SET/DELETE/APPEND/SUBTRACT on topic and broker configs
// (bridge/catalog/config_service.h); kafka-configs --alter in Kafka 4 uses it. Each resource needs
// ALTER_CONFIGS on itself (topics, groups) or on the cluster (broker configs); the checks it
// shares with AlterConfigs are in alter_config_utils.h.
#include <utility>
#include <vector>

#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_configs.h"
#include "kafka/protocol/generated/incremental_alter_configs.h"
#include "server/context/services.h"
#include "server/handlers/alter_config_utils.h"
#include "server/handlers/registry.h"

namespace kib::kafka {
namespace {

void handle(bridge::ConfigService& configs, Request&& req) {
  auto body = req.decode<msg::IncrementalAlterConfigsRequest>();
  alter_config_resources<msg::IncrementalAlterConfigsResponse>(
      req, body, [&configs](const auto& res, bool validate_only, auto finish) {
        std::vector<bridge::topic_configs::AlterOp> ops;
        for (const auto& c : res.configs) ops.push_back({c.name, c.config_operation, c.value});
        configs.alter_incremental(res.resource_type, res.resource_name, ops, validate_only, std::move(finish));
      });
}

}  // namespace

HandlerSpec incremental_alter_configs_handler() {
  return serve<msg::IncrementalAlterConfigsRequest>(0, 1, [](const Services& s, Request&& req) {
    handle(s.configs, std::move(req));
  });
}

}  // namespace kib::kafka
