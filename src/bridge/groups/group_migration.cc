// KIP-848's online migration between a classic group and a consumer group, as Kafka 4's
// GroupMetadataManager does it (convertToConsumerGroup, convertToClassicGroup and their
// validations). docs/groups.md, "Online migration between classic and consumer groups".
//
// Each conversion replaces the group in memory and writes the new group as a whole: the classic
// rows and the consumer rows of a group are replaced in one SQLite transaction (save_group,
// save_consumer_group), so a crash leaves it as it was before or after, never half converted.
#include <spdlog/spdlog.h>

#include "bridge/groups/classic_group.h"
#include "bridge/groups/consumer_protocol.h"
#include "bridge/groups/group_coordinator.h"
#include "common/text.h"

namespace kib::bridge {

namespace {

// Kafka's ConsumerGroup.fromClassicGroup: every member Stable at the generation, assigned what
// its last SyncGroup gave it, which is also its target; the group and target epochs are the
// generation. The message GROUP_ID_NOT_FOUND carries if the group cannot be converted.
std::optional<std::string> consumer_group_of(const ClassicGroup& classic,
                                             const std::function<std::optional<int32_t>(const std::string&)>& partitions,
                                             ConsumerGroupSnapshot* out) {
  const std::string& id = classic.id();
  const int32_t generation = classic.generation();
  out->group_id = id;
  out->group_epoch = generation;
  out->assignment_epoch = generation;
  for (const auto& [member_id, cm] : classic.members()) {
    const Bytes* metadata = classic.protocol_name() ? cm->metadata(*classic.protocol_name()) : nullptr;
    if (!metadata && !cm->protocols.empty()) metadata = &cm->protocols.front().metadata;
    const auto sub = metadata ? decode_subscription(*metadata) : std::nullopt;
    const auto assignment = decode_assignment(cm->assignment);
    if (!sub || !assignment)
      return "Cannot upgrade classic group " + id +
             " to consumer group because the embedded consumer protocol is malformed.";
    if (assignment->has_user_data)
      return "Cannot upgrade classic group " + id +
             " to consumer group because an unsupported custom assignor is in use. Please refer to the "
             "documentation or switch to a default assignor before re-attempting the upgrade.";
    ConsumerMember m;
    m.member_id = member_id;
    m.instance_id = cm->group_instance_id;
    m.rack_id = sub->rack_id;
    m.client_id = cm->client_id;
    m.client_host = cm->client_host;
    m.rebalance_timeout_ms = cm->rebalance_timeout_ms;
    m.subscribed_topic_names = std::set<std::string>(sub->topics.begin(), sub->topics.end());
    m.member_epoch = generation;
    m.previous_member_epoch = generation;
    m.state = ConsumerMemberState::kStable;
    for (const auto& [topic, parts] : assignment->partitions)
      for (int32_t p : parts) m.assigned[topic][p] = generation;
    m.classic = ClassicMemberMetadata{cm->session_timeout_ms, cm->protocols};
    for (const auto& t : m.subscribed_topic_names)
      if (auto n = partitions ? partitions(t) : std::nullopt) out->subscribed_partitions[t] = *n;
    out->members.emplace_back(std::move(m), assignment->partitions);
  }
  return std::nullopt;
}

}  // namespace

void GroupCoordinator::retire(std::unique_ptr<Group> g) {
  if (pending_writes_ > 0) retired_.push_back(std::move(g));
}

void GroupCoordinator::upgrade_and_join(ClassicGroup& classic, ConsumerHeartbeatParams& p,
                                        ConsumerHeartbeatCallback done) {
  const std::string id = classic.id();
  auto refuse = [&](std::string message) {
    spdlog::info("group={} {}", esc(id), esc(message, 512));
    ConsumerHeartbeatResult r;
    r.error = ErrorCode::kGroupIdNotFound;
    r.message = std::move(message);
    answer(std::move(done), std::move(r));
  };
  // Kafka's validateOnlineUpgrade.
  if (!options_.consumer_upgrade)
    return refuse("Cannot upgrade classic group " + id + " to consumer group because online upgrade is disabled.");
  if (classic.protocol_type() != kConsumerProtocolType)
    return refuse("Cannot upgrade classic group " + id +
                  " to consumer group because the group does not use the consumer embedded protocol.");
  if (classic.members().size() > static_cast<size_t>(options_.max_size))
    return refuse("Cannot upgrade classic group " + id +
                  " to consumer group because the group size exceeds the consumer group maximum size.");
  ConsumerGroupSnapshot snapshot;
  if (auto why = consumer_group_of(classic, options_.topic_partitions, &snapshot)) return refuse(*why);

  // The joining member starts a new rebalance: members waiting in this one rejoin the consumer group.
  classic.release_waiting(ErrorCode::kRebalanceInProgress);
  std::unique_ptr<Group> previous = std::move(groups_[id]);
  groups_.erase(id);
  ConsumerGroup& g = create_consumer_group(id);
  g.restore(snapshot);
  if (!g.heartbeat(p, std::move(done))) {
    // The join was refused before anything changed: the group stays what it was (Kafka writes
    // none of the conversion's records then).
    groups_[id] = std::move(previous);
    return;
  }
  spdlog::info("group={} converted from a classic group (generation {}, {} members) to a consumer group", esc(id),
               snapshot.group_epoch, snapshot.members.size());
  persist_consumer_group(g, nullptr, nullptr);
  retire(std::move(previous));
}

void GroupCoordinator::schedule_downgrade(const std::string& group_id, bool rebalance) {
  // Runs from the outbox, after the group's current call returned (flush() picks up what it queues).
  outbox_.push_back([this, group_id, rebalance, alive = alive_.token()] {
    if (alive) downgrade(group_id, rebalance);
  });
}

void GroupCoordinator::downgrade(const std::string& id, bool rebalance) {
  if (stopped_) return;
  ConsumerGroup* cg = find_consumer(id);
  if (!cg || !cg->only_classic_members()) return;
  // Kafka's validateOnlineDowngradeWith{FencedMembers,ReplacedMember}.
  if (!options_.consumer_downgrade) {
    spdlog::info("group={} Cannot downgrade consumer group to classic group because the online downgrade is disabled.",
                 esc(id));
    return;
  }
  if (cg->members().size() > static_cast<size_t>(options_.max_size)) {
    spdlog::info("group={} Cannot downgrade consumer group to classic group because its group size is greater than "
                 "classic group max size.", esc(id));
    return;
  }
  // Kafka's ClassicGroup.fromConsumerGroup: each member with its classic metadata, assigned its
  // target in its own ConsumerProtocol version.
  std::vector<std::unique_ptr<ClassicGroupMember>> members;
  for (const auto& [member_id, m] : cg->members()) {
    auto c = std::make_unique<ClassicGroupMember>();
    c->member_id = member_id;
    c->group_instance_id = m.instance_id;
    c->client_id = m.client_id;
    c->client_host = m.client_host;
    c->rebalance_timeout_ms = m.rebalance_timeout_ms;
    c->session_timeout_ms = m.classic->session_timeout_ms;
    c->protocol_type = kConsumerProtocolType;
    c->protocols = m.classic->protocols;
    const MemberTargetAssignment* target = cg->target(member_id);
    const int16_t version =
        m.classic->protocols.empty() ? 0 : consumer_protocol_version(m.classic->protocols.front().metadata).value_or(0);
    c->assignment = encode_assignment(target ? *target : MemberTargetAssignment{}, version);
    members.push_back(std::move(c));
  }
  // Members that left downgrade the group at the epoch before they left, as Kafka converts the
  // group instead of removing them: the members still at that epoch are told to rejoin.
  const int32_t generation = rebalance ? cg->epoch_before_removal() : cg->group_epoch();
  const size_t count = members.size();
  std::unique_ptr<Group> previous = std::move(groups_[id]);
  groups_.erase(id);
  ClassicGroup& g = create_group(id);
  const std::string reason = "Downgrade group " + id + " from consumer to classic " +
                             (rebalance ? "for member leaving." : "with stale assignment.");
  g.adopt(generation, std::move(members), rebalance ? &reason : nullptr);
  persist_group(g, nullptr, std::nullopt, nullptr);
  spdlog::info("group={} converted from a consumer group (epoch {}, {} members) to a classic group", esc(id),
               generation, count);
  retire(std::move(previous));
}

}  // namespace kib::bridge
