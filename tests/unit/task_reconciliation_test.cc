// One reconciliation step of a streams group member (src/bridge/groups/task_reconciliation.h),
// with Kafka 4.3's streams CurrentAssignmentBuilderTest cases ported for active tasks (their
// inputs and expected members verbatim) and the standby and warm-up rules for unreleased tasks.
#include <boost/test/unit_test.hpp>

#include <optional>

#include "bridge/groups/task_reconciliation.h"

using namespace kib::bridge::streams;

namespace {

const std::string kProcess = "process";
const std::string kSub1 = "subtopology1", kSub2 = "subtopology2";

TaskEpochs with_epoch(int32_t epoch, const Tasks& tasks) {
  TaskEpochs out;
  for (const auto& [s, parts] : tasks)
    for (int32_t p : parts) out[s][p] = epoch;
  return out;
}

MemberReconciliation member(StreamsMemberState state, int32_t epoch, TaskEpochs assigned, TaskEpochs pending = {}) {
  MemberReconciliation m;
  m.process_id = kProcess;
  m.member_epoch = epoch;
  m.previous_member_epoch = epoch;
  m.state = state;
  m.assigned.active = std::move(assigned);
  m.pending_revocation.active = std::move(pending);
  return m;
}

TaskAssignment active(Tasks t) { return TaskAssignment{std::move(t), {}, {}}; }

// Every task held actively by `process` (or by nobody).
TaskHolders held_by(const std::optional<std::string>& process, const Tasks& tasks) {
  TaskHolders h;
  if (process)
    for (const auto& [s, parts] : tasks)
      for (int32_t p : parts) h.active_process[{s, p}] = *process;
  return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(task_reconciliation)

BOOST_AUTO_TEST_CASE(stable_to_stable) {
  const Tasks tasks{{kSub1, {1, 2}}, {kSub2, {3, 4}}};
  auto m = member(StreamsMemberState::kStable, 10, with_epoch(10, tasks));
  auto r = reconcile_tasks(m, active(tasks), 11, std::nullopt, held_by(kProcess, tasks));
  auto want = m;
  want.member_epoch = 11;
  BOOST_TEST((r == want));
  // At the target epoch already: unchanged.
  BOOST_TEST((reconcile_tasks(m, active(tasks), 10, std::nullopt, held_by(kProcess, tasks)) == m));
}

BOOST_AUTO_TEST_CASE(stable_to_stable_with_new_tasks_keeps_the_old_tasks_epochs) {
  auto m = member(StreamsMemberState::kStable, 10, {{kSub1, {{1, 9}, {2, 8}}}, {kSub2, {{3, 9}, {4, 8}}}});
  auto r = reconcile_tasks(m, active({{kSub1, {1, 2, 4}}, {kSub2, {3, 4, 7}}}), 11, std::nullopt, {});
  BOOST_TEST((r.state == StreamsMemberState::kStable));
  BOOST_TEST(r.member_epoch == 11);
  BOOST_TEST(r.previous_member_epoch == 10);
  BOOST_TEST((r.assigned.active == TaskEpochs{{kSub1, {{1, 9}, {2, 8}, {4, 11}}}, {kSub2, {{3, 9}, {4, 8}, {7, 11}}}}));
  BOOST_TEST(r.pending_revocation.empty());
}

BOOST_AUTO_TEST_CASE(stable_to_unrevoked_tasks) {
  auto m = member(StreamsMemberState::kStable, 10, with_epoch(10, {{kSub1, {1, 2}}, {kSub2, {3, 4}}}));
  auto r = reconcile_tasks(m, active({{kSub1, {2, 3}}, {kSub2, {4, 5}}}), 11, std::nullopt, {});
  auto want = member(StreamsMemberState::kUnrevokedTasks, 10, with_epoch(10, {{kSub1, {2}}, {kSub2, {4}}}),
                     with_epoch(10, {{kSub1, {1}}, {kSub2, {3}}}));
  BOOST_TEST((r == want));
  // Owned tasks that no longer include the revoked ones: nothing to wait for.
  r = reconcile_tasks(m, active({{kSub1, {2, 3}}, {kSub2, {4, 5}}}), 11, active({{kSub1, {2}}, {kSub2, {4}}}), {});
  BOOST_TEST((r.state == StreamsMemberState::kStable));
  BOOST_TEST((r.assigned.active == TaskEpochs{{kSub1, {{2, 10}, {3, 11}}}, {kSub2, {{4, 10}, {5, 11}}}}));
}

BOOST_AUTO_TEST_CASE(stable_to_unreleased_tasks) {
  const Tasks before{{kSub1, {1, 2}}, {kSub2, {3, 4}}};
  auto m = member(StreamsMemberState::kStable, 10, with_epoch(10, before));
  // Every task is held actively by some process: the new ones are withheld.
  auto r = reconcile_tasks(m, active({{kSub1, {1, 2, 4}}, {kSub2, {3, 4, 7}}}), 11, std::nullopt,
                           held_by(kProcess, {{kSub1, {1, 2, 4}}, {kSub2, {3, 4, 7}}}));
  auto want = member(StreamsMemberState::kUnreleasedTasks, 11, with_epoch(10, before));
  want.previous_member_epoch = 10;
  BOOST_TEST((r == want));
}

BOOST_AUTO_TEST_CASE(unrevoked_tasks_wait_for_the_member_to_let_go) {
  auto m = member(StreamsMemberState::kUnrevokedTasks, 10, with_epoch(10, {{kSub1, {2, 3}}, {kSub2, {5, 6}}}),
                  with_epoch(10, {{kSub1, {1}}, {kSub2, {4}}}));
  const auto target = active({{kSub1, {2, 3}}, {kSub2, {5, 6}}});
  // No owned tasks reported, or still owning a revoked one: unchanged.
  BOOST_TEST((reconcile_tasks(m, target, 11, std::nullopt, {}) == m));
  BOOST_TEST((reconcile_tasks(m, target, 11, active({{kSub1, {1, 2, 3}}, {kSub2, {5, 6}}}), {}) == m));
  // Let go: stable at the target epoch.
  auto r = reconcile_tasks(m, target, 11, active({{kSub1, {2, 3}}, {kSub2, {5, 6}}}), {});
  auto want = member(StreamsMemberState::kStable, 11, with_epoch(10, {{kSub1, {2, 3}}, {kSub2, {5, 6}}}));
  want.previous_member_epoch = 10;
  BOOST_TEST((r == want));
}

BOOST_AUTO_TEST_CASE(unreleased_tasks_are_handed_over_once_free) {
  auto m = member(StreamsMemberState::kUnreleasedTasks, 11, with_epoch(10, {{kSub1, {2, 3}}}));
  const auto target = active({{kSub1, {2, 3, 4}}});
  // Task 4 still held by another process.
  auto r = reconcile_tasks(m, target, 11, std::nullopt, held_by("other", {{kSub1, {4}}}));
  BOOST_TEST((r.state == StreamsMemberState::kUnreleasedTasks));
  BOOST_TEST((r.assigned.active == with_epoch(10, {{kSub1, {2, 3}}})));
  // Free now.
  r = reconcile_tasks(m, target, 11, std::nullopt, {});
  BOOST_TEST((r.state == StreamsMemberState::kStable));
  BOOST_TEST((r.assigned.active == TaskEpochs{{kSub1, {{2, 10}, {3, 10}, {4, 11}}}}));
}

BOOST_AUTO_TEST_CASE(standby_tasks_are_withheld_only_from_their_own_process) {
  MemberReconciliation m;
  m.process_id = kProcess;
  m.member_epoch = 5;
  const TaskAssignment target{{}, {{kSub1, {0, 1}}}, {}};
  // Task 0 is active on another process: a standby may go here; task 1 is active on this process.
  TaskHolders h;
  h.active_process[{kSub1, 0}] = "other";
  h.active_process[{kSub1, 1}] = kProcess;
  auto r = reconcile_tasks(m, target, 6, std::nullopt, h);
  BOOST_TEST((r.state == StreamsMemberState::kUnreleasedTasks));
  BOOST_TEST((r.assigned.standby == Tasks{{kSub1, {0}}}));
  BOOST_TEST(r.member_epoch == 6);
  // A standby held here already (by another thread of this process) is withheld too.
  h = {};
  h.standby_processes[{kSub1, 1}] = {kProcess};
  r = reconcile_tasks(m, target, 6, std::nullopt, h);
  BOOST_TEST((r.assigned.standby == Tasks{{kSub1, {0}}}));
  // An active task whose standby this process holds is withheld from it.
  h = {};
  h.standby_processes[{kSub1, 7}] = {kProcess};
  r = reconcile_tasks(m, active({{kSub1, {7}}}), 6, std::nullopt, h);
  BOOST_TEST((r.state == StreamsMemberState::kUnreleasedTasks));
  BOOST_TEST(r.assigned.active.empty());
}

BOOST_AUTO_TEST_CASE(state_names_round_trip) {
  for (auto s : {StreamsMemberState::kStable, StreamsMemberState::kUnrevokedTasks, StreamsMemberState::kUnreleasedTasks})
    BOOST_TEST((streams_member_state_from_name(streams_member_state_name(s)) == s));
  BOOST_TEST(!streams_member_state_from_name("UNKNOWN").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
