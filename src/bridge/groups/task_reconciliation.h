// One step of a streams group member towards its target tasks: Kafka 4.3's streams
// CurrentAssignmentBuilder as a pure function. A task the member must give up stays "pending
// revocation" (UNREVOKED_TASKS, member epoch unchanged) until the member stops reporting it; a
// task of its target that another process still holds is "unreleased" and withheld
// (UNRELEASED_TASKS) until its holder gave it up; everything else is handed over at the target
// epoch. So a task is never active on two members at once, whatever the assignor decided. Active
// tasks carry the epoch they were assigned at (OffsetCommit fencing of older epochs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "bridge/groups/task_assignor.h"

namespace kib::bridge::streams {

using TaskEpochs = std::map<std::string, std::map<int32_t, int32_t>>;  // subtopology -> partition -> epoch

// Kafka's TasksTupleWithEpochs.
struct MemberTasks {
  TaskEpochs active;
  Tasks standby;
  Tasks warmup;
  bool empty() const { return active.empty() && standby.empty() && warmup.empty(); }
  bool operator==(const MemberTasks&) const = default;
};

// Kafka's streams MemberState (UNKNOWN only exists across coordinator downgrades).
enum class StreamsMemberState { kStable, kUnrevokedTasks, kUnreleasedTasks };
const char* streams_member_state_name(StreamsMemberState s);  // "STABLE", "UNREVOKED_TASKS", ...
std::optional<StreamsMemberState> streams_member_state_from_name(const std::string& s);

// What reconciliation reads and changes of a member.
struct MemberReconciliation {
  std::string process_id;
  int32_t member_epoch = 0;
  int32_t previous_member_epoch = -1;
  StreamsMemberState state = StreamsMemberState::kStable;
  MemberTasks assigned;
  MemberTasks pending_revocation;
  bool operator==(const MemberReconciliation&) const = default;
};

// Who holds which task now, over the whole group (every member's assigned and pending
// revocation): Kafka's currentActiveTaskToProcessId and the standby and warm-up maps.
struct TaskHolders {
  std::map<std::pair<std::string, int32_t>, std::string> active_process;
  std::map<std::pair<std::string, int32_t>, std::set<std::string>> standby_processes;
  std::map<std::pair<std::string, int32_t>, std::set<std::string>> warmup_processes;
};

// The tasks a member reported owning (all three lists, or nothing: unknown).
using OwnedTasks = TaskAssignment;

// CurrentAssignmentBuilder.build for a known state.
MemberReconciliation reconcile_tasks(const MemberReconciliation& member, const TaskAssignment& target,
                                     int32_t target_epoch, const std::optional<OwnedTasks>& owned,
                                     const TaskHolders& holders);

}  // namespace kib::bridge::streams
