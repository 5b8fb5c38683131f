// The types of the group APIs: what the handlers pass to the group coordinator and get back
// (group_coordinator.h), and the coordinator's options. The groups the coordinator holds
// (group.h, classic_group.h) work with them too, so they live apart from the coordinator.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bridge/groups/committed_offsets.h"
#include "common/bytes.h"
#include "config/config.h"
#include "kafka/protocol/error_code.h"

namespace kib::bridge {

using kafka::ErrorCode;

namespace streams {
// A KIP-1071 streams group's settings (streams_group.h): Kafka's group.streams.* broker configs.
struct StreamsGroupOptions {
  int32_t session_timeout_ms = 45000;            // group.streams.session.timeout.ms
  int32_t heartbeat_interval_ms = 5000;          // group.streams.heartbeat.interval.ms
  int32_t num_standby_replicas = 0;              // group.streams.num.standby.replicas
  int32_t max_size = 1000;                       // group.streams.max.size (Kafka: unbounded)
  int32_t initial_rebalance_delay_ms = 3000;     // group.streams.initial.rebalance.delay.ms
  int32_t assignment_interval_ms = 1000;         // group.streams.assignment.interval.ms
};
}  // namespace streams

struct GroupCoordinatorOptions {
  // group.min.session.timeout.ms / group.max.session.timeout.ms (Kafka's defaults).
  int32_t min_session_timeout_ms = static_cast<int32_t>(config::GroupsConfig{}.min_session_timeout_ms);
  int32_t max_session_timeout_ms = static_cast<int32_t>(config::GroupsConfig{}.max_session_timeout_ms);
  // group.max.size. Kafka's default is unlimited; a thousand members is far beyond any
  // consumer group seen in practice and bounds what one group can hold.
  int32_t max_size = static_cast<int32_t>(config::GroupsConfig{}.max_size);
  // group.initial.rebalance.delay.ms: the first rebalance of an empty group waits this long
  // (extended while members keep arriving, up to the rebalance timeout).
  int32_t initial_rebalance_delay_ms = static_cast<int32_t>(config::GroupsConfig{}.initial_rebalance_delay_ms);
  // A member that joined but never completed the rebalance is dropped after this long
  // (Kafka's GroupCoordinator.NewMemberJoinTimeoutMs).
  int32_t new_member_join_timeout_ms = 5 * 60 * 1000;
  // offsets.retention.check.interval.ms (10 minutes); the retention itself is
  // CommittedOffsetsOptions::offsets_retention_ms.
  int64_t offsets_retention_check_interval_ms = 10 * 60 * 1000;
  // KIP-848 consumer groups (consumer_group.h): group.consumer.session.timeout.ms,
  // group.consumer.heartbeat.interval.ms and group.consumer.assignors (Kafka's two, the first the
  // default).
  int32_t consumer_session_timeout_ms = static_cast<int32_t>(config::GroupsConfig{}.consumer_session_timeout_ms);
  int32_t consumer_heartbeat_interval_ms =
      static_cast<int32_t>(config::GroupsConfig{}.consumer_heartbeat_interval_ms);
  std::vector<std::string> consumer_assignors{"uniform", "range"};
  // group.consumer regex subscriptions: the longest expression accepted.
  int32_t consumer_max_regex_bytes = static_cast<int32_t>(config::GroupsConfig{}.consumer_max_regex_bytes);
  int32_t consumer_max_subscribed_topics =
      static_cast<int32_t>(config::GroupsConfig{}.consumer_max_subscribed_topics);
  // group.consumer.migration.policy ([groups] consumer_migration_policy): whether a consumer
  // protocol member joining a live classic group converts it (upgrade), and whether a consumer
  // group left with classic members only becomes a classic group again (downgrade).
  bool consumer_upgrade = true;
  bool consumer_downgrade = true;
  // A consumer group's own consumer.session.timeout.ms and consumer.heartbeat.interval.ms (GROUP
  // config resources), when it has them; unset: the two above for every group.
  std::function<std::pair<int32_t, int32_t>(const std::string&)> consumer_timeouts;
  // The partition count of an existing topic (the assignors' input); without it no topic exists.
  std::function<std::optional<int32_t>(const std::string&)> topic_partitions;
  // Every topic's name (regular-expression subscriptions).
  std::function<std::vector<std::string>()> topic_names;
  // Whether topic_partitions and topic_names know the topics yet (the catalog has read them from
  // Iggy). Until then consumer and streams group heartbeats get COORDINATOR_LOAD_IN_PROGRESS, as
  // Kafka's coordinator answers while it loads: a group acting on an empty topic list would
  // empty its members' assignments after a restart. Unset: always known.
  std::function<bool()> topics_known;
  // KIP-1071 streams groups: the broker's settings, and a group's own (GROUP config resources:
  // streams.session.timeout.ms, streams.heartbeat.interval.ms, streams.num.standby.replicas)
  // when it has them.
  streams::StreamsGroupOptions streams;
  std::function<streams::StreamsGroupOptions(const std::string&)> streams_options;
  // Creates a streams group's internal topic (name, partitions, replication factor, configs);
  // `done` gets the outcome. Unset: internal topics are never created.
  std::function<void(const std::string& name, int32_t partitions, int16_t replication_factor,
                     const std::vector<std::pair<std::string, std::string>>& configs,
                     std::function<void(Status)> done)>
      create_topic;
};

// The states of a classic group (Kafka's ClassicGroupState); classic_group.h has the
// transitions between them. Kafka's names: "Empty", "PreparingRebalance", "CompletingRebalance",
// "Stable", "Dead".
enum class GroupState { kEmpty, kPreparingRebalance, kCompletingRebalance, kStable, kDead };
const char* group_state_name(GroupState s);

struct GroupProtocol {
  std::string name;
  Bytes metadata;
  bool operator==(const GroupProtocol&) const = default;
};

struct JoinGroupParams {
  std::string group_id;
  std::string member_id;  // "" = a new member
  std::optional<std::string> group_instance_id;
  bool require_known_member_id = false;  // JoinGroup v4+ (KIP-394)
  bool supports_skip_assignment = false;  // JoinGroup v9+
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<GroupProtocol> protocols;
  std::string reason;
};

struct JoinGroupResult {
  ErrorCode error = ErrorCode::kNone;
  std::string member_id;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader_id;
  bool skip_assignment = false;
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    Bytes metadata;
  };
  std::vector<Member> members;  // only for the leader
};
using JoinCallback = std::function<void(JoinGroupResult)>;

struct SyncGroupParams {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;  // v5+
  std::optional<std::string> protocol_name;  // v5+
  std::vector<std::pair<std::string, Bytes>> assignments;  // from the leader
};

struct SyncGroupResult {
  ErrorCode error = ErrorCode::kNone;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};
using SyncCallback = std::function<void(SyncGroupResult)>;

// Answers that carry only an error (and, for JoinGroup, the member id they are about).
inline JoinGroupResult join_error(ErrorCode e, std::string member_id) {
  JoinGroupResult r;
  r.error = e;
  r.member_id = std::move(member_id);
  return r;
}
inline SyncGroupResult sync_error(ErrorCode e) {
  SyncGroupResult r;
  r.error = e;
  return r;
}

struct LeavingMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string reason;
};

struct LeaveGroupResult {
  ErrorCode error = ErrorCode::kNone;   // group level
  std::vector<ErrorCode> member_errors;  // one per leaving member, in order
};

struct OffsetCommitParams {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  int64_t retention_time_ms = -1;  // v2-v4; -1 = the group's retention rules
  bool group_id_not_found_error = false;  // v9+: GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION
  std::vector<OffsetCommitEntry> entries;
  // TxnOffsetCommit (KIP-447): a transactional producer commits for the group's member. Without
  // a member id and generation (v0-2, or a producer given no group metadata) it may commit to a
  // group that has members, and a rebalance in progress does not refuse it.
  bool transactional = false;
};

struct GroupMemberDescription {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  Bytes metadata;    // of the selected protocol, Stable groups only
  Bytes assignment;  // Stable groups only
};

struct GroupDescription {
  // DescribeGroups of a group that is not a classic group: Kafka answers GROUP_ID_NOT_FOUND (v6+)
  // or Dead, with this message ("Group G is not a classic group.").
  std::optional<std::string> not_classic;
  std::string group_id;
  std::string state;  // "Dead" for a group that does not exist
  std::string protocol_type;
  std::string protocol_name;  // Stable groups only
  std::vector<GroupMemberDescription> members;
};

struct GroupListing {
  std::string group_id;
  std::string protocol_type;
  std::string state;
  std::string type = "classic";  // Kafka's group type: "classic", "consumer"
};

}  // namespace kib::bridge
