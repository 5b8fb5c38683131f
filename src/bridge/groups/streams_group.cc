// Ported from Kafka 4.3's GroupMetadataManager.streamsGroupHeartbeat / streamsGroupLeave and
// StreamsGroup (the epoch checks, the metadata and topology steps, the target assignment with its
// delays, reconciliation, the answer's fields and statuses, the offset rules). Where this
// differs: the initial rebalance delay and the assignment interval are checked on the next
// heartbeat instead of a timer firing (members heartbeat every interval anyway, and Kafka's
// members also only learn a new target on their next heartbeat); the inputs' "metadata hash" is
// the set of (topic, partition count) itself.
#include "bridge/groups/streams_group.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>
#include <variant>

#include "common/text.h"

namespace kib::bridge::streams {
namespace {

bool subset(const Tasks& owned, const Tasks& assigned) {
  for (const auto& [s, parts] : owned) {
    auto it = assigned.find(s);
    for (int32_t p : parts)
      if (it == assigned.end() || !it->second.contains(p)) return false;
  }
  return true;
}

Tasks without_epochs(const TaskEpochs& t) {
  Tasks out;
  for (const auto& [s, parts] : t)
    for (const auto& [p, e] : parts) out[s].insert(p);
  return out;
}

}  // namespace

TaskAssignment current_tasks(const StreamsMember& m) {
  return TaskAssignment{without_epochs(m.r.assigned.active), m.r.assigned.standby, m.r.assigned.warmup};
}

const char* streams_group_state_name(StreamsGroupState s) {
  switch (s) {
    case StreamsGroupState::kEmpty: return "Empty";
    case StreamsGroupState::kNotReady: return "NotReady";
    case StreamsGroupState::kAssigning: return "Assigning";
    case StreamsGroupState::kReconciling: return "Reconciling";
    case StreamsGroupState::kStable: return "Stable";
  }
  return "Empty";
}

StreamsGroup::StreamsGroup(std::string id, StreamsGroupOptions options, std::unique_ptr<StreamsGroupHost> host)
    : Group(std::move(id)), options_(options), host_(std::move(host)) {}

StreamsGroup::~StreamsGroup() = default;

// Kafka's StreamsGroup.state(): NotReady while the topology is missing or not validated.
StreamsGroupState StreamsGroup::state() const {
  if (members_.empty()) return StreamsGroupState::kEmpty;
  if (!topology_ || topology_->epoch != validated_topology_epoch_) return StreamsGroupState::kNotReady;
  if (group_epoch_ > assignment_epoch_) return StreamsGroupState::kAssigning;
  for (const auto& [id, m] : members_)
    if (m.r.member_epoch != assignment_epoch_ || m.r.state != StreamsMemberState::kStable)
      return StreamsGroupState::kReconciling;
  return StreamsGroupState::kStable;
}

StreamsGroupSnapshot StreamsGroup::snapshot() const {
  return StreamsGroupSnapshot{id(),          group_epoch_, assignment_epoch_, validated_topology_epoch_,
                              last_standby_replicas_, topology_, members_,     target_, configured_from_};
}

StreamsGroupSnapshot StreamsGroup::member_snapshot(const std::string& member_id) const {
  StreamsGroupSnapshot s{id(), group_epoch_, assignment_epoch_, validated_topology_epoch_, last_standby_replicas_,
                         std::nullopt, {}, {}, configured_from_};
  if (auto it = members_.find(member_id); it != members_.end()) s.members.emplace(member_id, it->second);
  if (auto it = target_.find(member_id); it != target_.end()) s.target.emplace(member_id, it->second);
  return s;
}

void StreamsGroup::restore(const StreamsGroupSnapshot& s) {
  group_epoch_ = s.group_epoch;
  assignment_epoch_ = s.assignment_epoch;
  validated_topology_epoch_ = s.validated_topology_epoch;
  last_standby_replicas_ = s.last_standby_replicas;
  topology_ = s.topology;
  members_ = s.members;
  target_ = s.target;
  configured_.reset();
  configured_from_ = s.configured_from;
  counts_known_ = s.topology.has_value();
  for (const auto& [id, m] : members_) {
    host_->arm_session(id, options_.session_timeout_ms);
    if (m.r.state == StreamsMemberState::kUnrevokedTasks)
      host_->arm_rebalance(id, m.r.member_epoch, m.rebalance_timeout_ms);
  }
}

const TaskAssignment* StreamsGroup::target(const std::string& member_id) const {
  auto it = target_.find(member_id);
  return it == target_.end() ? nullptr : &it->second;
}

StreamsHeartbeatResult StreamsGroup::fail(ErrorCode e, std::string message) const {
  StreamsHeartbeatResult r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

// Kafka's throwIfStreamsGroupMemberEpochIsInvalid: why the heartbeat's epoch is fenced, if it is.
const StreamsMember* StreamsGroup::static_member(const std::string& instance_id) const {
  for (const auto& [_, m] : members_)
    if (m.instance_id == instance_id) return &m;
  return nullptr;
}

StreamsGroup::Lookup StreamsGroup::find_member(const StreamsHeartbeatParams& p) const {
  Lookup l;
  const bool joining = p.member_epoch == 0;
  auto known = members_.find(p.member_id);
  auto create = [&] {
    if (known != members_.end()) {
      l.member = known->second;
    } else {
      l.member.member_id = p.member_id;
      l.created = true;
    }
  };
  if (!p.instance_id) {
    if (known == members_.end() && !joining) {
      l.error = ErrorCode::kUnknownMemberId;
      l.message = "Member " + p.member_id + " is not a member of group " + id() + ".";
      return l;
    }
    create();
  } else if (const StreamsMember* holder = static_member(*p.instance_id); joining) {
    if (!holder) {
      create();
      return l;
    }
    if (holder->r.member_epoch != -2) {
      l.error = ErrorCode::kUnreleasedInstanceId;
      l.message = "Static member " + p.member_id + " with instance id " + *p.instance_id +
                  " cannot join the group because the instance id is owned by " + holder->member_id + " member.";
      return l;
    }
    l.member = *holder;
    l.member.member_id = p.member_id;
    l.member.r.member_epoch = 0;
    l.member.r.previous_member_epoch = 0;
    if (holder->member_id != p.member_id) l.replaced = *holder;
    return l;
  } else if (!holder) {
    l.error = ErrorCode::kUnknownMemberId;
    l.message = "Instance id " + *p.instance_id + " is unknown.";
    return l;
  } else if (holder->member_id != p.member_id) {
    l.error = ErrorCode::kFencedInstanceId;
    l.message = "Static member " + p.member_id + " with instance id " + *p.instance_id + " was fenced by member " +
                holder->member_id + ".";
    return l;
  } else {
    l.member = *holder;
  }
  if (auto why = fenced(p, l.member)) {
    l.error = ErrorCode::kFencedMemberEpoch;
    l.message = *why;
  }
  return l;
}

void StreamsGroup::replace_static_member(const StreamsMember& old, const std::string& member_id) {
  host_->cancel_session(old.member_id);
  host_->cancel_rebalance(old.member_id);
  if (auto t = target_.find(old.member_id); t != target_.end()) {
    target_[member_id] = t->second;
    target_.erase(t);
  }
  members_.erase(old.member_id);
  spdlog::info("group={} static member with instance id {} re-joins the streams group: member {} replaces {}",
               esc(id()), esc(old.instance_id.value_or("")), esc(member_id), esc(old.member_id));
}

std::optional<std::string> StreamsGroup::fenced(const StreamsHeartbeatParams& p, const StreamsMember& m) const {
  if (p.member_epoch == 0) return std::nullopt;
  if (p.member_epoch > m.r.member_epoch)
    return "The streams group member has a greater member epoch (" + std::to_string(p.member_epoch) +
           ") than the one known by the group coordinator (" + std::to_string(m.r.member_epoch) +
           "). The member must abandon all its partitions and rejoin.";
  if (p.member_epoch < m.r.member_epoch) {
    // A lost answer: the member is one epoch behind and owns nothing it was not given.
    const bool lost_answer = p.member_epoch == m.r.previous_member_epoch && p.owned &&
                             subset(p.owned->active, without_epochs(m.r.assigned.active)) &&
                             subset(p.owned->standby, m.r.assigned.standby) &&
                             subset(p.owned->warmup, m.r.assigned.warmup);
    if (!lost_answer)
      return "The streams group member has a smaller member epoch (" + std::to_string(p.member_epoch) +
             ") than the one known by the group coordinator (" + std::to_string(m.r.member_epoch) +
             "). The member must abandon all its partitions and rejoin.";
  }
  return std::nullopt;
}

// Owned tasks must name subtopologies of the configured topology and tasks within their count.
std::optional<std::string> StreamsGroup::invalid_owned_tasks(const OwnedTasks& owned) const {
  for (const Tasks* tasks : {&owned.active, &owned.standby, &owned.warmup})
    for (const auto& [s, parts] : *tasks) {
      auto it = configured_->subtopologies.find(s);
      if (it == configured_->subtopologies.end()) return "Subtopology " + s + " does not exist in the topology.";
      for (int32_t p : parts)
        if (p < 0 || p >= it->second.tasks)
          return "Task " + std::to_string(p) + " for subtopology " + s +
                 " is invalid. Number of tasks for this subtopology: " + std::to_string(it->second.tasks);
    }
  return std::nullopt;
}

Result<bool> StreamsGroup::maybe_configure() {
  if (!topology_) return false;
  std::map<std::string, int32_t> counts;
  for (const auto& s : topology_->subtopologies) {
    std::vector<std::string> names = s.source_topics;
    for (const auto& r : s.repartition_source_topics) names.push_back(r.name);
    for (const auto& c : s.state_changelog_topics) names.push_back(c.name);
    for (const auto& n : names)
      if (auto c = host_->partitions(n)) counts[n] = *c;
  }
  if (configured_ && counts == configured_from_) return false;
  auto c = configure_topology(*topology_, [&](const std::string& t) -> std::optional<int32_t> {
    auto it = counts.find(t);
    return it == counts.end() ? std::nullopt : std::optional<int32_t>(it->second);
  });
  if (!c.ok()) return c.error();
  // A group loaded at startup knows the counts its epoch was computed from: the same counts are
  // no reason for a new epoch (Kafka compares the stored metadata hash).
  const bool changed = !counts_known_ || counts != configured_from_;
  counts_known_ = true;
  configured_from_ = std::move(counts);
  configured_ = std::move(c.value());
  return changed;
}

TaskHolders StreamsGroup::holders() const {
  TaskHolders h;
  for (const auto& [id, m] : members_)
    for (const MemberTasks* t : {&m.r.assigned, &m.r.pending_revocation}) {
      for (const auto& [s, parts] : t->active)
        for (const auto& [p, e] : parts) h.active_process[{s, p}] = m.r.process_id;
      for (const auto& [s, parts] : t->standby)
        for (int32_t p : parts) h.standby_processes[{s, p}].insert(m.r.process_id);
      for (const auto& [s, parts] : t->warmup)
        for (int32_t p : parts) h.warmup_processes[{s, p}].insert(m.r.process_id);
    }
  return h;
}

// Kafka's maybeUpdateStreamsTargetAssignment: a group epoch ahead of the target gets a new one,
// unless the group's first member is within the initial delay or the last target is younger
// than the assignment interval. Every member's target is empty while the topology is not ready.
std::optional<StreamsStatusEntry> StreamsGroup::maybe_update_target() {
  const int64_t now = host_->now_ms();
  if (now < delayed_until_ms_)
    return StreamsStatusEntry{StreamsStatus::kAssignmentDelayed,
                              "Assignment delayed due to the configured initial rebalance delay."};
  if (assignment_epoch_ >= group_epoch_) return std::nullopt;
  if (last_assignment_ms_ != 0 && options_.assignment_interval_ms > 0 &&
      now - last_assignment_ms_ < options_.assignment_interval_ms)
    return StreamsStatusEntry{StreamsStatus::kAssignmentDelayed,
                              "Assignment delayed due to the configured assignment interval."};
  std::map<std::string, TaskAssignment> next;
  if (configured_ && configured_->ready()) {
    std::vector<TaskAssignorMember> specs;
    for (const auto& [id, m] : members_) {
      const TaskAssignment* t = target(id);
      specs.push_back({id, m.r.process_id, t ? t->active : Tasks{}, t ? t->standby : Tasks{}});
    }
    std::vector<TaskSubtopology> subs;
    for (const auto& [sid, s] : configured_->subtopologies)
      subs.push_back({sid, s.tasks, !s.changelog_partitions.empty()});
    next = assign_tasks_sticky(specs, subs, options_.num_standby_replicas);
  } else {
    for (const auto& [id, m] : members_) next[id];
  }
  target_ = std::move(next);
  assignment_epoch_ = group_epoch_;
  last_assignment_ms_ = now;
  return std::nullopt;
}

// Kafka's EndpointToPartitionsManager: a task's partitions are its partition number on each of
// its subtopology's source and repartition source topics that has that many.
std::vector<EndpointPartitions> StreamsGroup::partitions_by_endpoint() const {
  std::vector<EndpointPartitions> out;
  if (!configured_) return out;
  auto add = [&](const Tasks& tasks, std::map<std::string, std::set<int32_t>>& into) {
    for (const auto& [s, parts] : tasks) {
      auto it = configured_->subtopologies.find(s);
      if (it == configured_->subtopologies.end()) continue;
      for (const auto& topic : it->second.source_topics) {
        auto n = configured_from_.find(topic);
        const int32_t count = n != configured_from_.end() ? n->second
                              : it->second.repartition_source_partitions.contains(topic)
                                  ? it->second.repartition_source_partitions.at(topic)
                                  : 0;
        for (int32_t p : parts)
          if (p < count) into[topic].insert(p);
      }
    }
  };
  for (const auto& [id, m] : members_) {
    if (!m.user_endpoint) continue;
    EndpointPartitions e;
    e.endpoint = *m.user_endpoint;
    add(without_epochs(m.r.assigned.active), e.active);
    add(m.r.assigned.standby, e.standby);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<StreamsStatusEntry> StreamsGroup::statuses(const StreamsMember& m,
                                                       std::optional<StreamsStatusEntry> delayed) const {
  std::vector<StreamsStatusEntry> out;
  if (topology_ && m.topology_epoch < topology_->epoch)
    out.push_back({StreamsStatus::kStaleTopology,
                   "The member's topology epoch " + std::to_string(m.topology_epoch) +
                       " is behind the group's topology epoch " + std::to_string(topology_->epoch) + "."});
  if (delayed) out.push_back(std::move(*delayed));
  if (configured_ && configured_->problem)
    out.push_back({static_cast<StreamsStatus>(configured_->problem->status), configured_->problem->detail});
  if (shutdown_requested_)
    out.push_back({StreamsStatus::kShutdownApplication,
                   "Streams group member " + shutdown_member_ +
                       " encountered a fatal error and requested a shutdown for the entire application."});
  return out;
}

// The member with what the heartbeat changed (null fields: unchanged).
StreamsMember StreamsGroup::with_request(const StreamsMember& m, const StreamsHeartbeatParams& p) {
  StreamsMember u = m;
  if (p.instance_id) u.instance_id = p.instance_id;
  if (p.rack_id) u.rack_id = p.rack_id;
  if (p.rebalance_timeout_ms != -1) u.rebalance_timeout_ms = p.rebalance_timeout_ms;
  if (p.topology) u.topology_epoch = p.topology->epoch;
  if (p.process_id) u.r.process_id = *p.process_id;
  if (p.client_tags) u.client_tags = *p.client_tags;
  if (p.user_endpoint) u.user_endpoint = p.user_endpoint;
  u.client_id = p.client_id;
  u.client_host = p.client_host;
  return u;
}

// Kafka's maybeUpdateTopology and the configuration after it: the first topology is the group's,
// another one is refused, one Kafka refuses outright fails the heartbeat (and is not kept).
// Whether the group epoch must move, or the failure.
std::variant<bool, StreamsHeartbeatResult> StreamsGroup::update_topology(const StreamsHeartbeatParams& p) {
  bool new_topology = false;
  if (p.topology) {
    if (!topology_) {
      topology_ = p.topology;
      configured_.reset();
      configured_from_.clear();
      counts_known_ = false;
      new_topology = true;
    } else if (topology_->epoch <= p.topology->epoch && !(*topology_ == *p.topology)) {
      return fail(ErrorCode::kInvalidRequest, "Topology updates are not supported yet.");
    }
  }
  auto reconfigured = maybe_configure();
  if (!reconfigured.ok()) {
    if (new_topology) topology_.reset();
    return fail(ErrorCode::kStreamsInvalidTopology, reconfigured.error().message);
  }
  bool bump = *reconfigured;
  const int32_t validated = configured_ && configured_->ready() ? topology_->epoch : -1;
  if (validated != -1 && p.owned)
    if (auto why = invalid_owned_tasks(*p.owned)) return fail(ErrorCode::kInvalidRequest, *why);
  bump |= validated != validated_topology_epoch_;
  validated_topology_epoch_ = validated;
  bump |= last_standby_replicas_ != options_.num_standby_replicas;
  last_standby_replicas_ = options_.num_standby_replicas;
  return bump;
}

void StreamsGroup::heartbeat(const StreamsHeartbeatParams& p, StreamsHeartbeatCallback done) {
  if (p.member_epoch < 0) return leave(p, std::move(done));
  const bool joining = p.member_epoch == 0;
  Lookup found = find_member(p);
  if (found.created && static_cast<int32_t>(members_.size()) >= options_.max_size)
    return host_->answer(std::move(done), fail(ErrorCode::kGroupMaxSizeReached,
                                               "The streams group has reached its maximum capacity of " +
                                                   std::to_string(options_.max_size) + " members."));
  if (found.error != ErrorCode::kNone) return host_->answer(std::move(done), fail(found.error, found.message));
  const StreamsMember m = found.member;
  const bool was_empty = members_.empty();
  const bool created = found.created;
  const bool replaced = found.replaced.has_value();
  if (replaced) replace_static_member(*found.replaced, p.member_id);
  const int32_t epoch_before = group_epoch_, assignment_before = assignment_epoch_;
  const StreamsMember updated = with_request(m, p);
  auto topology_step = update_topology(p);
  if (auto* failed = std::get_if<StreamsHeartbeatResult>(&topology_step))
    return host_->answer(std::move(done), std::move(*failed));
  if (std::get<bool>(topology_step) || created || updated != m) ++group_epoch_;
  members_[p.member_id] = updated;
  if (was_empty && options_.initial_rebalance_delay_ms > 0)
    delayed_until_ms_ = host_->now_ms() + options_.initial_rebalance_delay_ms;
  auto delayed = maybe_update_target();

  static const TaskAssignment kNothing;
  const TaskAssignment* t = target(p.member_id);
  StreamsMember& now = members_[p.member_id];
  const TaskAssignment before = current_tasks(now);
  now.r = reconcile_tasks(now.r, t ? *t : kNothing, assignment_epoch_, p.owned, holders());
  if (now.r.state == StreamsMemberState::kUnrevokedTasks)
    host_->arm_rebalance(p.member_id, now.r.member_epoch, now.rebalance_timeout_ms);
  else
    host_->cancel_rebalance(p.member_id);
  host_->arm_session(p.member_id, options_.session_timeout_ms);
  if (p.shutdown_application) {
    shutdown_requested_ = true;
    shutdown_member_ = p.member_id;
  }
  StreamsHeartbeatResult r = reply(p, now, joining || !(current_tasks(now) == before), std::move(delayed));
  // What is stored moves only with the group's epochs (a new topology, inputs, standby setting or
  // target all move them) or this member: a heartbeat that changed neither writes nothing, as
  // Kafka writes no record for it.
  const bool same_epochs = group_epoch_ == epoch_before && assignment_epoch_ == assignment_before;
  if (!created && !replaced && same_epochs && now == m) return host_->answer(std::move(done), std::move(r));
  // Only this member moved: its row and the group's state are written, not every member's.
  const bool whole = created || replaced || !same_epochs;
  host_->persist(*this, whole ? nullptr : &p.member_id, [this, done = std::move(done), r = std::move(r)](Status s) mutable {
    if (!s.ok()) r = fail(ErrorCode::kCoordinatorNotAvailable, "");
    host_->answer(std::move(done), std::move(r));
  });
}

// The answer: task lists when they changed (or the member joined), the endpoints when its
// endpoint epoch is behind, the statuses in Kafka's order, the internal topics to create.
StreamsHeartbeatResult StreamsGroup::reply(const StreamsHeartbeatParams& p, const StreamsMember& now,
                                           bool tasks_changed, std::optional<StreamsStatusEntry> delayed) {
  StreamsHeartbeatResult r;
  r.member_id = p.member_id;
  r.member_epoch = now.r.member_epoch;
  r.heartbeat_interval_ms = options_.heartbeat_interval_ms;
  if (tasks_changed) {
    r.tasks = current_tasks(now);
    if (now.user_endpoint) ++endpoint_information_epoch_;
  }
  r.endpoint_information_epoch = endpoint_information_epoch_;
  if (p.endpoint_information_epoch != endpoint_information_epoch_) r.partitions_by_endpoint = partitions_by_endpoint();
  r.status = statuses(now, std::move(delayed));
  if (configured_) r.topics_to_create = configured_->missing_internal_topics;
  return r;
}

// Kafka's streamsGroupLeave: the member goes (its tasks are free), the answer echoes epoch -1.
// Kafka 4.4's streamsGroupLeave: epoch -1 removes the member; a static member leaving with -2
// (it will be back) keeps its place and its tasks, at assignment epoch 0, until its session ends
// or a new incarnation with its instance id replaces it (streamsGroupStaticMemberGroupLeave).
void StreamsGroup::leave(const StreamsHeartbeatParams& p, StreamsHeartbeatCallback done) {
  if (p.instance_id) {
    const StreamsMember* holder = static_member(*p.instance_id);
    if (!holder)
      return host_->answer(std::move(done), fail(ErrorCode::kUnknownMemberId, "Instance id " + *p.instance_id +
                                                                                 " is unknown."));
    if (holder->member_id != p.member_id)
      return host_->answer(std::move(done),
                           fail(ErrorCode::kFencedInstanceId, "Static member " + p.member_id + " with instance id " +
                                                                  *p.instance_id + " was fenced by member " +
                                                                  holder->member_id + "."));
  } else if (!members_.contains(p.member_id)) {
    return host_->answer(std::move(done), fail(ErrorCode::kUnknownMemberId, "Member " + p.member_id +
                                                                               " is not a member of group " + id() + "."));
  }
  if (p.shutdown_application) {
    shutdown_requested_ = true;
    shutdown_member_ = p.member_id;
  }
  if (p.instance_id && p.member_epoch == -2) {
    StreamsMember& x = members_[p.member_id];
    x.r.previous_member_epoch = x.r.member_epoch;
    x.r.member_epoch = -2;
    x.r.pending_revocation = MemberTasks{};
    for (auto& [_, parts] : x.r.assigned.active)
      for (auto& [__, epoch] : parts) epoch = 0;
    host_->cancel_rebalance(p.member_id);
    spdlog::info("group={} static member {} with instance id {} temporarily left the streams group", esc(id()),
                 esc(p.member_id), esc(*p.instance_id));
  } else {
    remove_member(p.member_id, "left");
  }
  StreamsHeartbeatResult r;
  r.member_id = p.member_id;
  r.member_epoch = p.member_epoch;
  const bool temporary = p.instance_id && p.member_epoch == -2;
  host_->persist(*this, temporary ? &p.member_id : nullptr, [this, done = std::move(done), r = std::move(r)](Status s) mutable {
    if (!s.ok()) r = fail(ErrorCode::kCoordinatorNotAvailable, "");
    host_->answer(std::move(done), std::move(r));
  });
}

void StreamsGroup::remove_member(const std::string& member_id, const char* /*why*/) {
  members_.erase(member_id);
  target_.erase(member_id);
  host_->cancel_session(member_id);
  host_->cancel_rebalance(member_id);
  ++group_epoch_;
  if (members_.empty()) {
    shutdown_requested_ = false;
    shutdown_member_.clear();
  }
}

void StreamsGroup::on_session_expired(const std::string& member_id) {
  if (!members_.contains(member_id)) return;
  remove_member(member_id, "session expired");
  host_->persist(*this, nullptr, nullptr);
}

void StreamsGroup::on_rebalance_expired(const std::string& member_id, int32_t epoch) {
  auto it = members_.find(member_id);
  if (it == members_.end() || it->second.r.member_epoch != epoch ||
      it->second.r.state != StreamsMemberState::kUnrevokedTasks)
    return;
  remove_member(member_id, "did not revoke within its rebalance timeout");
  host_->persist(*this, nullptr, nullptr);
}

GroupDescription StreamsGroup::describe() const {
  GroupDescription d;
  d.not_classic = "Group " + id() + " is not a classic group.";
  d.group_id = id();
  d.state = state_name();
  d.protocol_type = "streams";
  return d;
}

std::optional<ErrorCode> StreamsGroup::validate_delete_group() const {
  if (!members_.empty()) return ErrorCode::kNonEmptyGroup;
  return std::nullopt;
}

// Kafka's StreamsGroup.validateOffsetCommit: the member's epoch, or an older one for tasks it
// still holds at an epoch no newer (the commit of a task being revoked).
std::optional<ErrorCode> StreamsGroup::validate_offset_commit(const OffsetCommitParams& p) const {
  auto it = members_.find(p.member_id);
  const auto check = modern_commit_check(p, !members_.empty(),
                                         it == members_.end() ? std::nullopt : std::optional(it->second.r.member_epoch));
  if (check.verdict == ModernCommitCheck::Verdict::kAccepted) return std::nullopt;
  if (check.verdict == ModernCommitCheck::Verdict::kRefused) return check.error;
  const StreamsMember& m = it->second;
  const ErrorCode stale = check.stale;
  if (!topology_) return stale;
  for (const auto& e : p.entries) {
    const Subtopology* sub = reader_of(e.topic);
    if (!sub) return stale;
    int32_t epoch = -1;
    for (const MemberTasks* t : {&m.r.assigned, &m.r.pending_revocation}) {
      auto s = t->active.find(sub->id);
      if (s == t->active.end()) continue;
      auto q = s->second.find(e.partition);
      if (q != s->second.end()) epoch = q->second;
    }
    if (epoch == -1 || p.generation_id < epoch) return stale;
  }
  return std::nullopt;
}

std::optional<ErrorCode> StreamsGroup::validate_offset_fetch(const std::string& member_id, int32_t member_epoch) const {
  if (member_id.empty() && member_epoch < 0) return std::nullopt;
  auto it = members_.find(member_id);
  if (it == members_.end()) return ErrorCode::kUnknownMemberId;
  if (it->second.r.member_epoch != member_epoch) return ErrorCode::kStaleMemberEpoch;
  return std::nullopt;
}

// The subtopology reading `topic` as a source or repartition source (Kafka's sourceTopicMap: the
// last one when several do), if any.
const Subtopology* StreamsGroup::reader_of(const std::string& topic) const {
  const Subtopology* reader = nullptr;
  if (!topology_) return reader;
  for (const auto& s : topology_->subtopologies) {
    bool reads = std::find(s.source_topics.begin(), s.source_topics.end(), topic) != s.source_topics.end();
    for (const auto& r : s.repartition_source_topics) reads |= r.name == topic;
    if (reads) reader = &s;
  }
  return reader;
}

bool StreamsGroup::is_subscribed_to_topic(const std::string& topic) const {
  return !members_.empty() && reader_of(topic) != nullptr;
}

// Kafka's ModernGroup: offsets expire a retention after their commit, except those of topics
// the group reads while it has members.
OffsetExpiration StreamsGroup::offset_expiration() const {
  kept_.clear();
  if (!members_.empty() && topology_)
    for (const auto& s : topology_->subtopologies) {
      kept_.insert(s.source_topics.begin(), s.source_topics.end());
      for (const auto& r : s.repartition_source_topics) kept_.insert(r.name);
    }
  return {OffsetExpiration::Clock::kSinceCommit, 0, &kept_};
}

}  // namespace kib::bridge::streams
