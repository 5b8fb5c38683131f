#include "state/consumer_group_store.h"

#include <map>

#include "state/sqlite_optional.h"

namespace kib::state {

namespace {

void upsert_group(SQLite::Database& db, const ConsumerGroupRow& group) {
  SQLite::Statement up(db,
                       "INSERT INTO consumer_groups(group_id, protocol_type, protocol_name, generation, state, "
                       "leader_id, updated_at, group_type, group_epoch, assignment_epoch, subscribed_partitions) "
                       "VALUES (?, 'consumer', '', 0, ?, '', ?, 'consumer', ?, ?, ?) ON CONFLICT(group_id) DO UPDATE "
                       "SET protocol_type = 'consumer', protocol_name = '', generation = 0, state = excluded.state, "
                       "leader_id = '', updated_at = excluded.updated_at, group_type = 'consumer', "
                       "group_epoch = excluded.group_epoch, assignment_epoch = excluded.assignment_epoch, "
                       "subscribed_partitions = excluded.subscribed_partitions");
  up.bind(1, group.group_id);
  up.bind(2, group.state);
  up.bind(3, group.updated_at_ms);
  up.bind(4, group.group_epoch);
  up.bind(5, group.assignment_epoch);
  up.bind(6, group.subscribed_partitions);
  up.exec();
}

void insert_member(SQLite::Statement& ins, const std::string& group_id, const ConsumerGroupMemberRow& m) {
  ins.reset();
  ins.bind(1, group_id);
  ins.bind(2, m.member_id);
  bind_optional(ins, 3, m.instance_id);
  bind_optional(ins, 4, m.rack_id);
  ins.bind(5, m.client_id);
  ins.bind(6, m.client_host);
  ins.bind(7, m.rebalance_timeout_ms);
  ins.bind(8, m.subscribed_topics);
  ins.bind(9, m.subscribed_regex);
  bind_optional(ins, 10, m.server_assignor);
  ins.bind(11, m.member_epoch);
  ins.bind(12, m.previous_member_epoch);
  ins.bind(13, m.state);
  ins.bind(14, m.assigned_partitions);
  ins.bind(15, m.pending_revocation);
  ins.bind(16, m.target_partitions);
  if (m.classic_session_timeout_ms) ins.bind(17, *m.classic_session_timeout_ms);
  else ins.bind(17);
  bind_optional(ins, 18, m.classic_protocols);
  ins.exec();
}

constexpr const char* kInsertMember =
    "INSERT OR REPLACE INTO consumer_group_members(group_id, member_id, instance_id, rack_id, client_id, "
    "client_host, rebalance_timeout_ms, subscribed_topics, subscribed_regex, server_assignor, member_epoch, "
    "previous_member_epoch, state, assigned_partitions, pending_revocation, target_partitions, "
    "classic_session_timeout_ms, classic_protocols) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

}  // namespace

void save_consumer_group(SQLite::Database& db, const ConsumerGroupRow& group,
                         const std::vector<ConsumerGroupMemberRow>& members) {
  upsert_group(db, group);
  for (const char* sql : {"DELETE FROM group_members WHERE group_id = ?",
                          "DELETE FROM consumer_group_members WHERE group_id = ?"}) {
    SQLite::Statement del(db, sql);
    del.bind(1, group.group_id);
    del.exec();
  }
  SQLite::Statement ins(db, kInsertMember);
  for (const auto& m : members) insert_member(ins, group.group_id, m);
}

void save_consumer_group_member(SQLite::Database& db, const ConsumerGroupRow& group,
                                const ConsumerGroupMemberRow& member) {
  upsert_group(db, group);
  SQLite::Statement ins(db, kInsertMember);
  insert_member(ins, group.group_id, member);
}

std::vector<StoredConsumerGroup> load_consumer_groups(SQLite::Database& db) {
  std::vector<StoredConsumerGroup> out;
  std::map<std::string, size_t> index;
  SQLite::Statement g(db,
                      "SELECT group_id, state, group_epoch, assignment_epoch, subscribed_partitions, updated_at "
                      "FROM consumer_groups WHERE group_type = 'consumer' ORDER BY group_id");
  while (g.executeStep()) {
    StoredConsumerGroup s;
    s.group.group_id = g.getColumn(0).getString();
    s.group.state = g.getColumn(1).getString();
    s.group.group_epoch = g.getColumn(2).getInt();
    s.group.assignment_epoch = g.getColumn(3).getInt();
    s.group.subscribed_partitions = g.getColumn(4).getString();
    s.group.updated_at_ms = g.getColumn(5).getInt64();
    index[s.group.group_id] = out.size();
    out.push_back(std::move(s));
  }
  SQLite::Statement m(db,
                      "SELECT group_id, member_id, instance_id, rack_id, client_id, client_host, rebalance_timeout_ms, "
                      "subscribed_topics, subscribed_regex, server_assignor, member_epoch, previous_member_epoch, state, "
                      "assigned_partitions, pending_revocation, target_partitions, classic_session_timeout_ms, "
                      "classic_protocols FROM consumer_group_members ORDER BY group_id, member_id");
  while (m.executeStep()) {
    auto it = index.find(m.getColumn(0).getString());
    if (it == index.end()) continue;
    ConsumerGroupMemberRow r;
    r.member_id = m.getColumn(1).getString();
    r.instance_id = optional_column(m.getColumn(2));
    r.rack_id = optional_column(m.getColumn(3));
    r.client_id = m.getColumn(4).getString();
    r.client_host = m.getColumn(5).getString();
    r.rebalance_timeout_ms = m.getColumn(6).getInt();
    r.subscribed_topics = m.getColumn(7).getString();
    r.subscribed_regex = m.getColumn(8).getString();
    r.server_assignor = optional_column(m.getColumn(9));
    r.member_epoch = m.getColumn(10).getInt();
    r.previous_member_epoch = m.getColumn(11).getInt();
    r.state = m.getColumn(12).getString();
    r.assigned_partitions = m.getColumn(13).getString();
    r.pending_revocation = m.getColumn(14).getString();
    r.target_partitions = m.getColumn(15).getString();
    if (!m.getColumn(16).isNull()) r.classic_session_timeout_ms = m.getColumn(16).getInt();
    r.classic_protocols = optional_column(m.getColumn(17));
    out[it->second].members.push_back(std::move(r));
  }
  return out;
}

}  // namespace kib::state
