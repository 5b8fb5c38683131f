// The server-side partition assignors of the consumer group protocol (KIP-848): Kafka 4.3's
// UniformAssignor ("uniform", the default of group.consumer.assignors) and RangeAssignor
// ("range"), as pure functions of the members and the topics' partition counts. assignors.cc
// says what was ported from which Kafka class and where this port differs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kib::bridge {

// A member as the assignors see it (Kafka's MemberSubscriptionAndAssignmentImpl).
struct AssignorMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::set<std::string> subscribed_topics;                // names, resolved (regexes already expanded)
  std::map<std::string, std::set<int32_t>> assignment;   // the member's current TARGET assignment, by topic name
};

using MemberTargetAssignment = std::map<std::string, std::set<int32_t>>;  // topic name -> partitions

// topic name -> partition count, for every topic any member subscribes to that exists
using TopicPartitionCounts = std::map<std::string, int32_t>;

// Kafka's UniformAssignor ("uniform") and RangeAssignor ("range"). Returns member id -> assignment,
// an entry for every member (possibly empty; never an empty partition set). Topics a member
// subscribes to that are absent from `topics` (or have a negative count) are ignored. Deterministic:
// the result does not depend on the order of `members`. Never throws on inconsistent input: the
// current assignments are sanitised first (see assignors.cc).
std::map<std::string, MemberTargetAssignment> assign_uniform(const std::vector<AssignorMember>& members,
                                                             const TopicPartitionCounts& topics);
std::map<std::string, MemberTargetAssignment> assign_range(const std::vector<AssignorMember>& members,
                                                           const TopicPartitionCounts& topics);

// By KIP-848's name ("uniform", "range"; case-sensitive, as Kafka matches
// ConsumerGroupHeartbeatRequest.ServerAssignor against ConsumerGroupPartitionAssignor.name()).
bool is_known_assignor(std::string_view name);

// Dispatches on the name; an unknown name (is_known_assignor false) yields an empty map.
std::map<std::string, MemberTargetAssignment> assign(std::string_view assignor,
                                                     const std::vector<AssignorMember>& members,
                                                     const TopicPartitionCounts& topics);

}  // namespace kib::bridge
