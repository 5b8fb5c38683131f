// One KIP-848 consumer group (Kafka 4.x's ConsumerGroup with the parts of GroupMetadataManager
// that act on one group): members that heartbeat with ConsumerGroupHeartbeat, a group epoch bumped
// whenever the members or their subscriptions change, a target assignment computed by a server
// assignor (assignors.h) for that epoch, and each member reconciled towards its target one step
// per heartbeat (Kafka's CurrentAssignmentBuilder): partitions to revoke first, then the free
// partitions of its target, at the target's epoch. docs/groups.md, "Consumer groups (KIP-848)".
//
// Topics are named here; the handlers translate Kafka's topic ids. Loop thread only; the group
// asks its host (ConsumerGroupHost) for the time, timers, topic metadata and durable writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/groups/assignors.h"
#include "bridge/groups/consumer_protocol.h"
#include "bridge/groups/group.h"

namespace kib::bridge {

// partition -> the epoch it was assigned at (KIP-1251's assignment epochs), by topic.
using EpochAssignment = std::map<std::string, std::map<int32_t, int32_t>>;

// A new member id: Kafka's Uuid.randomUuid().toString().
std::string new_member_id();
// The partitions of an assignment without their epochs.
std::map<std::string, std::set<int32_t>> partitions_of(const EpochAssignment& a);

// Kafka's MemberState.
enum class ConsumerMemberState { kStable, kUnrevokedPartitions, kUnreleasedPartitions };
const char* consumer_member_state_name(ConsumerMemberState s);
std::optional<ConsumerMemberState> consumer_member_state_from_name(const std::string& s);

// Kafka's ConsumerGroupState: Empty, Assigning (the group epoch is ahead of the target
// assignment's), Reconciling (some member is not at the target yet), Stable.
enum class ConsumerGroupState { kEmpty, kAssigning, kReconciling, kStable };
const char* consumer_group_state_name(ConsumerGroupState s);

// What a member that speaks the classic protocol inside a consumer group sent in its JoinGroup
// (Kafka's ClassicMemberMetadata): its session timeout and supported protocols with their
// subscription bytes (KIP-848's online migration, docs/groups.md).
struct ClassicMemberMetadata {
  int32_t session_timeout_ms = 0;
  std::vector<GroupProtocol> protocols;
  bool operator==(const ClassicMemberMetadata&) const = default;
};

struct ConsumerMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  std::set<std::string> subscribed_topic_names;
  std::string subscribed_topic_regex;  // "" = none
  std::optional<std::string> server_assignor;
  int32_t member_epoch = 0;
  int32_t previous_member_epoch = -1;
  ConsumerMemberState state = ConsumerMemberState::kStable;
  EpochAssignment assigned;
  EpochAssignment pending_revocation;
  // Set for a member using the classic protocol (JoinGroup, SyncGroup, Heartbeat).
  std::optional<ClassicMemberMetadata> classic;
  bool operator==(const ConsumerMember&) const = default;
};

// What ConsumerGroupHeartbeat brings (nullopt: "did not change since the last heartbeat").
struct ConsumerHeartbeatParams {
  std::string group_id;
  std::string member_id;
  int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<std::vector<std::string>> subscribed_topic_names;
  std::optional<std::string> subscribed_topic_regex;
  std::optional<std::string> server_assignor;
  // The partitions the member owns, by topic name (ids the bridge does not know are dropped).
  std::optional<std::map<std::string, std::set<int32_t>>> owned;
  std::string client_id;
  std::string client_host;
  // Whether the sender may DESCRIBE a topic: topics a regular expression resolves to are kept
  // only then (Kafka's filterTopicDescribeAuthorizedTopics, with the context of the heartbeat
  // that triggers the resolution). Asked during the call only. Unset: every topic.
  std::function<bool(const std::string&)> may_describe_topic;
};

struct ConsumerHeartbeatResult {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  std::string member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  // Set when the member must be told its assignment (joining, a full request, a change).
  std::optional<std::map<std::string, std::set<int32_t>>> assignment;
};
using ConsumerHeartbeatCallback = std::function<void(ConsumerHeartbeatResult)>;

struct ConsumerGroupOptions {
  int32_t session_timeout_ms = 45000;    // group.consumer.session.timeout.ms
  int32_t heartbeat_interval_ms = 5000;  // group.consumer.heartbeat.interval.ms
  int32_t max_size = 1000;               // group.consumer.max.size
  // Regular-expression subscriptions (RE2 syntax, as Kafka's RE2/J): longer ones are refused
  // (INVALID_REGULAR_EXPRESSION); a group's resolved expressions are refreshed at most this often.
  int32_t max_regex_bytes = 1024;
  // Topic names one member may subscribe to (SubscribedTopicNames): more get INVALID_REQUEST.
  int32_t max_subscribed_topics = 10000;
  int64_t regex_refresh_interval_ms = 10'000;  // Kafka's REGEX_BATCH_REFRESH_MIN_INTERVAL_MS
  std::vector<std::string> assignors{"uniform", "range"};  // group.consumer.assignors (the first is the default)
};

// ConsumerGroupDescribe.
struct ConsumerGroupMemberView {
  ConsumerMember member;
  MemberTargetAssignment target;
};
struct ConsumerGroupView {
  std::string group_id;
  std::string state;
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  std::string assignor;
  std::vector<ConsumerGroupMemberView> members;
};

// What is stored of a group (state/consumer_group_store.h has the SQL).
struct ConsumerGroupSnapshot {
  std::string group_id;
  int32_t group_epoch = 0;
  int32_t assignment_epoch = 0;
  std::map<std::string, int32_t> subscribed_partitions;  // the topic metadata the target was computed from
  std::vector<std::pair<ConsumerMember, MemberTargetAssignment>> members;
};

class ConsumerGroup;

class ConsumerGroupHost {
 public:
  virtual ~ConsumerGroupHost() = default;
  virtual int64_t now_ms() const = 0;
  // The member's session ends `delay_ms` from now unless re-armed (ConsumerGroup::on_session_expired).
  virtual void arm_session(const std::string& member_id, int64_t delay_ms) = 0;
  virtual void cancel_session(const std::string& member_id) = 0;
  // The member must have revoked by then (ConsumerGroup::on_rebalance_expired with `epoch`).
  virtual void arm_rebalance(const std::string& member_id, int32_t epoch, int64_t delay_ms) = 0;
  virtual void cancel_rebalance(const std::string& member_id) = 0;
  // The partition count of an existing topic, for the assignors.
  virtual std::optional<int32_t> partitions(const std::string& topic) const = 0;
  // Every topic's name, for regular-expression subscriptions.
  virtual std::vector<std::string> topic_names() const = 0;
  // The group's state changed: store it; `done` (may be empty) once durable. With `only_member`,
  // nothing but that member and the group's epochs changed: only their rows are written.
  virtual void persist(const ConsumerGroup& g, const std::string* only_member, std::function<void(Status)> done) = 0;
  virtual void answer(ConsumerHeartbeatCallback cb, ConsumerHeartbeatResult r) = 0;

  // Members using the classic protocol inside the group (KIP-848's online migration).
  // Their answers, run as the other answers are.
  virtual void answer(JoinCallback cb, JoinGroupResult r) = 0;
  virtual void answer(SyncCallback cb, SyncGroupResult r) = 0;
  // A classic member must send its next JoinGroup (kJoin, armed only if not armed already) or its
  // SyncGroup (kSync) within `delay_ms`, or be fenced (ConsumerGroup::on_classic_timeout).
  enum class ClassicDeadline { kJoin, kSync };
  virtual void arm_classic(const std::string& member_id, ClassicDeadline d, int64_t delay_ms) = 0;
  virtual void cancel_classic(const std::string& member_id, ClassicDeadline d) = 0;
  // Members left the group, or a static classic member replaced a consumer-protocol one: once the
  // current call returns, the coordinator converts the group to a classic group if every member
  // left uses the classic protocol and the migration policy allows it; `rebalance`: the classic
  // group rebalances at once.
  virtual void maybe_downgrade(bool rebalance) = 0;
};

class ConsumerGroup final : public Group {
 public:
  // A change of the group's consumer.session.timeout.ms / consumer.heartbeat.interval.ms: sessions
  // armed from the next heartbeat on run with it, and answers carry the new interval (Kafka reads
  // the group config on every heartbeat).
  void set_timeouts(int32_t session_timeout_ms, int32_t heartbeat_interval_ms) {
    options_.session_timeout_ms = session_timeout_ms;
    options_.heartbeat_interval_ms = heartbeat_interval_ms;
  }
  ConsumerGroup(std::string id, ConsumerGroupOptions options, std::unique_ptr<ConsumerGroupHost> host);
  ~ConsumerGroup() override;

  // Startup: the stored state; every member's session starts again now.
  void restore(const ConsumerGroupSnapshot& s);
  ConsumerGroupSnapshot snapshot() const;
  // One member's part of snapshot().
  std::pair<ConsumerMember, MemberTargetAssignment> member_snapshot(const std::string& member_id) const;

  // ConsumerGroupHeartbeat with member epoch >= 0 (join, heartbeat) or -1/-2 (leave). The
  // request's shape was checked by the coordinator. Answered once what changed is durable.
  // Returns false if the request was refused before anything changed (the coordinator undoes an
  // upgrade it made for it).
  bool heartbeat(const ConsumerHeartbeatParams& p, ConsumerHeartbeatCallback done);

  // The classic protocol from a member inside this group (consumer_group_classic.cc; Kafka's
  // classicGroup{Join,Sync,Heartbeat,Leave}ToConsumerGroup). The coordinator checked the session
  // timeout and the migration policy.
  void classic_join(const JoinGroupParams& p, JoinCallback done);
  void classic_sync(const SyncGroupParams& p, SyncCallback done);
  ErrorCode classic_heartbeat(const std::string& member_id, const std::optional<std::string>& instance_id,
                              int32_t generation_id);
  LeaveGroupResult classic_leave(const std::vector<LeavingMember>& members);
  // Whether every member uses the classic protocol (and there is one): a downgrade may follow.
  bool only_classic_members() const;

  // Timers.
  void on_classic_timeout(const std::string& member_id, const char* why);
  void on_session_expired(const std::string& member_id);
  void on_rebalance_expired(const std::string& member_id, int32_t epoch);

  ConsumerGroupView view() const;
  ConsumerGroupState state() const;
  int32_t group_epoch() const { return group_epoch_; }
  // The group epoch before the last removal of members bumped it: the generation a group
  // downgraded because members left starts from (Kafka converts instead of removing them).
  int32_t epoch_before_removal() const { return epoch_before_removal_; }
  int32_t assignment_epoch() const { return assignment_epoch_; }
  const std::map<std::string, int32_t>& snapshot_partitions() const { return subscribed_partitions_; }
  const std::map<std::string, ConsumerMember>& members() const { return members_; }
  // A member heard from while the coordinator cannot serve it yet (topics still loading): its
  // session starts again, nothing else changes.
  void keep_alive(const std::string& member_id) {
    if (members_.contains(member_id)) host_->arm_session(member_id, options_.session_timeout_ms);
  }
  const MemberTargetAssignment* target(const std::string& member_id) const;

  // Group.
  GroupType type() const override { return GroupType::kConsumer; }
  const char* state_name() const override { return consumer_group_state_name(state()); }
  std::string protocol_type() const override { return "consumer"; }
  GroupDescription describe() const override;
  bool is_empty() const override { return members_.empty(); }
  std::optional<ErrorCode> validate_delete_group() const override;
  std::optional<ErrorCode> validate_offset_commit(const OffsetCommitParams& p) const override;
  void on_offset_commit(const OffsetCommitParams&) override {}
  std::optional<ErrorCode> validate_offset_fetch(const std::string& member_id, int32_t member_epoch) const override;
  std::optional<ErrorCode> validate_offset_delete() const override { return std::nullopt; }
  bool is_subscribed_to_topic(const std::string& topic) const override;
  OffsetExpiration offset_expiration() const override;
  void unload() override {}

 private:
  ConsumerHeartbeatResult fail(ErrorCode e, std::string message) const;
  struct Lookup {
    ErrorCode error = ErrorCode::kNone;
    std::string message;
    ConsumerMember member;
    bool created = false;
    std::optional<ConsumerMember> replaced;  // a static member's previous incarnation
  };
  std::optional<std::string> stale_epoch(const ConsumerHeartbeatParams& p, const ConsumerMember& m) const;
  Lookup find_member(const ConsumerHeartbeatParams& p, const std::string& member_id) const;
  Lookup find_classic_joiner(const JoinGroupParams& p, const std::string& member_id) const;
  static ConsumerMember with_join(const ConsumerMember& m, const JoinGroupParams& p, const ConsumerSubscription& sub);
  void answer_classic_join(const ConsumerMember& m, const JoinGroupParams& p, bool whole, JoinCallback done);
  std::optional<std::pair<ErrorCode, std::string>> refused_subscription(const ConsumerHeartbeatParams& p,
                                                                         const ConsumerMember& m) const;
  void replace_static_member(const ConsumerMember& old, const std::string& member_id);
  static ConsumerMember with_request(const ConsumerMember& m, const ConsumerHeartbeatParams& p);
  ConsumerMember step(const ConsumerMember* previous, const ConsumerMember& updated, bool subscription_changed,
                      const std::optional<std::map<std::string, std::set<int32_t>>>& owned,
                      const std::function<bool(const std::string&)>& may_describe = nullptr);
  void leave(const ConsumerHeartbeatParams& p, ConsumerHeartbeatCallback done);
  // The session of a member: its own classic session timeout, or the group's.
  int64_t session_timeout_of(const ConsumerMember& m) const {
    return m.classic ? m.classic->session_timeout_ms : options_.session_timeout_ms;
  }
  // Kafka's validateConsumerGroupMember for the classic requests: the member by instance id
  // (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) or by member id.
  const ConsumerMember* classic_member(const std::string& member_id, const std::optional<std::string>& instance_id,
                                       ErrorCode* error) const;
  bool waiting_on_unreleased(const ConsumerMember& m) const;
  // The member holding a static member's instance id; null for none (or no instance id).
  const ConsumerMember* static_member(const std::optional<std::string>& instance_id) const;
  bool supports_classic_protocols(const std::string& type, const std::vector<GroupProtocol>& protocols) const;
  // Removes the member (fenced, left, expired): its partitions are free, the group epoch bumps.
  // Without `bump` the caller bumps the group epoch once for several members.
  void remove_member(const std::string& member_id, const char* why, bool bump = true);
  std::set<std::string> subscribed_topics(const ConsumerMember& m) const;
  // Resolves the members' regular expressions against the topics: new ones at once, all of them
  // again once regex_refresh_interval_ms has passed. Whether a resolution changed.
  bool refresh_regexes(bool force, const std::function<bool(const std::string&)>& may_describe = nullptr);
  std::map<std::string, int32_t> subscribed_partitions() const;
  std::string preferred_assignor() const;
  void maybe_update_target();
  // CurrentAssignmentBuilder.
  ConsumerMember reconcile(const ConsumerMember& m, bool subscription_changed,
                           const std::optional<std::map<std::string, std::set<int32_t>>>& owned) const;
  bool owns_any(const std::optional<std::map<std::string, std::set<int32_t>>>& owned,
                const EpochAssignment& revoking) const;
  ConsumerMember drop_unsubscribed(const ConsumerMember& m, const std::set<std::string>& subscribed,
                                   const std::optional<std::map<std::string, std::set<int32_t>>>& owned) const;
  // The epoch of the member owning the partition (assigned or revoking), -1 if free.
  int32_t current_partition_epoch(const std::string& topic, int32_t partition) const;
  void update_owners(const ConsumerMember* before, const ConsumerMember* after);

  ConsumerGroupOptions options_;
  std::unique_ptr<ConsumerGroupHost> host_;
  std::map<std::string, ConsumerMember> members_;
  std::map<std::string, MemberTargetAssignment> target_;
  std::map<std::pair<std::string, int32_t>, int32_t> owners_;  // partition -> owner's epoch
  std::map<std::string, int32_t> subscribed_partitions_;       // what the target was computed from
  int32_t group_epoch_ = 0;
  int32_t assignment_epoch_ = 0;
  int32_t epoch_before_removal_ = 0;
  int64_t empty_since_ms_ = -1;
  mutable std::set<std::string> kept_;  // offset_expiration()'s subscribed topics
  std::map<std::string, std::set<std::string>> resolved_;  // regex -> the topics it matches
  int64_t regexes_resolved_ms_ = -1;
};

}  // namespace kib::bridge
