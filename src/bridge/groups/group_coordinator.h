// The group coordinator: Kafka's classic group protocol (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup), for every group (the bridge coordinates them all), and who may commit or delete
// offsets and when they expire; CommittedOffsets (committed_offsets.h) stores them.
// Semantics follow Kafka's GroupCoordinator/GroupMetadata (3.x) and its successor
// GroupMetadataManager/ClassicGroup (4.x); docs/groups.md lists the differences.
//
// Everything runs on the loop thread. JoinGroup and SyncGroup answers may be deferred until a
// rebalance completes: the callbacks are held by the group and invoked exactly once (answers
// to a closed connection are dropped by the Responder). Group metadata is written through the
// StateStore; a commit is answered only after its batch is on disk.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_timers.h"
#include "bridge/groups/group_types.h"
#include "common/bytes.h"
#include "common/liveness.h"
#include "common/result.h"

namespace SQLite {
class Database;
}
namespace kib::state {
class StateStore;
}

namespace kib::bridge {

class GroupCoordinator {
 public:
  // `offsets` outlives the coordinator.
  GroupCoordinator(state::StateStore& store, GroupTimers& timers, CommittedOffsets& offsets,
                   GroupCoordinatorOptions options = {});
  ~GroupCoordinator();
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // Loads groups (blocking: startup only, after offsets.load()) and starts the retention
  // timer. Groups come back Empty; their members rejoin.
  Status load();
  // Answers waiting JoinGroup/SyncGroup requests with NOT_COORDINATOR (so their connections
  // can drain), stops every timer and forgets the groups; later requests get
  // COORDINATOR_NOT_AVAILABLE. Commits already queued are still answered. Call it when
  // shutdown begins, with offsets.stop(). Idempotent.
  void stop();

  void join_group(JoinGroupParams params, JoinCallback done);
  void sync_group(SyncGroupParams params, SyncCallback done);
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& group_instance_id, int32_t generation_id);
  LeaveGroupResult leave_group(const std::string& group_id, const std::vector<LeavingMember>& members);

  // Checks the committer against the group (generation, member id, rebalance), then stores
  // through CommittedOffsets. `done` gets one error per entry, in order, once the accepted
  // offsets are durable.
  void commit_offsets(OffsetCommitParams params, std::function<void(std::vector<ErrorCode>)> done);
  // Checks the group may lose offsets (it exists; empty, or a consumer group not subscribed to
  // the topic), then deletes through CommittedOffsets. Group level error, then one error per
  // partition; answered once durable.
  void delete_offsets(const std::string& group_id, const std::vector<TopicPartitionIndex>& partitions,
                      std::function<void(ErrorCode, std::vector<ErrorCode>)> done);

  GroupDescription describe_group(const std::string& group_id) const;
  // Filters are case-insensitive; empty = no filter. Every group here is of type "classic".
  std::vector<GroupListing> list_groups(const std::vector<std::string>& states_filter,
                                        const std::vector<std::string>& types_filter) const;
  // One error per group, in order, once durable.
  void delete_groups(const std::vector<std::string>& group_ids, std::function<void(std::vector<ErrorCode>)> done);

  // Expires offsets past retention, each group by its own rule (CommittedOffsets does the
  // expiring), and drops empty groups left without offsets. Runs every
  // offsets_retention_check_interval_ms once loaded.
  void expire_offsets();

  // Introspection for tests and metrics.
  std::optional<GroupState> group_state(const std::string& group_id) const;
  int32_t generation(const std::string& group_id) const;
  size_t member_count(const std::string& group_id) const;
  size_t group_count() const { return groups_.size(); }
  size_t pending_writes() const { return pending_writes_; }

 private:
  struct Member;
  struct Group;
  struct Entry;

  Group* find(const std::string& group_id) const;
  Group& create_group(const std::string& group_id);
  void transition(Group& g, GroupState to);

  // Answers run when the outermost public call (or timer, or store completion) returns.
  void answer(JoinCallback cb, JoinGroupResult r);
  void answer(SyncCallback cb, SyncGroupResult r);
  void answer_join(Group& g, Member& m, JoinGroupResult r);
  bool answer_sync(Member& m, SyncGroupResult r);
  void flush();

  // Join paths (Kafka: doNewMemberJoinGroup, doCurrentMemberJoinGroup, ...).
  bool accept_joining_member(const Group& g, const std::string& member_id) const;
  void join_new_member(Group& g, JoinGroupParams& p, JoinCallback& done);
  void join_existing_member(Group& g, JoinGroupParams& p, JoinCallback& done);
  void update_static_member_and_rebalance(Group& g, const std::string& old_member_id, const std::string& new_member_id,
                                          JoinGroupParams& p, JoinCallback& done);
  Member& replace_static_member(Group& g, const std::string& instance_id, const std::string& old_member_id,
                                const std::string& new_member_id);
  void add_member(Group& g, std::unique_ptr<Member> m, JoinCallback done);
  void add_member_and_rebalance(Group& g, const std::string& member_id, JoinGroupParams& p, JoinCallback done);
  void update_member(Group& g, Member& m, std::vector<GroupProtocol> protocols, int32_t rebalance_timeout_ms,
                     int32_t session_timeout_ms, JoinCallback done);
  void update_member_and_rebalance(Group& g, Member& m, JoinGroupParams& p, JoinCallback done,
                                   const std::string& reason);
  std::optional<ErrorCode> validate_current_member(const Group& g, const std::string& member_id,
                                                   const std::optional<std::string>& group_instance_id) const;
  JoinGroupResult current_generation_result(const Group& g, const Member& m, bool with_members) const;

  // Rebalance machinery.
  void maybe_prepare_rebalance(Group& g, const std::string& reason);
  void prepare_rebalance(Group& g, const std::string& reason);
  void on_initial_join_delay(const std::string& group_id);
  void maybe_complete_join(Group& g);
  void complete_join(Group& g);
  bool maybe_elect_new_joined_leader(Group& g);
  void init_next_generation(Group& g);
  void schedule_pending_sync(Group& g);
  void expire_pending_sync(const std::string& group_id, int32_t generation);
  void remove_pending_sync_member(Group& g, const std::string& member_id);
  void propagate_assignment(Group& g, ErrorCode error);
  void reset_and_propagate_assignment_error(Group& g, ErrorCode error);

  // Liveness.
  void schedule_heartbeat_expiration(Group& g, Member& m, int64_t timeout_ms);
  void on_heartbeat_expired(const std::string& group_id, const std::string& member_id);
  void add_pending_member(Group& g, const std::string& member_id, int32_t session_timeout_ms);
  void on_pending_member_expired(const std::string& group_id, const std::string& member_id);
  void remove_member_and_update_group(Group& g, const std::string& member_id, const std::string& reason);
  void remove_member(Group& g, const std::string& member_id);

  // Persistence. persist_group stores the group row and its members (with `assignment`
  // instead of the members' current one, and `as_state` instead of the current state, if set).
  void persist_group(Group& g, const std::map<std::string, Bytes>* assignment = nullptr,
                     std::optional<GroupState> as_state = std::nullopt, std::function<void(Status)> done = nullptr);
  void write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done);

  // Offsets.
  std::optional<ErrorCode> validate_offset_commit(const Group& g, const OffsetCommitParams& p) const;
  OffsetExpiration offset_expiration(const Group& g) const;
  void arm_retention_timer();
  bool is_droppable(const Group& g) const;
  void maybe_drop_empty_group(Group& g);

  state::StateStore& store_;
  GroupTimers& timers_;
  CommittedOffsets& offsets_;
  GroupCoordinatorOptions options_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::unique_ptr<GroupTimer> retention_timer_;
  uint64_t next_incarnation_ = 1;
  size_t pending_writes_ = 0;
  bool stopped_ = false;
  int depth_ = 0;
  std::vector<std::function<void()>> outbox_;
  // Completions from the StateStore may arrive after the coordinator is gone; they check this.
  Liveness alive_;
};

}  // namespace kib::bridge
