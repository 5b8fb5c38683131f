// One KIP-1071 streams group (Kafka 4.3's StreamsGroup with the parts of GroupMetadataManager
// that act on one group): members that heartbeat with StreamsGroupHeartbeat, the topology the
// first member brought, configured against the topics that exist (streams_topology.h), a group
// epoch bumped whenever members, their metadata, the inputs' partition counts, the topology's
// readiness or the standby setting change, a target assignment per group epoch from the sticky
// task assignor (task_assignor.h), and each member reconciled one step per heartbeat
// (task_reconciliation.h). docs/groups.md, "Streams groups".
//
// The group coordinator routes StreamsGroupHeartbeat here and stores snapshot() after each change
// (streams_group_rows.h); restore() brings a group back as it was after a restart.
// Loop thread only; the group asks its host for the time, timers, topic metadata and writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "bridge/groups/group.h"
#include "bridge/groups/streams_topology.h"
#include "bridge/groups/task_assignor.h"
#include "bridge/groups/task_reconciliation.h"

namespace kib::bridge::streams {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
  auto operator<=>(const Endpoint&) const = default;
};

struct StreamsMember {
  std::string member_id;
  std::optional<std::string> instance_id;  // a static member's group.instance.id
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  int32_t topology_epoch = -1;
  std::optional<Endpoint> user_endpoint;
  std::map<std::string, std::string> client_tags;
  MemberReconciliation r;  // process id, epochs, state, assigned and pending tasks
  bool operator==(const StreamsMember&) const = default;
};

// The tasks a member holds now, without their assignment epochs (pending revocation left out).
TaskAssignment current_tasks(const StreamsMember& m);

// StreamsGroupHeartbeat after the stateless checks (nullopt: "unchanged since the last heartbeat").
struct StreamsHeartbeatParams {
  std::string member_id;
  std::optional<std::string> instance_id;
  int32_t member_epoch = 0;
  int32_t endpoint_information_epoch = 0;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<Topology> topology;  // joins only
  std::optional<OwnedTasks> owned;   // all three task lists, or none
  std::optional<std::string> process_id;
  std::optional<Endpoint> user_endpoint;
  std::optional<std::map<std::string, std::string>> client_tags;
  bool shutdown_application = false;
  std::string client_id;
  std::string client_host;
};

// StreamsGroupHeartbeatResponse's status codes.
enum class StreamsStatus : int8_t {
  kStaleTopology = 0,
  kMissingSourceTopics = 1,
  kIncorrectlyPartitionedTopics = 2,
  kMissingInternalTopics = 3,
  kShutdownApplication = 4,
  kAssignmentDelayed = 5,
};

struct StreamsStatusEntry {
  StreamsStatus code;
  std::string detail;
  bool operator==(const StreamsStatusEntry&) const = default;
};

// PartitionsByUserEndpoint: the partitions behind a member's tasks, by topic.
struct EndpointPartitions {
  Endpoint endpoint;
  std::map<std::string, std::set<int32_t>> active;
  std::map<std::string, std::set<int32_t>> standby;
};

struct StreamsHeartbeatResult {
  ErrorCode error = ErrorCode::kNone;
  std::string message;
  std::string member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  std::vector<StreamsStatusEntry> status;  // always sent (a null list would keep the client's old one)
  std::optional<TaskAssignment> tasks;     // on joining and whenever the member's tasks changed
  int32_t endpoint_information_epoch = 0;
  std::optional<std::vector<EndpointPartitions>> partitions_by_endpoint;
  std::vector<InternalTopic> topics_to_create;  // for the caller to create (MISSING_INTERNAL_TOPICS)
};
using StreamsHeartbeatCallback = std::function<void(StreamsHeartbeatResult)>;

class StreamsGroup;

class StreamsGroupHost {
 public:
  virtual ~StreamsGroupHost() = default;
  virtual int64_t now_ms() const = 0;
  virtual void arm_session(const std::string& member_id, int64_t delay_ms) = 0;
  virtual void cancel_session(const std::string& member_id) = 0;
  virtual void arm_rebalance(const std::string& member_id, int32_t epoch, int64_t delay_ms) = 0;
  virtual void cancel_rebalance(const std::string& member_id) = 0;
  virtual std::optional<int32_t> partitions(const std::string& topic) const = 0;
  // The group's state changed: store it; `done` (may be empty) once durable. With `only_member`,
  // nothing but that member and the group's state changed: only their rows are written.
  virtual void persist(const StreamsGroup& g, const std::string* only_member, std::function<void(Status)> done) = 0;
  virtual void answer(StreamsHeartbeatCallback cb, StreamsHeartbeatResult r) = 0;
};

// What survives a restart (Kafka's StreamsGroupMetadata, Topology, MemberMetadata,
// TargetAssignment and CurrentMemberAssignment records). The configured topology, the endpoint
// epoch, a requested shutdown and the delays are rebuilt or forgotten, as Kafka's are.
struct StreamsGroupSnapshot {
  std::string group_id;
  int32_t group_epoch = 1;
  int32_t assignment_epoch = 1;
  int32_t validated_topology_epoch = 0;
  int32_t last_standby_replicas = -1;
  std::optional<Topology> topology;
  std::map<std::string, StreamsMember> members;
  std::map<std::string, TaskAssignment> target;
  std::map<std::string, int32_t> configured_from;  // the inputs' partition counts (Kafka's metadata hash)
};

// Kafka's StreamsGroupState names: Empty, NotReady, Assigning, Reconciling, Stable.
enum class StreamsGroupState { kEmpty, kNotReady, kAssigning, kReconciling, kStable };
const char* streams_group_state_name(StreamsGroupState s);

class StreamsGroup final : public Group {
 public:
  StreamsGroup(std::string id, StreamsGroupOptions options, std::unique_ptr<StreamsGroupHost> host);
  ~StreamsGroup() override;

  // StreamsGroupHeartbeat: epoch >= 0 (join, heartbeat) or -1 (leave). Answered once durable.
  void heartbeat(const StreamsHeartbeatParams& p, StreamsHeartbeatCallback done);
  void on_session_expired(const std::string& member_id);
  void on_rebalance_expired(const std::string& member_id, int32_t epoch);

  StreamsGroupSnapshot snapshot() const;

  // One member's part of snapshot(): the group's epochs, that member and its target, no topology.

  StreamsGroupSnapshot member_snapshot(const std::string& member_id) const;
  // A group loaded at startup: every member's session starts again now, a member still revoking
  // gets its rebalance timeout again.
  void restore(const StreamsGroupSnapshot& s);
  void set_options(const StreamsGroupOptions& o) { options_ = o; }
  const StreamsGroupOptions& options() const { return options_; }

  StreamsGroupState state() const;
  int32_t group_epoch() const { return group_epoch_; }
  int32_t assignment_epoch() const { return assignment_epoch_; }
  const std::optional<Topology>& topology() const { return topology_; }
  const std::optional<ConfiguredTopology>& configured() const { return configured_; }
  const std::map<std::string, StreamsMember>& members() const { return members_; }
  // A member heard from while the coordinator cannot serve it yet (topics still loading): its
  // session starts again, nothing else changes.
  void keep_alive(const std::string& member_id) {
    if (members_.contains(member_id)) host_->arm_session(member_id, options_.session_timeout_ms);
  }
  const TaskAssignment* target(const std::string& member_id) const;

  // Group.
  GroupType type() const override { return GroupType::kStreams; }
  const char* state_name() const override { return streams_group_state_name(state()); }
  std::string protocol_type() const override { return "streams"; }
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
  StreamsHeartbeatResult fail(ErrorCode e, std::string message) const;
  std::optional<std::string> fenced(const StreamsHeartbeatParams& p, const StreamsMember& m) const;
  // Kafka 4.4's getOrMaybeCreate{Dynamic,Static}StreamsGroupMember: the member the heartbeat is
  // about (a copy), new or known, a static member's previous incarnation it replaces, or why
  // there is none.
  struct Lookup {
    ErrorCode error = ErrorCode::kNone;
    std::string message;
    StreamsMember member;
    bool created = false;
    std::optional<StreamsMember> replaced;
  };
  Lookup find_member(const StreamsHeartbeatParams& p) const;
  const StreamsMember* static_member(const std::string& instance_id) const;
  // The previous incarnation of a static member hands its target and tasks over to `member_id`.
  void replace_static_member(const StreamsMember& old, const std::string& member_id);
  static StreamsMember with_request(const StreamsMember& m, const StreamsHeartbeatParams& p);
  std::variant<bool, StreamsHeartbeatResult> update_topology(const StreamsHeartbeatParams& p);
  StreamsHeartbeatResult reply(const StreamsHeartbeatParams& p, const StreamsMember& now, bool tasks_changed,
                               std::optional<StreamsStatusEntry> delayed);
  void leave(const StreamsHeartbeatParams& p, StreamsHeartbeatCallback done);
  void remove_member(const std::string& member_id, const char* why);
  // Configures the topology again when it is new, unconfigured or its inputs' partition counts
  // changed; whether the group epoch must move, or why Kafka refuses the topology.
  Result<bool> maybe_configure();
  std::optional<std::string> invalid_owned_tasks(const OwnedTasks& owned) const;
  // The target for the group epoch, unless delayed (returns the status then).
  std::optional<StreamsStatusEntry> maybe_update_target();
  TaskHolders holders() const;
  const Subtopology* reader_of(const std::string& topic) const;
  std::vector<EndpointPartitions> partitions_by_endpoint() const;
  std::vector<StreamsStatusEntry> statuses(const StreamsMember& m, std::optional<StreamsStatusEntry> delayed) const;

  StreamsGroupOptions options_;
  std::unique_ptr<StreamsGroupHost> host_;
  std::map<std::string, StreamsMember> members_;
  std::map<std::string, TaskAssignment> target_;
  std::optional<Topology> topology_;
  std::optional<ConfiguredTopology> configured_;
  std::map<std::string, int32_t> configured_from_;  // the partition counts configured_ was computed from
  bool counts_known_ = false;  // configured_from_ is what the group epoch was computed from
  // A new group starts as Kafka's: group and assignment epochs 1, validated topology epoch 0.
  int32_t validated_topology_epoch_ = 0;
  int32_t group_epoch_ = 1;
  int32_t assignment_epoch_ = 1;
  int32_t last_standby_replicas_ = -1;
  int64_t delayed_until_ms_ = 0;       // the initial rebalance delay of a group's first member
  int64_t last_assignment_ms_ = 0;
  int32_t endpoint_information_epoch_ = 0;
  bool shutdown_requested_ = false;    // in memory only, as Kafka: cleared once the group is empty
  std::string shutdown_member_;
  mutable std::set<std::string> kept_;  // offset_expiration()'s topics
};

}  // namespace kib::bridge::streams
