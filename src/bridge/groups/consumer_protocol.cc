#include "bridge/groups/consumer_protocol.h"

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
