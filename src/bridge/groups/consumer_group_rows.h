// A consumer group's snapshot as SQLite rows and back (state/consumer_group_store.h): the
// readable forms migrations/0010_consumer_groups.sql describes, so an operator reads a member's
// assignment with sqlite3. Parsing is lenient: what does not parse is left out (and logged by the
// caller), never thrown.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/groups/consumer_group.h"
#include "state/consumer_group_store.h"

namespace kib::bridge {

std::pair<state::ConsumerGroupRow, std::vector<state::ConsumerGroupMemberRow>> consumer_group_rows(
    const ConsumerGroupSnapshot& s, const char* state_name, int64_t now_ms);
// nullopt when a member row does not parse (its text is in `error`).
std::optional<ConsumerGroupSnapshot> consumer_group_from_rows(const state::StoredConsumerGroup& stored,
                                                              std::string* error);

// "orders:0@3,1@3;payments:2@5" and "orders:0,1;payments:2".
std::string format_epoch_assignment(const EpochAssignment& a);
std::optional<EpochAssignment> parse_epoch_assignment(const std::string& s);
std::string format_target(const MemberTargetAssignment& a);
std::optional<MemberTargetAssignment> parse_target(const std::string& s);

}  // namespace kib::bridge
