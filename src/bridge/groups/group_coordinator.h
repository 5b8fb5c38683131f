// The group coordinator: every group (the bridge coordinates them all), routed by group id.
// It holds the groups and carries out what they decide: their timers, their writes to SQLite
// (the StateStore), loading them at startup, and the answers to waiting requests. It also decides
// who may commit or delete offsets (asking the group) and when offsets expire;
// CommittedOffsets (committed_offsets.h) stores them. The groups are Kafka's classic group
// protocol (classic_group.h: JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and KIP-848 consumer
// groups (consumer_group.h: ConsumerGroupHeartbeat); the coordinator holds them as Groups (group.h).
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
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/consumer_group.h"
#include "bridge/groups/streams_group.h"
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
struct StoredStreamsGroup;
}

namespace kib::bridge {

class Group;
class ClassicGroup;

// ConsumerGroupDescribe, one group: an error (GROUP_ID_NOT_FOUND with Kafka's message) or the group.
struct ConsumerGroupDescribeResult {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  ConsumerGroupView group;
};

// StreamsGroupDescribe, one group: an error (GROUP_ID_NOT_FOUND with Kafka's message) or the group,
// valid until the coordinator is next called.
struct StreamsGroupDescribeResult {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  const streams::StreamsGroup* group = nullptr;
};

// A StreamsGroupHeartbeat as it came (the parts the stateless checks look at), beside the params.
struct StreamsHeartbeatShape {
  std::string group_id;
  std::optional<std::string> instance_id;
  bool has_topology = false;
  // The active, standby and warm-up task lists: sent (non-null), and sent empty.
  bool owned_sent[3] = {false, false, false};
  bool owned_empty[3] = {true, true, true};
  std::vector<std::string> source_topic_regex;  // of every subtopology
  std::vector<std::pair<std::string, int32_t>> changelog_partitions;
};

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

  // ConsumerGroupHeartbeat (KIP-848) at `version`: the request's shape is checked as Kafka's
  // GroupCoordinatorService does (INVALID_REQUEST, UNSUPPORTED_ASSIGNOR), then the group's
  // (created by a joining member; an empty classic group becomes a consumer group). Answered once
  // what changed is durable.
  void consumer_group_heartbeat(ConsumerHeartbeatParams params, int16_t version, ConsumerHeartbeatCallback done);
  // The group's own configs changed (GROUP config resources): a live consumer group takes its new
  // session timeout and heartbeat interval from options().consumer_timeouts, a streams group its
  // settings from options().streams_options.
  void group_config_changed(const std::string& group_id);
  ConsumerGroupDescribeResult consumer_group_describe(const std::string& group_id) const;

  // StreamsGroupHeartbeat (KIP-1071): the request's shape checked as Kafka 4.4's
  // GroupCoordinatorService does (INVALID_REQUEST, STREAMS_INVALID_TOPOLOGY), then the group's
  // (created by a joining member; an empty group of another type becomes a streams group).
  // Answered once what changed is durable. streams_coordination.cc.
  void streams_group_heartbeat(const StreamsHeartbeatShape& shape, streams::StreamsHeartbeatParams params,
                               streams::StreamsHeartbeatCallback done);
  StreamsGroupDescribeResult streams_group_describe(const std::string& group_id) const;
  // A streams group's missing internal topics, created as Kafka's AutoTopicCreationManager does it
  // for streams groups: in the background, each name once while its creation is in flight; a
  // failure is kept for `error_ttl_ms`. Returns the failures still kept for these names
  // ("topic (message)"), for the heartbeat's MISSING_INTERNAL_TOPICS status.
  std::vector<std::string> create_streams_topics(const std::vector<streams::InternalTopic>& topics,
                                                 int64_t error_ttl_ms);
  // OffsetFetch v9+: the member asking, if it names one (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).
  std::optional<ErrorCode> validate_offset_fetch(const std::string& group_id, const std::string& member_id,
                                                 int32_t member_epoch) const;

  // Checks the committer against the group (generation, member id, rebalance), then stores
  // through CommittedOffsets. `done` gets one error per entry, in order, once the accepted
  // offsets are durable.
  void commit_offsets(OffsetCommitParams params, std::function<void(std::vector<ErrorCode>)> done);
  // TxnOffsetCommit's fencing (KIP-447, Kafka's validateTransactionalOffsetCommit): the
  // committer's generation, member id and group instance id against the group, so that a zombie
  // that lost its partitions in a rebalance cannot commit their input. An unknown group takes a
  // commit without generation and refuses one with (ILLEGAL_GENERATION). The error every
  // partition gets, if refused. `params.transactional` must be set.
  std::optional<ErrorCode> validate_txn_offset_commit(const OffsetCommitParams& params) const;
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
  class ClassicHost;
  class ConsumerHost;
  class StreamsHost;
  struct Entry;

  ConsumerGroup& create_consumer_group(const std::string& group_id);
  ConsumerGroup* find_consumer(const std::string& group_id) const;
  void persist_consumer_group(const ConsumerGroup& g, const std::string* only_member, std::function<void(Status)> done);
  void answer(ConsumerHeartbeatCallback cb, ConsumerHeartbeatResult r);

  streams::StreamsGroup* find_streams(const std::string& group_id) const;
  streams::StreamsGroup& create_streams_group(const std::string& group_id);
  void persist_streams_group(const streams::StreamsGroup& g, const std::string* only_member,
                             std::function<void(Status)> done);
  void answer(streams::StreamsHeartbeatCallback cb, streams::StreamsHeartbeatResult r);
  // Loads the streams groups' rows (startup, inside load()'s blocking job).
  size_t restore_streams_groups(const std::vector<state::StoredStreamsGroup>& stored);
  // An empty group of another type is replaced: its rows of that type go.
  void forget_rows_of(const Group& g);

  // KIP-848's online migration (group_migration.cc). A joining consumer-protocol member converts
  // a live classic group (Kafka's convertToConsumerGroup) and joins it; refused with
  // GROUP_ID_NOT_FOUND and Kafka's message when the policy, the protocol type, the size or a
  // custom assignor's user data forbid it.
  void upgrade_and_join(ClassicGroup& classic, ConsumerHeartbeatParams& p, ConsumerHeartbeatCallback done);
  // After the current call: a consumer group left with classic members only becomes a classic
  // group (Kafka's convertToClassicGroup), if the policy and max_size allow it.
  void schedule_downgrade(const std::string& group_id, bool rebalance);
  void downgrade(const std::string& group_id, bool rebalance);
  // A replaced group is kept until the writes it queued completed, so their completions (answers
  // to its members) find it.
  void retire(std::unique_ptr<Group> g);

  Group* find(const std::string& group_id) const;
  ClassicGroup* find_classic(const std::string& group_id) const;
  ClassicGroup& create_group(const std::string& group_id);

  // Answers run when the outermost public call (or timer, or store completion) returns.
  void answer(JoinCallback cb, JoinGroupResult r);
  void answer(SyncCallback cb, SyncGroupResult r);
  void flush();

  // Stores the group row and its members (with `assignment` instead of the members' current
  // one, and `as_state` instead of the current state, if set).
  void persist_group(const ClassicGroup& g, const std::map<std::string, Bytes>* assignment,
                     std::optional<GroupState> as_state, std::function<void(Status)> done);
  void write(std::function<void(SQLite::Database&)> job, std::function<void(Status)> done);

  // Offsets retention.
  void arm_retention_timer();
  bool is_droppable(const Group& g) const;
  void maybe_drop_empty_group(Group& g);

  state::StateStore& store_;
  GroupTimers& timers_;
  CommittedOffsets& offsets_;
  GroupCoordinatorOptions options_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::vector<std::unique_ptr<Group>> retired_;
  std::unique_ptr<GroupTimer> retention_timer_;
  size_t pending_writes_ = 0;
  bool stopped_ = false;
  int depth_ = 0;
  std::vector<std::function<void()>> outbox_;
  // Internal topics of streams groups being created, and recent failures (name -> message, until).
  std::set<std::string> creating_topics_;
  std::map<std::string, std::pair<std::string, int64_t>> topic_creation_errors_;
  // Completions from the StateStore may arrive after the coordinator is gone; they check this.
  Liveness alive_;
};

}  // namespace kib::bridge
