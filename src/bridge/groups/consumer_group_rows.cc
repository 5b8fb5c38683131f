#include "bridge/groups/consumer_group_rows.h"

#include <charconv>

#include <nlohmann/json.hpp>

namespace kib::bridge {

namespace {

using nlohmann::json;

std::string hex(const Bytes& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(b.size() * 2);
  for (uint8_t c : b) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::optional<Bytes> unhex(const std::string& s) {
  if (s.size() % 2) return std::nullopt;
  Bytes out;
  out.reserve(s.size() / 2);
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = digit(s[i]), lo = digit(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return out;
}

// migrations/0013: [{"name":"range","metadata":"<hex>"}, ...]
std::string format_protocols(const std::vector<GroupProtocol>& protocols) {
  json a = json::array();
  for (const auto& p : protocols) a.push_back({{"name", p.name}, {"metadata", hex(p.metadata)}});
  return a.dump();
}

std::optional<std::vector<GroupProtocol>> parse_protocols(const std::string& s) {
  try {
    const json a = json::parse(s);
    if (!a.is_array() || a.empty()) return std::nullopt;
    std::vector<GroupProtocol> out;
    for (const auto& p : a) {
      auto md = unhex(p.at("metadata").get<std::string>());
      if (!md) return std::nullopt;
      out.push_back({p.at("name").get<std::string>(), std::move(*md)});
    }
    return out;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + 1;
  }
  return out;
}

std::optional<int32_t> number(const std::string& s) {
  int32_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "topic:a,b;topic2:c" with `item` parsing each of a, b, c into the topic's entry.
template <typename Map, typename Item>
bool parse_by_topic(const std::string& s, Map& out, Item item) {
  for (const auto& part : split(s, ';')) {
    size_t colon = part.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    auto& entry = out[part.substr(0, colon)];
    for (const auto& x : split(part.substr(colon + 1), ','))
      if (!item(x, entry)) return false;
  }
  return true;
}

std::string join_topics(const std::set<std::string>& topics) {
  std::string out;
  for (const auto& t : topics) out += (out.empty() ? "" : ",") + t;
  return out;
}

}  // namespace

std::string format_epoch_assignment(const EpochAssignment& a) {
  std::string out;
  for (const auto& [topic, parts] : a) {
    if (parts.empty()) continue;
    out += (out.empty() ? "" : ";") + topic + ":";
    bool first = true;
    for (const auto& [p, e] : parts) {
      out += (first ? "" : ",") + std::to_string(p) + "@" + std::to_string(e);
      first = false;
    }
  }
  return out;
}

std::optional<EpochAssignment> parse_epoch_assignment(const std::string& s) {
  EpochAssignment out;
  bool ok = parse_by_topic(s, out, [](const std::string& x, std::map<int32_t, int32_t>& parts) {
    size_t at = x.find('@');
    if (at == std::string::npos) return false;
    auto p = number(x.substr(0, at));
    auto e = number(x.substr(at + 1));
    if (!p || !e) return false;
    parts[*p] = *e;
    return true;
  });
  if (!ok) return std::nullopt;
  return out;
}

std::string format_target(const MemberTargetAssignment& a) {
  std::string out;
  for (const auto& [topic, parts] : a) {
    if (parts.empty()) continue;
    out += (out.empty() ? "" : ";") + topic + ":";
    bool first = true;
    for (int32_t p : parts) {
      out += (first ? "" : ",") + std::to_string(p);
      first = false;
    }
  }
  return out;
}

std::optional<MemberTargetAssignment> parse_target(const std::string& s) {
  MemberTargetAssignment out;
  bool ok = parse_by_topic(s, out, [](const std::string& x, std::set<int32_t>& parts) {
    auto p = number(x);
    if (!p) return false;
    parts.insert(*p);
    return true;
  });
  if (!ok) return std::nullopt;
  return out;
}

std::pair<state::ConsumerGroupRow, std::vector<state::ConsumerGroupMemberRow>> consumer_group_rows(
    const ConsumerGroupSnapshot& s, const char* state_name, int64_t now_ms) {
  state::ConsumerGroupRow g;
  g.group_id = s.group_id;
  g.state = state_name;
  g.group_epoch = s.group_epoch;
  g.assignment_epoch = s.assignment_epoch;
  for (const auto& [topic, n] : s.subscribed_partitions)
    g.subscribed_partitions += (g.subscribed_partitions.empty() ? "" : ";") + topic + ":" + std::to_string(n);
  g.updated_at_ms = now_ms;
  std::vector<state::ConsumerGroupMemberRow> members;
  for (const auto& [m, target] : s.members) {
    state::ConsumerGroupMemberRow r;
    r.member_id = m.member_id;
    r.instance_id = m.instance_id;
    r.rack_id = m.rack_id;
    r.client_id = m.client_id;
    r.client_host = m.client_host;
    r.rebalance_timeout_ms = m.rebalance_timeout_ms;
    r.subscribed_topics = join_topics(m.subscribed_topic_names);
    r.subscribed_regex = m.subscribed_topic_regex;
    r.server_assignor = m.server_assignor;
    r.member_epoch = m.member_epoch;
    r.previous_member_epoch = m.previous_member_epoch;
    r.state = consumer_member_state_name(m.state);
    r.assigned_partitions = format_epoch_assignment(m.assigned);
    r.pending_revocation = format_epoch_assignment(m.pending_revocation);
    r.target_partitions = format_target(target);
    if (m.classic) {
      r.classic_session_timeout_ms = m.classic->session_timeout_ms;
      r.classic_protocols = format_protocols(m.classic->protocols);
    }
    members.push_back(std::move(r));
  }
  return {std::move(g), std::move(members)};
}

std::optional<ConsumerGroupSnapshot> consumer_group_from_rows(const state::StoredConsumerGroup& stored,
                                                              std::string* error) {
  ConsumerGroupSnapshot s;
  s.group_id = stored.group.group_id;
  s.group_epoch = stored.group.group_epoch;
  s.assignment_epoch = stored.group.assignment_epoch;
  for (const auto& part : split(stored.group.subscribed_partitions, ';')) {
    size_t colon = part.rfind(':');
    auto n = colon == std::string::npos ? std::nullopt : number(part.substr(colon + 1));
    if (!n) {
      if (error) *error = "subscribed_partitions '" + stored.group.subscribed_partitions + "'";
      return std::nullopt;
    }
    s.subscribed_partitions[part.substr(0, colon)] = *n;
  }
  for (const auto& r : stored.members) {
    ConsumerMember m;
    m.member_id = r.member_id;
    m.instance_id = r.instance_id;
    m.rack_id = r.rack_id;
    m.client_id = r.client_id;
    m.client_host = r.client_host;
    m.rebalance_timeout_ms = r.rebalance_timeout_ms;
    for (const auto& t : split(r.subscribed_topics, ','))
      if (!t.empty()) m.subscribed_topic_names.insert(t);
    m.subscribed_topic_regex = r.subscribed_regex;
    m.server_assignor = r.server_assignor;
    m.member_epoch = r.member_epoch;
    m.previous_member_epoch = r.previous_member_epoch;
    auto state = consumer_member_state_from_name(r.state);
    auto assigned = parse_epoch_assignment(r.assigned_partitions);
    auto pending = parse_epoch_assignment(r.pending_revocation);
    auto target = parse_target(r.target_partitions);
    if (!state || !assigned || !pending || !target) {
      if (error) *error = "member " + r.member_id;
      return std::nullopt;
    }
    m.state = *state;
    m.assigned = std::move(*assigned);
    m.pending_revocation = std::move(*pending);
    if (r.classic_session_timeout_ms || r.classic_protocols) {
      auto protocols = r.classic_protocols ? parse_protocols(*r.classic_protocols) : std::nullopt;
      if (!r.classic_session_timeout_ms || !protocols) {
        if (error) *error = "member " + r.member_id + " classic_protocols";
        return std::nullopt;
      }
      m.classic = ClassicMemberMetadata{*r.classic_session_timeout_ms, std::move(*protocols)};
    }
    s.members.emplace_back(std::move(m), std::move(*target));
  }
  return s;
}

}  // namespace kib::bridge
