// The group coordinator's KIP-1071 streams groups: the stateless checks of StreamsGroupHeartbeat
// (Kafka 4.4's GroupCoordinatorService), routing to the group, the group's host (timers, topic
// partition counts, writes to SQLite), describing, loading at startup, and creating the internal
// topics a group's topology needs (Kafka's AutoTopicCreationManager.createStreamsInternalTopics).
// docs/groups.md, "Streams groups".
#include <spdlog/spdlog.h>

#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_coordinator_entry.h"
#include "bridge/groups/streams_group_rows.h"
#include "common/text.h"
#include "state/state_store.h"
#include "state/streams_group_store.h"

namespace kib::bridge {

using streams::StreamsGroup;
using streams::StreamsHeartbeatCallback;
using streams::StreamsHeartbeatParams;
using streams::StreamsHeartbeatResult;

// The coordinator's side of one streams group (StreamsGroupHost), as ConsumerHost for consumer
// groups: session and rebalance timers per member, answers through the outbox, writes to the
// state store, the topic catalog's partition counts.
class GroupCoordinator::StreamsHost final : public streams::StreamsGroupHost {
 public:
  StreamsHost(GroupCoordinator& c, std::string group_id) : c_(c), group_id_(std::move(group_id)) {}

  int64_t now_ms() const override { return c_.timers_.now_ms(); }
  void arm_session(const std::string& member_id, int64_t delay_ms) override {
    arm(session_timers_[member_id], delay_ms, [member_id](StreamsGroup& g) { g.on_session_expired(member_id); });
  }
  void cancel_session(const std::string& member_id) override { session_timers_.erase(member_id); }
  void arm_rebalance(const std::string& member_id, int32_t epoch, int64_t delay_ms) override {
    arm(rebalance_timers_[member_id], delay_ms,
        [member_id, epoch](StreamsGroup& g) { g.on_rebalance_expired(member_id, epoch); });
  }
  void cancel_rebalance(const std::string& member_id) override { rebalance_timers_.erase(member_id); }
  std::optional<int32_t> partitions(const std::string& topic) const override {
    return c_.options_.topic_partitions ? c_.options_.topic_partitions(topic) : std::nullopt;
  }
  void persist(const StreamsGroup& g, const std::string* only_member, std::function<void(Status)> done) override {
    if (done)
      done = [alive = alive_.token(), done = std::move(done)](Status st) {
        if (alive) done(std::move(st));
      };
    c_.persist_streams_group(g, only_member, std::move(done));
  }
  void answer(StreamsHeartbeatCallback cb, StreamsHeartbeatResult r) override { c_.answer(std::move(cb), std::move(r)); }

 private:
  // A timer may destroy itself while it runs (an expired member's timers are cancelled): the timer
  // moved its callback out before running it.
  void arm(std::unique_ptr<GroupTimer>& timer, int64_t delay_ms, std::function<void(StreamsGroup&)> fn) {
    if (!timer) timer = c_.timers_.make_timer();
    timer->start(delay_ms, [&c = c_, group_id = group_id_, fn = std::move(fn)] {
      Entry entry(c);
      if (StreamsGroup* g = c.find_streams(group_id)) fn(*g);
    });
  }

  GroupCoordinator& c_;
  const std::string group_id_;
  std::map<std::string, std::unique_ptr<GroupTimer>> session_timers_;    // by member id
  std::map<std::string, std::unique_ptr<GroupTimer>> rebalance_timers_;  // by member id
  Liveness alive_;
};

void GroupCoordinator::answer(StreamsHeartbeatCallback cb, StreamsHeartbeatResult r) {
  if (cb) outbox_.push_back([cb = std::move(cb), r = std::move(r)]() mutable { cb(std::move(r)); });
}

StreamsGroup* GroupCoordinator::find_streams(const std::string& group_id) const {
  Group* g = find(group_id);
  return g && g->type() == GroupType::kStreams ? static_cast<StreamsGroup*>(g) : nullptr;
}

StreamsGroup& GroupCoordinator::create_streams_group(const std::string& group_id) {
  auto g = std::make_unique<StreamsGroup>(
      group_id, options_.streams_options ? options_.streams_options(group_id) : options_.streams,
      std::make_unique<StreamsHost>(*this, group_id));
  StreamsGroup& ref = *g;
  groups_[group_id] = std::move(g);
  return ref;
}

void GroupCoordinator::persist_streams_group(const StreamsGroup& g, const std::string* only_member,
                                             std::function<void(Status)> done) {
  if (only_member) {
    auto [row, members] = streams::streams_group_rows(g.member_snapshot(*only_member), g.state_name(), timers_.now_ms());
    if (members.size() == 1) {
      write([row = std::move(row), member = std::move(members.front())](SQLite::Database& db) {
        state::save_streams_group_member(db, row, member);
      }, std::move(done));
      return;
    }
  }
  auto [row, members] = streams::streams_group_rows(g.snapshot(), g.state_name(), timers_.now_ms());
  write([row = std::move(row), members = std::move(members)](SQLite::Database& db) {
    state::save_streams_group(db, row, members);
  }, std::move(done));
}

void GroupCoordinator::forget_rows_of(const Group& g) {
  if (g.type() != GroupType::kStreams) return;
  write([id = g.id()](SQLite::Database& db) { state::delete_streams_group(db, id); }, nullptr);
}

size_t GroupCoordinator::restore_streams_groups(const std::vector<state::StoredStreamsGroup>& stored) {
  size_t members = 0;
  for (const auto& s : stored) {
    std::string error;
    auto snapshot = streams::streams_group_from_rows(s, &error);
    if (!snapshot) {
      // The members rejoin (UNKNOWN_MEMBER_ID); a group epoch past the stored one fences old epochs.
      spdlog::warn("group={} streams group state unreadable ({}): loaded without members", esc(s.group.group_id),
                   esc(error));
      snapshot = streams::StreamsGroupSnapshot{};
      snapshot->group_id = s.group.group_id;
      snapshot->group_epoch = s.group.group_epoch + 1;
      snapshot->assignment_epoch = s.group.assignment_epoch;
      snapshot->topology = streams::topology_from_json(s.group.topology.value_or(""));
    }
    members += snapshot->members.size();
    groups_.erase(s.group.group_id);  // the classic row its committed offsets gave it
    create_streams_group(s.group.group_id).restore(*snapshot);
  }
  return members;
}

namespace {

// Kafka 4.4's throwIfStreamsGroupHeartbeatRequestIsInvalid (and the unsupported-features check,
// which in 4.4 only refuses regular-expression source topics).
std::optional<std::pair<ErrorCode, std::string>> invalid_streams_heartbeat(const StreamsHeartbeatShape& s,
                                                                           const StreamsHeartbeatParams& p) {
  using R = std::pair<ErrorCode, std::string>;
  // Java's String.trim().isEmpty(): nothing but characters up to the space.
  auto blank = [](const std::string& v) {
    for (unsigned char c : v)
      if (c > ' ') return false;
    return true;
  };
  if (blank(p.member_id)) return R{ErrorCode::kInvalidRequest, "MemberId can't be empty."};
  if (blank(s.group_id)) return R{ErrorCode::kInvalidRequest, "GroupId can't be empty."};
  if (s.instance_id && blank(*s.instance_id)) return R{ErrorCode::kInvalidRequest, "InstanceId can't be empty."};
  if (p.rack_id && blank(*p.rack_id)) return R{ErrorCode::kInvalidRequest, "RackId can't be empty."};
  if (p.member_epoch == 0) {
    if (p.rebalance_timeout_ms == -1)
      return R{ErrorCode::kInvalidRequest, "RebalanceTimeoutMs must be provided in first request."};
    static const char* const kMustBeEmpty[3] = {"ActiveTasks must be empty when (re-)joining.",
                                                 "StandbyTasks must be empty when (re-)joining.",
                                                 "WarmupTasks must be empty when (re-)joining."};
    for (int i = 0; i < 3; ++i)  // Kafka's throwIfNotEmptyCollection: null is refused too
      if (!s.owned_sent[i] || !s.owned_empty[i]) return R{ErrorCode::kInvalidRequest, kMustBeEmpty[i]};
    if (!s.has_topology) return R{ErrorCode::kInvalidRequest, "Topology must be non-null when (re-)joining."};
    for (const auto& [name, partitions] : s.changelog_partitions)
      if (partitions != 0)
        return R{ErrorCode::kStreamsInvalidTopology, "Changelog topic " + name +
                                                         " must have an undefined partition count, but it is set to " +
                                                         std::to_string(partitions) + "."};
  } else if (p.member_epoch == -2) {
    if (!s.instance_id) return R{ErrorCode::kInvalidRequest, "InstanceId can't be null."};
  } else if (p.member_epoch < -2) {
    return R{ErrorCode::kInvalidRequest,
             "MemberEpoch is " + std::to_string(p.member_epoch) + ", but must be greater than or equal to -2."};
  }
  const int sent = s.owned_sent[0] + s.owned_sent[1] + s.owned_sent[2];
  if (sent != 0 && sent != 3)
    return R{ErrorCode::kInvalidRequest, "If one task-type is non-null, all must be non-null."};
  if (p.member_epoch != 0 && s.has_topology)
    return R{ErrorCode::kInvalidRequest, "Topology can only be provided when (re-)joining."};
  if (!s.source_topic_regex.empty())
    return R{ErrorCode::kInvalidRequest, "Regular expressions for source topics are not supported yet."};
  return std::nullopt;
}

}  // namespace

void GroupCoordinator::streams_group_heartbeat(const StreamsHeartbeatShape& shape, StreamsHeartbeatParams p,
                                               StreamsHeartbeatCallback done) {
  Entry entry(*this);
  auto refuse = [&](ErrorCode e, std::string message) {
    StreamsHeartbeatResult r;
    r.error = e;
    r.message = std::move(message);
    answer(std::move(done), std::move(r));
  };
  if (stopped_) return refuse(ErrorCode::kCoordinatorNotAvailable, "");
  if (options_.topics_known && !options_.topics_known()) {
    if (StreamsGroup* g = find_streams(shape.group_id)) g->keep_alive(p.member_id);
    return refuse(ErrorCode::kCoordinatorLoadInProgress, "");
  }
  if (auto why = invalid_streams_heartbeat(shape, p)) return refuse(why->first, why->second);

  // Kafka's getOrCreateStreamsGroup: a joining member creates the group, and an empty group of
  // another type becomes a streams group; anything else for a missing or other group is
  // GROUP_ID_NOT_FOUND. Leaving (-1, -2) goes to the group, which refuses an unknown member.
  StreamsGroup* g = find_streams(shape.group_id);
  if (!g) {
    Group* other = find(shape.group_id);
    if (p.member_epoch != 0 || (other && !other->is_empty()))
      return refuse(ErrorCode::kGroupIdNotFound, other ? "Group " + shape.group_id + " is not a streams group."
                                                       : "Streams group " + shape.group_id + " not found.");
    std::unique_ptr<Group> previous;  // the empty group, until the join is accepted
    if (other) {
      previous = std::move(groups_[shape.group_id]);
      groups_.erase(shape.group_id);
    }
    g = &create_streams_group(shape.group_id);
    g->heartbeat(p, std::move(done));
    // A refused join leaves no group behind; an empty group it would have replaced stays.
    if (g->is_empty()) {
      groups_.erase(shape.group_id);
      if (previous) groups_[shape.group_id] = std::move(previous);
    } else if (previous) {
      spdlog::info("group={} converted from an empty {} group to a streams group", esc(shape.group_id),
                   group_type_name(previous->type()));
      forget_rows_of(*previous);
    }
    return;
  }
  g->heartbeat(p, std::move(done));
}

StreamsGroupDescribeResult GroupCoordinator::streams_group_describe(const std::string& group_id) const {
  StreamsGroupDescribeResult r;
  const Group* any = find(group_id);
  r.group = find_streams(group_id);
  if (!r.group) {
    r.error = ErrorCode::kGroupIdNotFound;
    r.message = any ? "Group " + group_id + " is not a streams group." : "Group " + group_id + " not found.";
  }
  return r;
}

std::vector<std::string> GroupCoordinator::create_streams_topics(const std::vector<streams::InternalTopic>& topics,
                                                                 int64_t error_ttl_ms) {
  const int64_t now = timers_.now_ms();
  std::vector<std::string> failures;
  for (const auto& t : topics) {
    auto err = topic_creation_errors_.find(t.name);
    if (err != topic_creation_errors_.end()) {
      if (err->second.second > now) {
        failures.push_back(t.name + " (" + err->second.first + ")");
        continue;
      }
      topic_creation_errors_.erase(err);
    }
    if (!options_.create_topic || !creating_topics_.insert(t.name).second) continue;
    // Bounded: at most one entry per internal topic of a live group's topology.
    options_.create_topic(
        t.name, t.partitions, t.replication_factor, t.configs,
        [this, alive = alive_.token(), name = t.name, error_ttl_ms](Status st) {
          if (!alive) return;
          creating_topics_.erase(name);
          if (st) {
            spdlog::info("streams: created internal topic {}", esc(name));
            return;
          }
          spdlog::warn("streams: creating internal topic {} failed: {}", esc(name), esc(st.error().message));
          topic_creation_errors_[name] = {st.error().message, timers_.now_ms() + error_ttl_ms};
        });
  }
  return failures;
}

}  // namespace kib::bridge
