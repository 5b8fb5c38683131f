// SQL for KIP-848 consumer groups (migrations/0010_consumer_groups.sql): their consumer_groups
// row and consumer_group_members. Partition lists and subscriptions are stored in the readable
// forms the migration describes; bridge/groups/consumer_group_rows.h converts them. Every
// function runs inside a StateStore job (or run_blocking) and throws SQLite::Exception on failure.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

struct ConsumerGroupRow {
  std::string group_id;
  std::string state = "Empty";  // Kafka's ConsumerGroupState name
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  std::string subscribed_partitions;  // "orders:3;payments:6"
  int64_t updated_at_ms = 0;
};

struct ConsumerGroupMemberRow {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  std::string subscribed_topics;  // "orders,payments"
  std::string subscribed_regex;
  std::optional<std::string> server_assignor;
  int32_t member_epoch = 0;
  int32_t previous_member_epoch = -1;
  std::string state = "stable";
  std::string assigned_partitions;  // "orders:0@3,1@3;payments:2@5"
  std::string pending_revocation;   // same form
  std::string target_partitions;    // "orders:0,1;payments:2"
  // A member using the classic protocol (migration 0013): its session timeout and its protocols as
  // JSON; unset for a consumer-protocol member.
  std::optional<int32_t> classic_session_timeout_ms;
  std::optional<std::string> classic_protocols;
};

struct StoredConsumerGroup {
  ConsumerGroupRow group;
  std::vector<ConsumerGroupMemberRow> members;
};

// Replaces the group's row (as a consumer group) and its members.
void save_consumer_group(SQLite::Database& db, const ConsumerGroupRow& group,
                         const std::vector<ConsumerGroupMemberRow>& members);

// Updates the group's row and one member's (the others are unchanged): a heartbeat that moved
// one member without a new target writes one row, not the group's.
void save_consumer_group_member(SQLite::Database& db, const ConsumerGroupRow& group,
                                const ConsumerGroupMemberRow& member);

// Startup: every consumer group with its members, by group id and member id.
std::vector<StoredConsumerGroup> load_consumer_groups(SQLite::Database& db);

}  // namespace kib::state
