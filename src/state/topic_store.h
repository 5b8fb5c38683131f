// SQL for the topics table (Kafka topic ids and Kafka-only settings) and bridge_meta.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

struct TopicRow {
  std::string name;
  std::string topic_id;  // canonical UUID text
  int64_t created_at_ms = 0;
  int64_t retention_ms = -1;
  int64_t retention_bytes = -1;
  int32_t max_message_bytes = 1048588;
  int64_t segment_bytes = -1;
  bool enforce_fsync = true;
  uint32_t messages_required_to_save = 1;
};

std::vector<TopicRow> load_topics(SQLite::Database& db);
void upsert_topic(SQLite::Database& db, const TopicRow& row);
void delete_topic(SQLite::Database& db, const std::string& name);

// topic_configs: Kafka topic config overrides, by topic. replace_ writes the whole set.
std::map<std::string, std::map<std::string, std::string>> load_topic_configs(SQLite::Database& db);
void replace_topic_configs(SQLite::Database& db, const std::string& topic,
                           const std::map<std::string, std::string>& configs);
// broker_configs: dynamic broker configs by scope ('' = cluster default, else the node id).
std::map<std::string, std::map<std::string, std::string>> load_broker_configs(SQLite::Database& db);
void replace_broker_configs(SQLite::Database& db, const std::string& scope,
                            const std::map<std::string, std::string>& configs);
// group_configs: a group's own configs (GROUP config resources), by group id.
std::map<std::string, std::map<std::string, std::string>> load_group_configs(SQLite::Database& db);
void replace_group_configs(SQLite::Database& db, const std::string& group_id,
                           const std::map<std::string, std::string>& configs);
// DeleteTopics: every row of the bridge's state that belongs to the topic `name` (its topics
// row with the topic id, the committed offsets of its partitions as Kafka's
// GroupCoordinator.onPartitionsDeleted drops them, and the producer_batches of its
// partitions). One state-store job, so one SAVEPOINT: all of it or nothing. A table keyed by
// topic that is added later gets its DELETE here too (kTopicStateTables in topic_store.cc).
void delete_topic_everywhere(SQLite::Database& db, const std::string& name);

// The startup sweep: deletes, from every per-topic table other than `topics`, the rows of topics
// not in `keep` (the topics Iggy has: deleted while the bridge was down, natively in Iggy, or a
// delete whose SQLite job failed after Iggy had deleted the topic). Returns the topics whose
// rows it deleted.
std::vector<std::string> delete_state_of_topics_not_in(SQLite::Database& db, const std::vector<std::string>& keep);

// bridge_meta values by key.
std::optional<std::string> load_meta(SQLite::Database& db, const std::string& key);
void store_meta(SQLite::Database& db, const std::string& key, const std::string& value);

// The cluster id: `configured` if set (and then stored), else the stored one, else a new
// random one (Kafka's form: 22 characters of URL-safe base64), stored for next time.
std::string load_or_create_cluster_id(SQLite::Database& db, const std::string& configured);

// Random UUID (v4) as 16 bytes, and its canonical text form.
std::array<uint8_t, 16> random_uuid();
std::string uuid_to_string(const std::array<uint8_t, 16>& id);
bool uuid_from_string(const std::string& s, std::array<uint8_t, 16>& out);
// Kafka's Uuid.toString(): 22 characters of URL-safe base64 without padding (how
// kafka-topics prints topic ids and how cluster ids look).
std::string uuid_to_kafka_base64(const std::array<uint8_t, 16>& id);

}  // namespace kib::state
