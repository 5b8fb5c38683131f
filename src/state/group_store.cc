#include "state/group_store.h"

namespace kib::state {

std::vector<GroupRow> load_groups_for_restart(SQLite::Database& db, int64_t now_ms) {
  // Members do not survive a restart: each rejoins, as after a coordinator move in Kafka
  // without its log. What the group had committed stays.
  {
    SQLite::Statement st(db,
                         "UPDATE consumer_groups SET state = 'Empty', leader_id = '', protocol_name = '', "
                         "updated_at = ? WHERE state <> 'Empty' AND group_type = 'classic'");
    st.bind(1, now_ms);
    st.exec();
  }
  db.exec("DELETE FROM group_members");
  {
    SQLite::Statement st(db,
                         "INSERT OR IGNORE INTO consumer_groups(group_id, updated_at) "
                         "SELECT DISTINCT group_id, ? FROM committed_offsets");
    st.bind(1, now_ms);
    st.exec();
  }

  std::vector<GroupRow> groups;
  SQLite::Statement g(db,
                      "SELECT group_id, protocol_type, protocol_name, generation, state, leader_id, updated_at "
                      "FROM consumer_groups WHERE group_type = 'classic' ORDER BY group_id");
  while (g.executeStep()) {
    GroupRow r;
    r.group_id = g.getColumn(0).getString();
    r.protocol_type = g.getColumn(1).getString();
    r.protocol_name = g.getColumn(2).getString();
    r.generation = g.getColumn(3).getInt();
    r.state = g.getColumn(4).getString();
    r.leader_id = g.getColumn(5).getString();
    r.updated_at_ms = g.getColumn(6).getInt64();
    groups.push_back(std::move(r));
  }
  return groups;
}

std::vector<CommittedOffsetRow> load_committed_offsets(SQLite::Database& db) {
  std::vector<CommittedOffsetRow> offsets;
  SQLite::Statement o(db,
                      "SELECT group_id, topic, partition, committed_offset, leader_epoch, metadata, commit_time, "
                      "expire_time FROM committed_offsets ORDER BY group_id, topic, partition");
  while (o.executeStep()) {
    CommittedOffsetRow r;
    r.group_id = o.getColumn(0).getString();
    r.topic = o.getColumn(1).getString();
    r.partition = o.getColumn(2).getInt();
    r.committed_offset = o.getColumn(3).getInt64();
    r.leader_epoch = o.getColumn(4).getInt();
    r.metadata = o.getColumn(5).isNull() ? std::string() : o.getColumn(5).getString();
    r.commit_time_ms = o.getColumn(6).getInt64();
    if (!o.getColumn(7).isNull()) r.expire_time_ms = o.getColumn(7).getInt64();
    offsets.push_back(std::move(r));
  }
  return offsets;
}

void save_group(SQLite::Database& db, const GroupRow& group, const std::vector<GroupMemberRow>& members) {
  SQLite::Statement up(db,
                       "INSERT INTO consumer_groups(group_id, protocol_type, protocol_name, generation, state, "
                       "leader_id, updated_at, group_type) VALUES (?,?,?,?,?,?,?,'classic') ON CONFLICT(group_id) DO "
                       "UPDATE SET group_type = 'classic', group_epoch = 0, assignment_epoch = 0, "
                       "subscribed_partitions = '', "
                       "protocol_type = excluded.protocol_type, protocol_name = excluded.protocol_name, "
                       "generation = excluded.generation, state = excluded.state, leader_id = excluded.leader_id, "
                       "updated_at = excluded.updated_at");
  up.bind(1, group.group_id);
  up.bind(2, group.protocol_type);
  up.bind(3, group.protocol_name);
  up.bind(4, group.generation);
  up.bind(5, group.state);
  up.bind(6, group.leader_id);
  up.bind(7, group.updated_at_ms);
  up.exec();

  for (const char* sql : {"DELETE FROM group_members WHERE group_id = ?",
                          "DELETE FROM consumer_group_members WHERE group_id = ?"}) {
    SQLite::Statement del(db, sql);
    del.bind(1, group.group_id);
    del.exec();
  }
  SQLite::Statement ins(db,
                        "INSERT INTO group_members(group_id, member_id, group_instance_id, client_id, client_host, "
                        "session_timeout_ms, rebalance_timeout_ms, assignment, assigned_partitions, subscribed_topics) "
                        "VALUES (?,?,?,?,?,?,?,?,?,?)");
  for (const auto& m : members) {
    ins.reset();
    ins.bind(1, group.group_id);
    ins.bind(2, m.member_id);
    if (m.group_instance_id)
      ins.bind(3, *m.group_instance_id);
    else
      ins.bind(3);
    ins.bind(4, m.client_id);
    ins.bind(5, m.client_host);
    ins.bind(6, m.session_timeout_ms);
    ins.bind(7, m.rebalance_timeout_ms);
    ins.bind(8, m.assignment.data(), static_cast<int>(m.assignment.size()));
    ins.bind(9, m.assigned_partitions);
    ins.bind(10, m.subscribed_topics);
    ins.exec();
  }
}

void ensure_group_row(SQLite::Database& db, const std::string& group_id, int64_t now_ms) {
  SQLite::Statement st(db, "INSERT OR IGNORE INTO consumer_groups(group_id, updated_at) VALUES (?, ?)");
  st.bind(1, group_id);
  st.bind(2, now_ms);
  st.exec();
}

void upsert_committed_offsets(SQLite::Database& db, const std::vector<CommittedOffsetRow>& rows) {
  SQLite::Statement st(db,
                       "INSERT OR REPLACE INTO committed_offsets(group_id, topic, partition, committed_offset, "
                       "leader_epoch, metadata, commit_time, expire_time) VALUES (?,?,?,?,?,?,?,?)");
  for (const auto& r : rows) {
    st.reset();
    st.bind(1, r.group_id);
    st.bind(2, r.topic);
    st.bind(3, r.partition);
    st.bind(4, r.committed_offset);
    st.bind(5, r.leader_epoch);
    st.bind(6, r.metadata);
    st.bind(7, r.commit_time_ms);
    if (r.expire_time_ms)
      st.bind(8, *r.expire_time_ms);
    else
      st.bind(8);
    st.exec();
  }
}

int delete_committed_offset(SQLite::Database& db, const std::string& group_id, const std::string& topic,
                            int32_t partition) {
  SQLite::Statement st(db, "DELETE FROM committed_offsets WHERE group_id = ? AND topic = ? AND partition = ?");
  st.bind(1, group_id);
  st.bind(2, topic);
  st.bind(3, partition);
  return st.exec();
}

int expire_committed_offset(SQLite::Database& db, const std::string& group_id, const std::string& topic,
                            int32_t partition, int64_t commit_time_ms) {
  SQLite::Statement st(db,
                       "DELETE FROM committed_offsets WHERE group_id = ? AND topic = ? AND partition = ? "
                       "AND commit_time <= ?");
  st.bind(1, group_id);
  st.bind(2, topic);
  st.bind(3, partition);
  st.bind(4, commit_time_ms);
  return st.exec();
}

void delete_group(SQLite::Database& db, const std::string& group_id) {
  for (const char* sql : {"DELETE FROM committed_offsets WHERE group_id = ?",
                          "DELETE FROM group_members WHERE group_id = ?",
                          "DELETE FROM consumer_group_members WHERE group_id = ?",
                          "DELETE FROM consumer_groups WHERE group_id = ?",
                          "DELETE FROM streams_group_members WHERE group_id = ?",
                          "DELETE FROM streams_groups WHERE group_id = ?"}) {
    SQLite::Statement st(db, sql);
    st.bind(1, group_id);
    st.exec();
  }
}

}  // namespace kib::state
