// What the group coordinator asks of every group, whatever protocol its members speak: who may
// commit or delete offsets and when they expire, what DescribeGroups and ListGroups show,
// whether it may be deleted, and what happens to waiting requests when the coordinator stops.
// Kafka 4.x's Group interface, which its ClassicGroup, ConsumerGroup (KIP-848) and StreamsGroup
// (KIP-1071) implement. The bridge serves the classic protocol only (classic_group.h); a new
// group type is a sibling class implementing this interface, with its own requests routed by
// the coordinator (docs/groups.md, Where the code is).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "bridge/groups/committed_offsets.h"
#include "bridge/groups/group_types.h"

namespace kib::bridge {

enum class GroupType { kClassic };
// Kafka's names, as ListGroups v5+ filters on them: "classic" (later "consumer", "streams").
inline const char* group_type_name(GroupType t) {
  switch (t) {
    case GroupType::kClassic:
      return "classic";
  }
  return "classic";
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
