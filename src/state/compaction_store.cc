#include "state/compaction_store.h"

#include "state/sqlite_optional.h"

namespace kib::state {

std::vector<CompactionStateRow> load_compaction_states(SQLite::Database& db) {
  std::vector<CompactionStateRow> rows;
  SQLite::Statement q(db,
                      "SELECT topic, partition, generation, generation_topic, cleaner_point, log_start, "
                      "kept_records, kept_bytes, last_pass_at, last_pass_ms FROM compaction_state "
                      "ORDER BY topic, partition");
  while (q.executeStep()) {
    CompactionStateRow r;
    r.topic = q.getColumn(0).getString();
    r.partition = q.getColumn(1).getInt();
    r.generation = q.getColumn(2).getInt64();
    r.generation_topic = q.getColumn(3).getString();
    r.cleaner_point = q.getColumn(4).getInt64();
    r.log_start = q.getColumn(5).getInt64();
    r.kept_records = q.getColumn(6).getInt64();
    r.kept_bytes = q.getColumn(7).getInt64();
    r.last_pass_at = q.getColumn(8).getInt64();
    r.last_pass_ms = q.getColumn(9).getInt64();
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<CompactionIndexRow> load_compaction_index(SQLite::Database& db, const std::string& topic,
                                                      int32_t partition, int64_t generation) {
  std::vector<CompactionIndexRow> rows;
  SQLite::Statement q(db,
                      "SELECT kafka_offset, generation_offset, max_timestamp FROM compaction_index "
                      "WHERE topic = ? AND partition = ? AND generation = ? ORDER BY kafka_offset");
  q.bind(1, topic);
  q.bind(2, partition);
  q.bind(3, static_cast<int64_t>(generation));
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
  return rows;
}

std::vector<CompactionPassRow> load_unfinished_compaction_passes(SQLite::Database& db) {
  std::vector<CompactionPassRow> rows;
  SQLite::Statement q(db,
                      "SELECT topic, partition, generation, generation_topic, previous_topic, from_offset, "
                      "to_offset, state, started_at FROM compaction_passes WHERE state <> 'done' "
                      "ORDER BY topic, partition, generation");
  while (q.executeStep()) {
    CompactionPassRow r;
    r.topic = q.getColumn(0).getString();
    r.partition = q.getColumn(1).getInt();
    r.generation = q.getColumn(2).getInt64();
    r.generation_topic = q.getColumn(3).getString();
    r.previous_topic = optional_column(q.getColumn(4));
    r.from_offset = q.getColumn(5).getInt64();
    r.to_offset = q.getColumn(6).getInt64();
    r.state = q.getColumn(7).getString();
    r.started_at = q.getColumn(8).getInt64();
    rows.push_back(std::move(r));
  }
  return rows;
}

void begin_compaction_pass(SQLite::Database& db, const CompactionPassRow& p) {
  SQLite::Statement st(db,
                       "INSERT OR REPLACE INTO compaction_passes(topic, partition, generation, generation_topic, "
                       "previous_topic, from_offset, to_offset, state, started_at) VALUES (?,?,?,?,?,?,?,'writing',?)");
  st.bind(1, p.topic);
  st.bind(2, p.partition);
  st.bind(3, static_cast<int64_t>(p.generation));
  st.bind(4, p.generation_topic);
  bind_optional(st, 5, p.previous_topic);
  st.bind(6, static_cast<int64_t>(p.from_offset));
  st.bind(7, static_cast<int64_t>(p.to_offset));
  st.bind(8, static_cast<int64_t>(p.started_at));
  st.exec();
}

void commit_compaction_pass(SQLite::Database& db, const CompactionStateRow& s,
                            const std::vector<CompactionIndexRow>& index) {
  SQLite::Statement state(db,
                          "INSERT OR REPLACE INTO compaction_state(topic, partition, generation, generation_topic, "
                          "cleaner_point, log_start, kept_records, kept_bytes, last_pass_at, last_pass_ms) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?)");
  state.bind(1, s.topic);
  state.bind(2, s.partition);
  state.bind(3, static_cast<int64_t>(s.generation));
  state.bind(4, s.generation_topic);
  state.bind(5, static_cast<int64_t>(s.cleaner_point));
  state.bind(6, static_cast<int64_t>(s.log_start));
  state.bind(7, static_cast<int64_t>(s.kept_records));
  state.bind(8, static_cast<int64_t>(s.kept_bytes));
  state.bind(9, static_cast<int64_t>(s.last_pass_at));
  state.bind(10, static_cast<int64_t>(s.last_pass_ms));
  state.exec();

  SQLite::Statement drop(db, "DELETE FROM compaction_index WHERE topic = ? AND partition = ?");
  drop.bind(1, s.topic);
  drop.bind(2, s.partition);
  drop.exec();
  SQLite::Statement ins(db,
                        "INSERT INTO compaction_index(topic, partition, generation, kafka_offset, generation_offset, "
                        "max_timestamp) VALUES (?,?,?,?,?,?)");
  for (const CompactionIndexRow& e : index) {
    ins.bind(1, s.topic);
    ins.bind(2, s.partition);
    ins.bind(3, static_cast<int64_t>(s.generation));
    ins.bind(4, static_cast<int64_t>(e.kafka_offset));
    ins.bind(5, static_cast<int64_t>(e.generation_offset));
    ins.bind(6, static_cast<int64_t>(e.max_timestamp));
    ins.exec();
    ins.reset();
  }

  SQLite::Statement pass(db,
                         "UPDATE compaction_passes SET state = 'committed' "
                         "WHERE topic = ? AND partition = ? AND generation = ?");
  pass.bind(1, s.topic);
  pass.bind(2, s.partition);
  pass.bind(3, static_cast<int64_t>(s.generation));
  pass.exec();
}

void delete_compaction_pass(SQLite::Database& db, const std::string& topic, int32_t partition, int64_t generation) {
  SQLite::Statement st(db, "DELETE FROM compaction_passes WHERE topic = ? AND partition = ? AND generation = ?");
  st.bind(1, topic);
  st.bind(2, partition);
  st.bind(3, static_cast<int64_t>(generation));
  st.exec();
}

}  // namespace kib::state
