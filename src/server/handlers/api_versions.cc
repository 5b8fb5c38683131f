// ApiVersions (key 18): advertises exactly what the handler registry serves, and (v3+) the
// features the bridge supports with their finalized levels, as a Kafka 4 broker does:
// `transaction.version` (0-2; finalized at `[transactions] transaction_version`), which tells
// clients whether to use transaction version 2 (KIP-890), and `group.version` (0-1; finalized at
// `[groups] group_version`): at 1 the consumer group protocol (KIP-848) is served and its APIs
// (ConsumerGroupHeartbeat, ConsumerGroupDescribe) advertised, at 0 they are left out, as Kafka
// leaves them out of ApiVersions while group.version is 0; `streams.version` (0-1; finalized at
// `[groups] streams_version`) likewise for the streams group protocol (KIP-1071:
// StreamsGroupHeartbeat, StreamsGroupDescribe). Features the bridge does not serve
// (metadata.version, share.version, ...) are not listed, so clients fall back as they do with an
// older broker.
#include <chrono>

#include "kafka/protocol/generated/api_versions.h"
#include "server/context/services.h"
#include "server/handlers/registry.h"

namespace kib::kafka {
namespace {

// Kafka's epoch of the finalized features is the metadata log's offset; clients keep the highest
// they saw and ignore older ones. The bridge's features change only with a restart (the config is
// read at startup), so the start time, in ms, is an epoch that only grows.
int64_t finalized_features_epoch() {
  static const int64_t epoch = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  return epoch;
}

void handle(const config::Config& config, Request&& req) {
  auto body = req.decode<msg::ApiVersionsRequest>();
  if (req.header.api_version >= 3) {
    req.session->client_software_name = body.client_software_name;
    req.session->client_software_version = body.client_software_version;
  }
  msg::ApiVersionsResponse resp;
  const auto group_level = static_cast<int16_t>(config.groups.group_version);
  const auto streams_level = static_cast<int16_t>(config.groups.streams_version);
  for (const HandlerSpec& h : handler_registry()) {
    if (group_level < 1 && (h.api_key == 68 || h.api_key == 69)) continue;  // ConsumerGroupHeartbeat, Describe
    // StreamsGroupHeartbeat, Describe, TopologyDescriptionUpdate
    if (streams_level < 1 && (h.api_key == 88 || h.api_key == 89 || h.api_key == 93)) continue;
    resp.api_keys.push_back({h.api_key, h.advertised_min, h.max_version});
  }
  const auto level = static_cast<int16_t>(config.transactions.transaction_version);
  resp.supported_features.push_back({"group.version", 0, 1});
  resp.supported_features.push_back({"streams.version", 0, 1});
  resp.supported_features.push_back({"transaction.version", 0, 2});
  resp.finalized_features.push_back({"group.version", group_level, group_level});
  resp.finalized_features.push_back({"streams.version", streams_level, streams_level});
  resp.finalized_features.push_back({"transaction.version", level, level});
  resp.finalized_features_epoch = finalized_features_epoch();
  req.respond.send(resp);
}

}  // namespace

HandlerSpec api_versions_handler() {
  return serve<msg::ApiVersionsRequest>(0, 4, [](const Services& s, Request&& req) {
    handle(s.config, std::move(req));
  });
}

}  // namespace kib::kafka
