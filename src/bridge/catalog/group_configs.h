// Kafka's group configs (GroupConfig, Kafka 4.1): what DescribeConfigs and
// IncrementalAlterConfigs/AlterConfigs do with a GROUP resource (`kafka-configs --entity-type
// groups`). Pure: no I/O. A group's own values are validated as GroupConfigManager.validate does
// (the group's whole set over the broker's consumer-group defaults, Kafka's error texts), and
// described as ConfigHelper.createGroupConfigEntry does: GROUP_CONFIG for a value the group sets,
// DEFAULT_CONFIG (with the broker's value) for the rest. The bridge acts on the consumer.* keys
// (a KIP-848 group's session timeout and heartbeat interval) and the streams.* keys (a KIP-1071
// group's session timeout, heartbeat interval and standby replicas); the share.* keys are
// validated, stored and reported as Kafka does, for the group type still to come.
#pragma once

#include <cstdint>
#include <vector>

#include "bridge/catalog/topic_configs.h"
#include "common/result.h"

namespace kib::config {
struct Config;
}

namespace kib::bridge::group_configs {

// The broker side (GroupCoordinatorConfig): the defaults of a group without its own value and
// the bounds a group's value must keep. The consumer.* and streams.* rows come from [groups];
// share groups are not served, so their rows are Kafka's defaults.
struct Broker {
  int32_t consumer_session_timeout_ms = 45000;
  int32_t consumer_min_session_timeout_ms = 45000;
  int32_t consumer_max_session_timeout_ms = 60000;
  int32_t consumer_heartbeat_interval_ms = 5000;
  int32_t consumer_min_heartbeat_interval_ms = 5000;
  int32_t consumer_max_heartbeat_interval_ms = 15000;
  int32_t streams_session_timeout_ms = 45000;
  int32_t streams_min_session_timeout_ms = 45000;
  int32_t streams_max_session_timeout_ms = 60000;
  int32_t streams_heartbeat_interval_ms = 5000;
  int32_t streams_min_heartbeat_interval_ms = 5000;
  int32_t streams_max_heartbeat_interval_ms = 15000;
  int32_t streams_num_standby_replicas = 0;
  int32_t streams_max_standby_replicas = 2;
};
Broker broker_of(const config::Config& cfg);

// Kafka 4.1's group keys in its definition order.
const std::vector<topic_configs::ConfigDef>& defs();

// GroupConfigManager.validate on the group's whole set `overrides` (the result of the request's
// ops): "Unknown group config name: k", the type and validator of each value, then the bounds and
// cross-key checks of GroupConfig.validateValues; INVALID_CONFIG with Kafka's message. On success
// `canonical` holds the values as Kafka reports them.
Status validate(const topic_configs::ConfigMap& overrides, const Broker& broker, topic_configs::ConfigMap* canonical);

// ConfigHelper.createGroupConfigEntry for every key, in name order.
std::vector<topic_configs::Entry> resolve(const topic_configs::ConfigMap& overrides, const Broker& broker);

// What a KIP-848 consumer group runs with: its own values, else the broker's.
struct ConsumerTimeouts {
  int32_t session_timeout_ms;
  int32_t heartbeat_interval_ms;
};
ConsumerTimeouts consumer_timeouts(const topic_configs::ConfigMap& overrides, const Broker& broker);

// What a KIP-1071 streams group runs with: its own values, else the broker's.
struct StreamsSettings {
  int32_t session_timeout_ms;
  int32_t heartbeat_interval_ms;
  int32_t num_standby_replicas;
};
StreamsSettings streams_settings(const topic_configs::ConfigMap& overrides, const Broker& broker);

}  // namespace kib::bridge::group_configs
