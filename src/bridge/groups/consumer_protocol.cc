#include "bridge/groups/consumer_protocol.h"

#include <algorithm>

#include "kafka/protocol/generated/consumer_protocol_assignment.h"
#include "kafka/protocol/generated/consumer_protocol_subscription.h"

namespace kib::bridge {

std::optional<std::vector<std::string>> subscribed_topics(ByteSpan metadata) {
  try {
    ByteReader r(metadata);
    if (r.be<int16_t>("subscription version") < 0) return std::nullopt;
    kafka::msg::ConsumerProtocolSubscription s;
    s.decode(r, 0);
    return std::move(s.topics);
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

std::optional<std::vector<std::pair<std::string, std::vector<int32_t>>>> assigned_partitions(ByteSpan assignment) {
  try {
    ByteReader r(assignment);
    if (r.be<int16_t>("assignment version") < 0) return std::nullopt;
    kafka::msg::ConsumerProtocolAssignment a;
    a.decode(r, 0);
    std::vector<std::pair<std::string, std::vector<int32_t>>> out;
    for (auto& tp : a.assigned_partitions) out.emplace_back(std::move(tp.topic), std::move(tp.partitions));
    return out;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

std::optional<int16_t> consumer_protocol_version(ByteSpan bytes) {
  try {
    ByteReader r(bytes);
    return r.be<int16_t>("consumer protocol version");
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

std::optional<ConsumerSubscription> decode_subscription(ByteSpan metadata) {
  try {
    ByteReader r(metadata);
    const int16_t version = r.be<int16_t>("subscription version");
    if (version < 0) return std::nullopt;
    kafka::msg::ConsumerProtocolSubscription s;
    s.decode(r, std::min<int16_t>(version, kafka::msg::ConsumerProtocolSubscription::kMaxVersion));
    ConsumerSubscription out;
    out.version = version;
    out.topics = std::move(s.topics);
    for (auto& tp : s.owned_partitions) out.owned[tp.topic].insert(tp.partitions.begin(), tp.partitions.end());
    out.rack_id = std::move(s.rack_id);
    return out;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

std::optional<ConsumerAssignment> decode_assignment(ByteSpan assignment) {
  ConsumerAssignment out;
  if (assignment.empty()) return out;
  try {
    ByteReader r(assignment);
    const int16_t version = r.be<int16_t>("assignment version");
    if (version < 0) return std::nullopt;
    kafka::msg::ConsumerProtocolAssignment a;
    a.decode(r, std::min<int16_t>(version, kafka::msg::ConsumerProtocolAssignment::kMaxVersion));
    for (auto& tp : a.assigned_partitions) out.partitions[tp.topic].insert(tp.partitions.begin(), tp.partitions.end());
    out.has_user_data = a.user_data && !a.user_data->empty();
    return out;
  } catch (const DecodeError&) {
    return std::nullopt;
  }
}

Bytes encode_assignment(const std::map<std::string, std::set<int32_t>>& partitions, int16_t version) {
  version = std::clamp<int16_t>(version, kafka::msg::ConsumerProtocolAssignment::kMinVersion,
                                kafka::msg::ConsumerProtocolAssignment::kMaxVersion);
  kafka::msg::ConsumerProtocolAssignment a;
  for (const auto& [topic, parts] : partitions) {
    kafka::msg::ConsumerProtocolAssignment::TopicPartition tp;
    tp.topic = topic;
    tp.partitions.assign(parts.begin(), parts.end());
    a.assigned_partitions.push_back(std::move(tp));
  }
  ByteWriter w(64);  // reserved: g++ 12 warns of a false overflow on a first write into an empty vector
  w.be<int16_t>(version);
  a.encode(w, version);
  return w.take();
}

std::string format_partitions(const std::vector<std::pair<std::string, std::vector<int32_t>>>& partitions) {
  std::string s;
  for (const auto& [topic, ps] : partitions) {
    if (!s.empty()) s += ';';
    s += topic;
    s += ':';
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i) s += ',';
      s += std::to_string(ps[i]);
    }
  }
  return s;
}

std::string format_topics(const std::vector<std::string>& topics) {
  std::string s;
  for (const auto& t : topics) {
    if (!s.empty()) s += ',';
    s += t;
  }
  return s;
}

}  // namespace kib::bridge
