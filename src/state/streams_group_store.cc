#include "state/streams_group_store.h"

#include <map>

#include "state/sqlite_optional.h"

namespace kib::state {

namespace {

constexpr const char* kTaskColumns =
    "active_tasks, standby_tasks, warmup_tasks, pending_active, pending_standby, pending_warmup, target_active, "
    "target_standby, target_warmup";

const std::string kInsertMember = std::string("INSERT INTO streams_group_members(group_id, member_id, process_id, rack_id, "
                                              "client_id, client_host, rebalance_timeout_ms, topology_epoch, user_endpoint, "
                                              "client_tags, member_epoch, previous_member_epoch, state, ") +
                                  kTaskColumns + ", instance_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

void insert_member(SQLite::Statement& ins, const std::string& group_id, const StreamsGroupMemberRow& m) {
  ins.reset();
  ins.bind(1, group_id);
  ins.bind(2, m.member_id);
  ins.bind(3, m.process_id);
  bind_optional(ins, 4, m.rack_id);
  ins.bind(5, m.client_id);
  ins.bind(6, m.client_host);
  ins.bind(7, m.rebalance_timeout_ms);
  ins.bind(8, m.topology_epoch);
  bind_optional(ins, 9, m.user_endpoint);
  ins.bind(10, m.client_tags);
  ins.bind(11, m.member_epoch);
  ins.bind(12, m.previous_member_epoch);
  ins.bind(13, m.state);
  for (int i = 0; i < 9; ++i) ins.bind(14 + i, m.tasks[i]);
  bind_optional(ins, 23, m.instance_id);
  ins.exec();
}

}  // namespace

void delete_streams_group(SQLite::Database& db, const std::string& group_id) {
  for (const char* sql : {"DELETE FROM streams_group_members WHERE group_id = ?",
                          "DELETE FROM streams_groups WHERE group_id = ?"}) {
    SQLite::Statement st(db, sql);
    st.bind(1, group_id);
    st.exec();
  }
}

void save_streams_group(SQLite::Database& db, const StreamsGroupRow& g, const std::vector<StreamsGroupMemberRow>& members) {
  SQLite::Statement up(db,
                       "INSERT OR REPLACE INTO streams_groups(group_id, state, group_epoch, assignment_epoch, "
                       "validated_topology_epoch, last_standby_replicas, topology, input_partitions, updated_at) "
                       "VALUES (?,?,?,?,?,?,?,?,?)");
  up.bind(1, g.group_id);
  up.bind(2, g.state);
  up.bind(3, g.group_epoch);
  up.bind(4, g.assignment_epoch);
  up.bind(5, g.validated_topology_epoch);
  up.bind(6, g.last_standby_replicas);
  bind_optional(up, 7, g.topology);
  up.bind(8, g.input_partitions);
  up.bind(9, g.updated_at_ms);
  up.exec();
  SQLite::Statement del(db, "DELETE FROM streams_group_members WHERE group_id = ?");
  del.bind(1, g.group_id);
  del.exec();
  SQLite::Statement ins(db, kInsertMember);
  for (const auto& m : members) insert_member(ins, g.group_id, m);
}

void save_streams_group_member(SQLite::Database& db, const StreamsGroupRow& g, const StreamsGroupMemberRow& member) {
  SQLite::Statement up(db,
                       "UPDATE streams_groups SET state = ?, group_epoch = ?, assignment_epoch = ?, "
                       "validated_topology_epoch = ?, last_standby_replicas = ?, updated_at = ? WHERE group_id = ?");
  up.bind(1, g.state);
  up.bind(2, g.group_epoch);
  up.bind(3, g.assignment_epoch);
  up.bind(4, g.validated_topology_epoch);
  up.bind(5, g.last_standby_replicas);
  up.bind(6, g.updated_at_ms);
  up.bind(7, g.group_id);
  up.exec();
  SQLite::Statement del(db, "DELETE FROM streams_group_members WHERE group_id = ? AND member_id = ?");
  del.bind(1, g.group_id);
  del.bind(2, member.member_id);
  del.exec();
  SQLite::Statement ins(db, kInsertMember);
  insert_member(ins, g.group_id, member);
}

std::vector<StoredStreamsGroup> load_streams_groups(SQLite::Database& db) {
  std::vector<StoredStreamsGroup> out;
  std::map<std::string, size_t> index;
  SQLite::Statement g(db,
                      "SELECT group_id, state, group_epoch, assignment_epoch, validated_topology_epoch, "
                      "last_standby_replicas, topology, input_partitions, updated_at FROM streams_groups "
                      "ORDER BY group_id");
  while (g.executeStep()) {
    StoredStreamsGroup s;
    s.group.group_id = g.getColumn(0).getString();
    s.group.state = g.getColumn(1).getString();
    s.group.group_epoch = g.getColumn(2).getInt();
    s.group.assignment_epoch = g.getColumn(3).getInt();
    s.group.validated_topology_epoch = g.getColumn(4).getInt();
    s.group.last_standby_replicas = g.getColumn(5).getInt();
    s.group.topology = optional_column(g.getColumn(6));
    s.group.input_partitions = g.getColumn(7).getString();
    s.group.updated_at_ms = g.getColumn(8).getInt64();
    index[s.group.group_id] = out.size();
    out.push_back(std::move(s));
  }
  SQLite::Statement m(db, std::string("SELECT group_id, member_id, process_id, rack_id, client_id, client_host, "
                                      "rebalance_timeout_ms, topology_epoch, user_endpoint, client_tags, member_epoch, "
                                      "previous_member_epoch, state, ") +
                              kTaskColumns + ", instance_id FROM streams_group_members ORDER BY group_id, member_id");
  while (m.executeStep()) {
    auto it = index.find(m.getColumn(0).getString());
    if (it == index.end()) continue;
    StreamsGroupMemberRow r;
    r.member_id = m.getColumn(1).getString();
    r.process_id = m.getColumn(2).getString();
    r.rack_id = optional_column(m.getColumn(3));
    r.client_id = m.getColumn(4).getString();
    r.client_host = m.getColumn(5).getString();
    r.rebalance_timeout_ms = m.getColumn(6).getInt();
    r.topology_epoch = m.getColumn(7).getInt();
    r.user_endpoint = optional_column(m.getColumn(8));
    r.client_tags = m.getColumn(9).getString();
    r.member_epoch = m.getColumn(10).getInt();
    r.previous_member_epoch = m.getColumn(11).getInt();
    r.state = m.getColumn(12).getString();
    for (int i = 0; i < 9; ++i) r.tasks[i] = m.getColumn(13 + i).getString();
    r.instance_id = optional_column(m.getColumn(22));
    out[it->second].members.push_back(std::move(r));
  }
  return out;
}

}  // namespace kib::state
