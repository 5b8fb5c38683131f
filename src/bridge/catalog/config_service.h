// Kafka's DescribeConfigs, IncrementalAlterConfigs and AlterConfigs for topics, the broker and
// groups.
// Topic overrides live in the TopicCatalog (it applies them to Iggy and persists them); this
// service owns the broker side: the static table from the bridge TOML (STATIC_BROKER_CONFIG),
// and the dynamic broker configs for this node id and for the "" default entity, persisted in
// SQLite's broker_configs. Dynamic broker values of topic-config synonyms (log.retention.ms,
// log.cleanup.policy...) are the default of every topic without its own override, so a change
// re-applies them to those topics. A group's own configs (GROUP resources, group_configs.h) are
// kept here too, persisted in SQLite's group_configs; the group coordinator reads a consumer
// group's timeouts through consumer_timeouts() and hears of a change through the listener.
// Loop thread only; answers after the SQLite commit.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bridge/catalog/group_configs.h"
#include "bridge/catalog/topic_configs.h"
#include "common/result.h"
#include "config/config.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

class TopicCatalog;

// ConfigResource.Type ids.
enum class ConfigResourceType : int8_t { kTopic = 2, kBroker = 4, kBrokerLogger = 8, kClientMetrics = 16, kGroup = 32 };

class ConfigService {
 public:
  ConfigService(const config::Config& cfg, TopicCatalog& catalog, state::StateStore& state);
  ConfigService(const ConfigService&) = delete;
  ConfigService& operator=(const ConfigService&) = delete;

  // Reads the dynamic broker configs and the group configs (blocking: startup only) and gives the
  // catalog its layers.
  Status load();

  topic_configs::BrokerLayers layers() const;

  // Once the catalog has its topics: re-resolves every topic against the current broker
  // configs (a changed [topics] retention_ms, say) and sends Iggy what changed.
  void reapply_topics();

  // The entries of one resource (all of them; the caller filters keys, synonyms and docs).
  // Kafka's errors: INVALID_REQUEST for a wrong broker id or an unsupported type,
  // INVALID_TOPIC_EXCEPTION, UNKNOWN_TOPIC_OR_PARTITION.
  void describe(int8_t resource_type, const std::string& name,
                std::function<void(Result<std::vector<topic_configs::Entry>>)> done);

  // IncrementalAlterConfigs for one resource.
  void alter_incremental(int8_t resource_type, const std::string& name, const std::vector<topic_configs::AlterOp>& ops,
                         bool validate_only, std::function<void(Status)> done);
  // Legacy AlterConfigs: the resource's set becomes `values`.
  void alter_replace(int8_t resource_type, const std::string& name,
                     const std::vector<std::pair<std::string, std::optional<std::string>>>& values, bool validate_only,
                     std::function<void(Status)> done);

  // The groups that have configs of their own, in name order (ListConfigResources).
  std::vector<std::string> configured_groups() const;
  // What a KIP-848 consumer group `group_id` runs with: its own values, else [groups]'.
  group_configs::ConsumerTimeouts consumer_timeouts(const std::string& group_id) const;
  // What a streams group runs with: its own streams.* values, else [groups]'.
  group_configs::StreamsSettings streams_settings(const std::string& group_id) const;
  // Called with the group id once a change of a group's configs is committed.
  void set_group_config_listener(std::function<void(const std::string&)> f) { group_listener_ = std::move(f); }

 private:
  // "" or the node id, else Kafka's INVALID_REQUEST.
  Status check_broker_name(const std::string& name, bool describe) const;
  void alter_topic(const std::string& name, Result<topic_configs::ConfigMap> next_or, bool validate_only,
                   std::function<void(Status)> done);
  // The configs group `group_id` sets itself (none: empty).
  const topic_configs::ConfigMap& group_overrides(const std::string& group_id) const;
  void alter_group(const std::string& name, Result<topic_configs::ConfigMap> next_or, bool validate_only,
                   std::function<void(Status)> done);
  void alter_broker(const std::string& scope, topic_configs::ConfigMap next, bool validate_only,
                    std::function<void(Status)> done);

  const config::Config& cfg_;
  TopicCatalog& catalog_;
  state::StateStore& state_;
  std::map<std::string, topic_configs::ConfigMap> dynamic_;  // scope → configs
  mutable topic_configs::ConfigMap static_;                   // rebuilt from cfg_ on use (reloads)
  std::map<std::string, topic_configs::ConfigMap> groups_;    // group id → its own configs
  std::function<void(const std::string&)> group_listener_;
};

}  // namespace kib::bridge
