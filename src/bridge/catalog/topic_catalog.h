// The topic catalog: Kafka topics are Iggy topics in one stream ([iggy] stream, default
// "kafka"), addressed by name (Iggy reuses numeric ids after deletes). Kafka topic ids (UUIDs)
// and Kafka-only topic settings live in SQLite so they survive restarts. The catalog caches
// what Iggy reports and refreshes on changes and on a timer.
#pragma once

#include <uv.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "bridge/catalog/topic_configs.h"
#include "iggy/client.h"

namespace kib::state {
class StateStore;
}

namespace kib::bridge {

using TopicId = std::array<uint8_t, 16>;

struct TopicSettings {
  int64_t retention_ms = -1;         // -1 = forever (Iggy message_expiry)
  int64_t retention_bytes = -1;      // -1 = unlimited (Iggy max_topic_size)
  int32_t max_message_bytes = 1048588;  // enforced by the bridge (Kafka's default)
  int64_t segment_bytes = -1;        // -1 = Iggy's default segment size
  bool enforce_fsync = true;         // see docs: acks=all means on disk
  uint32_t messages_required_to_save = 1;
  // Kafka's cleanup.policy as resolved ("delete", "compact", "compact,delete"...). Iggy cannot
  // compact: without "delete" the bridge switches Iggy's retention off (docs/mapping.md
  // "Compaction").
  std::string cleanup_policy = "delete";
  bool operator==(const TopicSettings&) const = default;
};

// Whether the policy includes "delete": retention applies, and DeleteRecords is allowed (Kafka
// answers POLICY_VIOLATION for a compact-only topic).
bool deletes_allowed(const TopicSettings& s);
// Whether the policy includes "compact" (Kafka's LogConfig.compact): keyless records are refused.
bool compacts(const TopicSettings& s);

struct TopicMetadata {
  std::string name;
  TopicId topic_id{};
  int32_t partitions = 0;
  TopicSettings settings;  // effective values (overrides, then the broker's)
  // Kafka topic config overrides (DYNAMIC_TOPIC_CONFIG), canonical values, persisted in
  // SQLite's topic_configs.
  std::map<std::string, std::string> overrides;
  bool internal = false;  // Metadata/DescribeTopicPartitions is_internal (Kafka: __consumer_offsets)
};

inline bool deletes_allowed(const TopicMetadata& t) { return deletes_allowed(t.settings); }

struct CreateTopicRequest {
  std::string name;
  int32_t partitions = -1;           // -1 = default_partitions
  int16_t replication_factor = -1;   // only -1 and 1 are accepted
  std::vector<std::pair<std::string, std::optional<std::string>>> configs;
  bool validate_only = false;
};

// Services above the catalog (the partition log, committed offsets, producer state) hear of
// topic lifecycle events through this, so the catalog does not depend on them. Called on the
// loop thread.
class TopicListener {
 public:
  virtual ~TopicListener() = default;
  // The topic is gone (DeleteTopics, or deleted in Iggy behind the bridge's back), and its rows
  // are gone from SQLite: forget every in-memory trace of it. A topic created again under the
  // same name is a new topic.
  virtual void on_topic_deleted(const std::string& name) = 0;
  // A topic the catalog had not seen: created through the bridge or learned from Iggy (a native
  // Iggy topic, or every topic at startup).
  virtual void on_topic_created(const std::string& name) { (void)name; }
  // The topic grew to `total` partitions (CreatePartitions).
  virtual void on_partitions_added(const std::string& name, int32_t total) {
    (void)name;
    (void)total;
  }
};

// What DeleteTopics answers for a deleted topic.
struct RemovedTopic {
  std::string name;
  TopicId topic_id{};
};

class TopicCatalog {
 public:
  TopicCatalog(const config::Config& cfg, iggy::IggyClient& iggy, state::StateStore& state, uv_loop_t* loop);
  ~TopicCatalog();

  // Loads topic ids and settings from SQLite (blocking: startup only), makes sure the Iggy
  // stream exists, and reads the topic list. `done` runs on the loop.
  void start(std::function<void(Status)> done);
  void stop();
  // The topic list has been read from Iggy (start() succeeded): until then find() knows no
  // topic, which does not mean there is none.
  bool started() const;

  const iggy::Identifier& stream() const { return stream_; }

  // From the cache (never blocks).
  const TopicMetadata* find(const std::string& name) const;
  const TopicMetadata* find(const TopicId& id) const;
  std::vector<const TopicMetadata*> all() const;

  // Re-reads the topic list from Iggy.
  void refresh(std::function<void(Status)> done);

  // Every topic, for a client asking for all of them (Metadata): re-read from Iggy first, unless
  // no pool connection is logged in: a refresh would then wait for the pool's queue timeout, and
  // clients are better served by the cached list now (`done` runs before list_all returns). A
  // failed refresh (logged) still answers from the cache.
  void list_all(std::function<void(std::vector<const TopicMetadata*>)> done);

  // Looks `name` up, asking Iggy if the cache does not know it, and creating it with defaults
  // when `auto_create` is set. Errors carry Kafka codes (bridge/errors.h).
  void ensure(const std::string& name, bool auto_create, std::function<void(Result<const TopicMetadata*>)> done);

  // CreateTopics semantics: validates name, partitions, replication factor and configs
  // (Kafka codes in the error), then creates the Iggy topic unless validate_only.
  void create(const CreateTopicRequest& req, std::function<void(Result<TopicMetadata>)> done);

  // The broker layers topic configs resolve against (dynamic broker configs, the bridge TOML);
  // ConfigService provides them. Without a provider: the TOML only.
  void set_broker_layers(std::function<topic_configs::BrokerLayers()> provider);
  topic_configs::BrokerLayers broker_layers() const;
  // Every topic config of `t` as DescribeConfigs and CreateTopics v5+ report them.
  std::vector<topic_configs::Entry> config_entries(const TopicMetadata& t) const;

  // New config overrides for an existing topic (validated by the caller): resolves the
  // settings, sends Iggy an UpdateTopic when its retention changes, persists overrides and
  // settings, then updates the cache and answers (after the SQLite commit).
  // UNKNOWN_TOPIC_OR_PARTITION for a topic the catalog does not know.
  void apply_settings(const std::string& name, std::map<std::string, std::string> overrides,
                      std::function<void(Status)> done);

  // CreatePartitions: grows a topic to `total_partitions`, with the KRaft controller's checks
  // and texts (INVALID_PARTITIONS for the same or a lower count, INVALID_REPLICA_ASSIGNMENT for
  // `assignments` (the new partitions' replica lists; nullopt = none given) that do not fit a
  // single broker). validate_only checks without growing. After growing, Iggy's max_topic_size
  // (per topic) follows retention.bytes (per partition).
  void create_partitions(const std::string& name, int32_t total_partitions, bool validate_only,
                         std::function<void(Status)> done,
                         std::optional<std::vector<std::vector<int32_t>>> assignments = std::nullopt);
  // DeleteTopics: deletes the Iggy topic (looked up in Iggy too, for topics created natively),
  // then in one state-store job every row of the bridge's state for it
  // (state::delete_topic_everywhere), then tells the listeners. Answers the name and the topic id
  // it had. Unknown: UNKNOWN_TOPIC_OR_PARTITION.
  void remove(const std::string& name, std::function<void(Result<RemovedTopic>)> done);

  // Listeners are not owned; remove one before it is destroyed.
  void add_listener(TopicListener* listener);
  void remove_listener(TopicListener* listener);
  // A listener the catalog owns from now on (the composition root's adapters).
  void adopt_listener(std::unique_ptr<TopicListener> listener);

  // Kafka's __consumer_offsets, as Metadata and DescribeTopicPartitions report it: internal,
  // [groups] offsets_topic_partitions partitions, a topic id kept in bridge_meta. Committed
  // offsets live in SQLite, so no Iggy topic stands behind it; it is listed from the first
  // FindCoordinator on (Kafka creates the topic then), for good, as on Kafka.
  static constexpr const char* kOffsetsTopic = "__consumer_offsets";
  void use_offsets_topic();
  // Null until use_offsets_topic().
  const TopicMetadata* offsets_topic() const;

  // Kafka's rules for topic names; the message says what is wrong.
  static std::optional<std::string> invalid_topic_name(const std::string& name);
  // Kafka's Topic.isInternal: __consumer_offsets, __transaction_state, __share_group_state.
  static bool kafka_internal(const std::string& name) {
    return name == kOffsetsTopic || name == "__transaction_state" || name == "__share_group_state";
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  iggy::Identifier stream_;
};

}  // namespace kib::bridge
