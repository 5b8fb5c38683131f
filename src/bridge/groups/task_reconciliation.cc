// Ported from Kafka 4.3's org.apache.kafka.coordinator.group.streams.CurrentAssignmentBuilder
// (build, computeNextAssignment, computeAssignmentDifference[WithEpoch], buildNewMember) and
// TasksTuple.containsAny. Results do not depend on iteration order, so plain ordered maps serve.
#include "bridge/groups/task_reconciliation.h"

#include <algorithm>
#include <functional>

namespace kib::bridge::streams {
namespace {

using Unreleased = std::function<bool(const std::string& subtopology, int32_t partition)>;

template <typename Set>
bool intersects(const Set& a, const std::set<int32_t>& b) {
  for (const auto& x : a)
    if (b.contains(x)) return true;
  return false;
}

bool intersects(const std::map<int32_t, int32_t>& a, const std::set<int32_t>& b) {
  for (const auto& [p, e] : a)
    if (b.contains(p)) return true;
  return false;
}

// TasksTuple.containsAny(TasksTupleWithEpochs): the member still reports one of `revoking`.
bool owns_any(const OwnedTasks& owned, const MemberTasks& revoking) {
  auto any = [](const Tasks& have, auto&& of) {
    for (const auto& [s, parts] : have)
      if (auto it = of.find(s); it != of.end() && intersects(it->second, parts)) return true;
    return false;
  };
  return any(owned.active, revoking.active) || any(owned.standby, revoking.standby) ||
         any(owned.warmup, revoking.warmup);
}

// computeAssignmentDifferenceWithEpoch: kept (current ∩ target, their epochs), to revoke
// (current − target), to assign (target − current − unreleased, at the target epoch).
bool difference(const TaskEpochs& current, const Tasks& target, int32_t target_epoch, TaskEpochs& kept,
                TaskEpochs& revoke, TaskEpochs& assign, const Unreleased& unreleased) {
  bool withheld = false;
  std::set<std::string> ids;
  for (const auto& [s, p] : current) ids.insert(s);
  for (const auto& [s, p] : target) ids.insert(s);
  for (const auto& s : ids) {
    static const std::map<int32_t, int32_t> kNone;
    static const std::set<int32_t> kNoTasks;
    const auto& cur = current.contains(s) ? current.at(s) : kNone;
    const auto& tgt = target.contains(s) ? target.at(s) : kNoTasks;
    std::map<int32_t, int32_t> k, r, a;
    for (const auto& [p, e] : cur) (tgt.contains(p) ? k : r)[p] = e;
    for (int32_t p : tgt) {
      if (k.contains(p)) continue;
      if (unreleased(s, p)) {
        withheld = true;
        continue;
      }
      a[p] = target_epoch;
    }
    if (!k.empty()) kept[s] = std::move(k);
    if (!r.empty()) revoke[s] = std::move(r);
    if (!a.empty()) assign[s] = std::move(a);
  }
  return withheld;
}

// computeAssignmentDifference (standby and warm-up tasks, no epochs).
bool difference(const Tasks& current, const Tasks& target, Tasks& kept, Tasks& revoke, Tasks& assign,
                const Unreleased& unreleased) {
  bool withheld = false;
  std::set<std::string> ids;
  for (const auto& [s, p] : current) ids.insert(s);
  for (const auto& [s, p] : target) ids.insert(s);
  for (const auto& s : ids) {
    static const std::set<int32_t> kNoTasks;
    const auto& cur = current.contains(s) ? current.at(s) : kNoTasks;
    const auto& tgt = target.contains(s) ? target.at(s) : kNoTasks;
    std::set<int32_t> k, r, a;
    for (int32_t p : cur) (tgt.contains(p) ? k : r).insert(p);
    for (int32_t p : tgt) {
      if (k.contains(p)) continue;
      if (unreleased(s, p)) {
        withheld = true;
        continue;
      }
      a.insert(p);
    }
    if (!k.empty()) kept[s] = std::move(k);
    if (!r.empty()) revoke[s] = std::move(r);
    if (!a.empty()) assign[s] = std::move(a);
  }
  return withheld;
}

MemberTasks merged(MemberTasks kept, const MemberTasks& add) {
  for (const auto& [s, parts] : add.active)
    for (const auto& [p, e] : parts) kept.active[s][p] = e;
  for (const auto& [s, parts] : add.standby) kept.standby[s].insert(parts.begin(), parts.end());
  for (const auto& [s, parts] : add.warmup) kept.warmup[s].insert(parts.begin(), parts.end());
  return kept;
}

MemberReconciliation next(const MemberReconciliation& m, int32_t epoch, const TaskAssignment& target,
                          int32_t target_epoch, const std::optional<OwnedTasks>& owned, const TaskHolders& h) {
  auto held = [](const auto& map, const std::string& s, int32_t p, const std::string& process) {
    auto it = map.find({s, p});
    return it != map.end() && it->second.contains(process);
  };
  auto active_holder = [&](const std::string& s, int32_t p) -> const std::string* {
    auto it = h.active_process.find({s, p});
    return it == h.active_process.end() ? nullptr : &it->second;
  };
  // An active task is unreleased while anyone holds it actively, or this process holds it as a
  // standby or warm-up; a standby or warm-up task while this process holds it in any way.
  const Unreleased active_unreleased = [&](const std::string& s, int32_t p) {
    return active_holder(s, p) != nullptr || held(h.standby_processes, s, p, m.process_id) ||
           held(h.warmup_processes, s, p, m.process_id);
  };
  const Unreleased other_unreleased = [&](const std::string& s, int32_t p) {
    const std::string* a = active_holder(s, p);
    return (a && *a == m.process_id) || held(h.standby_processes, s, p, m.process_id) ||
           held(h.warmup_processes, s, p, m.process_id);
  };
  MemberTasks kept, revoke, assign;
  bool withheld = difference(m.assigned.active, target.active, target_epoch, kept.active, revoke.active, assign.active,
                             active_unreleased);
  withheld |= difference(m.assigned.standby, target.standby, kept.standby, revoke.standby, assign.standby,
                         other_unreleased);
  withheld |= difference(m.assigned.warmup, target.warmup, kept.warmup, revoke.warmup, assign.warmup,
                         other_unreleased);

  MemberReconciliation out = m;
  out.previous_member_epoch = m.member_epoch;  // Builder.updateMemberEpoch
  if (!revoke.empty() && (!owned || owns_any(*owned, revoke))) {
    out.state = StreamsMemberState::kUnrevokedTasks;
    out.member_epoch = epoch;
    out.assigned = std::move(kept);
    out.pending_revocation = std::move(revoke);
    return out;
  }
  out.member_epoch = target_epoch;
  out.pending_revocation = {};
  if (!assign.empty()) {
    out.state = withheld ? StreamsMemberState::kUnreleasedTasks : StreamsMemberState::kStable;
    out.assigned = merged(std::move(kept), assign);
  } else {
    out.state = withheld ? StreamsMemberState::kUnreleasedTasks : StreamsMemberState::kStable;
    out.assigned = std::move(kept);
  }
  return out;
}

}  // namespace

const char* streams_member_state_name(StreamsMemberState s) {
  switch (s) {
    case StreamsMemberState::kStable: return "STABLE";
    case StreamsMemberState::kUnrevokedTasks: return "UNREVOKED_TASKS";
    case StreamsMemberState::kUnreleasedTasks: return "UNRELEASED_TASKS";
  }
  return "UNKNOWN";
}

std::optional<StreamsMemberState> streams_member_state_from_name(const std::string& s) {
  for (auto st : {StreamsMemberState::kStable, StreamsMemberState::kUnrevokedTasks, StreamsMemberState::kUnreleasedTasks})
    if (s == streams_member_state_name(st)) return st;
  return std::nullopt;
}

MemberReconciliation reconcile_tasks(const MemberReconciliation& m, const TaskAssignment& target, int32_t target_epoch,
                                     const std::optional<OwnedTasks>& owned, const TaskHolders& holders) {
  switch (m.state) {
    case StreamsMemberState::kStable:
      if (m.member_epoch == target_epoch) return m;
      return next(m, m.member_epoch, target, target_epoch, owned, holders);
    case StreamsMemberState::kUnrevokedTasks:
      if (!owned || owns_any(*owned, m.pending_revocation)) return m;
      return next(m, m.member_epoch + 1, target, target_epoch, owned, holders);
    case StreamsMemberState::kUnreleasedTasks:
      return next(m, m.member_epoch, target, target_epoch, owned, holders);
  }
  return m;
}

}  // namespace kib::bridge::streams
