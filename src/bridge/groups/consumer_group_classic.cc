// Members that speak the classic protocol inside a consumer group (KIP-848's online migration):
// Kafka 4's classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup. Such a member is a
// ConsumerMember with its ClassicMemberMetadata. Its JoinGroup runs the same reconciliation step
// as a ConsumerGroupHeartbeat and is answered at once with the member epoch as generation and no
// member list (the coordinator assigns); its SyncGroup gets the member's assigned partitions in
// its ConsumerProtocol version; its Heartbeat answers REBALANCE_IN_PROGRESS while it has to rejoin
// (a newer target, partitions to revoke, or freed partitions to collect). docs/groups.md.
#include <spdlog/spdlog.h>

#include "bridge/groups/consumer_group.h"
#include "bridge/groups/consumer_protocol.h"
#include "common/text.h"

namespace kib::bridge {

namespace {

using Deadline = ConsumerGroupHost::ClassicDeadline;

JoinGroupResult join_refused(ErrorCode e, const std::string& member_id, const std::string& group_id,
                             const std::string& why) {
  spdlog::info("group={} JoinGroup from {} refused: {}", esc(group_id), esc(member_id), why);
  return join_error(e, member_id);
}

}  // namespace

bool ConsumerGroup::only_classic_members() const {
  if (members_.empty()) return false;
  for (const auto& [_, m] : members_)
    if (!m.classic) return false;
  return true;
}

const ConsumerMember* ConsumerGroup::classic_member(const std::string& member_id,
                                                    const std::optional<std::string>& instance_id,
                                                    ErrorCode* error) const {
  if (!instance_id) {
    auto it = members_.find(member_id);
    if (it == members_.end()) {
      *error = ErrorCode::kUnknownMemberId;
      return nullptr;
    }
    return &it->second;
  }
  const ConsumerMember* m = static_member(instance_id);
  if (!m || m->member_id != member_id) {
    *error = m ? ErrorCode::kFencedInstanceId : ErrorCode::kUnknownMemberId;
    return nullptr;
  }
  return m;
}

const ConsumerMember* ConsumerGroup::static_member(const std::optional<std::string>& instance_id) const {
  if (!instance_id) return nullptr;
  for (const auto& [_, m] : members_)
    if (m.instance_id == instance_id) return &m;
  return nullptr;
}

// Kafka's waitingOnUnreleasedPartition: a partition of the member's target another member still holds.
bool ConsumerGroup::waiting_on_unreleased(const ConsumerMember& m) const {
  if (m.state != ConsumerMemberState::kUnreleasedPartitions) return false;
  const MemberTargetAssignment* t = target(m.member_id);
  if (!t) return false;
  for (const auto& [topic, parts] : *t) {
    auto own = m.assigned.find(topic);
    for (int32_t p : parts)
      if ((own == m.assigned.end() || !own->second.count(p)) && current_partition_epoch(topic, p) != -1) return true;
  }
  return false;
}

// Kafka's supportsClassicProtocols: the consumer protocol type, and a protocol every classic
// member already in the group supports (any protocol while there is none).
bool ConsumerGroup::supports_classic_protocols(const std::string& type,
                                               const std::vector<GroupProtocol>& protocols) const {
  if (type != "consumer" || protocols.empty()) return false;
  bool any_classic = false;
  for (const auto& [_, m] : members_) any_classic = any_classic || m.classic.has_value();
  if (!any_classic) return true;
  for (const auto& proto : protocols) {
    bool everyone = true;
    for (const auto& [_, m] : members_) {
      if (!m.classic) continue;
      bool has = false;
      for (const auto& q : m.classic->protocols) has = has || q.name == proto.name;
      everyone = everyone && has;
    }
    if (everyone) return true;
  }
  return false;
}

// Kafka's getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember with the classic protocol: a
// dynamic member is found or created; a static one without member id creates or replaces the
// instance id's holder (whichever protocol it spoke), one with a member id must hold it.
ConsumerGroup::Lookup ConsumerGroup::find_classic_joiner(const JoinGroupParams& p, const std::string& member_id) const {
  Lookup l;
  const bool unknown = p.member_id.empty();
  const ConsumerMember* holder = static_member(p.group_instance_id);
  if (!p.group_instance_id || (unknown && !holder)) {
    auto it = members_.find(member_id);
    if (it == members_.end()) {
      l.member.member_id = member_id;
      l.created = true;
    } else {
      l.member = it->second;
    }
  } else if (unknown) {
    l.member = *holder;
    l.member.member_id = member_id;
    l.member.member_epoch = 0;
    l.member.previous_member_epoch = 0;
    if (holder->member_id != member_id) l.replaced = *holder;
  } else if (!holder) {
    l.error = ErrorCode::kUnknownMemberId;
    l.message = "Instance id " + *p.group_instance_id + " is unknown.";
  } else if (holder->member_id != member_id) {
    l.error = ErrorCode::kFencedInstanceId;
    l.message = "Static member " + member_id + " with instance id " + *p.group_instance_id +
                " was fenced by member " + holder->member_id + ".";
  } else {
    l.member = *holder;
  }
  return l;
}

void ConsumerGroup::classic_join(const JoinGroupParams& p, JoinCallback done) {
  const bool unknown = p.member_id.empty();
  const std::string member_id = unknown ? new_member_id() : p.member_id;
  auto refuse = [&](ErrorCode e, const std::string& why) {
    host_->answer(std::move(done), join_refused(e, member_id, id(), why));
  };
  if (static_cast<int64_t>(members_.size()) >= options_.max_size && !members_.count(member_id))
    return refuse(ErrorCode::kGroupMaxSizeReached,
                  "the consumer group has reached its maximum capacity of " + std::to_string(options_.max_size));
  const bool supported = supports_classic_protocols(p.protocol_type, p.protocols);
  if (!supported) return refuse(ErrorCode::kInconsistentGroupProtocol, "Member " + member_id + "'s protocols are not supported.");
  if (p.require_known_member_id && unknown && !p.group_instance_id) {
    JoinGroupResult r = join_error(ErrorCode::kMemberIdRequired, member_id);
    return host_->answer(std::move(done), std::move(r));
  }
  const auto sub = decode_subscription(p.protocols.front().metadata);
  if (!sub) return refuse(ErrorCode::kUnknownServerError, "Malformed embedded consumer protocol in subscription deserialization.");

  Lookup found = find_classic_joiner(p, member_id);
  if (found.error != ErrorCode::kNone) return refuse(found.error, found.message);
  const ConsumerMember& member = found.member;
  const bool created = found.created;
  const std::optional<ConsumerMember>& replaced = found.replaced;
  const ConsumerMember before = member;
  if (replaced) replace_static_member(*replaced, member_id);
  const ConsumerMember updated = with_join(member, p, *sub);
  const bool subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names ||
                                    updated.subscribed_topic_regex != member.subscribed_topic_regex;
  if (created) {
    empty_since_ms_ = -1;
    spdlog::info("group={} member {} joins the consumer group using the classic protocol", esc(id()), esc(member_id));
  }
  const int32_t epoch_before = group_epoch_;
  const ConsumerMember reconciled = step(replaced ? &*replaced : (created ? nullptr : &before), updated,
                                         subscription_changed, std::optional(sub->owned));
  host_->arm_session(member_id, p.session_timeout_ms);
  // A static consumer-protocol member replaced by a classic one may leave classic members only
  // (Kafka's validateOnlineDowngradeWithReplacedMember): rebalance only if the target is behind.
  if (replaced && !replaced->classic) host_->maybe_downgrade(assignment_epoch_ < group_epoch_);

  answer_classic_join(reconciled, p, replaced.has_value() || group_epoch_ != epoch_before, std::move(done));
}

// The member with what its JoinGroup sent (Kafka's ConsumerGroupMember.Builder in
// classicGroupJoinToConsumerGroup).
ConsumerMember ConsumerGroup::with_join(const ConsumerMember& m, const JoinGroupParams& p, const ConsumerSubscription& sub) {
  ConsumerMember u = m;
  if (p.group_instance_id) u.instance_id = p.group_instance_id;
  if (sub.rack_id) u.rack_id = sub.rack_id;
  if (p.rebalance_timeout_ms != -1) u.rebalance_timeout_ms = p.rebalance_timeout_ms;
  u.subscribed_topic_names = std::set<std::string>(sub.topics.begin(), sub.topics.end());
  u.subscribed_topic_regex.clear();  // a classic member subscribes by names only
  u.client_id = p.client_id;
  u.client_host = p.client_host;
  u.classic = ClassicMemberMetadata{p.session_timeout_ms, p.protocols};
  return u;
}

// Once what the join changed is durable: the answer (generation = member epoch, no leader, no
// member list: the coordinator assigns), and the member must sync within its rebalance timeout.
void ConsumerGroup::answer_classic_join(const ConsumerMember& m, const JoinGroupParams& p, bool whole,
                                        JoinCallback done) {
  JoinGroupResult r;
  r.member_id = m.member_id;
  r.generation_id = m.member_epoch;
  r.protocol_type = "consumer";
  r.protocol_name = p.protocols.front().name;
  const int32_t rebalance_timeout_ms = p.rebalance_timeout_ms;
  host_->persist(*this, whole ? nullptr : &m.member_id,
                 [this, r = std::move(r), done = std::move(done), rebalance_timeout_ms](Status st) mutable {
    if (!st) {
      r = join_error(ErrorCode::kCoordinatorNotAvailable, r.member_id);
    } else if (members_.count(r.member_id)) {
      host_->cancel_classic(r.member_id, Deadline::kJoin);
      host_->arm_classic(r.member_id, Deadline::kSync, rebalance_timeout_ms);
    }
    host_->answer(std::move(done), std::move(r));
  });
}

void ConsumerGroup::classic_sync(const SyncGroupParams& p, SyncCallback done) {
  ErrorCode error = ErrorCode::kNone;
  const ConsumerMember* m = classic_member(p.member_id, p.group_instance_id, &error);
  if (m && !m->classic) error = ErrorCode::kUnknownMemberId;  // "does not use the classic protocol"
  else if (m && p.generation_id != m->member_epoch) error = ErrorCode::kIllegalGeneration;
  else if (m && p.protocol_type && *p.protocol_type != "consumer") error = ErrorCode::kInconsistentGroupProtocol;
  else if (m && p.protocol_name && *p.protocol_name != m->classic->protocols.front().name)
    error = ErrorCode::kInconsistentGroupProtocol;
  else if (m && assignment_epoch_ > m->member_epoch && m->state != ConsumerMemberState::kUnrevokedPartitions) {
    // A newer target: the member rejoins to catch up (Kafka's throwIfRebalanceInProgress).
    host_->arm_classic(m->member_id, Deadline::kJoin, m->rebalance_timeout_ms);
    error = ErrorCode::kRebalanceInProgress;
  }
  if (error != ErrorCode::kNone) return host_->answer(std::move(done), sync_error(error));
  host_->cancel_classic(m->member_id, Deadline::kSync);
  host_->arm_session(m->member_id, session_timeout_of(*m));
  SyncGroupResult r;
  r.protocol_type = p.protocol_type;
  r.protocol_name = p.protocol_name;
  const int16_t version = consumer_protocol_version(m->classic->protocols.front().metadata).value_or(0);
  r.assignment = encode_assignment(partitions_of(m->assigned), version);
  host_->answer(std::move(done), std::move(r));
}

ErrorCode ConsumerGroup::classic_heartbeat(const std::string& member_id, const std::optional<std::string>& instance_id,
                                           int32_t generation_id) {
  ErrorCode error = ErrorCode::kNone;
  const ConsumerMember* m = classic_member(member_id, instance_id, &error);
  if (!m) return error;
  if (!m->classic) return ErrorCode::kUnknownMemberId;
  if (generation_id != m->member_epoch) return ErrorCode::kIllegalGeneration;
  host_->arm_session(m->member_id, session_timeout_of(*m));
  // Kafka's classicGroupHeartbeatToConsumerGroup: rejoin for a newer target, to revoke, or to
  // collect partitions that became free.
  if (m->member_epoch < assignment_epoch_ || m->state == ConsumerMemberState::kUnrevokedPartitions ||
      (m->state == ConsumerMemberState::kUnreleasedPartitions && !waiting_on_unreleased(*m))) {
    host_->arm_classic(m->member_id, Deadline::kJoin, m->rebalance_timeout_ms);
    return ErrorCode::kRebalanceInProgress;
  }
  return ErrorCode::kNone;
}

// Kafka's classicGroupLeaveToConsumerGroup: any member may be removed this way, by member id or
// by instance id (an administrator's removal names no member id); the group epoch moves once.
LeaveGroupResult ConsumerGroup::classic_leave(const std::vector<LeavingMember>& leaving) {
  LeaveGroupResult out;
  std::set<std::string> fenced;
  for (const auto& l : leaving) {
    const ConsumerMember* m = nullptr;
    ErrorCode e = ErrorCode::kNone;
    if (!l.group_instance_id) {
      auto it = members_.find(l.member_id);
      if (it == members_.end()) e = ErrorCode::kUnknownMemberId;
      else m = &it->second;
    } else {
      m = static_member(l.group_instance_id);
      if (!m) e = ErrorCode::kUnknownMemberId;
      else if (!l.member_id.empty() && m->member_id != l.member_id) e = ErrorCode::kFencedInstanceId, m = nullptr;
    }
    out.member_errors.push_back(e);
    if (m) {
      spdlog::info("group={} member {} leaves the consumer group through LeaveGroup; client reason: {}", esc(id()),
                   esc(m->member_id), esc(l.reason.empty() ? "not provided" : l.reason, 256));
      fenced.insert(m->member_id);
    }
  }
  if (fenced.empty()) return out;
  epoch_before_removal_ = group_epoch_;
  ++group_epoch_;
  for (const auto& member_id : fenced) remove_member(member_id, "left the group", false);
  host_->persist(*this, nullptr, nullptr);
  return out;
}

void ConsumerGroup::on_classic_timeout(const std::string& member_id, const char* why) {
  if (!members_.count(member_id)) return;
  remove_member(member_id, why);
  host_->persist(*this, nullptr, nullptr);
}

}  // namespace kib::bridge
