#include "state/topic_store.h"

#include <openssl/rand.h>

#include <chrono>
#include <set>
#include <stdexcept>

namespace kib::state {

std::vector<TopicRow> load_topics(SQLite::Database& db) {
  std::vector<TopicRow> rows;
  SQLite::Statement q(db,
                      "SELECT name, topic_id, created_at, retention_ms, retention_bytes, max_message_bytes, "
                      "segment_bytes, enforce_fsync, messages_required_to_save FROM topics");
  while (q.executeStep()) {
    TopicRow r;
    r.name = q.getColumn(0).getString();
    r.topic_id = q.getColumn(1).getString();
    r.created_at_ms = q.getColumn(2).getInt64();
    r.retention_ms = q.getColumn(3).getInt64();
    r.retention_bytes = q.getColumn(4).getInt64();
    r.max_message_bytes = q.getColumn(5).getInt();
    r.segment_bytes = q.getColumn(6).getInt64();
    r.enforce_fsync = q.getColumn(7).getInt() != 0;
    r.messages_required_to_save = static_cast<uint32_t>(q.getColumn(8).getInt64());
    rows.push_back(std::move(r));
  }
  return rows;
}

void upsert_topic(SQLite::Database& db, const TopicRow& r) {
  SQLite::Statement st(db,
                       "INSERT INTO topics(name, topic_id, created_at, retention_ms, retention_bytes, "
                       "max_message_bytes, segment_bytes, enforce_fsync, messages_required_to_save) "
                       "VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET topic_id=excluded.topic_id, "
                       "retention_ms=excluded.retention_ms, retention_bytes=excluded.retention_bytes, "
                       "max_message_bytes=excluded.max_message_bytes, segment_bytes=excluded.segment_bytes, "
                       "enforce_fsync=excluded.enforce_fsync, "
                       "messages_required_to_save=excluded.messages_required_to_save");
  st.bind(1, r.name);
  st.bind(2, r.topic_id);
  st.bind(3, static_cast<int64_t>(r.created_at_ms));
  st.bind(4, static_cast<int64_t>(r.retention_ms));
  st.bind(5, static_cast<int64_t>(r.retention_bytes));
  st.bind(6, r.max_message_bytes);
  st.bind(7, static_cast<int64_t>(r.segment_bytes));
  st.bind(8, r.enforce_fsync ? 1 : 0);
  st.bind(9, static_cast<int64_t>(r.messages_required_to_save));
  st.exec();
}

void delete_topic(SQLite::Database& db, const std::string& name) {
  SQLite::Statement st(db, "DELETE FROM topics WHERE name = ?");
  st.bind(1, name);
  st.exec();
  replace_topic_configs(db, name, {});
}

namespace {

std::map<std::string, std::map<std::string, std::string>> load_pairs(SQLite::Database& db, const char* sql) {
  std::map<std::string, std::map<std::string, std::string>> out;
  SQLite::Statement q(db, sql);
  while (q.executeStep()) out[q.getColumn(0).getString()][q.getColumn(1).getString()] = q.getColumn(2).getString();
  return out;
}

void replace_pairs(SQLite::Database& db, const char* del, const char* ins, const std::string& owner,
                   const std::map<std::string, std::string>& configs) {
  SQLite::Statement d(db, del);
  d.bind(1, owner);
  d.exec();
  for (const auto& [k, v] : configs) {
    SQLite::Statement st(db, ins);
    st.bind(1, owner);
    st.bind(2, k);
    st.bind(3, v);
    st.exec();
  }
}

}  // namespace

std::map<std::string, std::map<std::string, std::string>> load_topic_configs(SQLite::Database& db) {
  return load_pairs(db, "SELECT topic, name, value FROM topic_configs");
}

void replace_topic_configs(SQLite::Database& db, const std::string& topic,
                           const std::map<std::string, std::string>& configs) {
  replace_pairs(db, "DELETE FROM topic_configs WHERE topic = ?",
                "INSERT INTO topic_configs(topic, name, value) VALUES (?,?,?)", topic, configs);
}

std::map<std::string, std::map<std::string, std::string>> load_broker_configs(SQLite::Database& db) {
  return load_pairs(db, "SELECT scope, name, value FROM broker_configs");
}

void replace_broker_configs(SQLite::Database& db, const std::string& scope,
                            const std::map<std::string, std::string>& configs) {
  replace_pairs(db, "DELETE FROM broker_configs WHERE scope = ?",
                "INSERT INTO broker_configs(scope, name, value) VALUES (?,?,?)", scope, configs);
}

std::map<std::string, std::map<std::string, std::string>> load_group_configs(SQLite::Database& db) {
  return load_pairs(db, "SELECT group_id, name, value FROM group_configs");
}

void replace_group_configs(SQLite::Database& db, const std::string& group_id,
                           const std::map<std::string, std::string>& configs) {
  replace_pairs(db, "DELETE FROM group_configs WHERE group_id = ?",
                "INSERT INTO group_configs(group_id, name, value) VALUES (?,?,?)", group_id, configs);
}

namespace {

// Tables with a topic column holding bridge state of that topic (besides `topics`, keyed by
// name). Extend this list when a migration adds one (topic_configs, partition_log_start).
const char* const kTopicStateTables[][2] = {
    {"committed_offsets", "topic"},
    {"producer_batches", "topic"},
    {"topic_configs", "topic"},        // DYNAMIC_TOPIC_CONFIG overrides (migration 0004)
    {"partition_log_start", "topic"},  // DeleteRecords floors (migration 0005)
    {"held_batches", "topic"},         // batches held behind open transactions (migration 0009)
    // Compaction (migration 0015). The generation topics they name are deleted by the cleaner,
    // which removes every topic of its stream that no row names (docs/compaction.md).
    {"compaction_state", "topic"},
    {"compaction_index", "topic"},
    {"compaction_passes", "topic"},
};

}  // namespace

void delete_topic_everywhere(SQLite::Database& db, const std::string& name) {
  delete_topic(db, name);
  for (const auto& [table, column] : kTopicStateTables) {
    SQLite::Statement st(db, std::string("DELETE FROM ") + table + " WHERE " + column + " = ?");
    st.bind(1, name);
    st.exec();
  }
}

std::vector<std::string> delete_state_of_topics_not_in(SQLite::Database& db, const std::vector<std::string>& keep) {
  db.exec("CREATE TEMP TABLE IF NOT EXISTS kib_keep_topics(name TEXT PRIMARY KEY) WITHOUT ROWID");
  db.exec("DELETE FROM kib_keep_topics");
  {
    SQLite::Statement ins(db, "INSERT OR IGNORE INTO kib_keep_topics(name) VALUES (?)");
    for (const auto& n : keep) {
      ins.bind(1, n);
      ins.exec();
      ins.reset();
    }
  }
  std::set<std::string> swept;
  for (const auto& [table, column] : kTopicStateTables) {
    const std::string where = std::string(" FROM ") + table + " WHERE " + column +
                              " NOT IN (SELECT name FROM kib_keep_topics)";
    SQLite::Statement q(db, std::string("SELECT DISTINCT ") + column + where);
    while (q.executeStep()) swept.insert(q.getColumn(0).getString());
    db.exec("DELETE" + where);
  }
  db.exec("DELETE FROM kib_keep_topics");
  return {swept.begin(), swept.end()};
}

std::array<uint8_t, 16> random_uuid() {
  std::array<uint8_t, 16> id{};
  // Like Kafka's Uuid.randomUuid: never hand out an id whose base64 form starts with '-' (the first six
  // bits 111110), because command-line tools (kafka-storage -t, kafka-topics --topic-id) read it as an option.
  do {
    if (RAND_bytes(id.data(), static_cast<int>(id.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    id[6] = static_cast<uint8_t>((id[6] & 0x0F) | 0x40);
    id[8] = static_cast<uint8_t>((id[8] & 0x3F) | 0x80);
  } while ((id[0] >> 2) == 62);
  return id;
}

std::string uuid_to_string(const std::array<uint8_t, 16>& id) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[id[i] >> 4];
    s += hex[id[i] & 15];
  }
  return s;
}

bool uuid_from_string(const std::string& s, std::array<uint8_t, 16>& out) {
  std::string h;
  for (char c : s)
    if (c != '-') h += c;
  if (h.size() != 32) return false;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < 16; ++i) {
    int a = nib(h[2 * i]), b = nib(h[2 * i + 1]);
    if (a < 0 || b < 0) return false;
    out[i] = static_cast<uint8_t>(a * 16 + b);
  }
  return true;
}

std::string uuid_to_kafka_base64(const std::array<uint8_t, 16>& id) {
  static const char* b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : id) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      out += b64[(acc >> (bits - 6)) & 63];
      bits -= 6;
    }
  }
  if (bits > 0) out += b64[(acc << (6 - bits)) & 63];
  return out;
}

std::optional<std::string> load_meta(SQLite::Database& db, const std::string& key) {
  SQLite::Statement q(db, "SELECT value FROM bridge_meta WHERE key = ?");
  q.bind(1, key);
  if (q.executeStep()) return q.getColumn(0).getString();
  return std::nullopt;
}

void store_meta(SQLite::Database& db, const std::string& key, const std::string& value) {
  SQLite::Statement st(db, "INSERT INTO bridge_meta(key, value) VALUES (?, ?) "
                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.bind(1, key);
  st.bind(2, value);
  st.exec();
}

std::string load_or_create_cluster_id(SQLite::Database& db, const std::string& configured) {
  std::string id = configured;
  if (id.empty()) {
    SQLite::Statement q(db, "SELECT value FROM bridge_meta WHERE key = 'cluster_id'");
    if (q.executeStep()) return q.getColumn(0).getString();
    id = uuid_to_kafka_base64(random_uuid());
  }
  SQLite::Statement st(db, "INSERT INTO bridge_meta(key, value) VALUES ('cluster_id', ?) "
                           "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.bind(1, id);
  st.exec();
  return id;
}

}  // namespace kib::state
