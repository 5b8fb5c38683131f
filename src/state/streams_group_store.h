// SQL for KIP-1071 streams groups (migrations/0012_streams_groups.sql): their streams_groups row
// and streams_group_members. The topology, partition counts, client tags and task lists are JSON
// text here; bridge/groups/streams_group_rows.h converts them. Every function runs inside a
// StateStore job (or run_blocking) and throws SQLite::Exception on failure.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

struct StreamsGroupRow {
  std::string group_id;
  std::string state = "Empty";  // Kafka's StreamsGroupState name
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  int32_t validated_topology_epoch = 0;
  int32_t last_standby_replicas = -1;
  std::optional<std::string> topology;  // JSON
  std::string input_partitions = "{}";  // JSON
  int64_t updated_at_ms = 0;
};

struct StreamsGroupMemberRow {
  std::string member_id;
  std::optional<std::string> instance_id;  // migration 0014
  std::string process_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  int32_t topology_epoch = -1;
  std::optional<std::string> user_endpoint;  // "host:port"
  std::string client_tags = "{}";
  int32_t member_epoch = 0;
  int32_t previous_member_epoch = -1;
  std::string state = "stable";
  // JSON, in this order: active, standby, warmup, pending active/standby/warmup, target
  // active/standby/warmup.
  std::string tasks[9] = {"{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}", "{}"};
};

struct StoredStreamsGroup {
  StreamsGroupRow group;
  std::vector<StreamsGroupMemberRow> members;
};

// Replaces the group's row and its members.
void save_streams_group(SQLite::Database& db, const StreamsGroupRow& group,
                        const std::vector<StreamsGroupMemberRow>& members);
// The group's rows go (the group was deleted, or became another type of group).
void delete_streams_group(SQLite::Database& db, const std::string& group_id);

// Updates the group's state, epochs and time and one member's row (the others, the topology and
// the inputs are unchanged): a heartbeat that moved one member writes one row.
void save_streams_group_member(SQLite::Database& db, const StreamsGroupRow& group, const StreamsGroupMemberRow& member);
// Startup: every streams group with its members, by group id and member id.
std::vector<StoredStreamsGroup> load_streams_groups(SQLite::Database& db);

}  // namespace kib::state
