// A classic group's state: its members and protocols, its transitions, who it accepts as a
// member of its generation, what DescribeGroups shows of it and its offsets rules. The requests
// and the rebalance they drive are in classic_group_rebalance.cc.
#include "bridge/groups/classic_group.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "bridge/groups/consumer_protocol.h"
#include "common/text.h"

namespace kib::bridge {

const char* group_state_name(GroupState s) {
  switch (s) {
    case GroupState::kEmpty:
      return "Empty";
    case GroupState::kPreparingRebalance:
      return "PreparingRebalance";
    case GroupState::kCompletingRebalance:
      return "CompletingRebalance";
    case GroupState::kStable:
      return "Stable";
    case GroupState::kDead:
      return "Dead";
  }
  return "Dead";
}

bool is_valid_transition(GroupState from, GroupState to) {
  switch (to) {
    case GroupState::kEmpty:
      return from == GroupState::kPreparingRebalance;
    case GroupState::kPreparingRebalance:
      return from == GroupState::kStable || from == GroupState::kCompletingRebalance || from == GroupState::kEmpty;
    case GroupState::kCompletingRebalance:
      return from == GroupState::kPreparingRebalance;
    case GroupState::kStable:
      return from == GroupState::kCompletingRebalance;
    case GroupState::kDead:
      return true;
  }
  return false;
}

const Bytes* ClassicGroupMember::metadata(const std::string& protocol) const {
  for (const auto& p : protocols)
    if (p.name == protocol) return &p.metadata;
  return nullptr;
}

bool ClassicGroupMember::matches(const std::vector<GroupProtocol>& other) const {
  if (other.size() != protocols.size()) return false;
  for (size_t i = 0; i < other.size(); ++i)
    if (other[i].name != protocols[i].name || other[i].metadata != protocols[i].metadata) return false;
  return true;
}

ClassicGroup::ClassicGroup(std::string id, const GroupCoordinatorOptions& options,
                           std::unique_ptr<ClassicGroupHost> host)
    : Group(std::move(id)), options_(options), host_(std::move(host)), state_since_ms_(host_->now_ms()) {}

ClassicGroup::~ClassicGroup() = default;

void ClassicGroup::restore(int32_t generation, const std::string& protocol_type, int64_t state_since_ms) {
  generation_ = generation;
  if (!protocol_type.empty()) protocol_type_ = protocol_type;
  state_since_ms_ = state_since_ms;
  subscribed_topics_ = compute_subscribed_topics();
}

void ClassicGroup::transition(GroupState to) {
  // Kafka throws here (assertValidTransition). Every caller checks the state first, so this is a
  // bug of the bridge's: it is logged loudly, and the group follows the caller as it did before.
  if (!is_valid_transition(state_, to))
    spdlog::error("group={}: invalid state transition from {} to {}", esc(id()), group_state_name(state_),
                  group_state_name(to));
  state_ = to;
  state_since_ms_ = host_->now_ms();
}

// ---------------------------------------------------------------------------------------------
// Members and protocols

ClassicGroupMember* ClassicGroup::get(const std::string& member_id) const {
  auto it = members_.find(member_id);
  return it == members_.end() ? nullptr : it->second.get();
}

bool ClassicGroup::has_all_members_joined() const {
  return static_cast<size_t>(num_awaiting_join_) == members_.size() && pending_members_.empty();
}

int32_t ClassicGroup::rebalance_timeout_ms() const {
  int32_t t = 0;
  for (const auto& [_, m] : members_) t = std::max(t, m->rebalance_timeout_ms);
  return t;
}

void ClassicGroup::inc_protocols(const ClassicGroupMember& m) {
  for (const auto& p : m.protocols) ++supported_protocols_[p.name];
}

void ClassicGroup::dec_protocols(const ClassicGroupMember& m) {
  for (const auto& p : m.protocols)
    if (--supported_protocols_[p.name] <= 0) supported_protocols_.erase(p.name);
}

bool ClassicGroup::supports_protocols(const std::string& type, const std::vector<GroupProtocol>& protocols) const {
  if (state_ == GroupState::kEmpty) return !type.empty() && !protocols.empty();
  if (!protocol_type_ || *protocol_type_ != type) return false;
  for (const auto& p : protocols) {
    auto it = supported_protocols_.find(p.name);
    if (it != supported_protocols_.end() && static_cast<size_t>(it->second) == members_.size()) return true;
  }
  return false;
}

// Every member votes for its most preferred protocol that all members support; the most votes
// win (ties: the first protocol voted for, walking members in id order).
std::string ClassicGroup::select_protocol() const {
  std::set<std::string> candidates;
  for (const auto& [name, n] : supported_protocols_)
    if (static_cast<size_t>(n) == members_.size()) candidates.insert(name);
  std::vector<std::pair<std::string, int>> votes;
  for (const auto& [_, m] : members_) {
    for (const auto& p : m->protocols) {
      if (!candidates.count(p.name)) continue;
      auto it = std::find_if(votes.begin(), votes.end(), [&](const auto& v) { return v.first == p.name; });
      if (it == votes.end())
        votes.emplace_back(p.name, 1);
      else
        ++it->second;
      break;
    }
  }
  auto best =
      std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == votes.end() ? std::string() : best->first;
}

std::optional<std::set<std::string>> ClassicGroup::compute_subscribed_topics() const {
  if (!protocol_type_ || *protocol_type_ != kConsumerProtocolType) return std::nullopt;
  if (members_.empty()) return std::set<std::string>{};
  if (!protocol_name_) return std::nullopt;
  std::set<std::string> topics;
  for (const auto& [_, m] : members_) {
    const Bytes* md = m->metadata(*protocol_name_);
    if (!md) return std::nullopt;
    auto t = subscribed_topics(*md);
    if (!t) {
      spdlog::warn("group={} member={}: consumer protocol subscription does not parse; subscribed topics unknown",
                   esc(id()), esc(m->member_id));
      return std::nullopt;
    }
    topics.insert(t->begin(), t->end());
  }
  return topics;
}

std::vector<JoinGroupResult::Member> ClassicGroup::current_member_metadata() const {
  std::vector<JoinGroupResult::Member> out;
  out.reserve(members_.size());
  for (const auto& [member_id, m] : members_) {
    const Bytes* md = protocol_name_ ? m->metadata(*protocol_name_) : nullptr;
    out.push_back({member_id, m->group_instance_id, md ? *md : Bytes{}});
  }
  return out;
}

JoinGroupResult ClassicGroup::current_generation_result(const ClassicGroupMember& m, bool with_members) const {
  JoinGroupResult r;
  r.member_id = m.member_id;
  r.generation_id = generation_;
  r.protocol_type = protocol_type_;
  r.protocol_name = protocol_name_;
  r.leader_id = leader_id_.value_or("");
  if (with_members) r.members = current_member_metadata();
  return r;
}

std::optional<ErrorCode> ClassicGroup::validate_current_member(
    const std::string& member_id, const std::optional<std::string>& group_instance_id) const {
  if (group_instance_id) {
    auto it = static_members_.find(*group_instance_id);
    if (it == static_members_.end()) return ErrorCode::kUnknownMemberId;
    if (it->second != member_id) {
      spdlog::info("group={} member={} of static instance {} is fenced by member {}", esc(id()), esc(member_id),
                   esc(*group_instance_id), esc(it->second));
      return ErrorCode::kFencedInstanceId;
    }
    return std::nullopt;
  }
  if (!has(member_id)) return ErrorCode::kUnknownMemberId;
  return std::nullopt;
}

void ClassicGroup::add_member(std::unique_ptr<ClassicGroupMember> m, JoinCallback done) {
  const std::string member_id = m->member_id;
  if (m->group_instance_id) static_members_[*m->group_instance_id] = member_id;
  if (members_.empty()) protocol_type_ = m->protocol_type;
  if (!leader_id_) leader_id_ = member_id;
  inc_protocols(*m);
  m->awaiting_join = std::move(done);
  if (m->awaiting_join) ++num_awaiting_join_;
  erase_pending_member(member_id);
  members_[member_id] = std::move(m);
}

void ClassicGroup::update_member(ClassicGroupMember& m, std::vector<GroupProtocol> protocols,
                                 int32_t rebalance_timeout_ms, int32_t session_timeout_ms, JoinCallback done) {
  dec_protocols(m);
  m.protocols = std::move(protocols);
  inc_protocols(m);
  m.rebalance_timeout_ms = rebalance_timeout_ms;
  m.session_timeout_ms = session_timeout_ms;
  if (m.awaiting_join && done) {
    // A second JoinGroup from the same member supersedes the first; answer the first so the
    // responses queued behind it on its connection are not held back.
    host_->answer(std::move(m.awaiting_join), join_error(ErrorCode::kRebalanceInProgress, m.member_id));
  } else if (!m.awaiting_join && done) {
    ++num_awaiting_join_;
  } else if (m.awaiting_join && !done) {
    --num_awaiting_join_;
  }
  m.awaiting_join = std::move(done);
}

ClassicGroupMember& ClassicGroup::replace_static_member(const std::string& instance_id,
                                                        const std::string& old_member_id,
                                                        const std::string& new_member_id) {
  auto node = members_.extract(old_member_id);
  ClassicGroupMember& m = *node.mapped();
  // Fence the old incarnation at once if it still awaits an answer.
  if (m.awaiting_join) answer_join(m, join_error(ErrorCode::kFencedInstanceId, old_member_id));
  answer_sync(m, sync_error(ErrorCode::kFencedInstanceId));
  // The session deadline is the old member id's; the caller arms the new one's.
  host_->cancel_heartbeat(old_member_id);
  m.member_id = new_member_id;
  node.key() = new_member_id;
  members_.insert(std::move(node));
  if (is_leader(old_member_id)) leader_id_ = new_member_id;
  static_members_[instance_id] = new_member_id;
  if (pending_sync_members_.erase(old_member_id)) pending_sync_members_.insert(new_member_id);
  return m;
}

void ClassicGroup::remove_member(const std::string& member_id) {
  auto it = members_.find(member_id);
  if (it != members_.end()) {
    ClassicGroupMember& m = *it->second;
    // A member still awaiting an answer gets one (UNKNOWN_MEMBER_ID: rejoin from scratch).
    answer_join(m, join_error(ErrorCode::kUnknownMemberId, ""));
    answer_sync(m, sync_error(ErrorCode::kUnknownMemberId));
    dec_protocols(m);
    if (m.group_instance_id) static_members_.erase(*m.group_instance_id);
    members_.erase(it);
    host_->cancel_heartbeat(member_id);
  }
  if (is_leader(member_id)) {
    if (members_.empty())
      leader_id_.reset();
    else
      leader_id_ = members_.begin()->first;
  }
  erase_pending_member(member_id);
  pending_sync_members_.erase(member_id);
}

void ClassicGroup::add_pending_member(const std::string& member_id, int32_t session_timeout_ms) {
  host_->arm_pending_member(member_id, session_timeout_ms);
  pending_members_.insert(member_id);
}

void ClassicGroup::erase_pending_member(const std::string& member_id) {
  if (pending_members_.erase(member_id)) host_->cancel_pending_member(member_id);
}

void ClassicGroup::answer_join(ClassicGroupMember& m, JoinGroupResult r) {
  if (!m.awaiting_join) return;
  auto cb = std::move(m.awaiting_join);
  m.awaiting_join = nullptr;
  --num_awaiting_join_;
  host_->answer(std::move(cb), std::move(r));
}

bool ClassicGroup::answer_sync(ClassicGroupMember& m, SyncGroupResult r) {
  if (!m.awaiting_sync) return false;
  auto cb = std::move(m.awaiting_sync);
  m.awaiting_sync = nullptr;
  host_->answer(std::move(cb), std::move(r));
  return true;
}

void ClassicGroup::schedule_heartbeat_expiration(const ClassicGroupMember& m, int64_t timeout_ms) {
  host_->arm_heartbeat(m.member_id, timeout_ms);
}

// ---------------------------------------------------------------------------------------------
// What the coordinator asks of every group (group.h)

GroupDescription ClassicGroup::describe() const {
  GroupDescription d;
  d.group_id = id();
  d.state = group_state_name(state_);
  d.protocol_type = protocol_type_.value_or("");
  bool stable = state_ == GroupState::kStable && protocol_name_;
  if (stable) d.protocol_name = *protocol_name_;
  for (const auto& [member_id, m] : members_) {
    GroupMemberDescription md{member_id, m->group_instance_id, m->client_id, m->client_host, {}, {}};
    if (stable) {
      if (const Bytes* b = m->metadata(*protocol_name_)) md.metadata = *b;
      md.assignment = m->assignment;
    }
    d.members.push_back(std::move(md));
  }
  return d;
}

bool ClassicGroup::is_empty() const {
  return state_ == GroupState::kEmpty && members_.empty() && pending_members_.empty();
}

std::optional<ErrorCode> ClassicGroup::validate_delete_group() const {
  if (state_ != GroupState::kEmpty) return ErrorCode::kNonEmptyGroup;
  return std::nullopt;
}

std::optional<ErrorCode> ClassicGroup::validate_offset_commit(const OffsetCommitParams& p) const {
  // Generation -1 comes from the admin client or a consumer without group management: fine
  // while the group has no members.
  if (p.generation_id < 0 && state_ == GroupState::kEmpty) return std::nullopt;
  if (p.generation_id >= 0 || !p.member_id.empty() || p.group_instance_id) {
    if (auto err = validate_current_member(p.member_id, p.group_instance_id)) return err;
    if (p.generation_id != generation_) return ErrorCode::kIllegalGeneration;
  } else if (!p.transactional && state_ != GroupState::kEmpty) {
    // Without member id and generation (OffsetCommit v0) only an empty group takes commits; a
    // transactional commit may come from a producer that was given no group metadata.
    return ErrorCode::kUnknownMemberId;
  }
  // The member knows the new generation but has no assignment yet. Not asked of a transactional
  // commit: its offsets only count once the transaction commits.
  if (!p.transactional && state_ == GroupState::kCompletingRebalance) return ErrorCode::kRebalanceInProgress;
  return std::nullopt;
}

void ClassicGroup::on_offset_commit(const OffsetCommitParams& p) {
  // Commits keep a member's session alive, as heartbeats do.
  if (state_ == GroupState::kStable || state_ == GroupState::kPreparingRebalance) {
    if (ClassicGroupMember* m = get(p.member_id)) schedule_heartbeat_expiration(*m, m->session_timeout_ms);
  }
}

// A consumer group in a rebalance or Stable keeps the offsets of the topics it subscribes to;
// any other group that is not empty keeps all of them.
std::optional<ErrorCode> ClassicGroup::validate_offset_delete() const {
  bool consumer = protocol_type_ && *protocol_type_ == kConsumerProtocolType;
  if (state_ != GroupState::kEmpty && !consumer) return ErrorCode::kNonEmptyGroup;
  return std::nullopt;
}

// Kafka's ClassicGroup.isSubscribedToTopic: when unknown, a consumer group is assumed to be. An
// empty group subscribes to nothing.
bool ClassicGroup::is_subscribed_to_topic(const std::string& topic) const {
  if (state_ == GroupState::kEmpty) return false;
  if (subscribed_topics_) return subscribed_topics_->count(topic) != 0;
  return protocol_type_ && *protocol_type_ == kConsumerProtocolType;
}

// Kafka's ClassicGroup.offsetExpirationCondition: an empty group's offsets expire retention
// after it became empty; a stable consumer group's offsets of topics it no longer subscribes to
// expire retention after their commit; a group without protocol (offset storage only) expires
// each offset retention after its commit.
OffsetExpiration ClassicGroup::offset_expiration() const {
  using Clock = OffsetExpiration::Clock;
  if (!protocol_type_) return {Clock::kSinceCommit, 0, nullptr};
  if (state_ == GroupState::kEmpty) return {Clock::kSinceEmpty, state_since_ms_, nullptr};
  if (*protocol_type_ == kConsumerProtocolType && subscribed_topics_ && state_ == GroupState::kStable)
    return {Clock::kSinceCommit, 0, &*subscribed_topics_};
  return {Clock::kNone, 0, nullptr};
}

// As Kafka's coordinator does when it unloads a group: waiting JoinGroup and SyncGroup requests
// get NOT_COORDINATOR now, so their connections can drain.
void ClassicGroup::adopt(int32_t generation, std::vector<std::unique_ptr<ClassicGroupMember>> members,
                         const std::string* rebalance_reason) {
  generation_ = generation;
  protocol_type_ = "consumer";
  state_ = GroupState::kStable;
  state_since_ms_ = host_->now_ms();
  for (auto& m : members) {
    if (m->group_instance_id) static_members_[*m->group_instance_id] = m->member_id;
    if (!leader_id_) leader_id_ = m->member_id;
    inc_protocols(*m);
    const std::string member_id = m->member_id;
    members_[member_id] = std::move(m);
  }
  protocol_name_ = select_protocol();
  subscribed_topics_ = compute_subscribed_topics();
  for (const auto& [_, m] : members_) schedule_heartbeat_expiration(*m, m->session_timeout_ms);
  if (rebalance_reason) prepare_rebalance(*rebalance_reason);
}

void ClassicGroup::release_waiting(ErrorCode error) {
  for (auto& [_, m] : members_) {
    answer_join(*m, join_error(error, m->member_id));
    answer_sync(*m, sync_error(error));
  }
}

void ClassicGroup::unload() {
  for (auto& [_, m] : members_) {
    answer_join(*m, join_error(ErrorCode::kNotCoordinator, m->member_id));
    answer_sync(*m, sync_error(ErrorCode::kNotCoordinator));
  }
}

}  // namespace kib::bridge
