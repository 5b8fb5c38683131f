// The parts of the consumer embedded protocol (protocol type "consumer") the coordinator reads:
// the subscribed topics in a member's JoinGroup metadata and the partitions in the leader's
// SyncGroup assignment. Every version of both starts with the v0 layout, so v0 is enough
// (Kafka's GroupMetadata.computeSubscribedTopics does the same).
#pragma once

#include <cstdint>
#include <map>
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

// A whole ConsumerProtocolSubscription (any version; newer ones read as the newest known, as
// Kafka's ConsumerProtocol does): what a classic member inside a consumer group subscribes to,
// owns and where it runs (KIP-848's online migration). nullopt when the bytes do not parse.
struct ConsumerSubscription {
  int16_t version = 0;
  std::vector<std::string> topics;
  std::map<std::string, std::set<int32_t>> owned;
  std::optional<std::string> rack_id;
};
std::optional<ConsumerSubscription> decode_subscription(ByteSpan metadata);

// A ConsumerProtocolAssignment with its user data (a custom assignor's); nullopt when the bytes
// do not parse. Empty bytes are an empty assignment.
struct ConsumerAssignment {
  std::map<std::string, std::set<int32_t>> partitions;
  bool has_user_data = false;
};
std::optional<ConsumerAssignment> decode_assignment(ByteSpan assignment);

// The version a subscription or assignment starts with; nullopt for fewer than two bytes.
std::optional<int16_t> consumer_protocol_version(ByteSpan bytes);

// Kafka's ConsumerProtocol.serializeAssignment: `version` clamped to the known versions.
Bytes encode_assignment(const std::map<std::string, std::set<int32_t>>& partitions, int16_t version);

// Operator-readable forms stored next to the blobs: "orders:0,1,2;payments:0" and "orders,payments".
std::string format_partitions(const std::vector<std::pair<std::string, std::vector<int32_t>>>& partitions);
std::string format_topics(const std::vector<std::string>& topics);

}  // namespace kib::bridge
