// One group of Kafka's classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): its
// members, generation, leader and protocol, the states Empty, PreparingRebalance,
// CompletingRebalance and Stable with Kafka's valid transitions, and every decision the protocol
// takes for one group. Kafka's ClassicGroup (4.x) / GroupMetadata (3.x) with the classic parts of
// GroupMetadataManager / GroupCoordinator; the method names follow theirs
// (doNewMemberJoinGroup is join_new_member, and so on) so the two read side by side.
//
// The group decides; the coordinator that holds it (group_coordinator.h) carries out what needs
// the world, through ClassicGroupHost: the clock, the deadlines (a member's session, a pending
// member id, the join and sync phases of a rebalance), the answers to waiting requests (run once
// the coordinator's outermost call returns) and the writes of the group to SQLite. When a
// deadline passes, the coordinator calls the matching on_… method. So the group knows nothing of
// timers, the state store or when its answers run, and its tests could drive it by hand.
//
// The state machine is in two files: classic_group.cc (the group's state: members, protocols,
// transitions, validation, what DescribeGroups shows, the offsets rules) and
// classic_group_rebalance.cc (the requests and the rebalance they drive: join, sync, heartbeat,
// leave, and the deadlines).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bridge/groups/group.h"
#include "common/result.h"

namespace kib::bridge {

class ClassicGroup;

// Kafka's ClassicGroupMember (MemberMetadata in 3.x).
struct ClassicGroupMember {
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

  // The member's metadata for `protocol`; null if it does not support it.
  const Bytes* metadata(const std::string& protocol) const;
  bool matches(const std::vector<GroupProtocol>& other) const;
  // Members awaiting a rebalance answer count as alive (Kafka: MemberMetadata.hasSatisfiedHeartbeat).
  bool alive_without_heartbeat() const { return !is_new && (awaiting_join || awaiting_sync); }
};

// What a classic group asks of the coordinator that holds it. Each deadline is re-armed by its
// arm_… call (the previous one of the same name is forgotten) and forgotten by its cancel_…
// call; when one passes, the coordinator calls the group's on_… method of the same name.
class ClassicGroupHost {
 public:
  virtual ~ClassicGroupHost() = default;

  // Wall clock, ms since the epoch.
  virtual int64_t now_ms() const = 0;

  // The answer to a waiting request; it runs when the coordinator's outermost call returns,
  // after the group is consistent again. A null callback is not answered.
  virtual void answer(JoinCallback cb, JoinGroupResult r) = 0;
  virtual void answer(SyncCallback cb, SyncGroupResult r) = 0;

  // A member's session (on_heartbeat_expired).
  virtual void arm_heartbeat(const std::string& member_id, int64_t delay_ms) = 0;
  virtual void cancel_heartbeat(const std::string& member_id) = 0;
  // A member id handed out with MEMBER_ID_REQUIRED (on_pending_member_expired).
  virtual void arm_pending_member(const std::string& member_id, int64_t delay_ms) = 0;
  virtual void cancel_pending_member(const std::string& member_id) = 0;
  // The join phase of a rebalance: the delayed first rebalance or the rebalance timeout
  // (on_join_deadline).
  virtual void arm_join_deadline(int64_t delay_ms) = 0;
  virtual void cancel_join_deadline() = 0;
  // The sync phase of generation `generation` (on_sync_deadline).
  virtual void arm_sync_deadline(int64_t delay_ms, int32_t generation) = 0;
  virtual void cancel_sync_deadline() = 0;

  // Stores the group's row and its members: with `assignment` instead of the members' current
  // one, and `as_state` instead of the current state, if set. `done` (may be null) runs once the
  // write is durable or failed, only if the group still exists then.
  virtual void persist(const ClassicGroup& g, const std::map<std::string, Bytes>* assignment,
                       std::optional<GroupState> as_state, std::function<void(Status)> done) = 0;
};

// Kafka's valid previous states (ClassicGroupState): Empty from PreparingRebalance;
// PreparingRebalance from Stable, CompletingRebalance or Empty; CompletingRebalance from
// PreparingRebalance; Stable from CompletingRebalance; Dead from any state.
bool is_valid_transition(GroupState from, GroupState to);

class ClassicGroup final : public Group {
 public:
  using Members = std::map<std::string, std::unique_ptr<ClassicGroupMember>>;

  // `options` outlives the group. The group owns its host.
  ClassicGroup(std::string id, const GroupCoordinatorOptions& options, std::unique_ptr<ClassicGroupHost> host);
  ~ClassicGroup() override;

  // What a restart keeps (the coordinator's load): the group comes back Empty, with its
  // generation and protocol type ("" = none), Empty since `state_since_ms`.
  void restore(int32_t generation, const std::string& protocol_type, int64_t state_since_ms);

  // KIP-848's online migration (GroupCoordinator's conversions). adopt: the group a consumer group
  // becomes (Kafka's ClassicGroup.fromConsumerGroup): Stable at `generation` with these members
  // (their assignments set) and the protocol they have in common, each member's session started;
  // with `rebalance_reason`, a rebalance is prepared at once. Only on a new group.
  void adopt(int32_t generation, std::vector<std::unique_ptr<ClassicGroupMember>> members,
             const std::string* rebalance_reason);
  // The group becomes a consumer group: waiting JoinGroup and SyncGroup requests get `error`
  // (REBALANCE_IN_PROGRESS, so the members rejoin the consumer group).
  void release_waiting(ErrorCode error);

  // Group.
  GroupType type() const override { return GroupType::kClassic; }
  const char* state_name() const override { return group_state_name(state_); }
  std::string protocol_type() const override { return protocol_type_.value_or(""); }
  GroupDescription describe() const override;
  bool is_empty() const override;
  std::optional<ErrorCode> validate_delete_group() const override;
  std::optional<ErrorCode> validate_offset_commit(const OffsetCommitParams& p) const override;
  void on_offset_commit(const OffsetCommitParams& p) override;
  std::optional<ErrorCode> validate_offset_delete() const override;
  bool is_subscribed_to_topic(const std::string& topic) const override;
  OffsetExpiration offset_expiration() const override;
  void unload() override;

  // The requests, once the coordinator found the group (classic_group_rebalance.cc). Answers
  // go through the host; heartbeat and leave answer at once.
  void join(JoinGroupParams& p, JoinCallback done);
  void sync(SyncGroupParams& p, SyncCallback done);
  ErrorCode heartbeat(const std::string& member_id, const std::optional<std::string>& group_instance_id,
                      int32_t generation_id);
  LeaveGroupResult leave(const std::vector<LeavingMember>& members);

  // Deadlines the host armed, passed.
  void on_heartbeat_expired(const std::string& member_id);
  void on_pending_member_expired(const std::string& member_id);
  void on_join_deadline();
  void on_sync_deadline(int32_t generation);

  // What the coordinator stores and reports.
  GroupState state() const { return state_; }
  int64_t state_since_ms() const { return state_since_ms_; }
  int32_t generation() const { return generation_; }
  const std::optional<std::string>& protocol_name() const { return protocol_name_; }
  const std::optional<std::string>& leader_id() const { return leader_id_; }
  const Members& members() const { return members_; }

 private:
  // The undo of a static member's replacement in a Stable group, if storing it fails, and what
  // its JoinGroup answer needs once stored (update_static_member_and_rebalance).
  struct StaticReplacement {
    std::string instance_id;
    std::string old_member_id;
    std::string new_member_id;
    std::vector<GroupProtocol> old_protocols;
    int32_t old_rebalance_timeout_ms = 0;
    int32_t old_session_timeout_ms = 0;
    std::string old_leader_id;
    int32_t generation = 0;
    bool skip_assignment = false;
  };

  // State (classic_group.cc).
  void transition(GroupState to);
  bool has(const std::string& member_id) const { return members_.count(member_id) != 0; }
  ClassicGroupMember* get(const std::string& member_id) const;
  bool is_leader(const std::string& member_id) const { return leader_id_ && *leader_id_ == member_id; }
  bool has_all_members_joined() const;
  int32_t rebalance_timeout_ms() const;
  void inc_protocols(const ClassicGroupMember& m);
  void dec_protocols(const ClassicGroupMember& m);
  bool supports_protocols(const std::string& type, const std::vector<GroupProtocol>& protocols) const;
  std::string select_protocol() const;
  std::optional<std::set<std::string>> compute_subscribed_topics() const;
  std::vector<JoinGroupResult::Member> current_member_metadata() const;
  JoinGroupResult current_generation_result(const ClassicGroupMember& m, bool with_members) const;
  std::optional<ErrorCode> validate_current_member(const std::string& member_id,
                                                   const std::optional<std::string>& group_instance_id) const;

  // Members (classic_group.cc).
  void add_member(std::unique_ptr<ClassicGroupMember> m, JoinCallback done);
  void update_member(ClassicGroupMember& m, std::vector<GroupProtocol> protocols, int32_t rebalance_timeout_ms,
                     int32_t session_timeout_ms, JoinCallback done);
  ClassicGroupMember& replace_static_member(const std::string& instance_id, const std::string& old_member_id,
                                            const std::string& new_member_id);
  void remove_member(const std::string& member_id);
  void add_pending_member(const std::string& member_id, int32_t session_timeout_ms);
  void erase_pending_member(const std::string& member_id);
  void answer_join(ClassicGroupMember& m, JoinGroupResult r);
  bool answer_sync(ClassicGroupMember& m, SyncGroupResult r);
  void schedule_heartbeat_expiration(const ClassicGroupMember& m, int64_t timeout_ms);

  // JoinGroup (classic_group_rebalance.cc; Kafka: doNewMemberJoinGroup, doCurrentMemberJoinGroup, ...).
  bool accept_joining_member(const std::string& member_id) const;
  void join_new_member(JoinGroupParams& p, JoinCallback& done);
  void join_existing_member(JoinGroupParams& p, JoinCallback& done);
  void update_static_member_and_rebalance(const std::string& old_member_id, const std::string& new_member_id,
                                          JoinGroupParams& p, JoinCallback& done);
  void on_static_member_stored(StaticReplacement& r, const Status& st);
  void add_member_and_rebalance(const std::string& member_id, JoinGroupParams& p, JoinCallback done);
  void update_member_and_rebalance(ClassicGroupMember& m, JoinGroupParams& p, JoinCallback done,
                                   const std::string& reason);

  // The rebalance (classic_group_rebalance.cc).
  void maybe_prepare_rebalance(const std::string& reason);
  void prepare_rebalance(const std::string& reason);
  void on_initial_join_delay();
  void maybe_complete_join();
  void complete_join();
  bool maybe_elect_new_joined_leader();
  void init_next_generation();
  void schedule_pending_sync();
  void remove_pending_sync_member(const std::string& member_id);
  void on_assignment_stored(int32_t generation, const std::map<std::string, Bytes>& assignment, const Status& st);
  void propagate_assignment(ErrorCode error);
  void reset_and_propagate_assignment_error(ErrorCode error);
  void remove_member_and_update_group(const std::string& member_id, const std::string& reason);

  const GroupCoordinatorOptions& options_;
  std::unique_ptr<ClassicGroupHost> host_;
  GroupState state_ = GroupState::kEmpty;
  int64_t state_since_ms_ = 0;
  std::optional<std::string> protocol_type_;
  std::optional<std::string> protocol_name_;
  int32_t generation_ = 0;
  std::optional<std::string> leader_id_;
  Members members_;
  std::map<std::string, std::string> static_members_;  // group.instance.id -> member id
  // KIP-394: ids handed out with MEMBER_ID_REQUIRED, expiring after the session timeout.
  std::set<std::string> pending_members_;
  int num_awaiting_join_ = 0;
  std::map<std::string, int> supported_protocols_;  // protocol -> members supporting it
  std::set<std::string> pending_sync_members_;
  bool new_member_added_ = false;
  bool initial_join_delay_ = false;  // the delayed first rebalance of an empty group is running
  int32_t initial_delay_ms_ = 0;
  int32_t initial_remaining_ms_ = 0;
  std::optional<std::set<std::string>> subscribed_topics_;  // consumer protocol groups
};

}  // namespace kib::bridge
