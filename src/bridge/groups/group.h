// What the group coordinator asks of every group, whatever protocol its members speak: who may
// commit or delete offsets and when they expire, what DescribeGroups and ListGroups show,
// whether it may be deleted, and what happens to waiting requests when the coordinator stops.
// Kafka 4.x's Group interface, which its ClassicGroup, ConsumerGroup (KIP-848) and StreamsGroup
// (KIP-1071) implement: classic_group.h, consumer_group.h; each type's own requests are routed
// by the coordinator (docs/groups.md, Where the code is).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_types.h"

namespace kib::bridge {

enum class GroupType { kClassic, kConsumer, kStreams };
// Kafka's names, as ListGroups v5+ filters on them: "classic", "consumer", "streams".
inline const char* group_type_name(GroupType t) {
  switch (t) {
    case GroupType::kClassic:
      return "classic";
    case GroupType::kConsumer:
      return "consumer";
    case GroupType::kStreams:
      return "streams";
  }
  return "classic";
}

// The offset commit checks Kafka's ConsumerGroup and StreamsGroup.validateOffsetCommit share
// before the per-partition epochs: an admin commit (no generation) to a group without members,
// a transactional commit without member, the member must exist, v9+ unless transactional, then
// its epoch. A stale epoch is STALE_MEMBER_EPOCH, or ILLEGAL_GENERATION for a transactional
// commit (OffsetMetadataManager's mapping). `member_epoch`: the committer's, unset if it is not
// a member.
struct ModernCommitCheck {
  enum class Verdict { kAccepted, kRefused, kByPartition } verdict = Verdict::kAccepted;
  ErrorCode error = ErrorCode::kNone;  // kRefused's
  ErrorCode stale = ErrorCode::kStaleMemberEpoch;  // what a partition too new for this epoch gets
};
inline ModernCommitCheck modern_commit_check(const OffsetCommitParams& p, bool has_members,
                                             std::optional<int32_t> member_epoch) {
  using V = ModernCommitCheck::Verdict;
  const ErrorCode stale = p.transactional ? ErrorCode::kIllegalGeneration : ErrorCode::kStaleMemberEpoch;
  if (p.generation_id < 0 && !has_members) return {V::kAccepted, ErrorCode::kNone, stale};
  if (p.transactional && p.generation_id == -1 && p.member_id.empty() && !p.group_instance_id)
    return {V::kAccepted, ErrorCode::kNone, stale};
  if (!member_epoch) return {V::kRefused, ErrorCode::kUnknownMemberId, stale};
  if (!p.transactional && !p.group_id_not_found_error) return {V::kRefused, ErrorCode::kUnsupportedVersion, stale};
  if (p.generation_id == *member_epoch) return {V::kAccepted, ErrorCode::kNone, stale};
  if (p.generation_id > *member_epoch) return {V::kRefused, stale, stale};
  return {V::kByPartition, ErrorCode::kNone, stale};
}

class Group {
 public:
  explicit Group(std::string id) : id_(std::move(id)) {}
  virtual ~Group() = default;
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  const std::string& id() const { return id_; }
  virtual GroupType type() const = 0;

  // What DescribeGroups and ListGroups show: the state by Kafka's name, the protocol type
  // ("" for a group that only stores offsets), the members.
  virtual const char* state_name() const = 0;
  virtual std::string protocol_type() const = 0;
  virtual GroupDescription describe() const = 0;

  // No members, none about to join: such a group goes once its offsets are gone (Kafka's
  // cleanupGroupMetadata).
  virtual bool is_empty() const = 0;
  // DeleteGroups: why the group may not be deleted now (NON_EMPTY_GROUP), if it may not.
  virtual std::optional<ErrorCode> validate_delete_group() const = 0;

  // OffsetCommit: why this committer may not commit now (the error every partition of the
  // commit gets), if it may not.
  virtual std::optional<ErrorCode> validate_offset_commit(const OffsetCommitParams& p) const = 0;
  // A commit validate_offset_commit accepted: a sign of life of the committing member where the
  // group's protocol counts it as one.
  virtual void on_offset_commit(const OffsetCommitParams& p) = 0;
  // OffsetFetch v9+ with a member id and epoch: why that member may not fetch (Kafka checks
  // consumer group members' epochs; a classic group takes any).
  virtual std::optional<ErrorCode> validate_offset_fetch(const std::string& member_id, int32_t member_epoch) const {
    (void)member_id;
    (void)member_epoch;
    return std::nullopt;
  }
  // OffsetDelete: why the group may not lose offsets now, if it may not; then the topics whose
  // offsets it still uses (GROUP_SUBSCRIBED_TO_TOPIC for their partitions).
  virtual std::optional<ErrorCode> validate_offset_delete() const = 0;
  virtual bool is_subscribed_to_topic(const std::string& topic) const = 0;
  // Which of the group's offsets expire, and from when (Kafka's offsetExpirationCondition).
  virtual OffsetExpiration offset_expiration() const = 0;

  // The coordinator stops: requests waiting for an answer get NOT_COORDINATOR, so their
  // connections can drain (Kafka's onGroupUnloaded).
  virtual void unload() = 0;

 private:
  std::string id_;
};

}  // namespace kib::bridge
