#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_coordinator_entry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "bridge/errors.h"
#include "bridge/groups/classic_group.h"
#include "bridge/groups/consumer_group_rows.h"
#include "bridge/groups/consumer_protocol.h"
#include "common/text.h"
#include "state/consumer_group_store.h"
#include "state/streams_group_store.h"
#include "state/group_store.h"
#include "state/state_store.h"

namespace kib::bridge {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// The coordinator's side of one classic group (ClassicGroupHost): its deadlines are timers of the
// coordinator's clock, its answers go to the outbox, its writes to the state store. The group
// owns it, so its timers go with the group, and a write completing after the group went (deleted,
// or stop()) finds it gone and does not call back. A deadline that passes finds its group by id,
// inside an Entry, as every coordinator callback does.
class GroupCoordinator::ClassicHost final : public ClassicGroupHost {
 public:
  ClassicHost(GroupCoordinator& c, std::string group_id)
      : c_(c),
        group_id_(std::move(group_id)),
        join_timer_(c.timers_.make_timer()),
        sync_timer_(c.timers_.make_timer()) {}

  int64_t now_ms() const override { return c_.timers_.now_ms(); }
  void answer(JoinCallback cb, JoinGroupResult r) override { c_.answer(std::move(cb), std::move(r)); }
  void answer(SyncCallback cb, SyncGroupResult r) override { c_.answer(std::move(cb), std::move(r)); }

  void arm_heartbeat(const std::string& member_id, int64_t delay_ms) override {
    arm(heartbeat_timers_[member_id], delay_ms, [member_id](ClassicGroup& g) { g.on_heartbeat_expired(member_id); });
  }
  void cancel_heartbeat(const std::string& member_id) override { heartbeat_timers_.erase(member_id); }
  void arm_pending_member(const std::string& member_id, int64_t delay_ms) override {
    arm(pending_member_timers_[member_id], delay_ms,
        [member_id](ClassicGroup& g) { g.on_pending_member_expired(member_id); });
  }
  // May run from the very timer it destroys (the group forgets an expired pending member): the
  // timer moved its callback out before running it.
  void cancel_pending_member(const std::string& member_id) override { pending_member_timers_.erase(member_id); }
  void arm_join_deadline(int64_t delay_ms) override {
    arm(join_timer_, delay_ms, [](ClassicGroup& g) { g.on_join_deadline(); });
  }
  void cancel_join_deadline() override { join_timer_->stop(); }
  void arm_sync_deadline(int64_t delay_ms, int32_t generation) override {
    arm(sync_timer_, delay_ms, [generation](ClassicGroup& g) { g.on_sync_deadline(generation); });
  }
  void cancel_sync_deadline() override { sync_timer_->stop(); }

  void persist(const ClassicGroup& g, const std::map<std::string, Bytes>* assignment,
               std::optional<GroupState> as_state, std::function<void(Status)> done) override {
    if (done)
      done = [alive = alive_.token(), done = std::move(done)](Status st) {
        if (alive) done(std::move(st));
      };
    c_.persist_group(g, assignment, as_state, std::move(done));
  }

 private:
  void arm(std::unique_ptr<GroupTimer>& timer, int64_t delay_ms, std::function<void(ClassicGroup&)> fn) {
    if (!timer) timer = c_.timers_.make_timer();
    timer->start(delay_ms, [&c = c_, group_id = group_id_, fn = std::move(fn)] {
      Entry entry(c);
      if (ClassicGroup* g = c.find_classic(group_id)) fn(*g);
    });
  }

  GroupCoordinator& c_;
  const std::string group_id_;
  std::unique_ptr<GroupTimer> join_timer_;
  std::unique_ptr<GroupTimer> sync_timer_;
  std::map<std::string, std::unique_ptr<GroupTimer>> heartbeat_timers_;       // by member id
  std::map<std::string, std::unique_ptr<GroupTimer>> pending_member_timers_;  // by member id
  Liveness alive_;
};

// The coordinator's side of one consumer group (ConsumerGroupHost): as ClassicHost, session and
// rebalance timers per member on the coordinator's clock, answers through the outbox, writes to
// the state store, and the topic catalog's partition counts.
class GroupCoordinator::ConsumerHost final : public ConsumerGroupHost {
 public:
  ConsumerHost(GroupCoordinator& c, std::string group_id) : c_(c), group_id_(std::move(group_id)) {}

  int64_t now_ms() const override { return c_.timers_.now_ms(); }
  void arm_session(const std::string& member_id, int64_t delay_ms) override {
    arm(session_timers_[member_id], delay_ms, [member_id](ConsumerGroup& g) { g.on_session_expired(member_id); });
  }
  void cancel_session(const std::string& member_id) override { session_timers_.erase(member_id); }
  void arm_rebalance(const std::string& member_id, int32_t epoch, int64_t delay_ms) override {
    arm(rebalance_timers_[member_id], delay_ms,
        [member_id, epoch](ConsumerGroup& g) { g.on_rebalance_expired(member_id, epoch); });
  }
  void cancel_rebalance(const std::string& member_id) override { rebalance_timers_.erase(member_id); }
  std::optional<int32_t> partitions(const std::string& topic) const override {
    return c_.options_.topic_partitions ? c_.options_.topic_partitions(topic) : std::nullopt;
  }
  std::vector<std::string> topic_names() const override {
    return c_.options_.topic_names ? c_.options_.topic_names() : std::vector<std::string>{};
  }
  void persist(const ConsumerGroup& g, const std::string* only_member, std::function<void(Status)> done) override {
    if (done)
      done = [alive = alive_.token(), done = std::move(done)](Status st) {
        if (alive) done(std::move(st));
      };
    c_.persist_consumer_group(g, only_member, std::move(done));
  }
  void answer(ConsumerHeartbeatCallback cb, ConsumerHeartbeatResult r) override { c_.answer(std::move(cb), std::move(r)); }
  void answer(JoinCallback cb, JoinGroupResult r) override { c_.answer(std::move(cb), std::move(r)); }
  void answer(SyncCallback cb, SyncGroupResult r) override { c_.answer(std::move(cb), std::move(r)); }
  void arm_classic(const std::string& member_id, ClassicDeadline d, int64_t delay_ms) override {
    auto& timer = (d == ClassicDeadline::kJoin ? join_timers_ : sync_timers_)[member_id];
    if (d == ClassicDeadline::kJoin && timer && timer->armed()) return;  // Kafka's scheduleIfAbsent
    const char* why = d == ClassicDeadline::kJoin ? "the classic member failed to join within the rebalance timeout"
                                                  : "the member failed to sync within timeout";
    arm(timer, delay_ms, [member_id, why](ConsumerGroup& g) { g.on_classic_timeout(member_id, why); });
  }
  void cancel_classic(const std::string& member_id, ClassicDeadline d) override {
    (d == ClassicDeadline::kJoin ? join_timers_ : sync_timers_).erase(member_id);
  }
  void maybe_downgrade(bool rebalance) override { c_.schedule_downgrade(group_id_, rebalance); }

 private:
  // A timer may destroy itself while it runs (an expired member's timers are cancelled): the timer
  // moved its callback out before running it.
  void arm(std::unique_ptr<GroupTimer>& timer, int64_t delay_ms, std::function<void(ConsumerGroup&)> fn) {
    if (!timer) timer = c_.timers_.make_timer();
    timer->start(delay_ms, [&c = c_, group_id = group_id_, fn = std::move(fn)] {
      Entry entry(c);
      if (ConsumerGroup* g = c.find_consumer(group_id)) fn(*g);
    });
  }

  GroupCoordinator& c_;
  const std::string group_id_;
  std::map<std::string, std::unique_ptr<GroupTimer>> session_timers_;    // by member id
  std::map<std::string, std::unique_ptr<GroupTimer>> rebalance_timers_;  // by member id
  std::map<std::string, std::unique_ptr<GroupTimer>> join_timers_;       // classic members, by member id
  std::map<std::string, std::unique_ptr<GroupTimer>> sync_timers_;       // classic members, by member id
  Liveness alive_;
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
  // Waiting JoinGroup and SyncGroup requests get NOT_COORDINATOR now; then every timer goes
  // with its group.
  for (auto& [_, g] : groups_) g->unload();
  groups_.clear();
  retired_.clear();
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
void GroupCoordinator::answer(ConsumerHeartbeatCallback cb, ConsumerHeartbeatResult r) {
  if (cb) outbox_.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
}

// ---------------------------------------------------------------------------------------------
// The groups, loading and persistence

Status GroupCoordinator::load() {
  int64_t now = timers_.now_ms();
  std::vector<state::GroupRow> rows;
  std::vector<state::StoredConsumerGroup> consumer_rows;
  std::vector<state::StoredStreamsGroup> streams_rows;
  Status st = store_.run_blocking([&](SQLite::Database& db) {
    rows = state::load_groups_for_restart(db, now);
    consumer_rows = state::load_consumer_groups(db);
    streams_rows = state::load_streams_groups(db);
  });
  if (!st) return st;
  groups_.clear();
  for (const auto& row : rows) create_group(row.group_id).restore(row.generation, row.protocol_type, row.updated_at_ms);
  // Consumer groups come back as they were, members included: each member's session starts
  // again now and its next heartbeat carries on at its epoch.
  size_t consumer_members = 0;
  for (const auto& stored : consumer_rows) {
    std::string error;
    auto snapshot = consumer_group_from_rows(stored, &error);
    if (!snapshot) {
      spdlog::warn("group={} consumer group state unreadable ({}): loaded without members", esc(stored.group.group_id),
                   esc(error));
      snapshot = ConsumerGroupSnapshot{stored.group.group_id, stored.group.group_epoch + 1,
                                       stored.group.assignment_epoch, {}, {}};
    }
    consumer_members += snapshot->members.size();
    create_consumer_group(stored.group.group_id).restore(*snapshot);
  }
  const size_t streams_members = restore_streams_groups(streams_rows);
  // Every group with committed offsets has a row (load_groups_for_restart adds the missing);
  // a group must be known here for its offsets to expire.
  for (const auto& id : offsets_.groups())
    if (!find(id)) create_group(id);
  spdlog::info("groups: loaded {} groups ({} consumer groups with {} members, {} streams groups with {} members; "
               "classic groups Empty until their members rejoin)",
               groups_.size(), consumer_rows.size(), consumer_members, streams_rows.size(), streams_members);
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

Group* GroupCoordinator::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

// Every group is a classic group today. When another type comes (group.h), a classic request for
// one of its groups is decided here: Kafka 4 answers some (a classic member joining a consumer
// group, KIP-848's upgrade path) and refuses others with INCONSISTENT_GROUP_PROTOCOL.
ClassicGroup* GroupCoordinator::find_classic(const std::string& group_id) const {
  Group* g = find(group_id);
  return g && g->type() == GroupType::kClassic ? static_cast<ClassicGroup*>(g) : nullptr;
}

ConsumerGroup* GroupCoordinator::find_consumer(const std::string& group_id) const {
  Group* g = find(group_id);
  return g && g->type() == GroupType::kConsumer ? static_cast<ConsumerGroup*>(g) : nullptr;
}

ConsumerGroup& GroupCoordinator::create_consumer_group(const std::string& group_id) {
  ConsumerGroupOptions o;
  o.session_timeout_ms = options_.consumer_session_timeout_ms;
  o.heartbeat_interval_ms = options_.consumer_heartbeat_interval_ms;
  if (options_.consumer_timeouts) std::tie(o.session_timeout_ms, o.heartbeat_interval_ms) = options_.consumer_timeouts(group_id);
  o.max_size = options_.max_size;
  o.assignors = options_.consumer_assignors;
  o.max_regex_bytes = options_.consumer_max_regex_bytes;
  o.max_subscribed_topics = options_.consumer_max_subscribed_topics;
  auto g = std::make_unique<ConsumerGroup>(group_id, std::move(o), std::make_unique<ConsumerHost>(*this, group_id));
  ConsumerGroup& ref = *g;
  groups_[group_id] = std::move(g);
  return ref;
}

void GroupCoordinator::group_config_changed(const std::string& group_id) {
  // A streams group takes its new settings at its next heartbeat: a new standby count moves the
  // group epoch there (Kafka's lastAssignmentConfigs).
  if (streams::StreamsGroup* sg = find_streams(group_id); sg && options_.streams_options)
    sg->set_options(options_.streams_options(group_id));
  ConsumerGroup* g = find_consumer(group_id);
  if (!g || !options_.consumer_timeouts) return;
  const auto [session, heartbeat] = options_.consumer_timeouts(group_id);
  g->set_timeouts(session, heartbeat);
}

void GroupCoordinator::persist_consumer_group(const ConsumerGroup& g, const std::string* only_member,
                                              std::function<void(Status)> done) {
  ConsumerGroupSnapshot s;
  if (only_member) {
    s = ConsumerGroupSnapshot{g.id(), g.group_epoch(), g.assignment_epoch(), g.snapshot_partitions(), {}};
    s.members.push_back(g.member_snapshot(*only_member));
  } else {
    s = g.snapshot();
  }
  auto [row, members] = consumer_group_rows(s, g.state_name(), timers_.now_ms());
  if (only_member && members.size() == 1) {
    write([row = std::move(row), member = std::move(members.front())](SQLite::Database& db) {
      state::save_consumer_group_member(db, row, member);
    }, std::move(done));
    return;
  }
  write([row = std::move(row), members = std::move(members)](SQLite::Database& db) {
    state::save_consumer_group(db, row, members);
  }, std::move(done));
}

ClassicGroup& GroupCoordinator::create_group(const std::string& group_id) {
  auto g = std::make_unique<ClassicGroup>(group_id, options_, std::make_unique<ClassicHost>(*this, group_id));
  ClassicGroup& ref = *g;
  groups_[group_id] = std::move(g);
  return ref;
}

void GroupCoordinator::write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done) {
  ++pending_writes_;
  store_.write(std::move(job), [this, alive = alive_.token(), done = std::move(done)](Status st) mutable {
    if (!alive) return;
    Entry entry(*this);
    --pending_writes_;
    if (!st) spdlog::warn("groups: state write failed: {}", st.error().message);
    if (done) done(std::move(st));
    if (pending_writes_ == 0) retired_.clear();
  });
}

void GroupCoordinator::persist_group(const ClassicGroup& g, const std::map<std::string, Bytes>* assignment,
                                     std::optional<GroupState> as_state, std::function<void(Status)> done) {
  state::GroupRow row;
  row.group_id = g.id();
  row.protocol_type = g.protocol_type();
  row.protocol_name = g.protocol_name().value_or("");
  row.generation = g.generation();
  row.state = group_state_name(as_state.value_or(g.state()));
  row.leader_id = g.leader_id().value_or("");
  row.updated_at_ms = timers_.now_ms();
  std::vector<state::GroupMemberRow> members;
  members.reserve(g.members().size());
  bool consumer = g.protocol_type() == kConsumerProtocolType;
  for (const auto& [id, m] : g.members()) {
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
      const Bytes* md = g.protocol_name() ? m->metadata(*g.protocol_name()) : nullptr;
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
// The classic group requests: checked here as far as they need no group, then the group's

void GroupCoordinator::join_group(JoinGroupParams p, JoinCallback done) {
  Entry entry(*this);
  if (stopped_) return answer(std::move(done), join_error(ErrorCode::kCoordinatorNotAvailable, p.member_id));
  if (p.group_id.empty()) return answer(std::move(done), join_error(ErrorCode::kInvalidGroupId, p.member_id));
  if (p.session_timeout_ms < options_.min_session_timeout_ms || p.session_timeout_ms > options_.max_session_timeout_ms)
    return answer(std::move(done), join_error(ErrorCode::kInvalidSessionTimeout, p.member_id));

  ClassicGroup* g = find_classic(p.group_id);
  if (Group* other = g ? nullptr : find(p.group_id)) {
    // A consumer group (KIP-848): an empty one becomes a classic group, as Kafka's
    // maybeDeleteEmptyConsumerGroup does; a classic member joins a live one as one of its members
    // (KIP-848's online migration) unless the migration policy is disabled.
    if (other->type() == GroupType::kConsumer && !other->is_empty()) {
      if (!options_.consumer_upgrade && !options_.consumer_downgrade) {
        spdlog::info("group={} Cannot join the consumer group with the classic protocol because the group migration "
                     "is disabled.", esc(p.group_id));
        return answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, p.member_id));
      }
      return static_cast<ConsumerGroup*>(other)->classic_join(p, std::move(done));
    }
    if (!other->is_empty())
      return answer(std::move(done), join_error(ErrorCode::kInconsistentGroupProtocol, p.member_id));
    spdlog::info("group={} converted from an empty {} group to a classic group", esc(p.group_id),
                 group_type_name(other->type()));
    forget_rows_of(*other);
    groups_.erase(p.group_id);
  }
  if (!g) {
    // A group is created by a new member only; a known member id of an unknown group is stale.
    if (!p.member_id.empty()) return answer(std::move(done), join_error(ErrorCode::kUnknownMemberId, p.member_id));
    g = &create_group(p.group_id);
    persist_group(*g, nullptr, std::nullopt, nullptr);
  }
  g->join(p, std::move(done));
}

void GroupCoordinator::sync_group(SyncGroupParams p, SyncCallback done) {
  Entry entry(*this);
  if (stopped_) return answer(std::move(done), sync_error(ErrorCode::kCoordinatorNotAvailable));
  if (p.group_id.empty()) return answer(std::move(done), sync_error(ErrorCode::kInvalidGroupId));
  if (ConsumerGroup* cg = find_consumer(p.group_id)) return cg->classic_sync(p, std::move(done));
  ClassicGroup* g = find_classic(p.group_id);
  if (!g) return answer(std::move(done), sync_error(ErrorCode::kUnknownMemberId));
  g->sync(p, std::move(done));
}

ErrorCode GroupCoordinator::heartbeat(const std::string& group_id, const std::string& member_id,
                                      const std::optional<std::string>& group_instance_id, int32_t generation_id) {
  Entry entry(*this);
  if (stopped_) return ErrorCode::kCoordinatorNotAvailable;
  if (group_id.empty()) return ErrorCode::kInvalidGroupId;
  if (ConsumerGroup* cg = find_consumer(group_id)) return cg->classic_heartbeat(member_id, group_instance_id, generation_id);
  ClassicGroup* g = find_classic(group_id);
  if (!g) return ErrorCode::kUnknownMemberId;
  return g->heartbeat(member_id, group_instance_id, generation_id);
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
  if (ConsumerGroup* cg = find_consumer(group_id)) return cg->classic_leave(members);
  ClassicGroup* g = find_classic(group_id);
  if (!g) {
    out.error = ErrorCode::kUnknownMemberId;
    return out;
  }
  return g->leave(members);
}

// ---------------------------------------------------------------------------------------------
// KIP-848 consumer groups

void GroupCoordinator::consumer_group_heartbeat(ConsumerHeartbeatParams p, int16_t version,
                                                ConsumerHeartbeatCallback done) {
  Entry entry(*this);
  auto refuse = [&](ErrorCode e, std::string message) {
    ConsumerHeartbeatResult r;
    r.error = e;
    r.message = std::move(message);
    answer(std::move(done), std::move(r));
  };
  if (stopped_) return refuse(ErrorCode::kCoordinatorNotAvailable, "");
  if (options_.topics_known && !options_.topics_known()) {
    if (ConsumerGroup* g = find_consumer(p.group_id)) g->keep_alive(p.member_id);
    return refuse(ErrorCode::kCoordinatorLoadInProgress, "");
  }
  // Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid. v1+ members make their own ids.
  if ((version >= 1 || p.member_epoch > 0 || p.member_epoch == -1) && p.member_id.empty())
    return refuse(ErrorCode::kInvalidRequest, "MemberId can't be empty.");
  if (p.group_id.empty()) return refuse(ErrorCode::kInvalidRequest, "GroupId can't be empty.");
  if (p.instance_id && p.instance_id->empty()) return refuse(ErrorCode::kInvalidRequest, "InstanceId can't be empty.");
  if (p.rack_id && p.rack_id->empty()) return refuse(ErrorCode::kInvalidRequest, "RackId can't be empty.");
  if (p.member_epoch == 0) {
    if (p.rebalance_timeout_ms == -1)
      return refuse(ErrorCode::kInvalidRequest, "RebalanceTimeoutMs must be provided in first request.");
    if (!p.owned || !p.owned->empty())
      return refuse(ErrorCode::kInvalidRequest, "TopicPartitions must be empty when (re-)joining.");
    if (!p.subscribed_topic_names && !p.subscribed_topic_regex)
      return refuse(ErrorCode::kInvalidRequest,
                    "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.");
  } else if (p.member_epoch == -2) {
    if (!p.instance_id) return refuse(ErrorCode::kInvalidRequest, "InstanceId can't be null.");
  } else if (p.member_epoch < -2) {
    return refuse(ErrorCode::kInvalidRequest, "MemberEpoch is invalid.");
  }
  if (p.server_assignor && std::find(options_.consumer_assignors.begin(), options_.consumer_assignors.end(),
                                     *p.server_assignor) == options_.consumer_assignors.end()) {
    std::string names;
    for (const auto& a : options_.consumer_assignors) names += (names.empty() ? "" : ", ") + a;
    return refuse(ErrorCode::kUnsupportedAssignor,
                  "ServerAssignor " + *p.server_assignor + " is not supported. Supported assignors: " + names + ".");
  }

  // Kafka's getOrMaybeCreateConsumerGroup: a joining member creates the group; an empty classic
  // group becomes a consumer group; a live classic group is converted (KIP-848's online upgrade)
  // and any other request for a missing or non-consumer group is GROUP_ID_NOT_FOUND.
  ConsumerGroup* g = find_consumer(p.group_id);
  if (!g) {
    Group* other = find(p.group_id);
    const bool joining = p.member_epoch == 0;
    if (joining && other && other->type() == GroupType::kClassic && !other->is_empty())
      return upgrade_and_join(*static_cast<ClassicGroup*>(other), p, std::move(done));
    if (!joining || (other && !other->is_empty()))
      return refuse(ErrorCode::kGroupIdNotFound,
                    other ? "Group " + p.group_id + " is not a consumer group."
                          : "Consumer group " + p.group_id + " not found.");
    std::unique_ptr<Group> previous;  // the empty classic group, until the join is accepted
    if (other) {
      previous = std::move(groups_[p.group_id]);
      groups_.erase(p.group_id);
    }
    g = &create_consumer_group(p.group_id);
    g->heartbeat(p, std::move(done));
    // A refused join leaves no group behind (Kafka writes nothing then); an empty classic group
    // it would have replaced stays.
    if (g->is_empty()) {
      groups_.erase(p.group_id);
      if (previous) groups_[p.group_id] = std::move(previous);
    } else if (previous) {
      spdlog::info("group={} converted from an empty {} group to a consumer group", esc(p.group_id),
                   group_type_name(previous->type()));
      forget_rows_of(*previous);
    }
    return;
  }
  g->heartbeat(p, std::move(done));
}

ConsumerGroupDescribeResult GroupCoordinator::consumer_group_describe(const std::string& group_id) const {
  ConsumerGroupDescribeResult r;
  const Group* any = find(group_id);
  const ConsumerGroup* g = find_consumer(group_id);
  if (!g) {
    r.error = ErrorCode::kGroupIdNotFound;
    r.message = any ? "Group " + group_id + " is not a consumer group." : "Group " + group_id + " not found.";
    return r;
  }
  r.group = g->view();
  return r;
}

std::optional<ErrorCode> GroupCoordinator::validate_offset_fetch(const std::string& group_id,
                                                                 const std::string& member_id,
                                                                 int32_t member_epoch) const {
  const Group* g = find(group_id);
  if (!g) return std::nullopt;
  return g->validate_offset_fetch(member_id, member_epoch);
}

// ---------------------------------------------------------------------------------------------
// Offsets

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
  if (auto err = g->validate_offset_commit(p)) return fail_all(*err);
  g->on_offset_commit(p);

  offsets_.commit(p.group_id, std::move(p.entries), p.retention_time_ms, std::move(done));
}

std::optional<ErrorCode> GroupCoordinator::validate_txn_offset_commit(const OffsetCommitParams& p) const {
  if (stopped_) return ErrorCode::kCoordinatorNotAvailable;
  const Group* g = find(p.group_id);
  if (!g) return p.generation_id < 0 ? std::nullopt : std::optional<ErrorCode>(ErrorCode::kIllegalGeneration);
  return g->validate_offset_commit(p);
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
  if (auto err = g->validate_offset_delete()) return reply(*err);
  offsets_.delete_offsets(
      group_id, partitions, [g](const std::string& topic) { return g->is_subscribed_to_topic(topic); },
      std::move(done));
}

void GroupCoordinator::expire_offsets() {
  Entry entry(*this);
  if (stopped_) return;
  std::vector<std::string> drop;
  for (auto& [id, g] : groups_) {
    // A group whose offsets are expiring is looked at again once that is durable.
    if (!offsets_.expire_offsets(id, g->offset_expiration()) && is_droppable(*g)) drop.push_back(id);
  }
  for (const auto& id : drop)
    if (Group* g = find(id)) maybe_drop_empty_group(*g);
}

bool GroupCoordinator::is_droppable(const Group& g) const { return g.is_empty() && !offsets_.has_offsets(g.id()); }

// Kafka's cleanupGroupMetadata: an empty group whose offsets are all gone goes away.
void GroupCoordinator::maybe_drop_empty_group(Group& g) {
  if (!is_droppable(g)) return;
  std::string id = g.id();
  spdlog::info("group={} removed: empty and without committed offsets", esc(id));
  groups_.erase(id);
  write([id](SQLite::Database& db) { state::delete_group(db, id); }, nullptr);
}

// ---------------------------------------------------------------------------------------------
// Admin

GroupDescription GroupCoordinator::describe_group(const std::string& group_id) const {
  const Group* g = find(group_id);
  if (g && g->type() != GroupType::kClassic) {
    GroupDescription d;
    d.group_id = group_id;
    d.state = group_state_name(GroupState::kDead);
    d.not_classic = "Group " + group_id + " is not a classic group.";
    return d;
  }
  if (g) return g->describe();
  GroupDescription d;
  d.group_id = group_id;
  d.state = group_state_name(GroupState::kDead);
  return d;
}

std::vector<GroupListing> GroupCoordinator::list_groups(const std::vector<std::string>& states_filter,
                                                        const std::vector<std::string>& types_filter) const {
  std::set<std::string> states, types;
  for (const auto& s : states_filter) states.insert(lower(s));
  for (const auto& t : types_filter) types.insert(lower(t));
  std::vector<GroupListing> out;
  for (const auto& [id, g] : groups_) {
    if (!types.empty() && !types.count(group_type_name(g->type()))) continue;
    if (!states.empty() && !states.count(lower(g->state_name()))) continue;
    out.push_back({id, g->protocol_type(), g->state_name(), group_type_name(g->type())});
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
    } else if (auto err = g->validate_delete_group()) {
      errors[i] = *err;
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
  const ClassicGroup* g = find_classic(group_id);
  if (!g) return std::nullopt;
  return g->state();
}

int32_t GroupCoordinator::generation(const std::string& group_id) const {
  const ClassicGroup* g = find_classic(group_id);
  return g ? g->generation() : -1;
}

size_t GroupCoordinator::member_count(const std::string& group_id) const {
  const ClassicGroup* g = find_classic(group_id);
  return g ? g->members().size() : 0;
}

}  // namespace kib::bridge
