// A streams group's snapshot as SQLite rows and back (state/streams_group_store.h): the JSON forms
// migrations/0012_streams_groups.sql describes, so an operator reads a topology or a member's
// tasks with sqlite3's JSON functions. Reading never throws: what does not parse makes the group
// come back without members (the caller logs it), and its members rejoin.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/groups/streams_group.h"
#include "state/streams_group_store.h"

namespace kib::bridge::streams {

std::pair<state::StreamsGroupRow, std::vector<state::StreamsGroupMemberRow>> streams_group_rows(
    const StreamsGroupSnapshot& s, const char* state_name, int64_t now_ms);
// nullopt when a row does not parse (why in `error`).
std::optional<StreamsGroupSnapshot> streams_group_from_rows(const state::StoredStreamsGroup& stored,
                                                            std::string* error);

std::string topology_to_json(const Topology& t);
std::optional<Topology> topology_from_json(const std::string& s);

}  // namespace kib::bridge::streams
