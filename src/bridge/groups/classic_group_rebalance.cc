// A classic group's requests (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the rebalance
// they drive, with its deadlines: Kafka's GroupCoordinator.handleJoinGroup / handleSyncGroup /
// handleHeartbeat / handleLeaveGroup and their helpers (4.x: GroupMetadataManager's
// classicGroupJoin, classicGroupSync, ...), for one group. The group's state is in
// classic_group.cc.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "bridge/errors.h"
#include "bridge/groups/classic_group.h"
#include "common/text.h"

namespace kib::bridge {

namespace {

// The client-id (or group.instance.id) part of a member id, at most (see join_new_member).
constexpr size_t kMaxMemberIdPrefixBytes = 255;

// Kafka's member ids: "<client id or group instance id>-<random UUID>".
std::string random_uuid() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint8_t b[16];
  uint64_t hi = rng(), lo = rng();
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[b[i] >> 4];
    s += hex[b[i] & 15];
  }
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// JoinGroup

bool ClassicGroup::accept_joining_member(const std::string& member_id) const {
  switch (state_) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return true;
    case GroupState::kPreparingRebalance: {
      // Counting members awaiting join (not the group size) lets the last members to rejoin
      // be the ones refused when group.max.size was lowered.
      const ClassicGroupMember* m = get(member_id);
      return (m && m->awaiting_join) || num_awaiting_join_ < options_.max_size;
    }
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      return has(member_id) || members_.size() < static_cast<size_t>(options_.max_size);
  }
  return false;
}

void ClassicGroup::join(JoinGroupParams& p, JoinCallback done) {
  if (!accept_joining_member(p.member_id)) {
    spdlog::info("group={} refused member={}: group.max.size {} reached", esc(id()), esc(p.member_id),
                 options_.max_size);
    remove_member(p.member_id);
    host_->answer(std::move(done), join_error(ErrorCode::kGroupMaxSizeReached, ""));
  } else if (p.member_id.empty()) {
    join_new_member(p, done);
  } else {
    join_existing_member(p, done);
  }
  if (state_ == GroupState::kPreparingRebalance) maybe_complete_join();
}

void ClassicGroup::join_new_member(JoinGroupParams& p, JoinCallback& done) {
  if (!supports_protocols(p.protocol_type, p.protocols))
    return host_->answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, ""));
  // Kafka's memberId is clientId (or group.instance.id) + "-" + UUID. Both are client strings of
  // up to 32767 bytes, and the member id goes back in a STRING field of the same bound, so the
  // prefix is cut (at a character boundary) to keep member ids small and always encodable.
  const std::string& prefix = p.group_instance_id ? *p.group_instance_id : p.client_id;
  std::string new_member_id = std::string(utf8_prefix(prefix, kMaxMemberIdPrefixBytes)) + "-" + random_uuid();
  if (p.group_instance_id) {
    auto it = static_members_.find(*p.group_instance_id);
    if (it != static_members_.end()) {
      spdlog::info("group={} static member instance={} rejoins in state {}: replacing member {} with {}", esc(id()),
                   esc(*p.group_instance_id), group_state_name(state_), esc(it->second), esc(new_member_id));
      std::string old_member_id = it->second;
      return update_static_member_and_rebalance(old_member_id, new_member_id, p, done);
    }
    return add_member_and_rebalance(new_member_id, p, std::move(done));
  }
  if (p.require_known_member_id) {
    // KIP-394: the member must come back with this id; until then it is pending.
    add_pending_member(new_member_id, p.session_timeout_ms);
    return host_->answer(std::move(done), join_error(ErrorCode::kMemberIdRequired, new_member_id));
  }
  add_member_and_rebalance(new_member_id, p, std::move(done));
}

void ClassicGroup::join_existing_member(JoinGroupParams& p, JoinCallback& done) {
  if (!supports_protocols(p.protocol_type, p.protocols))
    return host_->answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, p.member_id));
  if (pending_members_.count(p.member_id)) {
    // Pending ids are only handed to dynamic members.
    if (p.group_instance_id)
      return host_->answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
    return add_member_and_rebalance(p.member_id, p, std::move(done));
  }
  if (auto err = validate_current_member(p.member_id, p.group_instance_id))
    return host_->answer(std::move(done), join_error(*err, p.member_id));
  ClassicGroupMember& m = *get(p.member_id);
  switch (state_) {
    case GroupState::kPreparingRebalance:
      return update_member_and_rebalance(m, p, std::move(done), "member joining during PreparingRebalance");
    case GroupState::kCompletingRebalance:
      // Same metadata: the member lost its JoinGroup answer; give it again.
      if (m.matches(p.protocols))
        return host_->answer(std::move(done), current_generation_result(m, is_leader(m.member_id)));
      return update_member_and_rebalance(m, p, std::move(done), "member metadata changed during CompletingRebalance");
    case GroupState::kStable:
      // The leader rejoining forces a rebalance (it saw a metadata change the others cannot see).
      if (is_leader(m.member_id))
        return update_member_and_rebalance(m, p, std::move(done), "leader rejoining during Stable");
      if (!m.matches(p.protocols))
        return update_member_and_rebalance(m, p, std::move(done), "member metadata changed during Stable");
      return host_->answer(std::move(done), current_generation_result(m, false));
    case GroupState::kEmpty:
    case GroupState::kDead:
      return host_->answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
  }
}

void ClassicGroup::add_member_and_rebalance(const std::string& member_id, JoinGroupParams& p, JoinCallback done) {
  auto m = std::make_unique<ClassicGroupMember>();
  m->member_id = member_id;
  m->group_instance_id = p.group_instance_id;
  m->client_id = p.client_id;
  m->client_host = p.client_host;
  m->session_timeout_ms = p.session_timeout_ms;
  m->rebalance_timeout_ms = p.rebalance_timeout_ms;
  m->protocol_type = p.protocol_type;
  m->protocols = std::move(p.protocols);
  m->is_new = true;
  // Newcomers extend the delayed initial rebalance of a brand-new group.
  if (state_ == GroupState::kPreparingRebalance && generation_ == 0) new_member_added_ = true;
  ClassicGroupMember& ref = *m;
  add_member(std::move(m), std::move(done));
  // A new member cannot heartbeat before its JoinGroup is answered; one that disconnected
  // and retries with a fresh id would otherwise linger for the whole rebalance.
  schedule_heartbeat_expiration(ref, options_.new_member_join_timeout_ms);
  spdlog::debug("group={} member={} client={} joined (instance {})", esc(id()), esc(member_id), esc(ref.client_id),
                esc(ref.group_instance_id.value_or("none")));
  maybe_prepare_rebalance("adding new member " + member_id);
}

void ClassicGroup::update_member_and_rebalance(ClassicGroupMember& m, JoinGroupParams& p, JoinCallback done,
                                               const std::string& reason) {
  update_member(m, std::move(p.protocols), p.rebalance_timeout_ms, p.session_timeout_ms, std::move(done));
  maybe_prepare_rebalance(reason + " (" + m.member_id + ")");
}

void ClassicGroup::update_static_member_and_rebalance(const std::string& old_member_id,
                                                      const std::string& new_member_id, JoinGroupParams& p,
                                                      JoinCallback& done) {
  const std::string instance_id = *p.group_instance_id;
  const std::string current_leader = leader_id_.value_or("");
  ClassicGroupMember& m = replace_static_member(instance_id, old_member_id, new_member_id);
  schedule_heartbeat_expiration(m, m.session_timeout_ms);
  StaticReplacement r{.instance_id = instance_id,
                      .old_member_id = old_member_id,
                      .new_member_id = new_member_id,
                      .old_protocols = m.protocols,
                      .old_rebalance_timeout_ms = m.rebalance_timeout_ms,
                      .old_session_timeout_ms = m.session_timeout_ms,
                      .old_leader_id = current_leader,
                      .generation = generation_,
                      .skip_assignment = p.supports_skip_assignment};
  update_member(m, std::move(p.protocols), p.rebalance_timeout_ms, p.session_timeout_ms, std::move(done));

  switch (state_) {
    case GroupState::kStable:
      if (!protocol_name_ || *protocol_name_ != select_protocol()) {
        maybe_prepare_rebalance("static member " + new_member_id + " of instance " + instance_id +
                                " changed the group's protocol");
        return;
      }
      // KIP-345: a known static member comes back without a rebalance and keeps its
      // assignment, once the new member id is stored.
      host_->persist(*this, nullptr, std::nullopt,
                     [this, r = std::move(r)](Status st) mutable { on_static_member_stored(r, st); });
      return;
    case GroupState::kCompletingRebalance:
      // The leader may already be assigning to the old member id: start over.
      prepare_rebalance("static member " + new_member_id + " of instance " + instance_id +
                        " rejoined during CompletingRebalance");
      return;
    case GroupState::kPreparingRebalance:
    case GroupState::kEmpty:
    case GroupState::kDead:
      return;
  }
}

void ClassicGroup::on_static_member_stored(StaticReplacement& r, const Status& st) {
  ClassicGroupMember* m = get(r.new_member_id);
  if (!m || !m->awaiting_join) return;
  if (!st) {
    // Not stored: undo the replacement and fail the join.
    auto cb = std::move(m->awaiting_join);
    m->awaiting_join = nullptr;
    --num_awaiting_join_;
    update_member(*m, std::move(r.old_protocols), r.old_rebalance_timeout_ms, r.old_session_timeout_ms, nullptr);
    ClassicGroupMember& old = replace_static_member(r.instance_id, r.new_member_id, r.old_member_id);
    schedule_heartbeat_expiration(old, old.session_timeout_ms);
    JoinGroupResult res = join_error(to_kafka_error(st.error()), "");
    res.generation_id = generation_;
    res.protocol_type = protocol_type_;
    res.protocol_name = protocol_name_;
    res.leader_id = r.old_leader_id;
    return host_->answer(std::move(cb), std::move(res));
  }
  // A rebalance started meanwhile answers the member when it completes.
  if (state_ != GroupState::kStable || generation_ != r.generation) return;
  JoinGroupResult res;
  res.member_id = r.new_member_id;
  res.generation_id = generation_;
  res.protocol_type = protocol_type_;
  res.protocol_name = protocol_name_;
  if (r.skip_assignment) {
    // v9+: the leader learns it leads but must not run the assignor.
    bool leader = is_leader(r.new_member_id);
    if (leader) res.members = current_member_metadata();
    res.leader_id = leader_id_.value_or("");
    res.skip_assignment = leader;
  } else {
    // Older versions: the old leader id, so a returning leader does not compute an assignment
    // a Stable group would never distribute.
    res.leader_id = r.old_leader_id;
  }
  answer_join(*m, std::move(res));
}

// ---------------------------------------------------------------------------------------------
// The rebalance

void ClassicGroup::maybe_prepare_rebalance(const std::string& reason) {
  if (state_ == GroupState::kStable || state_ == GroupState::kCompletingRebalance || state_ == GroupState::kEmpty)
    prepare_rebalance(reason);
}

void ClassicGroup::prepare_rebalance(const std::string& reason) {
  if (state_ == GroupState::kCompletingRebalance) reset_and_propagate_assignment_error(ErrorCode::kRebalanceInProgress);
  pending_sync_members_.clear();
  host_->cancel_sync_deadline();
  bool initial = state_ == GroupState::kEmpty;
  spdlog::info("group={} preparing to rebalance in state {} with old generation {} (reason: {})", esc(id()),
               group_state_name(state_), generation_, esc(reason, 1024));
  transition(GroupState::kPreparingRebalance);
  if (initial) {
    // group.initial.rebalance.delay.ms: let the other members of a starting group arrive.
    initial_join_delay_ = true;
    initial_delay_ms_ = options_.initial_rebalance_delay_ms;
    initial_remaining_ms_ = std::max(rebalance_timeout_ms() - options_.initial_rebalance_delay_ms, 0);
    host_->arm_join_deadline(initial_delay_ms_);
  } else {
    initial_join_delay_ = false;
    host_->arm_join_deadline(rebalance_timeout_ms());
    maybe_complete_join();
  }
}

// The join deadline is the delayed first rebalance while initial_join_delay_ is set, the
// rebalance timeout otherwise: each arming of one sets or clears the flag.
void ClassicGroup::on_join_deadline() {
  if (initial_join_delay_)
    on_initial_join_delay();
  else if (state_ == GroupState::kPreparingRebalance)
    complete_join();
}

void ClassicGroup::on_initial_join_delay() {
  if (state_ != GroupState::kPreparingRebalance || !initial_join_delay_) return;
  if (new_member_added_ && initial_remaining_ms_ != 0) {
    new_member_added_ = false;
    int32_t delay = std::min(options_.initial_rebalance_delay_ms, initial_remaining_ms_);
    initial_remaining_ms_ = std::max(initial_remaining_ms_ - initial_delay_ms_, 0);
    initial_delay_ms_ = delay;
    host_->arm_join_deadline(delay);
    return;
  }
  complete_join();
}

void ClassicGroup::maybe_complete_join() {
  if (state_ == GroupState::kPreparingRebalance && !initial_join_delay_ && has_all_members_joined()) complete_join();
}

void ClassicGroup::complete_join() {
  host_->cancel_join_deadline();
  initial_join_delay_ = false;
  // Dynamic members that did not rejoin in time are dropped; static ones stay (KIP-345).
  std::vector<std::string> gone;
  for (const auto& [member_id, m] : members_)
    if (!m->awaiting_join && !m->group_instance_id) gone.push_back(member_id);
  for (const auto& member_id : gone) remove_member(member_id);
  if (!gone.empty())
    spdlog::info("group={} removed {} dynamic members that did not rejoin (first: {})", esc(id()), gone.size(),
                 esc(gone[0]));

  if (!maybe_elect_new_joined_leader() && !members_.empty()) {
    // Only static members that have not rejoined remain: wait for them (or for their
    // session timeouts) another rebalance timeout.
    spdlog::warn("group={} could not complete rebalance: no member rejoined", esc(id()));
    host_->arm_join_deadline(rebalance_timeout_ms());
    return;
  }

  init_next_generation();
  if (state_ == GroupState::kEmpty) {
    spdlog::info("group={} generation {} is now empty", esc(id()), generation_);
    host_->persist(*this, nullptr, std::nullopt, nullptr);
    return;
  }
  spdlog::info("group={} stabilized generation {} ({} members, protocol {}, leader {})", esc(id()), generation_,
               members_.size(), esc(protocol_name_.value_or("")), esc(leader_id_.value_or("")));
  for (auto& [member_id, m] : members_) {
    // Only the leader's answer carries the members and their metadata.
    answer_join(*m, current_generation_result(*m, is_leader(member_id)));
    schedule_heartbeat_expiration(*m, m->session_timeout_ms);
    m->is_new = false;
    pending_sync_members_.insert(member_id);
  }
  schedule_pending_sync();
}

bool ClassicGroup::maybe_elect_new_joined_leader() {
  if (!leader_id_) return false;
  ClassicGroupMember* leader = get(*leader_id_);
  if (leader && leader->awaiting_join) return true;
  for (const auto& [member_id, m] : members_) {
    if (m->awaiting_join) {
      spdlog::info("group={} leader {} did not rejoin in time; {} leads now", esc(id()), esc(*leader_id_),
                   esc(member_id));
      leader_id_ = member_id;
      return true;
    }
  }
  return false;
}

void ClassicGroup::init_next_generation() {
  ++generation_;
  if (!members_.empty()) {
    protocol_name_ = select_protocol();
    subscribed_topics_ = compute_subscribed_topics();
    transition(GroupState::kCompletingRebalance);
  } else {
    protocol_name_.reset();
    subscribed_topics_ = compute_subscribed_topics();
    transition(GroupState::kEmpty);
  }
  pending_sync_members_.clear();
}

void ClassicGroup::schedule_pending_sync() { host_->arm_sync_deadline(rebalance_timeout_ms(), generation_); }

void ClassicGroup::on_sync_deadline(int32_t generation) {
  if (generation_ != generation) return;
  if (state_ != GroupState::kCompletingRebalance && state_ != GroupState::kStable) return;
  if (pending_sync_members_.empty()) return;
  std::vector<std::string> missing(pending_sync_members_.begin(), pending_sync_members_.end());
  for (const auto& member_id : missing) remove_member(member_id);
  prepare_rebalance("removing " + std::to_string(missing.size()) +
                    " members that did not send SyncGroup in time (first: " + missing[0] + ")");
}

void ClassicGroup::remove_pending_sync_member(const std::string& member_id) {
  pending_sync_members_.erase(member_id);
  if (pending_sync_members_.empty()) host_->cancel_sync_deadline();
}

void ClassicGroup::propagate_assignment(ErrorCode error) {
  for (auto& [_, m] : members_) {
    SyncGroupResult r;
    r.error = error;
    if (error == ErrorCode::kNone) {
      r.protocol_type = protocol_type_;
      r.protocol_name = protocol_name_;
      r.assignment = m->assignment;
    }
    // The session restarts from the answer: a member whose timer fired while it waited was
    // spared then (awaiting an answer) and needs a fresh deadline now.
    if (answer_sync(*m, std::move(r))) schedule_heartbeat_expiration(*m, m->session_timeout_ms);
  }
}

void ClassicGroup::reset_and_propagate_assignment_error(ErrorCode error) {
  for (auto& [_, m] : members_) m->assignment.clear();
  propagate_assignment(error);
}

// ---------------------------------------------------------------------------------------------
// SyncGroup, Heartbeat, LeaveGroup

void ClassicGroup::sync(SyncGroupParams& p, SyncCallback done) {
  if (auto err = validate_current_member(p.member_id, p.group_instance_id))
    return host_->answer(std::move(done), sync_error(*err));
  if (p.generation_id != generation_) return host_->answer(std::move(done), sync_error(ErrorCode::kIllegalGeneration));
  if ((p.protocol_type && protocol_type_ != p.protocol_type) || (p.protocol_name && protocol_name_ != p.protocol_name))
    return host_->answer(std::move(done), sync_error(ErrorCode::kInconsistentGroupProtocol));

  ClassicGroupMember& m = *get(p.member_id);
  switch (state_) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return host_->answer(std::move(done), sync_error(ErrorCode::kUnknownMemberId));
    case GroupState::kPreparingRebalance:
      return host_->answer(std::move(done), sync_error(ErrorCode::kRebalanceInProgress));
    case GroupState::kCompletingRebalance:
      break;
    case GroupState::kStable: {
      remove_pending_sync_member(m.member_id);
      SyncGroupResult r;
      r.protocol_type = protocol_type_;
      r.protocol_name = protocol_name_;
      r.assignment = m.assignment;
      host_->answer(std::move(done), std::move(r));
      schedule_heartbeat_expiration(m, m.session_timeout_ms);
      return;
    }
  }
  // CompletingRebalance: the member waits for the leader's assignment to be stored.
  answer_sync(m, sync_error(ErrorCode::kRebalanceInProgress));  // superseded by this one
  m.awaiting_sync = std::move(done);
  remove_pending_sync_member(m.member_id);
  if (!is_leader(m.member_id)) return;
  // The leader's assignment, stored byte for byte; members it left out get an empty one.
  auto assignment = std::make_shared<std::map<std::string, Bytes>>();
  for (auto& [member_id, bytes] : p.assignments) (*assignment)[member_id] = std::move(bytes);
  size_t missing = 0;
  for (const auto& [member_id, _] : members_)
    if (!assignment->count(member_id)) {
      (*assignment)[member_id] = Bytes{};
      ++missing;
    }
  if (missing)
    spdlog::warn("group={} generation {}: leader assigned nothing to {} members; they get an empty assignment",
                 esc(id()), generation_, missing);
  spdlog::info("group={} assignment received from leader {} for generation {} ({} members, {} static)", esc(id()),
               esc(m.member_id), generation_, members_.size(), static_members_.size());
  host_->persist(*this, assignment.get(), GroupState::kStable,
                 [this, generation = generation_, assignment](Status st) {
                   on_assignment_stored(generation, *assignment, st);
                 });
}

void ClassicGroup::on_assignment_stored(int32_t generation, const std::map<std::string, Bytes>& assignment,
                                        const Status& st) {
  // Another member may have joined meanwhile: only this generation's CompletingRebalance may
  // become Stable.
  if (state_ != GroupState::kCompletingRebalance || generation_ != generation) return;
  if (!st) {
    reset_and_propagate_assignment_error(to_kafka_error(st.error()));
    maybe_prepare_rebalance("storing the assignment failed");
    return;
  }
  for (auto& [member_id, m] : members_) {
    auto it = assignment.find(member_id);
    m->assignment = it == assignment.end() ? Bytes{} : it->second;
  }
  propagate_assignment(ErrorCode::kNone);
  transition(GroupState::kStable);
}

ErrorCode ClassicGroup::heartbeat(const std::string& member_id, const std::optional<std::string>& group_instance_id,
                                  int32_t generation_id) {
  if (auto err = validate_current_member(member_id, group_instance_id)) return *err;
  if (generation_id != generation_) return ErrorCode::kIllegalGeneration;
  ClassicGroupMember& m = *get(member_id);
  switch (state_) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return ErrorCode::kUnknownMemberId;
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      schedule_heartbeat_expiration(m, m.session_timeout_ms);
      return ErrorCode::kNone;
    case GroupState::kPreparingRebalance:
      schedule_heartbeat_expiration(m, m.session_timeout_ms);
      return ErrorCode::kRebalanceInProgress;
  }
  return ErrorCode::kNone;
}

LeaveGroupResult ClassicGroup::leave(const std::vector<LeavingMember>& members) {
  LeaveGroupResult out;
  bool any_left = false;
  for (const auto& lm : members) {
    ErrorCode e = ErrorCode::kNone;
    if (lm.member_id.empty()) {
      // Administrative removal by group.instance.id (kafka-consumer-groups, KIP-345).
      auto it = lm.group_instance_id ? static_members_.find(*lm.group_instance_id) : static_members_.end();
      if (it == static_members_.end()) {
        e = ErrorCode::kUnknownMemberId;
      } else {
        std::string member_id = it->second;
        spdlog::info("group={} member={} (instance {}) removed by LeaveGroup (reason: {})", esc(id()), esc(member_id),
                     esc(*lm.group_instance_id), esc(lm.reason.empty() ? "not provided" : lm.reason, 1024));
        remove_member(member_id);
      }
    } else if (pending_members_.count(lm.member_id)) {
      erase_pending_member(lm.member_id);
    } else if (auto err = validate_current_member(lm.member_id, lm.group_instance_id)) {
      e = *err;
    } else {
      spdlog::info("group={} member={} left (reason: {})", esc(id()), esc(lm.member_id),
                   esc(lm.reason.empty() ? "not provided" : lm.reason, 1024));
      remove_member(lm.member_id);
    }
    any_left |= e == ErrorCode::kNone;
    out.member_errors.push_back(e);
  }
  if (any_left) {
    if (state_ == GroupState::kStable || state_ == GroupState::kCompletingRebalance)
      maybe_prepare_rebalance("members left the group");
    else if (state_ == GroupState::kPreparingRebalance)
      maybe_complete_join();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Liveness

void ClassicGroup::on_heartbeat_expired(const std::string& member_id) {
  ClassicGroupMember* m = get(member_id);
  if (!m || m->alive_without_heartbeat()) return;
  spdlog::info("group={} member={} failed: no heartbeat within its session timeout of {} ms{}", esc(id()),
               esc(member_id), m->is_new ? options_.new_member_join_timeout_ms : m->session_timeout_ms,
               m->is_new ? " (new member join timeout)" : "");
  remove_member_and_update_group(member_id, "member " + member_id + " expired");
}

void ClassicGroup::on_pending_member_expired(const std::string& member_id) {
  if (!pending_members_.count(member_id)) return;
  spdlog::info("group={} pending member={} expired: it did not rejoin with its member id", esc(id()), esc(member_id));
  erase_pending_member(member_id);
  if (state_ == GroupState::kPreparingRebalance) maybe_complete_join();
}

void ClassicGroup::remove_member_and_update_group(const std::string& member_id, const std::string& reason) {
  remove_member(member_id);
  switch (state_) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      maybe_prepare_rebalance(reason);
      break;
    case GroupState::kPreparingRebalance:
      maybe_complete_join();
      break;
    case GroupState::kEmpty:
    case GroupState::kDead:
      break;
  }
}

}  // namespace kib::bridge
