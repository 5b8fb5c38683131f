// Kafka topic and broker configs as Kafka 4.1 defines them (schema generated from the 4.1 jars
// into kafka_config_defs.inc by tools/GenKafkaConfigs.java), plus the bridge-only iggy.* keys.
// Pure: no I/O. It validates values as LogConfig.validate does (Kafka's error texts), resolves
// a topic's or the broker's entries with their sources and synonyms as Kafka's ConfigHelper
// does, applies IncrementalAlterConfigs ops and legacy AlterConfigs replacement, and turns the
// resolved values into the typed TopicSettings the bridge acts on (docs/mapping.md "Topic
// configs").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kib::config {
struct Config;
}
namespace kib::bridge {
struct TopicSettings;
}

namespace kib::bridge::topic_configs {

// Kafka's ConfigEntry.ConfigType / DescribeConfigs config_type ids.
enum class Type : int8_t { kUnknown = 0, kBoolean, kString, kInt, kShort, kLong, kDouble, kList, kClass, kPassword };
// DescribeConfigs config_source ids (DescribeConfigsResponse.ConfigSource).
enum class Source : int8_t {
  kUnknown = 0,
  kTopic = 1,
  kDynamicBroker = 2,
  kDynamicDefaultBroker = 3,
  kStaticBroker = 4,
  kDefault = 5,
  kGroup = 8,  // GROUP_CONFIG: a group's own config (DescribeConfigs of a GROUP resource)
};
// What the bridge does with a topic config.
enum class Apply : uint8_t { kIggy, kBridge, kStored };

struct ConfigDef {
  std::string_view name;
  Type type;
  const char* default_value;  // nullptr: no default (null)
  std::string_view validator;  // Kafka's validator, as its toString() prints it
  std::string_view doc;
  Apply apply = Apply::kStored;
  bool create_only = false;   // the iggy.* keys
  bool dynamic = false;       // broker keys: DynamicBrokerConfig.AllDynamicConfigs
};

struct Synonym {  // a topic config's broker synonym
  std::string_view topic_key;
  std::string_view broker_key;
  int64_t factor;  // broker value × factor = topic value (hours → ms: 3600000)
};

using ConfigMap = std::map<std::string, std::string>;

const std::vector<ConfigDef>& topic_defs();   // Kafka's 33 reported ones, then iggy.*
const std::vector<ConfigDef>& broker_defs();  // the curated broker keys (plan §3.2)
const ConfigDef* find_topic_def(std::string_view name);
const ConfigDef* find_broker_def(std::string_view name);
// Broker keys that are synonyms of `topic_key`, in Kafka's order.
std::vector<Synonym> synonyms_of(std::string_view topic_key);
// Broker names in the same synonym group as `broker_key` (log.retention.ms/minutes/hours...),
// DynamicBrokerConfig.brokerConfigSynonyms; just the key itself otherwise.
std::vector<std::string> broker_synonym_group(std::string_view broker_key);

// A topic config's value as LogConfig.validate sees it: Kafka's parsing (trimmed, typed,
// ranged, enums) and its message on failure (INVALID_CONFIG "Invalid value v for
// configuration k: ..." or "Unknown topic config name: k"). Returns the canonical form Kafka
// reports (ConfigDef.convertToString of the parsed value).
Result<std::string> validate_topic_value(const std::string& key, const std::string& value);
// ConfigDef.parseType and a validator written as the generated schema writes it ("[1,...]",
// "[a, b]"): the canonical value, or Kafka's INVALID_CONFIG "Invalid value v for configuration
// k: ..." (group_configs.h uses it for the group keys).
Result<std::string> parse_typed_value(const std::string& key, Type type, std::string_view validator,
                                      const std::string& raw);
// The whole override set: every value, then the cross-key checks of LogConfig.validate.
Status validate_topic_configs(const ConfigMap& overrides, ConfigMap* canonical);

// A broker value (typed when the key is known; unknown keys are stored as given, as KRaft does).
Result<std::string> validate_broker_value(const std::string& key, const std::string& value);

// The broker layers, each a map of broker key → value. static_broker holds what the bridge
// TOML sets (STATIC_BROKER_CONFIG); Kafka's defaults (DEFAULT_CONFIG) come from broker_defs().
struct BrokerLayers {
  const ConfigMap* dynamic_broker = nullptr;          // this node id
  const ConfigMap* dynamic_default = nullptr;         // the "" entity
  const ConfigMap* static_broker = nullptr;
};

// STATIC_BROKER_CONFIG: the Kafka broker keys the bridge's TOML decides (docs/mapping.md
// "Broker configs"), as a Kafka broker reports what its server.properties sets.
ConfigMap static_broker_layer(const config::Config& cfg);

struct SynonymEntry {
  std::string name;
  std::optional<std::string> value;
  Source source;
};

struct Entry {
  std::string name;
  std::optional<std::string> value;
  Source source = Source::kDefault;
  bool read_only = false;
  bool sensitive = false;
  Type type = Type::kUnknown;
  std::vector<SynonymEntry> synonyms;  // always filled; the caller drops them unless asked for
  std::string_view doc;
};

// ConfigHelper.createTopicConfigEntry for every topic config (Kafka's, then the iggy.* keys
// with the values in `bridge_values`), in name order.
std::vector<Entry> resolve_topic(const ConfigMap& overrides, const BrokerLayers& layers,
                                 const ConfigMap& bridge_values = {});
// The effective value of one topic key (override, else broker synonyms, else Kafka default).
std::optional<std::string> effective_topic_value(const std::string& key, const ConfigMap& overrides,
                                                 const BrokerLayers& layers);
// ConfigHelper.createBrokerConfigEntry: for the node (`per_broker`: every curated key plus
// the dynamic keys set) or for the "" default entity (only its own dynamic keys).
std::vector<Entry> resolve_broker(const BrokerLayers& layers, bool per_broker);

// The typed settings of a topic with these overrides: retention, max message size and cleanup
// policy from the resolved values; create-only fields are left as in `base`.
TopicSettings settings_of(const ConfigMap& overrides, const BrokerLayers& layers, const TopicSettings& base);

// Iggy's retention options for a topic (docs/mapping.md "Retention", "Compaction"): expiry in
// µs (u64 max = never; retention.ms 0 → 1 µs since Iggy reads 0 as "keep"), max topic size
// (u64 max = unlimited; retention.bytes × partitions, at least one segment, else Iggy refuses
// it). A policy without "delete" switches both off.
struct IggyRetention {
  uint64_t message_expiry_us;
  uint64_t max_topic_size;
  bool operator==(const IggyRetention&) const = default;
};
IggyRetention iggy_retention(const TopicSettings& s, int32_t partitions);

// IncrementalAlterConfigs ops (AlterConfigOp.OpType ids).
enum class Op : int8_t { kSet = 0, kDelete = 1, kAppend = 2, kSubtract = 3 };
struct AlterOp {
  std::string name;
  int8_t op = 0;
  std::optional<std::string> value;
};
// The override map after `ops` (ConfigurationControlManager's incrementalAlterConfig): values
// as given; the caller validates the result. `is_list(key)` tells whether APPEND/SUBTRACT apply.
Result<ConfigMap> apply_incremental(const ConfigMap& current, const std::vector<AlterOp>& ops, bool topic);
// Legacy AlterConfigs: the resource's whole set becomes `values` (keys not sent are deleted).
Result<ConfigMap> apply_replace(const std::vector<std::pair<std::string, std::optional<std::string>>>& values);

// The request-level checks of ConfigAdminManager (duplicate keys, null values), INVALID_REQUEST.
Status check_alter_ops(const std::vector<AlterOp>& ops);

std::string_view source_name(Source s);
// A LIST value's items, trimmed ("compact, delete" → compact, delete).
std::vector<std::string> split_list(const std::string& s);  // "DYNAMIC_TOPIC_CONFIG", ... (for logs and tests)

}  // namespace kib::bridge::topic_configs
