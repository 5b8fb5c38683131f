#include "bridge/groups/group_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "bridge/errors.h"
#include "bridge/groups/consumer_protocol.h"
#include "common/text.h"
#include "state/group_store.h"
#include "state/state_store.h"

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

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

struct GroupCoordinator::Member {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<GroupProtocol> protocols;
  Bytes assignment;
  JoinCallback awaiting_join;
  SyncCallback awaiting_sync;
  // A member that joined but has not completed a rebalance yet; it expires even while it
  // awaits its JoinGroup answer (new_member_join_timeout_ms).
  bool is_new = false;
  std::unique_ptr<GroupTimer> heartbeat_timer;

  const Bytes* metadata(const std::string& protocol) const {
    for (const auto& p : protocols)
      if (p.name == protocol) return &p.metadata;
    return nullptr;
  }
  bool matches(const std::vector<GroupProtocol>& other) const {
    if (other.size() != protocols.size()) return false;
    for (size_t i = 0; i < other.size(); ++i)
      if (other[i].name != protocols[i].name || other[i].metadata != protocols[i].metadata) return false;
    return true;
  }
  // Members awaiting a rebalance answer count as alive (Kafka: MemberMetadata.hasSatisfiedHeartbeat).
  bool alive_without_heartbeat() const { return !is_new && (awaiting_join || awaiting_sync); }
};

struct GroupCoordinator::Group {
  std::string id;
  uint64_t incarnation = 0;  // a deleted and recreated group is a different group
  GroupState state = GroupState::kEmpty;
  GroupState previous_state = GroupState::kEmpty;
  int64_t state_since_ms = 0;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  int32_t generation = 0;
  std::optional<std::string> leader_id;
  std::map<std::string, std::unique_ptr<Member>> members;
  std::map<std::string, std::string> static_members;  // group.instance.id -> member id
  // KIP-394: ids handed out with MEMBER_ID_REQUIRED, expiring after the session timeout.
  std::map<std::string, std::unique_ptr<GroupTimer>> pending_members;
  int num_awaiting_join = 0;
  std::map<std::string, int> supported_protocols;  // protocol -> members supporting it
  std::set<std::string> pending_sync_members;
  bool new_member_added = false;
  std::unique_ptr<GroupTimer> join_timer;
  std::unique_ptr<GroupTimer> sync_timer;
  bool initial_join_delay = false;  // the delayed first rebalance of an empty group is running
  int32_t initial_delay_ms = 0;
  int32_t initial_remaining_ms = 0;
  std::optional<std::set<std::string>> subscribed_topics;  // consumer protocol groups

  bool has(const std::string& member_id) const { return members.count(member_id) != 0; }
  Member* get(const std::string& member_id) const {
    auto it = members.find(member_id);
    return it == members.end() ? nullptr : it->second.get();
  }
  bool is_leader(const std::string& member_id) const { return leader_id && *leader_id == member_id; }
  bool has_all_members_joined() const {
    return static_cast<size_t>(num_awaiting_join) == members.size() && pending_members.empty();
  }
  int32_t rebalance_timeout_ms() const {
    int32_t t = 0;
    for (const auto& [_, m] : members) t = std::max(t, m->rebalance_timeout_ms);
    return t;
  }
  void inc_protocols(const Member& m) {
    for (const auto& p : m.protocols) ++supported_protocols[p.name];
  }
  void dec_protocols(const Member& m) {
    for (const auto& p : m.protocols)
      if (--supported_protocols[p.name] <= 0) supported_protocols.erase(p.name);
  }
  bool supports_protocols(const std::string& type, const std::vector<GroupProtocol>& protocols) const {
    if (state == GroupState::kEmpty) return !type.empty() && !protocols.empty();
    if (!protocol_type || *protocol_type != type) return false;
    for (const auto& p : protocols) {
      auto it = supported_protocols.find(p.name);
      if (it != supported_protocols.end() && static_cast<size_t>(it->second) == members.size()) return true;
    }
    return false;
  }
  // Every member votes for its most preferred protocol that all members support; the most
  // votes win (ties: the first protocol voted for, walking members in id order).
  std::string select_protocol() const {
    std::set<std::string> candidates;
    for (const auto& [name, n] : supported_protocols)
      if (static_cast<size_t>(n) == members.size()) candidates.insert(name);
    std::vector<std::pair<std::string, int>> votes;
    for (const auto& [_, m] : members) {
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
    auto best = std::max_element(votes.begin(), votes.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    return best == votes.end() ? std::string() : best->first;
  }
  std::optional<std::set<std::string>> compute_subscribed_topics() const {
    if (!protocol_type || *protocol_type != kConsumerProtocolType) return std::nullopt;
    if (members.empty()) return std::set<std::string>{};
    if (!protocol_name) return std::nullopt;
    std::set<std::string> topics;
    for (const auto& [_, m] : members) {
      const Bytes* md = m->metadata(*protocol_name);
      if (!md) return std::nullopt;
      auto t = ::kib::bridge::subscribed_topics(*md);
      if (!t) {
        spdlog::warn("group={} member={}: consumer protocol subscription does not parse; subscribed topics unknown",
                     esc(id), esc(m->member_id));
        return std::nullopt;
      }
      topics.insert(t->begin(), t->end());
    }
    return topics;
  }
  // Kafka's ClassicGroup.isSubscribedToTopic: when unknown, a consumer group is assumed to be.
  bool is_subscribed_to_topic(const std::string& topic) const {
    if (subscribed_topics) return subscribed_topics->count(topic) != 0;
    return protocol_type && *protocol_type == kConsumerProtocolType;
  }
  std::vector<JoinGroupResult::Member> current_member_metadata() const {
    std::vector<JoinGroupResult::Member> out;
    out.reserve(members.size());
    for (const auto& [id, m] : members) {
      const Bytes* md = protocol_name ? m->metadata(*protocol_name) : nullptr;
      out.push_back({id, m->group_instance_id, md ? *md : Bytes{}});
    }
    return out;
  }
};

static JoinGroupResult join_error(ErrorCode e, std::string member_id) {
  JoinGroupResult r;
  r.error = e;
  r.member_id = std::move(member_id);
  return r;
}

static SyncGroupResult sync_error(ErrorCode e) {
  SyncGroupResult r;
  r.error = e;
  return r;
}

// Every public entry point (and every timer or store callback) holds one; callbacks to the
// handlers run when the outermost one ends, after the group state is consistent again.
struct GroupCoordinator::Entry {
  explicit Entry(GroupCoordinator& c) : c(c) { ++c.depth_; }
  ~Entry() {
    if (--c.depth_ == 0) c.flush();
  }
  GroupCoordinator& c;
};

GroupCoordinator::GroupCoordinator(state::StateStore& store, GroupTimers& timers, CommittedOffsets& offsets,
                                   GroupCoordinatorOptions options)
    : store_(store), timers_(timers), offsets_(offsets), options_(std::move(options)) {
  // Kafka's cleanupGroupMetadata: a group whose last offsets expired may go with them.
  offsets_.set_expiry_listener([this](const std::string& group_id) {
    Entry entry(*this);
    if (Group* g = find(group_id)) maybe_drop_empty_group(*g);
  });
}

GroupCoordinator::~GroupCoordinator() {
  offsets_.set_expiry_listener(nullptr);
  alive_.end();  // completions of what stop() writes find the coordinator gone
  stop();
}

void GroupCoordinator::stop() {
  Entry entry(*this);
  stopped_ = true;
  retention_timer_.reset();
  // As Kafka's coordinator does when it unloads a group: waiting JoinGroup and SyncGroup
  // requests get NOT_COORDINATOR now, so their connections can drain; then every timer goes.
  for (auto& [_, g] : groups_) {
    for (auto& [_, m] : g->members) {
      answer_join(*g, *m, join_error(ErrorCode::kNotCoordinator, m->member_id));
      answer_sync(*m, sync_error(ErrorCode::kNotCoordinator));
    }
  }
  groups_.clear();
}

void GroupCoordinator::flush() {
  while (!outbox_.empty()) {
    auto batch = std::move(outbox_);
    outbox_.clear();
    for (auto& f : batch) {
      try {
        f();
      } catch (const std::exception& e) {
        spdlog::error("groups: answering a request failed: {}", esc(e.what(), 1024));
      } catch (...) {
        spdlog::error("groups: answering a request failed: unknown exception");
      }
    }
  }
}

void GroupCoordinator::answer(JoinCallback cb, JoinGroupResult r) {
  if (cb) outbox_.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
}
void GroupCoordinator::answer(SyncCallback cb, SyncGroupResult r) {
  if (cb) outbox_.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
}

void GroupCoordinator::answer_join(Group& g, Member& m, JoinGroupResult r) {
  if (!m.awaiting_join) return;
  auto cb = std::move(m.awaiting_join);
  m.awaiting_join = nullptr;
  --g.num_awaiting_join;
  answer(std::move(cb), std::move(r));
}

bool GroupCoordinator::answer_sync(Member& m, SyncGroupResult r) {
  if (!m.awaiting_sync) return false;
  auto cb = std::move(m.awaiting_sync);
  m.awaiting_sync = nullptr;
  answer(std::move(cb), std::move(r));
  return true;
}

// ---------------------------------------------------------------------------------------------
// Loading and persistence

Status GroupCoordinator::load() {
  int64_t now = timers_.now_ms();
  std::vector<state::GroupRow> rows;
  Status st = store_.run_blocking([&](SQLite::Database& db) { rows = state::load_groups_for_restart(db, now); });
  if (!st) return st;
  groups_.clear();
  for (const auto& row : rows) {
    Group& g = create_group(row.group_id);
    g.generation = row.generation;
    if (!row.protocol_type.empty()) g.protocol_type = row.protocol_type;
    g.state_since_ms = row.updated_at_ms;
    g.subscribed_topics = g.compute_subscribed_topics();
  }
  // Every group with committed offsets has a row (load_groups_for_restart adds the missing);
  // a group must be known here for its offsets to expire.
  for (const auto& id : offsets_.groups())
    if (!find(id)) create_group(id);
  spdlog::info("groups: loaded {} groups (all Empty until their members rejoin)", groups_.size());
  stopped_ = false;
  retention_timer_ = timers_.make_timer();
  arm_retention_timer();
  return ok_status();
}

void GroupCoordinator::arm_retention_timer() {
  retention_timer_->start(options_.offsets_retention_check_interval_ms, [this] {
    expire_offsets();
    arm_retention_timer();
  });
}

GroupCoordinator::Group* GroupCoordinator::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

GroupCoordinator::Group& GroupCoordinator::create_group(const std::string& group_id) {
  auto g = std::make_unique<Group>();
  g->id = group_id;
  g->incarnation = next_incarnation_++;
  g->state_since_ms = timers_.now_ms();
  g->join_timer = timers_.make_timer();
  g->sync_timer = timers_.make_timer();
  Group& ref = *g;
  groups_[group_id] = std::move(g);
  return ref;
}

void GroupCoordinator::transition(Group& g, GroupState to) {
  g.previous_state = g.state;
  g.state = to;
  g.state_since_ms = timers_.now_ms();
}

void GroupCoordinator::write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done) {
  ++pending_writes_;
  store_.write(std::move(job), [this, alive = alive_.token(), done = std::move(done)](Status st) mutable {
    if (!alive) return;
    Entry entry(*this);
    --pending_writes_;
    if (!st) spdlog::warn("groups: state write failed: {}", st.error().message);
    if (done) done(std::move(st));
  });
}

void GroupCoordinator::persist_group(Group& g, const std::map<std::string, Bytes>* assignment,
                                     std::optional<GroupState> as_state, std::function<void(Status)> done) {
  state::GroupRow row;
  row.group_id = g.id;
  row.protocol_type = g.protocol_type.value_or("");
  row.protocol_name = g.protocol_name.value_or("");
  row.generation = g.generation;
  row.state = group_state_name(as_state.value_or(g.state));
  row.leader_id = g.leader_id.value_or("");
  row.updated_at_ms = timers_.now_ms();
  std::vector<state::GroupMemberRow> members;
  members.reserve(g.members.size());
  bool consumer = g.protocol_type && *g.protocol_type == kConsumerProtocolType;
  for (const auto& [id, m] : g.members) {
    state::GroupMemberRow r;
    r.member_id = id;
    r.group_instance_id = m->group_instance_id;
    r.client_id = m->client_id;
    r.client_host = m->client_host;
    r.session_timeout_ms = m->session_timeout_ms;
    r.rebalance_timeout_ms = m->rebalance_timeout_ms;
    if (assignment) {
      auto it = assignment->find(id);
      if (it != assignment->end()) r.assignment = it->second;
    } else {
      r.assignment = m->assignment;
    }
    if (consumer) {
      if (auto parts = assigned_partitions(r.assignment)) r.assigned_partitions = format_partitions(*parts);
      const Bytes* md = g.protocol_name ? m->metadata(*g.protocol_name) : nullptr;
      if (md)
        if (auto topics = subscribed_topics(*md)) r.subscribed_topics = format_topics(*topics);
    }
    members.push_back(std::move(r));
  }
  write([row = std::move(row), members = std::move(members)](SQLite::Database& db) {
    state::save_group(db, row, members);
  }, std::move(done));
}

// ---------------------------------------------------------------------------------------------
// JoinGroup

bool GroupCoordinator::accept_joining_member(const Group& g, const std::string& member_id) const {
  switch (g.state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return true;
    case GroupState::kPreparingRebalance: {
      // Counting members awaiting join (not the group size) lets the last members to rejoin
      // be the ones refused when group.max.size was lowered.
      const Member* m = g.get(member_id);
      return (m && m->awaiting_join) || g.num_awaiting_join < options_.max_size;
    }
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      return g.has(member_id) || g.members.size() < static_cast<size_t>(options_.max_size);
  }
  return false;
}

void GroupCoordinator::join_group(JoinGroupParams p, JoinCallback done) {
  Entry entry(*this);
  if (stopped_) return answer(std::move(done), join_error(ErrorCode::kCoordinatorNotAvailable, p.member_id));
  if (p.group_id.empty()) return answer(std::move(done), join_error(ErrorCode::kInvalidGroupId, p.member_id));
  if (p.session_timeout_ms < options_.min_session_timeout_ms || p.session_timeout_ms > options_.max_session_timeout_ms)
    return answer(std::move(done), join_error(ErrorCode::kInvalidSessionTimeout, p.member_id));

  bool unknown_member = p.member_id.empty();
  Group* g = find(p.group_id);
  if (!g) {
    // A group is created by a new member only; a known member id of an unknown group is stale.
    if (!unknown_member) return answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
    g = &create_group(p.group_id);
    persist_group(*g);
  }

  if (!accept_joining_member(*g, p.member_id)) {
    spdlog::info("group={} refused member={}: group.max.size {} reached", esc(g->id), esc(p.member_id), options_.max_size);
    remove_member(*g, p.member_id);
    answer(std::move(done), join_error(ErrorCode::kGroupMaxSizeReached, ""));
  } else if (unknown_member) {
    join_new_member(*g, p, done);
  } else {
    join_existing_member(*g, p, done);
  }
  if (g->state == GroupState::kPreparingRebalance) maybe_complete_join(*g);
}

void GroupCoordinator::join_new_member(Group& g, JoinGroupParams& p, JoinCallback& done) {
  if (!g.supports_protocols(p.protocol_type, p.protocols))
    return answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, ""));
  // Kafka's memberId is clientId (or group.instance.id) + "-" + UUID. Both are client strings of
  // up to 32767 bytes, and the member id goes back in a STRING field of the same bound, so the
  // prefix is cut (at a character boundary) to keep member ids small and always encodable.
  std::string new_member_id =
      std::string(utf8_prefix(p.group_instance_id ? *p.group_instance_id : p.client_id, kMaxMemberIdPrefixBytes)) + "-" +
      random_uuid();
  if (p.group_instance_id) {
    auto it = g.static_members.find(*p.group_instance_id);
    if (it != g.static_members.end()) {
      spdlog::info("group={} static member instance={} rejoins in state {}: replacing member {} with {}", esc(g.id),
                   esc(*p.group_instance_id), group_state_name(g.state), esc(it->second), esc(new_member_id));
      std::string old_member_id = it->second;
      return update_static_member_and_rebalance(g, old_member_id, new_member_id, p, done);
    }
    return add_member_and_rebalance(g, new_member_id, p, std::move(done));
  }
  if (p.require_known_member_id) {
    // KIP-394: the member must come back with this id; until then it is pending.
    add_pending_member(g, new_member_id, p.session_timeout_ms);
    return answer(std::move(done), join_error(ErrorCode::kMemberIdRequired, new_member_id));
  }
  add_member_and_rebalance(g, new_member_id, p, std::move(done));
}

void GroupCoordinator::join_existing_member(Group& g, JoinGroupParams& p, JoinCallback& done) {
  if (!g.supports_protocols(p.protocol_type, p.protocols))
    return answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, p.member_id));
  if (g.pending_members.count(p.member_id)) {
    // Pending ids are only handed to dynamic members.
    if (p.group_instance_id) return answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
    return add_member_and_rebalance(g, p.member_id, p, std::move(done));
  }
  if (auto err = validate_current_member(g, p.member_id, p.group_instance_id))
    return answer(std::move(done), join_error(*err, p.member_id));
  Member& m = *g.get(p.member_id);
  switch (g.state) {
    case GroupState::kPreparingRebalance:
      return update_member_and_rebalance(g, m, p, std::move(done), "member joining during PreparingRebalance");
    case GroupState::kCompletingRebalance:
      // Same metadata: the member lost its JoinGroup answer; give it again.
      if (m.matches(p.protocols))
        return answer(std::move(done), current_generation_result(g, m, g.is_leader(m.member_id)));
      return update_member_and_rebalance(g, m, p, std::move(done),
                                         "member metadata changed during CompletingRebalance");
    case GroupState::kStable:
      // The leader rejoining forces a rebalance (it saw a metadata change the others cannot see).
      if (g.is_leader(m.member_id))
        return update_member_and_rebalance(g, m, p, std::move(done), "leader rejoining during Stable");
      if (!m.matches(p.protocols))
        return update_member_and_rebalance(g, m, p, std::move(done), "member metadata changed during Stable");
      return answer(std::move(done), current_generation_result(g, m, false));
    case GroupState::kEmpty:
    case GroupState::kDead:
      return answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
  }
}

JoinGroupResult GroupCoordinator::current_generation_result(const Group& g, const Member& m, bool with_members) const {
  JoinGroupResult r;
  r.member_id = m.member_id;
  r.generation_id = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader_id = g.leader_id.value_or("");
  if (with_members) r.members = g.current_member_metadata();
  return r;
}

std::optional<ErrorCode> GroupCoordinator::validate_current_member(
    const Group& g, const std::string& member_id, const std::optional<std::string>& group_instance_id) const {
  if (group_instance_id) {
    auto it = g.static_members.find(*group_instance_id);
    if (it == g.static_members.end()) return ErrorCode::kUnknownMemberId;
    if (it->second != member_id) {
      spdlog::info("group={} member={} of static instance {} is fenced by member {}", esc(g.id), esc(member_id),
                   esc(*group_instance_id), esc(it->second));
      return ErrorCode::kFencedInstanceId;
    }
    return std::nullopt;
  }
  if (!g.has(member_id)) return ErrorCode::kUnknownMemberId;
  return std::nullopt;
}

void GroupCoordinator::add_member(Group& g, std::unique_ptr<Member> m, JoinCallback done) {
  const std::string id = m->member_id;
  if (m->group_instance_id) g.static_members[*m->group_instance_id] = id;
  if (g.members.empty()) g.protocol_type = m->protocol_type;
  if (!g.leader_id) g.leader_id = id;
  g.inc_protocols(*m);
  m->awaiting_join = std::move(done);
  if (m->awaiting_join) ++g.num_awaiting_join;
  g.pending_members.erase(id);
  g.members[id] = std::move(m);
}

void GroupCoordinator::add_member_and_rebalance(Group& g, const std::string& member_id, JoinGroupParams& p,
                                                JoinCallback done) {
  auto m = std::make_unique<Member>();
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
  if (g.state == GroupState::kPreparingRebalance && g.generation == 0) g.new_member_added = true;
  Member& ref = *m;
  add_member(g, std::move(m), std::move(done));
  // A new member cannot heartbeat before its JoinGroup is answered; one that disconnected
  // and retries with a fresh id would otherwise linger for the whole rebalance.
  schedule_heartbeat_expiration(g, ref, options_.new_member_join_timeout_ms);
  spdlog::debug("group={} member={} client={} joined (instance {})", esc(g.id), esc(member_id),
                esc(ref.client_id), esc(ref.group_instance_id.value_or("none")));
  maybe_prepare_rebalance(g, "adding new member " + member_id);
}

void GroupCoordinator::update_member(Group& g, Member& m, std::vector<GroupProtocol> protocols,
                                     int32_t rebalance_timeout_ms, int32_t session_timeout_ms, JoinCallback done) {
  g.dec_protocols(m);
  m.protocols = std::move(protocols);
  g.inc_protocols(m);
  m.rebalance_timeout_ms = rebalance_timeout_ms;
  m.session_timeout_ms = session_timeout_ms;
  if (m.awaiting_join && done) {
    // A second JoinGroup from the same member supersedes the first; answer the first so the
    // responses queued behind it on its connection are not held back.
    answer(std::move(m.awaiting_join), join_error(ErrorCode::kRebalanceInProgress, m.member_id));
  } else if (!m.awaiting_join && done) {
    ++g.num_awaiting_join;
  } else if (m.awaiting_join && !done) {
    --g.num_awaiting_join;
  }
  m.awaiting_join = std::move(done);
}

void GroupCoordinator::update_member_and_rebalance(Group& g, Member& m, JoinGroupParams& p, JoinCallback done,
                                                   const std::string& reason) {
  update_member(g, m, std::move(p.protocols), p.rebalance_timeout_ms, p.session_timeout_ms, std::move(done));
  maybe_prepare_rebalance(g, reason + " (" + m.member_id + ")");
}

GroupCoordinator::Member& GroupCoordinator::replace_static_member(Group& g, const std::string& instance_id,
                                                                  const std::string& old_member_id,
                                                                  const std::string& new_member_id) {
  auto node = g.members.extract(old_member_id);
  Member& m = *node.mapped();
  // Fence the old incarnation at once if it still awaits an answer.
  if (m.awaiting_join) answer_join(g, m, join_error(ErrorCode::kFencedInstanceId, old_member_id));
  answer_sync(m, sync_error(ErrorCode::kFencedInstanceId));
  m.member_id = new_member_id;
  node.key() = new_member_id;
  g.members.insert(std::move(node));
  if (g.is_leader(old_member_id)) g.leader_id = new_member_id;
  g.static_members[instance_id] = new_member_id;
  if (g.pending_sync_members.erase(old_member_id)) g.pending_sync_members.insert(new_member_id);
  return m;
}

void GroupCoordinator::update_static_member_and_rebalance(Group& g, const std::string& old_member_id,
                                                          const std::string& new_member_id, JoinGroupParams& p,
                                                          JoinCallback& done) {
  const std::string instance_id = *p.group_instance_id;
  const std::string current_leader = g.leader_id.value_or("");
  Member& m = replace_static_member(g, instance_id, old_member_id, new_member_id);
  schedule_heartbeat_expiration(g, m, m.session_timeout_ms);
  auto old_protocols = m.protocols;
  int32_t old_rebalance_timeout = m.rebalance_timeout_ms;
  int32_t old_session_timeout = m.session_timeout_ms;
  update_member(g, m, std::move(p.protocols), p.rebalance_timeout_ms, p.session_timeout_ms, std::move(done));

  switch (g.state) {
    case GroupState::kStable: {
      if (!g.protocol_name || *g.protocol_name != g.select_protocol()) {
        maybe_prepare_rebalance(g, "static member " + new_member_id + " of instance " + instance_id +
                                       " changed the group's protocol");
        return;
      }
      // KIP-345: a known static member comes back without a rebalance and keeps its
      // assignment, once the new member id is stored.
      bool skip = p.supports_skip_assignment;
      persist_group(g, nullptr, std::nullopt,
                    [this, group_id = g.id, incarnation = g.incarnation, generation = g.generation, instance_id,
                     old_member_id, new_member_id, old_protocols = std::move(old_protocols), old_rebalance_timeout,
                     old_session_timeout, current_leader, skip](Status st) mutable {
                      Group* g = find(group_id);
                      if (!g || g->incarnation != incarnation) return;
                      Member* m = g->get(new_member_id);
                      if (!m || !m->awaiting_join) return;
                      if (!st) {
                        // Not stored: undo the replacement and fail the join.
                        auto cb = std::move(m->awaiting_join);
                        m->awaiting_join = nullptr;
                        --g->num_awaiting_join;
                        update_member(*g, *m, std::move(old_protocols), old_rebalance_timeout, old_session_timeout,
                                      nullptr);
                        Member& old = replace_static_member(*g, instance_id, new_member_id, old_member_id);
                        schedule_heartbeat_expiration(*g, old, old.session_timeout_ms);
                        JoinGroupResult r = join_error(to_kafka_error(st.error()), "");
                        r.generation_id = g->generation;
                        r.protocol_type = g->protocol_type;
                        r.protocol_name = g->protocol_name;
                        r.leader_id = current_leader;
                        return answer(std::move(cb), std::move(r));
                      }
                      // A rebalance started meanwhile answers the member when it completes.
                      if (g->state != GroupState::kStable || g->generation != generation) return;
                      JoinGroupResult r;
                      r.member_id = new_member_id;
                      r.generation_id = g->generation;
                      r.protocol_type = g->protocol_type;
                      r.protocol_name = g->protocol_name;
                      if (skip) {
                        // v9+: the leader learns it leads but must not run the assignor.
                        bool leader = g->is_leader(new_member_id);
                        if (leader) r.members = g->current_member_metadata();
                        r.leader_id = g->leader_id.value_or("");
                        r.skip_assignment = leader;
                      } else {
                        // Older versions: the old leader id, so a returning leader does not
                        // compute an assignment a Stable group would never distribute.
                        r.leader_id = current_leader;
                      }
                      answer_join(*g, *m, std::move(r));
                    });
      return;
    }
    case GroupState::kCompletingRebalance:
      // The leader may already be assigning to the old member id: start over.
      prepare_rebalance(g, "static member " + new_member_id + " of instance " + instance_id +
                               " rejoined during CompletingRebalance");
      return;
    case GroupState::kPreparingRebalance:
    case GroupState::kEmpty:
    case GroupState::kDead:
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// Rebalance

void GroupCoordinator::maybe_prepare_rebalance(Group& g, const std::string& reason) {
  if (g.state == GroupState::kStable || g.state == GroupState::kCompletingRebalance || g.state == GroupState::kEmpty)
    prepare_rebalance(g, reason);
}

void GroupCoordinator::prepare_rebalance(Group& g, const std::string& reason) {
  if (g.state == GroupState::kCompletingRebalance)
    reset_and_propagate_assignment_error(g, ErrorCode::kRebalanceInProgress);
  g.pending_sync_members.clear();
  g.sync_timer->stop();
  bool initial = g.state == GroupState::kEmpty;
  spdlog::info("group={} preparing to rebalance in state {} with old generation {} (reason: {})", esc(g.id),
               group_state_name(g.state), g.generation, esc(reason, 1024));
  transition(g, GroupState::kPreparingRebalance);
  const std::string id = g.id;
  if (initial) {
    // group.initial.rebalance.delay.ms: let the other members of a starting group arrive.
    g.initial_join_delay = true;
    g.initial_delay_ms = options_.initial_rebalance_delay_ms;
    g.initial_remaining_ms = std::max(g.rebalance_timeout_ms() - options_.initial_rebalance_delay_ms, 0);
    g.join_timer->start(g.initial_delay_ms, [this, id] {
      Entry entry(*this);
      on_initial_join_delay(id);
    });
  } else {
    g.initial_join_delay = false;
    g.join_timer->start(g.rebalance_timeout_ms(), [this, id] {
      Entry entry(*this);
      if (Group* g = find(id); g && g->state == GroupState::kPreparingRebalance) complete_join(*g);
    });
    maybe_complete_join(g);
  }
}

void GroupCoordinator::on_initial_join_delay(const std::string& group_id) {
  Group* g = find(group_id);
  if (!g || g->state != GroupState::kPreparingRebalance || !g->initial_join_delay) return;
  if (g->new_member_added && g->initial_remaining_ms != 0) {
    g->new_member_added = false;
    int32_t delay = std::min(options_.initial_rebalance_delay_ms, g->initial_remaining_ms);
    g->initial_remaining_ms = std::max(g->initial_remaining_ms - g->initial_delay_ms, 0);
    g->initial_delay_ms = delay;
    g->join_timer->start(delay, [this, group_id] {
      Entry entry(*this);
      on_initial_join_delay(group_id);
    });
    return;
  }
  complete_join(*g);
}

void GroupCoordinator::maybe_complete_join(Group& g) {
  if (g.state == GroupState::kPreparingRebalance && !g.initial_join_delay && g.has_all_members_joined())
    complete_join(g);
}

void GroupCoordinator::complete_join(Group& g) {
  g.join_timer->stop();
  g.initial_join_delay = false;
  // Dynamic members that did not rejoin in time are dropped; static ones stay (KIP-345).
  std::vector<std::string> gone;
  for (const auto& [id, m] : g.members)
    if (!m->awaiting_join && !m->group_instance_id) gone.push_back(id);
  for (const auto& id : gone) remove_member(g, id);
  if (!gone.empty())
    spdlog::info("group={} removed {} dynamic members that did not rejoin (first: {})", esc(g.id), gone.size(),
                 esc(gone[0]));

  if (!maybe_elect_new_joined_leader(g) && !g.members.empty()) {
    // Only static members that have not rejoined remain: wait for them (or for their
    // session timeouts) another rebalance timeout.
    spdlog::warn("group={} could not complete rebalance: no member rejoined", esc(g.id));
    const std::string id = g.id;
    g.join_timer->start(g.rebalance_timeout_ms(), [this, id] {
      Entry entry(*this);
      if (Group* g = find(id); g && g->state == GroupState::kPreparingRebalance) complete_join(*g);
    });
    return;
  }

  init_next_generation(g);
  if (g.state == GroupState::kEmpty) {
    spdlog::info("group={} generation {} is now empty", esc(g.id), g.generation);
    persist_group(g);
    return;
  }
  spdlog::info("group={} stabilized generation {} ({} members, protocol {}, leader {})", esc(g.id), g.generation,
               g.members.size(), esc(g.protocol_name.value_or("")), esc(g.leader_id.value_or("")));
  for (auto& [id, m] : g.members) {
    // Only the leader's answer carries the members and their metadata.
    answer_join(g, *m, current_generation_result(g, *m, g.is_leader(id)));
    schedule_heartbeat_expiration(g, *m, m->session_timeout_ms);
    m->is_new = false;
    g.pending_sync_members.insert(id);
  }
  schedule_pending_sync(g);
}

bool GroupCoordinator::maybe_elect_new_joined_leader(Group& g) {
  if (!g.leader_id) return false;
  Member* leader = g.get(*g.leader_id);
  if (leader && leader->awaiting_join) return true;
  for (const auto& [id, m] : g.members) {
    if (m->awaiting_join) {
      spdlog::info("group={} leader {} did not rejoin in time; {} leads now", esc(g.id), esc(*g.leader_id), esc(id));
      g.leader_id = id;
      return true;
    }
  }
  return false;
}

void GroupCoordinator::init_next_generation(Group& g) {
  ++g.generation;
  if (!g.members.empty()) {
    g.protocol_name = g.select_protocol();
    g.subscribed_topics = g.compute_subscribed_topics();
    transition(g, GroupState::kCompletingRebalance);
  } else {
    g.protocol_name.reset();
    g.subscribed_topics = g.compute_subscribed_topics();
    transition(g, GroupState::kEmpty);
  }
  g.pending_sync_members.clear();
}

void GroupCoordinator::schedule_pending_sync(Group& g) {
  const std::string id = g.id;
  int32_t generation = g.generation;
  g.sync_timer->start(g.rebalance_timeout_ms(), [this, id, generation] {
    Entry entry(*this);
    expire_pending_sync(id, generation);
  });
}

void GroupCoordinator::expire_pending_sync(const std::string& group_id, int32_t generation) {
  Group* g = find(group_id);
  if (!g || g->generation != generation) return;
  if (g->state != GroupState::kCompletingRebalance && g->state != GroupState::kStable) return;
  if (g->pending_sync_members.empty()) return;
  std::vector<std::string> missing(g->pending_sync_members.begin(), g->pending_sync_members.end());
  for (const auto& id : missing) remove_member(*g, id);
  prepare_rebalance(*g, "removing " + std::to_string(missing.size()) +
                            " members that did not send SyncGroup in time (first: " + missing[0] + ")");
}

void GroupCoordinator::propagate_assignment(Group& g, ErrorCode error) {
  for (auto& [id, m] : g.members) {
    SyncGroupResult r;
    r.error = error;
    if (error == ErrorCode::kNone) {
      r.protocol_type = g.protocol_type;
      r.protocol_name = g.protocol_name;
      r.assignment = m->assignment;
    }
    // The session restarts from the answer: a member whose timer fired while it waited was
    // spared then (awaiting an answer) and needs a fresh deadline now.
    if (answer_sync(*m, std::move(r))) schedule_heartbeat_expiration(g, *m, m->session_timeout_ms);
  }
}

void GroupCoordinator::reset_and_propagate_assignment_error(Group& g, ErrorCode error) {
  for (auto& [_, m] : g.members) m->assignment.clear();
  propagate_assignment(g, error);
}

// ---------------------------------------------------------------------------------------------
// SyncGroup, Heartbeat, LeaveGroup

void GroupCoordinator::sync_group(SyncGroupParams p, SyncCallback done) {
  Entry entry(*this);
  if (stopped_) return answer(std::move(done), sync_error(ErrorCode::kCoordinatorNotAvailable));
  if (p.group_id.empty()) return answer(std::move(done), sync_error(ErrorCode::kInvalidGroupId));
  Group* g = find(p.group_id);
  if (!g) return answer(std::move(done), sync_error(ErrorCode::kUnknownMemberId));
  if (auto err = validate_current_member(*g, p.member_id, p.group_instance_id))
    return answer(std::move(done), sync_error(*err));
  if (p.generation_id != g->generation) return answer(std::move(done), sync_error(ErrorCode::kIllegalGeneration));
  if ((p.protocol_type && g->protocol_type != p.protocol_type) ||
      (p.protocol_name && g->protocol_name != p.protocol_name))
    return answer(std::move(done), sync_error(ErrorCode::kInconsistentGroupProtocol));

  Member& m = *g->get(p.member_id);
  switch (g->state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return answer(std::move(done), sync_error(ErrorCode::kUnknownMemberId));
    case GroupState::kPreparingRebalance:
      return answer(std::move(done), sync_error(ErrorCode::kRebalanceInProgress));
    case GroupState::kCompletingRebalance: {
      answer_sync(m, sync_error(ErrorCode::kRebalanceInProgress));  // superseded by this one
      m.awaiting_sync = std::move(done);
      remove_pending_sync_member(*g, m.member_id);
      if (!g->is_leader(m.member_id)) return;
      // The leader's assignment, stored byte for byte; members it left out get an empty one.
      auto assignment = std::make_shared<std::map<std::string, Bytes>>();
      for (auto& [member_id, bytes] : p.assignments) (*assignment)[member_id] = std::move(bytes);
      size_t missing = 0;
      for (const auto& [id, _] : g->members)
        if (!assignment->count(id)) {
          (*assignment)[id] = Bytes{};
          ++missing;
        }
      if (missing)
        spdlog::warn("group={} generation {}: leader assigned nothing to {} members; they get an empty assignment",
                     esc(g->id), g->generation, missing);
      spdlog::info("group={} assignment received from leader {} for generation {} ({} members, {} static)", esc(g->id),
                   esc(m.member_id), g->generation, g->members.size(), g->static_members.size());
      persist_group(*g, assignment.get(), GroupState::kStable,
                    [this, id = g->id, incarnation = g->incarnation, generation = g->generation,
                     assignment](Status st) {
                      Group* g = find(id);
                      if (!g || g->incarnation != incarnation) return;
                      // Another member may have joined meanwhile: only this generation's
                      // CompletingRebalance may become Stable.
                      if (g->state != GroupState::kCompletingRebalance || g->generation != generation) return;
                      if (!st) {
                        reset_and_propagate_assignment_error(*g, to_kafka_error(st.error()));
                        maybe_prepare_rebalance(*g, "storing the assignment failed");
                        return;
                      }
                      for (auto& [member_id, m] : g->members) {
                        auto it = assignment->find(member_id);
                        m->assignment = it == assignment->end() ? Bytes{} : it->second;
                      }
                      propagate_assignment(*g, ErrorCode::kNone);
                      transition(*g, GroupState::kStable);
                    });
      return;
    }
    case GroupState::kStable: {
      remove_pending_sync_member(*g, m.member_id);
      SyncGroupResult r;
      r.protocol_type = g->protocol_type;
      r.protocol_name = g->protocol_name;
      r.assignment = m.assignment;
      answer(std::move(done), std::move(r));
      schedule_heartbeat_expiration(*g, m, m.session_timeout_ms);
      return;
    }
  }
}

void GroupCoordinator::remove_pending_sync_member(Group& g, const std::string& member_id) {
  g.pending_sync_members.erase(member_id);
  if (g.pending_sync_members.empty()) g.sync_timer->stop();
}

ErrorCode GroupCoordinator::heartbeat(const std::string& group_id, const std::string& member_id,
                                      const std::optional<std::string>& group_instance_id, int32_t generation_id) {
  Entry entry(*this);
  if (stopped_) return ErrorCode::kCoordinatorNotAvailable;
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  Group* g = find(group_id);
  if (!g) return ErrorCode::kUnknownMemberId;
  if (auto err = validate_current_member(*g, member_id, group_instance_id)) return *err;
  if (generation_id != g->generation) return ErrorCode::kIllegalGeneration;
  Member& m = *g->get(member_id);
  switch (g->state) {
    case GroupState::kEmpty:
    case GroupState::kDead:
      return ErrorCode::kUnknownMemberId;
    case GroupState::kCompletingRebalance:
    case GroupState::kStable:
      schedule_heartbeat_expiration(*g, m, m.session_timeout_ms);
      return ErrorCode::kNone;
    case GroupState::kPreparingRebalance:
      schedule_heartbeat_expiration(*g, m, m.session_timeout_ms);
      return ErrorCode::kRebalanceInProgress;
  }
  return ErrorCode::kNone;
}

LeaveGroupResult GroupCoordinator::leave_group(const std::string& group_id, const std::vector<LeavingMember>& members) {
  Entry entry(*this);
  LeaveGroupResult out;
  if (stopped_) {
    out.error = ErrorCode::kCoordinatorNotAvailable;
    return out;
  }
  if (group_id.empty()) {
    out.error = ErrorCode::kInvalidGroupId;
    return out;
  }
  Group* g = find(group_id);
  if (!g) {
    out.error = ErrorCode::kUnknownMemberId;
    return out;
  }
  bool any_left = false;
  for (const auto& lm : members) {
    ErrorCode e = ErrorCode::kNone;
    if (lm.member_id.empty()) {
      // Administrative removal by group.instance.id (kafka-consumer-groups, KIP-345).
      auto it = lm.group_instance_id ? g->static_members.find(*lm.group_instance_id) : g->static_members.end();
      if (it == g->static_members.end()) {
        e = ErrorCode::kUnknownMemberId;
      } else {
        std::string id = it->second;
        spdlog::info("group={} member={} (instance {}) removed by LeaveGroup (reason: {})", esc(g->id), esc(id),
                     esc(*lm.group_instance_id), esc(lm.reason.empty() ? "not provided" : lm.reason, 1024));
        remove_member(*g, id);
      }
    } else if (g->pending_members.count(lm.member_id)) {
      g->pending_members.erase(lm.member_id);
    } else if (auto err = validate_current_member(*g, lm.member_id, lm.group_instance_id)) {
      e = *err;
    } else {
      spdlog::info("group={} member={} left (reason: {})", esc(g->id), esc(lm.member_id),
                   esc(lm.reason.empty() ? "not provided" : lm.reason, 1024));
      remove_member(*g, lm.member_id);
    }
    any_left |= e == ErrorCode::kNone;
    out.member_errors.push_back(e);
  }
  if (any_left) {
    if (g->state == GroupState::kStable || g->state == GroupState::kCompletingRebalance)
      maybe_prepare_rebalance(*g, "members left the group");
    else if (g->state == GroupState::kPreparingRebalance)
      maybe_complete_join(*g);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Liveness

void GroupCoordinator::schedule_heartbeat_expiration(Group& g, Member& m, int64_t timeout_ms) {
  if (!m.heartbeat_timer) m.heartbeat_timer = timers_.make_timer();
  m.heartbeat_timer->start(timeout_ms, [this, group_id = g.id, member_id = m.member_id] {
    Entry entry(*this);
    on_heartbeat_expired(group_id, member_id);
  });
}

void GroupCoordinator::on_heartbeat_expired(const std::string& group_id, const std::string& member_id) {
  Group* g = find(group_id);
  if (!g) return;
  Member* m = g->get(member_id);
  if (!m || m->alive_without_heartbeat()) return;
  spdlog::info("group={} member={} failed: no heartbeat within its session timeout of {} ms{}", esc(g->id), esc(member_id),
               m->is_new ? options_.new_member_join_timeout_ms : m->session_timeout_ms,
               m->is_new ? " (new member join timeout)" : "");
  remove_member_and_update_group(*g, member_id, "member " + member_id + " expired");
}

void GroupCoordinator::add_pending_member(Group& g, const std::string& member_id, int32_t session_timeout_ms) {
  auto timer = timers_.make_timer();
  timer->start(session_timeout_ms, [this, group_id = g.id, member_id] {
    Entry entry(*this);
    on_pending_member_expired(group_id, member_id);
  });
  g.pending_members[member_id] = std::move(timer);
}

void GroupCoordinator::on_pending_member_expired(const std::string& group_id, const std::string& member_id) {
  Group* g = find(group_id);
  if (!g || !g->pending_members.count(member_id)) return;
  spdlog::info("group={} pending member={} expired: it did not rejoin with its member id", esc(g->id), esc(member_id));
  g->pending_members.erase(member_id);  // destroys the timer running this callback: touch nothing of it
  if (g->state == GroupState::kPreparingRebalance) maybe_complete_join(*g);
}

void GroupCoordinator::remove_member_and_update_group(Group& g, const std::string& member_id,
                                                      const std::string& reason) {
  remove_member(g, member_id);
  switch (g.state) {
    case GroupState::kStable:
    case GroupState::kCompletingRebalance:
      maybe_prepare_rebalance(g, reason);
      break;
    case GroupState::kPreparingRebalance:
      maybe_complete_join(g);
      break;
    case GroupState::kEmpty:
    case GroupState::kDead:
      break;
  }
}

void GroupCoordinator::remove_member(Group& g, const std::string& member_id) {
  auto it = g.members.find(member_id);
  if (it != g.members.end()) {
    Member& m = *it->second;
    // A member still awaiting an answer gets one (UNKNOWN_MEMBER_ID: rejoin from scratch).
    answer_join(g, m, join_error(ErrorCode::kUnknownMemberId, ""));
    answer_sync(m, sync_error(ErrorCode::kUnknownMemberId));
    g.dec_protocols(m);
    if (m.group_instance_id) g.static_members.erase(*m.group_instance_id);
    g.members.erase(it);
  }
  if (g.is_leader(member_id)) {
    if (g.members.empty())
      g.leader_id.reset();
    else
      g.leader_id = g.members.begin()->first;
  }
  g.pending_members.erase(member_id);
  g.pending_sync_members.erase(member_id);
}

// ---------------------------------------------------------------------------------------------
// Offsets

std::optional<ErrorCode> GroupCoordinator::validate_offset_commit(const Group& g, const OffsetCommitParams& p) const {
  // Generation -1 comes from the admin client or a consumer without group management: fine
  // while the group has no members.
  if (p.generation_id < 0 && g.state == GroupState::kEmpty) return std::nullopt;
  if (p.generation_id >= 0 || !p.member_id.empty() || p.group_instance_id) {
    if (auto err = validate_current_member(g, p.member_id, p.group_instance_id)) return err;
    if (p.generation_id != g.generation) return ErrorCode::kIllegalGeneration;
  } else if (g.state != GroupState::kEmpty) {
    return ErrorCode::kUnknownMemberId;
  }
  // The member knows the new generation but has no assignment yet.
  if (g.state == GroupState::kCompletingRebalance) return ErrorCode::kRebalanceInProgress;
  return std::nullopt;
}

void GroupCoordinator::commit_offsets(OffsetCommitParams p, std::function<void(std::vector<ErrorCode>)> done) {
  Entry entry(*this);
  std::vector<ErrorCode> errors(p.entries.size(), ErrorCode::kNone);
  auto fail_all = [&](ErrorCode e) {
    std::fill(errors.begin(), errors.end(), e);
    outbox_.push_back([done = std::move(done), errors = std::move(errors)] { done(errors); });
  };
  if (stopped_) return fail_all(ErrorCode::kCoordinatorNotAvailable);
  Group* g = find(p.group_id);
  if (!g) {
    if (p.generation_id >= 0)
      return fail_all(p.group_id_not_found_error ? ErrorCode::kGroupIdNotFound : ErrorCode::kIllegalGeneration);
    spdlog::info("group={} created by an offset commit without group management", esc(p.group_id));
    g = &create_group(p.group_id);
  }
  if (auto err = validate_offset_commit(*g, p)) return fail_all(*err);
  // Commits keep a member's session alive, as heartbeats do.
  if (g->state == GroupState::kStable || g->state == GroupState::kPreparingRebalance) {
    if (Member* m = g->get(p.member_id)) schedule_heartbeat_expiration(*g, *m, m->session_timeout_ms);
  }

  offsets_.commit(p.group_id, std::move(p.entries), p.retention_time_ms, std::move(done));
}

void GroupCoordinator::delete_offsets(const std::string& group_id, const std::vector<TopicPartitionIndex>& partitions,
                                      std::function<void(ErrorCode, std::vector<ErrorCode>)> done) {
  Entry entry(*this);
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::kNone);
  auto reply = [&](ErrorCode group_error) {
    if (group_error != ErrorCode::kNone) errors.clear();
    outbox_.push_back([done = std::move(done), group_error, errors = std::move(errors)] { done(group_error, errors); });
  };
  if (stopped_) return reply(ErrorCode::kCoordinatorNotAvailable);
  Group* g = find(group_id);
  if (!g) return reply(ErrorCode::kGroupIdNotFound);
  bool empty = g->state == GroupState::kEmpty;
  bool consumer = g->protocol_type && *g->protocol_type == kConsumerProtocolType;
  if (!empty && !consumer) return reply(ErrorCode::kNonEmptyGroup);
  std::function<bool(const std::string&)> subscribed;
  if (!empty) subscribed = [g](const std::string& topic) { return g->is_subscribed_to_topic(topic); };
  offsets_.delete_offsets(group_id, partitions, subscribed, std::move(done));
}

// Kafka's ClassicGroup.offsetExpirationCondition: an empty group's offsets expire retention
// after it became empty; a stable consumer group's offsets of topics it no longer subscribes to
// expire retention after their commit; a group without protocol (offset storage only) expires
// each offset retention after its commit.
OffsetExpiration GroupCoordinator::offset_expiration(const Group& g) const {
  using Clock = OffsetExpiration::Clock;
  if (!g.protocol_type) return {Clock::kSinceCommit, 0, nullptr};
  if (g.state == GroupState::kEmpty) return {Clock::kSinceEmpty, g.state_since_ms, nullptr};
  if (*g.protocol_type == kConsumerProtocolType && g.subscribed_topics && g.state == GroupState::kStable)
    return {Clock::kSinceCommit, 0, &*g.subscribed_topics};
  return {Clock::kNone, 0, nullptr};
}

void GroupCoordinator::expire_offsets() {
  Entry entry(*this);
  if (stopped_) return;
  std::vector<std::string> drop;
  for (auto& [id, gp] : groups_) {
    // A group whose offsets are expiring is looked at again once that is durable.
    if (!offsets_.expire_offsets(id, offset_expiration(*gp)) && is_droppable(*gp)) drop.push_back(id);
  }
  for (const auto& id : drop)
    if (Group* g = find(id)) maybe_drop_empty_group(*g);
}

bool GroupCoordinator::is_droppable(const Group& g) const {
  return g.state == GroupState::kEmpty && g.members.empty() && g.pending_members.empty() &&
         !offsets_.has_offsets(g.id);
}

// Kafka's cleanupGroupMetadata: an empty group whose offsets are all gone goes away.
void GroupCoordinator::maybe_drop_empty_group(Group& g) {
  if (!is_droppable(g)) return;
  std::string id = g.id;
  spdlog::info("group={} removed: empty and without committed offsets", esc(id));
  groups_.erase(id);
  write([id](SQLite::Database& db) { state::delete_group(db, id); }, nullptr);
}

// ---------------------------------------------------------------------------------------------
// Admin

GroupDescription GroupCoordinator::describe_group(const std::string& group_id) const {
  GroupDescription d;
  d.group_id = group_id;
  const Group* g = find(group_id);
  if (!g) {
    d.state = group_state_name(GroupState::kDead);
    return d;
  }
  d.state = group_state_name(g->state);
  d.protocol_type = g->protocol_type.value_or("");
  bool stable = g->state == GroupState::kStable && g->protocol_name;
  if (stable) d.protocol_name = *g->protocol_name;
  for (const auto& [id, m] : g->members) {
    GroupMemberDescription md{id, m->group_instance_id, m->client_id, m->client_host, {}, {}};
    if (stable) {
      if (const Bytes* b = m->metadata(*g->protocol_name)) md.metadata = *b;
      md.assignment = m->assignment;
    }
    d.members.push_back(std::move(md));
  }
  return d;
}

std::vector<GroupListing> GroupCoordinator::list_groups(const std::vector<std::string>& states_filter,
                                                        const std::vector<std::string>& types_filter) const {
  std::set<std::string> states, types;
  for (const auto& s : states_filter) states.insert(lower(s));
  for (const auto& t : types_filter) types.insert(lower(t));
  std::vector<GroupListing> out;
  if (!types.empty() && !types.count("classic")) return out;
  for (const auto& [id, g] : groups_) {
    if (!states.empty() && !states.count(lower(group_state_name(g->state)))) continue;
    out.push_back({id, g->protocol_type.value_or(""), group_state_name(g->state)});
  }
  return out;
}

void GroupCoordinator::delete_groups(const std::vector<std::string>& group_ids,
                                     std::function<void(std::vector<ErrorCode>)> done) {
  Entry entry(*this);
  std::vector<ErrorCode> errors(group_ids.size(), ErrorCode::kNone);
  auto doomed = std::make_shared<std::vector<std::string>>();
  std::vector<size_t> written;
  for (size_t i = 0; i < group_ids.size(); ++i) {
    Group* g = stopped_ ? nullptr : find(group_ids[i]);
    if (stopped_) {
      errors[i] = ErrorCode::kCoordinatorNotAvailable;
    } else if (!g) {
      errors[i] = ErrorCode::kGroupIdNotFound;
    } else if (g->state != GroupState::kEmpty) {
      errors[i] = ErrorCode::kNonEmptyGroup;
    } else {
      // The group is gone at once (Dead in Kafka), its offsets with it (state::delete_group);
      // a commit completing later finds no group.
      groups_.erase(group_ids[i]);
      offsets_.forget_group(group_ids[i]);
      doomed->push_back(group_ids[i]);
      written.push_back(i);
    }
  }
  if (doomed->empty()) {
    outbox_.push_back([done = std::move(done), errors = std::move(errors)] { done(errors); });
    return;
  }
  write(
      [doomed](SQLite::Database& db) {
        for (const auto& id : *doomed) state::delete_group(db, id);
      },
      [this, doomed, errors = std::move(errors), written = std::move(written),
       done = std::move(done)](Status st) mutable {
        if (!st)
          for (size_t i : written) errors[i] = to_kafka_error(st.error());
        else
          for (const auto& id : *doomed) spdlog::info("group={} deleted with its committed offsets", esc(id));
        outbox_.push_back([done = std::move(done), errors = std::move(errors)] { done(errors); });
      });
}

std::optional<GroupState> GroupCoordinator::group_state(const std::string& group_id) const {
  const Group* g = find(group_id);
  if (!g) return std::nullopt;
  return g->state;
}

int32_t GroupCoordinator::generation(const std::string& group_id) const {
  const Group* g = find(group_id);
  return g ? g->generation : -1;
}

size_t GroupCoordinator::member_count(const std::string& group_id) const {
  const Group* g = find(group_id);
  return g ? g->members.size() : 0;
}

}  // namespace kib::bridge
