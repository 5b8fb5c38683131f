// AlterConfigs (key 33): legacy replace of a topic's or the broker's whole config set
// (bridge/catalog/config_service.h); confluent-kafka alter_configs and older clients use it.
// Each resource needs ALTER_CONFIGS on itself (topics, groups) or on the cluster (broker configs);
// the checks it shares with IncrementalAlterConfigs are in alter_config_utils.h.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/catalog/config_service.h"
#include "kafka/protocol/generated/alter_configs.h"
#include "server/context/services.h"
#include "server/handlers/alter_config_utils.h"
#include "server/handlers/registry.h"

namespace kib::kafka {
namespace {

void handle(bridge::ConfigService& configs, Request&& req) {
  auto body = req.decode<msg::AlterConfigsRequest>();
  alter_config_resources<msg::AlterConfigsResponse>(req, body, [&configs](const auto& res, bool validate_only,
                                                                          auto finish) {
    std::vector<std::pair<std::string, std::optional<std::string>>> values;
    for (const auto& c : res.configs) values.emplace_back(c.name, c.value);
    configs.alter_replace(res.resource_type, res.resource_name, values, validate_only, std::move(finish));
  });
}

}  // namespace

HandlerSpec alter_configs_handler() {
  return serve<msg::AlterConfigsRequest>(0, 2, [](const Services& s, Request&& req) {
    handle(s.configs, std::move(req));
  });
}

}  // namespace kib::kafka
