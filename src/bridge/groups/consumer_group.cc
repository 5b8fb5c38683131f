#include "bridge/groups/consumer_group.h"

#include <spdlog/spdlog.h>

#include <re2/re2.h>

#include <algorithm>
#include <random>

#include "common/text.h"

namespace kib::bridge {

namespace {

using Owned = std::optional<std::map<std::string, std::set<int32_t>>>;

// Kafka's isSubset: every partition the member reports owning is assigned to it.
bool is_subset(const Owned& owned, const EpochAssignment& assigned) {
  if (!owned) return false;
  for (const auto& [topic, parts] : *owned) {
    auto it = assigned.find(topic);
    for (int32_t p : parts)
      if (it == assigned.end() || !it->second.count(p)) return false;
  }
  return true;
}

void update_member_epoch(ConsumerMember& m, int32_t epoch) {
  m.previous_member_epoch = m.member_epoch;
  m.member_epoch = epoch;
}

}  // namespace

// Kafka's Uuid.randomUuid().toString(): 22 characters of URL-safe base64 of 16 random bytes.
std::string new_member_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (int i = 0; i < 22; ++i) out.push_back(kAlphabet[rng() % 64]);
  return out;
}

std::map<std::string, std::set<int32_t>> partitions_of(const EpochAssignment& a) {
  std::map<std::string, std::set<int32_t>> out;
  for (const auto& [topic, parts] : a)
    for (const auto& [p, _] : parts) out[topic].insert(p);
  return out;
}

const char* consumer_member_state_name(ConsumerMemberState s) {
  switch (s) {
    case ConsumerMemberState::kStable:
      return "stable";
    case ConsumerMemberState::kUnrevokedPartitions:
      return "unrevoked_partitions";
    case ConsumerMemberState::kUnreleasedPartitions:
      return "unreleased_partitions";
  }
  return "stable";
}

std::optional<ConsumerMemberState> consumer_member_state_from_name(const std::string& s) {
  for (auto st : {ConsumerMemberState::kStable, ConsumerMemberState::kUnrevokedPartitions,
                  ConsumerMemberState::kUnreleasedPartitions})
    if (s == consumer_member_state_name(st)) return st;
  return std::nullopt;
}

const char* consumer_group_state_name(ConsumerGroupState s) {
  switch (s) {
    case ConsumerGroupState::kEmpty:
      return "Empty";
    case ConsumerGroupState::kAssigning:
      return "Assigning";
    case ConsumerGroupState::kReconciling:
      return "Reconciling";
    case ConsumerGroupState::kStable:
      return "Stable";
  }
  return "Empty";
}

ConsumerGroup::ConsumerGroup(std::string id, ConsumerGroupOptions options, std::unique_ptr<ConsumerGroupHost> host)
    : Group(std::move(id)), options_(std::move(options)), host_(std::move(host)) {
  empty_since_ms_ = host_->now_ms();
}

ConsumerGroup::~ConsumerGroup() = default;

// ---------------------------------------------------------------------------------------------
// State

ConsumerGroupState ConsumerGroup::state() const {
  if (members_.empty()) return ConsumerGroupState::kEmpty;
  if (group_epoch_ > assignment_epoch_) return ConsumerGroupState::kAssigning;
  for (const auto& [_, m] : members_)
    if (m.member_epoch != assignment_epoch_ || m.state != ConsumerMemberState::kStable)
      return ConsumerGroupState::kReconciling;
  return ConsumerGroupState::kStable;
}

const MemberTargetAssignment* ConsumerGroup::target(const std::string& member_id) const {
  auto it = target_.find(member_id);
  return it == target_.end() ? nullptr : &it->second;
}

void ConsumerGroup::restore(const ConsumerGroupSnapshot& s) {
  group_epoch_ = s.group_epoch;
  assignment_epoch_ = s.assignment_epoch;
  subscribed_partitions_ = s.subscribed_partitions;
  members_.clear();
  target_.clear();
  owners_.clear();
  for (const auto& [m, t] : s.members) {
    members_[m.member_id] = m;
    target_[m.member_id] = t;
    update_owners(nullptr, &m);
    host_->arm_session(m.member_id, session_timeout_of(m));
    if (m.state == ConsumerMemberState::kUnrevokedPartitions && m.rebalance_timeout_ms > 0)
      host_->arm_rebalance(m.member_id, m.member_epoch, m.rebalance_timeout_ms);
  }
  empty_since_ms_ = members_.empty() ? host_->now_ms() : -1;
}

std::pair<ConsumerMember, MemberTargetAssignment> ConsumerGroup::member_snapshot(const std::string& member_id) const {
  auto it = members_.find(member_id);
  const MemberTargetAssignment* t = target(member_id);
  return {it == members_.end() ? ConsumerMember{} : it->second, t ? *t : MemberTargetAssignment{}};
}

ConsumerGroupSnapshot ConsumerGroup::snapshot() const {
  ConsumerGroupSnapshot s;
  s.group_id = id();
  s.group_epoch = group_epoch_;
  s.assignment_epoch = assignment_epoch_;
  s.subscribed_partitions = subscribed_partitions_;
  for (const auto& [id, m] : members_) {
    const MemberTargetAssignment* t = target(id);
    s.members.emplace_back(m, t ? *t : MemberTargetAssignment{});
  }
  return s;
}

// The topics a member subscribes to that exist: its names and what its regular expression
// matched at the last resolution (an unresolved one matches nothing, as Kafka treats it).
std::set<std::string> ConsumerGroup::subscribed_topics(const ConsumerMember& m) const {
  std::set<std::string> out;
  for (const auto& t : m.subscribed_topic_names)
    if (host_->partitions(t)) out.insert(t);
  if (!m.subscribed_topic_regex.empty())
    if (auto it = resolved_.find(m.subscribed_topic_regex); it != resolved_.end())
      for (const auto& t : it->second)
        if (host_->partitions(t)) out.insert(t);
  return out;
}

std::map<std::string, int32_t> ConsumerGroup::subscribed_partitions() const {
  std::map<std::string, int32_t> out;
  for (const auto& [_, m] : members_)
    for (const auto& t : subscribed_topics(m))
      if (!out.count(t))
        if (auto n = host_->partitions(t)) out[t] = *n;
  return out;
}

namespace {

// Kafka compiles with RE2/J and matches whole topic names (Pattern.matcher(name).matches()). RE2
// is linear in the name's length and bounded in memory, so no expression can stall the loop.
RE2::Options regex_options() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(1 << 20);
  return o;
}

}  // namespace

// Kafka's refreshRegularExpressions, done on the heartbeat that needs it: an expression no
// resolution knows is resolved at once, the others again after the refresh interval (topics
// created or deleted meanwhile are picked up then). Topics the heartbeat's principal may not
// DESCRIBE are left out, as Kafka's filterTopicDescribeAuthorizedTopics does.
bool ConsumerGroup::refresh_regexes(bool force, const std::function<bool(const std::string&)>& may_describe) {
  std::set<std::string> wanted;
  for (const auto& [_, m] : members_)
    if (!m.subscribed_topic_regex.empty()) wanted.insert(m.subscribed_topic_regex);
  bool changed = std::erase_if(resolved_, [&](const auto& kv) { return !wanted.count(kv.first); }) > 0;
  if (wanted.empty()) return changed;
  const int64_t now = host_->now_ms();
  bool stale = force || regexes_resolved_ms_ < 0 || now - regexes_resolved_ms_ >= options_.regex_refresh_interval_ms;
  for (const auto& r : wanted) stale = stale || !resolved_.count(r);
  if (!stale) return changed;
  const std::vector<std::string> names = host_->topic_names();
  for (const auto& r : wanted) {
    RE2 re(r, regex_options());
    std::set<std::string> topics;
    if (re.ok())
      for (const auto& n : names)
        if (RE2::FullMatch(n, re) && (!may_describe || may_describe(n))) topics.insert(n);
    auto it = resolved_.find(r);
    if (it == resolved_.end() || it->second != topics) {
      resolved_[r] = std::move(topics);
      changed = true;
    }
  }
  regexes_resolved_ms_ = now;
  return changed;
}

static std::optional<std::string> regex_error(const std::string& regex, size_t max_bytes) {
  if (regex.size() > max_bytes)
    return "SubscribedTopicRegex is longer than the " + std::to_string(max_bytes) +
           " bytes this coordinator accepts ([groups] consumer_max_regex_bytes).";
  RE2 re(regex, regex_options());
  if (!re.ok()) return "SubscribedTopicRegex `" + regex + "` is not a valid regular expression: " + re.error() + ".";
  return std::nullopt;
}

// Kafka's computePreferredServerAssignor: the assignor most members asked for (the first by
// name on a tie), else the first configured.
std::string ConsumerGroup::preferred_assignor() const {
  std::map<std::string, int> votes;
  for (const auto& [_, m] : members_)
    if (m.server_assignor) ++votes[*m.server_assignor];
  std::string best;
  int most = 0;
  for (const auto& [name, n] : votes)
    if (n > most) best = name, most = n;
  return most > 0 ? best : options_.assignors.front();
}

// Kafka's maybeUpdateTargetAssignment (TargetAssignmentBuilder): a group epoch ahead of the
// target's gets a new target, every member's computed by the group's assignor from the
// subscriptions and the current targets (for stickiness).
void ConsumerGroup::maybe_update_target() {
  if (group_epoch_ <= assignment_epoch_) return;
  std::vector<AssignorMember> in;
  in.reserve(members_.size());
  for (const auto& [id, m] : members_) {
    AssignorMember a;
    a.member_id = id;
    a.instance_id = m.instance_id;
    a.subscribed_topics = subscribed_topics(m);
    if (const MemberTargetAssignment* t = target(id)) a.assignment = *t;
    in.push_back(std::move(a));
  }
  subscribed_partitions_ = subscribed_partitions();
  target_ = assign(preferred_assignor(), in, subscribed_partitions_);
  assignment_epoch_ = group_epoch_;
}

int32_t ConsumerGroup::current_partition_epoch(const std::string& topic, int32_t partition) const {
  auto it = owners_.find({topic, partition});
  return it == owners_.end() ? -1 : it->second;
}

void ConsumerGroup::update_owners(const ConsumerMember* before, const ConsumerMember* after) {
  if (before)
    for (const EpochAssignment* a : {&before->assigned, &before->pending_revocation})
      for (const auto& [topic, parts] : *a)
        for (const auto& [p, _] : parts) {
          auto it = owners_.find({topic, p});
          if (it != owners_.end() && it->second == before->member_epoch) owners_.erase(it);
        }
  if (after)
    for (const EpochAssignment* a : {&after->assigned, &after->pending_revocation})
      for (const auto& [topic, parts] : *a)
        for (const auto& [p, _] : parts) owners_[{topic, p}] = after->member_epoch;
}

bool ConsumerGroup::owns_any(const Owned& owned, const EpochAssignment& revoking) const {
  if (!owned) return true;
  for (const auto& [topic, parts] : *owned) {
    auto it = revoking.find(topic);
    if (it == revoking.end()) continue;
    for (int32_t p : parts)
      if (it->second.count(p)) return true;
  }
  return false;
}

// CurrentAssignmentBuilder.updateCurrentAssignment: the member without the topics it no longer
// subscribes to (to revoke first, if it still owns them).
ConsumerMember ConsumerGroup::drop_unsubscribed(const ConsumerMember& m, const std::set<std::string>& subscribed,
                                                const Owned& owned) const {
  EpochAssignment assigned = m.assigned, pending = m.pending_revocation;
  if (subscribed.empty() && m.pending_revocation.empty()) {
    pending = m.assigned;
    assigned.clear();
  } else {
    for (const auto& [topic, parts] : m.assigned)
      if (!subscribed.count(topic)) {
        assigned.erase(topic);
        for (const auto& [p, e] : parts) pending[topic][p] = e;
      }
  }
  if (assigned == m.assigned) return m;
  ConsumerMember out = m;
  if (!pending.empty() && owns_any(owned, pending)) out.state = ConsumerMemberState::kUnrevokedPartitions;
  if (out.state == ConsumerMemberState::kUnrevokedPartitions) out.pending_revocation = pending;
  update_member_epoch(out, m.member_epoch);
  out.assigned = std::move(assigned);
  return out;
}

// Kafka's CurrentAssignmentBuilder: one step of the member towards its target.
ConsumerMember ConsumerGroup::reconcile(const ConsumerMember& m, bool subscription_changed, const Owned& owned) const {
  const std::set<std::string> subscribed = subscribed_topics(m);
  static const MemberTargetAssignment kNone;
  const MemberTargetAssignment* t = target(m.member_id);
  const MemberTargetAssignment& target_of = t ? *t : kNone;

  auto update_current = [&] { return drop_unsubscribed(m, subscribed, owned); };

  // computeNextAssignment.
  auto compute_next = [&]() -> ConsumerMember {
    bool unreleased = false;
    EpochAssignment assigned, revoking;
    std::map<std::string, std::set<int32_t>> to_assign;
    std::set<std::string> topics;
    for (const auto& [topic, _] : target_of) topics.insert(topic);
    for (const auto& [topic, _] : m.assigned) topics.insert(topic);
    for (const auto& topic : topics) {
      std::set<int32_t> target;
      if (subscribed.count(topic))
        if (auto it = target_of.find(topic); it != target_of.end()) target = it->second;
      auto cur_it = m.assigned.find(topic);
      const std::map<int32_t, int32_t> cur = cur_it == m.assigned.end() ? std::map<int32_t, int32_t>{} : cur_it->second;
      for (const auto& [p, e] : cur) (target.count(p) ? assigned : revoking)[topic][p] = e;
      auto pending_it = m.pending_revocation.find(topic);
      for (int32_t p : target) {
        if (cur.count(p)) continue;
        const bool mine = pending_it != m.pending_revocation.end() && pending_it->second.count(p);
        if (current_partition_epoch(topic, p) != -1 && !mine) {
          unreleased = true;
          continue;
        }
        to_assign[topic].insert(p);
      }
    }
    ConsumerMember out = m;
    if (!revoking.empty() && owns_any(owned, revoking)) {
      out.state = ConsumerMemberState::kUnrevokedPartitions;
      update_member_epoch(out, m.member_epoch);
      out.assigned = std::move(assigned);
      out.pending_revocation = std::move(revoking);
      return out;
    }
    for (const auto& [topic, parts] : to_assign)
      for (int32_t p : parts) assigned[topic][p] = assignment_epoch_;
    out.state = unreleased ? ConsumerMemberState::kUnreleasedPartitions : ConsumerMemberState::kStable;
    update_member_epoch(out, assignment_epoch_);
    out.assigned = std::move(assigned);
    out.pending_revocation.clear();
    return out;
  };

  switch (m.state) {
    case ConsumerMemberState::kStable:
      if (m.member_epoch != assignment_epoch_) return compute_next();
      if (subscription_changed) return update_current();
      return m;
    case ConsumerMemberState::kUnrevokedPartitions:
      if (owns_any(owned, m.pending_revocation)) return subscription_changed ? update_current() : m;
      return compute_next();
    case ConsumerMemberState::kUnreleasedPartitions:
      return compute_next();
  }
  return m;
}

// ---------------------------------------------------------------------------------------------
// ConsumerGroupHeartbeat

ConsumerHeartbeatResult ConsumerGroup::fail(ErrorCode e, std::string message) const {
  ConsumerHeartbeatResult r;
  r.error = e;
  r.message = std::move(message);
  return r;
}

// Kafka's throwIfConsumerGroupMemberEpochIsInvalid: why the heartbeat's epoch is fenced, if it is.
std::optional<std::string> ConsumerGroup::stale_epoch(const ConsumerHeartbeatParams& p, const ConsumerMember& m) const {
  if (p.member_epoch == 0) return std::nullopt;
  if (p.member_epoch > m.member_epoch)
    return "The consumer group member has a greater member epoch (" + std::to_string(p.member_epoch) +
           ") than the one known by the group coordinator (" + std::to_string(m.member_epoch) +
           "). The member must abandon all its partitions and rejoin.";
  if (p.member_epoch < m.member_epoch && (p.member_epoch != m.previous_member_epoch || !is_subset(p.owned, m.assigned)))
    return "The consumer group member has a smaller member epoch (" + std::to_string(p.member_epoch) +
           ") than the one known by the group coordinator (" + std::to_string(m.member_epoch) +
           "). The member must abandon all its partitions and rejoin.";
  return std::nullopt;
}

// Kafka's getOrMaybeSubscribe{Dynamic,Static}ConsumerGroupMember: the member the heartbeat is
// about (a copy), new or known, or why there is none.
ConsumerGroup::Lookup ConsumerGroup::find_member(const ConsumerHeartbeatParams& p, const std::string& member_id) const {
  Lookup l;
  const bool joining = p.member_epoch == 0;
  auto fenced = [&](const ConsumerMember& m) {
    if (auto why = stale_epoch(p, m)) {
      l.error = ErrorCode::kFencedMemberEpoch;
      l.message = *why;
    }
  };
  auto known = members_.find(member_id);
  if (!p.instance_id) {
    if (known == members_.end()) {
      if (!joining) {
        l.error = ErrorCode::kUnknownMemberId;
        l.message = "Member " + member_id + " is not a member of group " + id() + ".";
        return l;
      }
      l.member.member_id = member_id;
      l.created = true;
      return l;
    }
    fenced(known->second);
    l.member = known->second;
    return l;
  }
  const ConsumerMember* holder = static_member(p.instance_id);
  if (joining) {
    if (!holder) {
      if (known != members_.end()) {
        l.member = known->second;
      } else {
        l.member.member_id = member_id;
        l.created = true;
      }
      return l;
    }
    // A classic member's instance id is taken over at once (Kafka replaces it whatever protocol
    // the new incarnation speaks); a consumer-protocol one must have left with epoch -2.
    if (holder->member_epoch != -2 && !holder->classic) {
      l.error = ErrorCode::kUnreleasedInstanceId;
      l.message = "Static member " + member_id + " with instance id " + *p.instance_id +
                  " cannot join the group because the instance id is owned by " + holder->member_id + " member.";
      return l;
    }
    l.member = *holder;
    l.member.member_id = member_id;
    l.member.member_epoch = 0;
    l.member.previous_member_epoch = 0;
    if (holder->member_id != member_id) l.replaced = *holder;
    return l;
  }
  if (!holder) {
    l.error = ErrorCode::kUnknownMemberId;
    l.message = "Instance id " + *p.instance_id + " is unknown.";
  } else if (holder->member_id != member_id) {
    l.error = ErrorCode::kFencedInstanceId;
    l.message = "Static member " + member_id + " with instance id " + *p.instance_id + " was fenced by member " +
                holder->member_id + ".";
  } else {
    fenced(*holder);
    l.member = *holder;
  }
  return l;
}

// What a heartbeat may not ask for whatever the member's state: too many topic names, a new
// regular expression that does not compile (Kafka's throwIfRegularExpressionIsInvalid).
std::optional<std::pair<ErrorCode, std::string>> ConsumerGroup::refused_subscription(
    const ConsumerHeartbeatParams& p, const ConsumerMember& m) const {
  if (p.subscribed_topic_names && p.subscribed_topic_names->size() > static_cast<size_t>(options_.max_subscribed_topics))
    return std::pair{ErrorCode::kInvalidRequest,
                     "SubscribedTopicNames names " + std::to_string(p.subscribed_topic_names->size()) +
                         " topics, more than the " + std::to_string(options_.max_subscribed_topics) +
                         " this coordinator accepts ([groups] consumer_max_subscribed_topics)."};
  if (p.subscribed_topic_regex && !p.subscribed_topic_regex->empty() &&
      *p.subscribed_topic_regex != m.subscribed_topic_regex && !resolved_.count(*p.subscribed_topic_regex))
    if (auto why = regex_error(*p.subscribed_topic_regex, static_cast<size_t>(options_.max_regex_bytes)))
      return std::pair{ErrorCode::kInvalidRegularExpression, *why};
  return std::nullopt;
}

// The static member's previous incarnation hands over its target and ownership to `member_id`
// (Kafka's replaceMember): no new target, no revocation.
void ConsumerGroup::replace_static_member(const ConsumerMember& old, const std::string& member_id) {
  host_->cancel_session(old.member_id);
  host_->cancel_rebalance(old.member_id);
  auto t = target_.find(old.member_id);
  if (t != target_.end()) {
    target_[member_id] = t->second;
    target_.erase(t);
  }
  members_.erase(old.member_id);
  spdlog::info("group={} static member with instance id {} rejoins as {} replacing {}", esc(id()),
               esc(old.instance_id.value_or("")), esc(member_id), esc(old.member_id));
}

// The member with what the heartbeat changed (null fields: unchanged).
ConsumerMember ConsumerGroup::with_request(const ConsumerMember& m, const ConsumerHeartbeatParams& p) {
  ConsumerMember u = m;
  if (p.instance_id) u.instance_id = p.instance_id;
  if (p.rack_id) u.rack_id = p.rack_id;
  if (p.rebalance_timeout_ms != -1) u.rebalance_timeout_ms = p.rebalance_timeout_ms;
  if (p.server_assignor) u.server_assignor = p.server_assignor;
  if (p.subscribed_topic_names)
    u.subscribed_topic_names = std::set<std::string>(p.subscribed_topic_names->begin(), p.subscribed_topic_names->end());
  if (p.subscribed_topic_regex) u.subscribed_topic_regex = *p.subscribed_topic_regex;
  u.client_id = p.client_id;
  u.client_host = p.client_host;
  u.classic.reset();  // a member heartbeating with ConsumerGroupHeartbeat uses the consumer protocol
  return u;
}

bool ConsumerGroup::heartbeat(const ConsumerHeartbeatParams& p, ConsumerHeartbeatCallback done) {
  if (p.member_epoch < 0) {
    leave(p, std::move(done));
    return true;
  }
  auto refuse = [&](ErrorCode e, std::string message) {
    host_->answer(std::move(done), fail(e, std::move(message)));
    return false;
  };
  const bool joining = p.member_epoch == 0;
  const std::string member_id = p.member_id.empty() ? new_member_id() : p.member_id;
  if (static_cast<int64_t>(members_.size()) >= options_.max_size && !members_.count(member_id))
    return refuse(ErrorCode::kGroupMaxSizeReached, "The consumer group has reached its maximum capacity of " +
                                                       std::to_string(options_.max_size) + " members.");
  Lookup found = find_member(p, member_id);
  if (found.error != ErrorCode::kNone) return refuse(found.error, std::move(found.message));
  if (auto why = refused_subscription(p, found.member)) return refuse(why->first, std::move(why->second));
  const ConsumerMember& member = found.member;
  const bool created = found.created;
  const std::optional<ConsumerMember>& replaced = found.replaced;
  const ConsumerMember before = member;
  if (replaced) replace_static_member(*replaced, member_id);
  const ConsumerMember updated = with_request(member, p);
  const bool subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names ||
                                    updated.subscribed_topic_regex != member.subscribed_topic_regex;
  if (created) {
    empty_since_ms_ = -1;
    spdlog::info("group={} member {} joins the consumer group using the consumer protocol", esc(id()),
                 esc(member_id));
  }
  const int32_t epoch_before = group_epoch_;
  const int32_t assignment_before = assignment_epoch_;
  const ConsumerMember reconciled = step(replaced ? &*replaced : (created ? nullptr : &before), updated,
                                         subscription_changed, p.owned, p.may_describe_topic);
  host_->arm_session(member_id, session_timeout_of(reconciled));

  ConsumerHeartbeatResult r;
  r.member_id = member_id;
  r.member_epoch = reconciled.member_epoch;
  r.heartbeat_interval_ms = options_.heartbeat_interval_ms;
  const bool full = p.rebalance_timeout_ms != -1 && (p.subscribed_topic_names || p.subscribed_topic_regex) && p.owned;
  if (joining || full || partitions_of(before.assigned) != partitions_of(reconciled.assigned))
    r.assignment = partitions_of(reconciled.assigned);

  const bool changed = created || replaced.has_value() || group_epoch_ != epoch_before || before != reconciled;
  if (!changed) {
    host_->answer(std::move(done), std::move(r));
    return true;
  }
  // A new target (the group epoch moved) or a replaced static member rewrites the group; anything
  // else changed this member alone.
  const bool whole = replaced.has_value() || group_epoch_ != epoch_before || assignment_epoch_ != assignment_before;
  host_->persist(*this, whole ? nullptr : &member_id, [this, r = std::move(r), done = std::move(done)](Status st) mutable {
    if (!st) {
      r = fail(ErrorCode::kCoordinatorNotAvailable, "the group state could not be stored: " + st.error().message);
    }
    host_->answer(std::move(done), std::move(r));
  });
  return true;
}

// One member's step, for a ConsumerGroupHeartbeat and a classic member's JoinGroup alike: the
// member as the request updated it goes in; the group epoch moves when a subscription changed or
// the subscribed topics' metadata did (a topic created, deleted or grown: Kafka's subscription
// metadata refresh); the target follows; the member is reconciled one step towards it and its
// rebalance timeout armed while it has partitions to revoke. `previous`: the member before (its
// replaced static incarnation), null for a new one. Returns the member as it now is.
ConsumerMember ConsumerGroup::step(const ConsumerMember* previous, const ConsumerMember& updated,
                                   bool subscription_changed,
                                   const std::optional<std::map<std::string, std::set<int32_t>>>& owned,
                                   const std::function<bool(const std::string&)>& may_describe) {
  const std::string& member_id = updated.member_id;
  members_[member_id] = updated;
  refresh_regexes(false, may_describe);
  if (subscription_changed || subscribed_partitions() != subscribed_partitions_) ++group_epoch_;
  maybe_update_target();
  ConsumerMember reconciled = updated;
  if (subscription_changed || updated.member_epoch != assignment_epoch_ || updated.state != ConsumerMemberState::kStable)
    reconciled = reconcile(updated, subscription_changed, owned);
  update_owners(previous, &reconciled);
  members_[member_id] = reconciled;
  if (reconciled.state == ConsumerMemberState::kUnrevokedPartitions) {
    if (reconciled != updated && reconciled.rebalance_timeout_ms > 0)
      host_->arm_rebalance(member_id, reconciled.member_epoch, reconciled.rebalance_timeout_ms);
  } else {
    host_->cancel_rebalance(member_id);
  }
  return reconciled;
}

// Kafka's consumerGroupLeave: epoch -1 removes the member (its partitions go to the others);
// -2 (a static member that will come back) keeps its place, assignment and target until its
// session times out.
void ConsumerGroup::leave(const ConsumerHeartbeatParams& p, ConsumerHeartbeatCallback done) {
  ConsumerHeartbeatResult r;
  r.member_id = p.member_id;
  r.member_epoch = p.member_epoch;
  const ConsumerMember* m = nullptr;
  if (p.instance_id) {
    m = static_member(p.instance_id);
    if (!m) return host_->answer(std::move(done), fail(ErrorCode::kUnknownMemberId, "Instance id " + *p.instance_id + " is unknown."));
    if (m->member_id != p.member_id)
      return host_->answer(std::move(done), fail(ErrorCode::kFencedInstanceId,
                                                 "Static member " + p.member_id + " with instance id " +
                                                     *p.instance_id + " was fenced by member " + m->member_id + "."));
  } else {
    auto it = members_.find(p.member_id);
    if (it == members_.end())
      return host_->answer(std::move(done), fail(ErrorCode::kUnknownMemberId, "Member " + p.member_id +
                                                                                  " is not a member of group " + id() + "."));
    m = &it->second;
  }
  const bool temporary = p.member_epoch == -2 && m->instance_id;
  if (temporary) {
    ConsumerMember before = *m;
    ConsumerMember& x = members_[p.member_id];
    update_member_epoch(x, -2);
    update_owners(&before, &x);
    host_->cancel_rebalance(p.member_id);
    spdlog::info("group={} static member {} with instance id {} leaves the consumer group temporarily", esc(id()),
                 esc(p.member_id), esc(*m->instance_id));
  } else {
    remove_member(p.member_id, "left the group");
  }
  host_->persist(*this, temporary ? &p.member_id : nullptr,
                 [this, r = std::move(r), done = std::move(done)](Status st) mutable {
    if (!st) r = fail(ErrorCode::kCoordinatorNotAvailable, "the group state could not be stored: " + st.error().message);
    host_->answer(std::move(done), std::move(r));
  });
}

void ConsumerGroup::remove_member(const std::string& member_id, const char* why, bool bump) {
  auto it = members_.find(member_id);
  if (it == members_.end()) return;
  spdlog::info("group={} member {} removed from the consumer group: {}", esc(id()), esc(member_id), why);
  update_owners(&it->second, nullptr);
  members_.erase(it);
  target_.erase(member_id);
  host_->cancel_session(member_id);
  host_->cancel_rebalance(member_id);
  host_->cancel_classic(member_id, ConsumerGroupHost::ClassicDeadline::kJoin);
  host_->cancel_classic(member_id, ConsumerGroupHost::ClassicDeadline::kSync);
  if (bump) {
    epoch_before_removal_ = group_epoch_;
    ++group_epoch_;
  }
  if (members_.empty()) empty_since_ms_ = host_->now_ms();
  // Kafka's consumerGroupFenceMembers: a group left with classic members only may downgrade.
  host_->maybe_downgrade(true);
}

void ConsumerGroup::on_session_expired(const std::string& member_id) {
  if (!members_.count(member_id)) return;
  remove_member(member_id, "the member session expired");
  host_->persist(*this, nullptr, nullptr);
}

void ConsumerGroup::on_rebalance_expired(const std::string& member_id, int32_t epoch) {
  auto it = members_.find(member_id);
  if (it == members_.end() || it->second.state != ConsumerMemberState::kUnrevokedPartitions ||
      it->second.member_epoch != epoch)
    return;
  remove_member(member_id, "the member failed to revoke its partitions within the rebalance timeout");
  host_->persist(*this, nullptr, nullptr);
}

// ---------------------------------------------------------------------------------------------
// What the coordinator asks of every group

ConsumerGroupView ConsumerGroup::view() const {
  ConsumerGroupView v;
  v.group_id = id();
  v.state = state_name();
  v.group_epoch = group_epoch_;
  v.assignment_epoch = assignment_epoch_;
  v.assignor = preferred_assignor();
  for (const auto& [mid, m] : members_) {
    const MemberTargetAssignment* t = target(mid);
    v.members.push_back({m, t ? *t : MemberTargetAssignment{}});
  }
  return v;
}

// Group::describe. GroupCoordinator::describe_group answers a consumer group "not a classic
// group" (Kafka's classicGroup() lookup) before asking the group, so DescribeGroups never shows
// this; it is what the interface asks of every group.
GroupDescription ConsumerGroup::describe() const {
  GroupDescription d;
  d.group_id = id();
  d.state = state_name();
  d.protocol_type = "consumer";
  for (const auto& [mid, m] : members_) {
    GroupMemberDescription md;
    md.member_id = mid;
    md.group_instance_id = m.instance_id;
    md.client_id = m.client_id;
    md.client_host = m.client_host;
    d.members.push_back(std::move(md));
  }
  return d;
}

std::optional<ErrorCode> ConsumerGroup::validate_delete_group() const {
  if (!members_.empty()) return ErrorCode::kNonEmptyGroup;
  return std::nullopt;
}

// Kafka's ConsumerGroup.validateOffsetCommit: the member epoch must be the member's, or older
// but not older than the assignment epoch of any partition committed (KIP-1251).
std::optional<ErrorCode> ConsumerGroup::validate_offset_commit(const OffsetCommitParams& p) const {
  auto it = members_.find(p.member_id);
  // A member using the classic protocol commits with OffsetCommit below v9 and its member epoch
  // as generation; a newer generation is ILLEGAL_GENERATION (Kafka's validateOffsetCommit).
  ModernCommitCheck check;
  if (it != members_.end() && it->second.classic && !p.transactional) {
    if (p.generation_id == it->second.member_epoch) return std::nullopt;
    if (p.generation_id > it->second.member_epoch) return ErrorCode::kIllegalGeneration;
    check = {ModernCommitCheck::Verdict::kByPartition, ErrorCode::kNone, ErrorCode::kIllegalGeneration};
  } else {
    check = modern_commit_check(p, !members_.empty(),
                                it == members_.end() ? std::nullopt : std::optional(it->second.member_epoch));
  }
  if (check.verdict == ModernCommitCheck::Verdict::kAccepted) return std::nullopt;
  if (check.verdict == ModernCommitCheck::Verdict::kRefused) return check.error;
  const ConsumerMember& m = it->second;
  for (const auto& e : p.entries) {
    int32_t epoch = -1;
    for (const EpochAssignment* a : {&m.assigned, &m.pending_revocation}) {
      auto t = a->find(e.topic);
      if (t == a->end()) continue;
      auto q = t->second.find(e.partition);
      if (q != t->second.end()) epoch = q->second;
    }
    if (epoch < 0 || p.generation_id < epoch) return check.stale;
  }
  return std::nullopt;
}

std::optional<ErrorCode> ConsumerGroup::validate_offset_fetch(const std::string& member_id,
                                                              int32_t member_epoch) const {
  if (member_id.empty() && member_epoch < 0) return std::nullopt;
  auto it = members_.find(member_id);
  if (it == members_.end()) return ErrorCode::kUnknownMemberId;
  if (it->second.member_epoch != member_epoch)
    return it->second.classic ? ErrorCode::kIllegalGeneration : ErrorCode::kStaleMemberEpoch;
  return std::nullopt;
}

bool ConsumerGroup::is_subscribed_to_topic(const std::string& topic) const {
  for (const auto& [_, m] : members_)
    if (subscribed_topics(m).count(topic) || m.subscribed_topic_names.count(topic)) return true;
  return false;
}

// Kafka's ModernGroup: every offset expires a retention after its commit, except those of topics
// the group subscribes to (GroupMetadataManager asks isSubscribedToTopic), empty or not.
OffsetExpiration ConsumerGroup::offset_expiration() const {
  using Clock = OffsetExpiration::Clock;
  kept_.clear();
  for (const auto& [_, m] : members_) {
    kept_.insert(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
    for (const auto& t : subscribed_topics(m)) kept_.insert(t);
  }
  return {Clock::kSinceCommit, 0, &kept_};
}

}  // namespace kib::bridge
