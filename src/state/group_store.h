// SQL for consumer groups: consumer_groups, group_members and committed_offsets. Every function
// runs inside a StateStore job (or run_blocking) and throws SQLite::Exception on failure.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace kib::state {

// A consumer_groups row. `state` is Kafka's state name ("Empty", "Stable", ...).
struct GroupRow {
  std::string group_id;
  std::string protocol_type;  // "" = none (a group that only stores offsets)
  std::string protocol_name;
  int32_t generation = 0;
  std::string state = "Empty";
  std::string leader_id;
  int64_t updated_at_ms = 0;  // when the group entered `state`
};

// A group_members row.
struct GroupMemberRow {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  Bytes assignment;
  std::string assigned_partitions;  // readable form of `assignment` (consumer protocol), else ""
  std::string subscribed_topics;    // readable form of the member's subscription, else ""
};

// A committed_offsets row. Kafka semantics: `committed_offset` is the next offset to read.
struct CommittedOffsetRow {
  std::string group_id;
  std::string topic;
  int32_t partition = 0;
  int64_t committed_offset = 0;
  int32_t leader_epoch = -1;
  std::string metadata;  // a null metadata is stored as "", as Kafka does
  int64_t commit_time_ms = 0;
  std::optional<int64_t> expire_time_ms;  // OffsetCommit v2-v4 retention_time_ms; else null
};

// Startup: groups come back Empty (members must rejoin), by group id. Groups that were not
// Empty are rewritten as Empty since `now_ms` with no leader, protocol or members; groups known
// only from committed_offsets get a row.
std::vector<GroupRow> load_groups_for_restart(SQLite::Database& db, int64_t now_ms);

// Startup: every committed offset, by group, topic and partition.
std::vector<CommittedOffsetRow> load_committed_offsets(SQLite::Database& db);

// Replaces the group's row and its members.
void save_group(SQLite::Database& db, const GroupRow& group, const std::vector<GroupMemberRow>& members);

// Creates the group's row if there is none (a group created by a commit with generation -1).
void ensure_group_row(SQLite::Database& db, const std::string& group_id, int64_t now_ms);

// Inserts or replaces each offset.
void upsert_committed_offsets(SQLite::Database& db, const std::vector<CommittedOffsetRow>& rows);

// Deletes one partition's offset (OffsetDelete). Returns rows deleted.
int delete_committed_offset(SQLite::Database& db, const std::string& group_id, const std::string& topic,
                            int32_t partition);

// Deletes one partition's offset only if it was committed at or before `commit_time_ms`, so a
// newer commit queued before the expiry survives it.
int expire_committed_offset(SQLite::Database& db, const std::string& group_id, const std::string& topic,
                            int32_t partition, int64_t commit_time_ms);

// Deletes the group, its members and its offsets.
void delete_group(SQLite::Database& db, const std::string& group_id);

}  // namespace kib::state
