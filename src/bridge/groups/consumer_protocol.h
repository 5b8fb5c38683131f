// The parts of the consumer embedded protocol (protocol type "consumer") the coordinator reads:
// the subscribed topics in a member's JoinGroup metadata and the partitions in the leader's
// SyncGroup assignment. Every version of both starts with the v0 layout, so v0 is enough
// (Kafka's GroupMetadata.computeSubscribedTopics does the same).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/bytes.h"

namespace kib::bridge {

inline constexpr const char* kConsumerProtocolType = "consumer";

// Topics of a ConsumerProtocolSubscription; nullopt when the bytes do not parse.
std::optional<std::vector<std::string>> subscribed_topics(ByteSpan metadata);

// Partitions of a ConsumerProtocolAssignment, by topic; nullopt when the bytes do not parse.
std::optional<std::vector<std::pair<std::string, std::vector<int32_t>>>> assigned_partitions(ByteSpan assignment);

// Operator-readable forms stored next to the blobs: "orders:0,1,2;payments:0" and "orders,payments".
std::string format_partitions(const std::vector<std::pair<std::string, std::vector<int32_t>>>& partitions);
std::string format_topics(const std::vector<std::string>& topics);

}  // namespace kib::bridge
