#include "bridge/catalog/group_configs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>

#include "bridge/errors.h"
#include "common/text.h"
#include "config/config.h"

namespace kib::bridge::group_configs {

using kafka::ErrorCode;
using topic_configs::ConfigDef;
using topic_configs::ConfigMap;
using topic_configs::Entry;
using topic_configs::Source;
using topic_configs::Type;

namespace {

constexpr const char* kConsumerSession = "consumer.session.timeout.ms";
constexpr const char* kConsumerHeartbeat = "consumer.heartbeat.interval.ms";
constexpr const char* kShareSession = "share.session.timeout.ms";
constexpr const char* kShareHeartbeat = "share.heartbeat.interval.ms";
constexpr const char* kShareLock = "share.record.lock.duration.ms";
constexpr const char* kShareReset = "share.auto.offset.reset";
constexpr const char* kShareIsolation = "share.isolation.level";
constexpr const char* kStreamsSession = "streams.session.timeout.ms";
constexpr const char* kStreamsHeartbeat = "streams.heartbeat.interval.ms";
constexpr const char* kStreamsStandby = "streams.num.standby.replicas";

// The share bounds of GroupCoordinatorConfig and ShareGroupConfig (Kafka's defaults: the bridge
// does not serve share groups, so it has no keys for them).
constexpr int32_t kShareMinSession = 45000, kShareMaxSession = 60000;
constexpr int32_t kShareMinHeartbeat = 5000, kShareMaxHeartbeat = 15000;
constexpr int32_t kShareMinLock = 15000, kShareMaxLock = 60000;

// String.trim, as ConfigDef.parseType trims a STRING value.
std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= ' ') --e;
  return s.substr(b, e - b);
}

Error invalid_config(const std::string& why) { return kafka_error(ErrorCode::kInvalidConfig, why); }

// java.time.Duration.parse's grammar, [-+]P[nD][T[nH][nM][n[.f]S]] (case-insensitive): the
// duration in seconds, or nothing when `d` is not one.
std::optional<double> iso_duration_seconds(const std::string& d) {
  size_t i = 0;
  auto sign = [&]() -> double {
    if (i < d.size() && (d[i] == '-' || d[i] == '+')) return d[i++] == '-' ? -1 : 1;
    return 1;
  };
  // [-+]digits followed by `unit` (and for seconds a fraction): its value, else i is left as it was.
  auto component = [&](char unit, bool fraction) -> std::optional<double> {
    const size_t at = i;
    const double sg = sign();
    const size_t digits = i;
    double v = 0;
    while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) && i - digits < 19) v = v * 10 + (d[i++] - '0');
    if (i == digits) return i = at, std::nullopt;
    if (fraction && i < d.size() && (d[i] == '.' || d[i] == ',')) {
      ++i;
      double scale = 0.1;
      for (size_t n = 0; i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) && n < 9; ++n, scale /= 10)
        v += (d[i++] - '0') * scale;
    }
    if (i >= d.size() || std::toupper(static_cast<unsigned char>(d[i])) != unit) return i = at, std::nullopt;
    ++i;
    return sg * v;
  };
  const double total_sign = sign();
  if (i >= d.size() || std::toupper(static_cast<unsigned char>(d[i])) != 'P') return std::nullopt;
  ++i;
  double secs = 0;
  bool any = false;
  if (auto v = component('D', false)) secs += *v * 86400, any = true;
  if (i < d.size() && std::toupper(static_cast<unsigned char>(d[i])) == 'T') {
    ++i;
    bool in_time = false;
    if (auto v = component('H', false)) secs += *v * 3600, in_time = true;
    if (auto v = component('M', false)) secs += *v * 60, in_time = true;
    if (auto v = component('S', true)) secs += *v, in_time = true;
    if (!in_time) return std::nullopt;
    any = true;
  }
  if (!any || i != d.size()) return std::nullopt;
  return total_sign * secs;
}

// AutoOffsetResetStrategy.fromString as a share group takes it: earliest, latest or
// by_duration:<ISO-8601 duration, not negative>.
bool valid_share_reset(const std::string& v) {
  std::string l = v;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "earliest" || l == "latest") return true;
  if (!l.starts_with("by_duration:")) return false;
  const auto secs = iso_duration_seconds(v.substr(12));
  return secs && *secs >= 0;
}

int32_t as_int(const ConfigMap& m, const char* key) {
  int32_t v = 0;
  const std::string& s = m.at(key);
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string broker_default(const ConfigDef& d, const Broker& b) {
  const std::string_view n = d.name;
  if (n == kConsumerSession) return std::to_string(b.consumer_session_timeout_ms);
  if (n == kConsumerHeartbeat) return std::to_string(b.consumer_heartbeat_interval_ms);
  if (n == kStreamsSession) return std::to_string(b.streams_session_timeout_ms);
  if (n == kStreamsHeartbeat) return std::to_string(b.streams_heartbeat_interval_ms);
  if (n == kStreamsStandby) return std::to_string(b.streams_num_standby_replicas);
  return d.default_value;
}

// GroupConfig.validateValues, in its order.
Status check_bounds(const ConfigMap& v, const Broker& b) {
  struct Bound {
    const char* key;
    int32_t lo, hi;
    const char* lo_key;
    const char* hi_key;
  };
  const Bound bounds[] = {
      {kConsumerHeartbeat, b.consumer_min_heartbeat_interval_ms, b.consumer_max_heartbeat_interval_ms,
       "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"},
      {kConsumerSession, b.consumer_min_session_timeout_ms, b.consumer_max_session_timeout_ms,
       "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"},
      {kShareHeartbeat, kShareMinHeartbeat, kShareMaxHeartbeat, "group.share.min.heartbeat.interval.ms",
       "group.share.max.heartbeat.interval.ms"},
      {kShareSession, kShareMinSession, kShareMaxSession, "group.share.min.session.timeout.ms",
       "group.share.max.session.timeout.ms"},
      {kShareLock, kShareMinLock, kShareMaxLock, "group.share.min.record.lock.duration.ms",
       "group.share.max.record.lock.duration.ms"},
      {kStreamsHeartbeat, b.streams_min_heartbeat_interval_ms, b.streams_max_heartbeat_interval_ms,
       "group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms"},
      {kStreamsSession, b.streams_min_session_timeout_ms, b.streams_max_session_timeout_ms,
       "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"},
  };
  for (const Bound& x : bounds) {
    const int32_t n = as_int(v, x.key);
    if (n < x.lo) return invalid_config(std::string(x.key) + " must be greater than or equal to " + x.lo_key);
    if (n > x.hi) return invalid_config(std::string(x.key) + " must be less than or equal to " + x.hi_key);
  }
  if (as_int(v, kStreamsStandby) > b.streams_max_standby_replicas)
    return invalid_config(std::string(kStreamsStandby) + " must be less than or equal to group.streams.max.standby.replicas");
  const std::pair<const char*, const char*> pairs[] = {
      {kConsumerSession, kConsumerHeartbeat}, {kShareSession, kShareHeartbeat}, {kStreamsSession, kStreamsHeartbeat}};
  for (const auto& [session, heartbeat] : pairs)
    if (as_int(v, session) <= as_int(v, heartbeat))
      return invalid_config(std::string(session) + " must be greater than " + heartbeat);
  return ok_status();
}

}  // namespace

Broker broker_of(const config::Config& cfg) {
  const auto& g = cfg.groups;
  Broker b;
  b.consumer_session_timeout_ms = static_cast<int32_t>(g.consumer_session_timeout_ms);
  b.consumer_min_session_timeout_ms = static_cast<int32_t>(g.consumer_min_session_timeout_ms);
  b.consumer_max_session_timeout_ms = static_cast<int32_t>(g.consumer_max_session_timeout_ms);
  b.consumer_heartbeat_interval_ms = static_cast<int32_t>(g.consumer_heartbeat_interval_ms);
  b.consumer_min_heartbeat_interval_ms = static_cast<int32_t>(g.consumer_min_heartbeat_interval_ms);
  b.consumer_max_heartbeat_interval_ms = static_cast<int32_t>(g.consumer_max_heartbeat_interval_ms);
  b.streams_session_timeout_ms = static_cast<int32_t>(g.streams_session_timeout_ms);
  b.streams_min_session_timeout_ms = static_cast<int32_t>(g.streams_min_session_timeout_ms);
  b.streams_max_session_timeout_ms = static_cast<int32_t>(g.streams_max_session_timeout_ms);
  b.streams_heartbeat_interval_ms = static_cast<int32_t>(g.streams_heartbeat_interval_ms);
  b.streams_min_heartbeat_interval_ms = static_cast<int32_t>(g.streams_min_heartbeat_interval_ms);
  b.streams_max_heartbeat_interval_ms = static_cast<int32_t>(g.streams_max_heartbeat_interval_ms);
  b.streams_num_standby_replicas = static_cast<int32_t>(g.streams_num_standby_replicas);
  b.streams_max_standby_replicas = static_cast<int32_t>(g.streams_max_standby_replicas);
  return b;
}

const std::vector<ConfigDef>& defs() {
  static const std::vector<ConfigDef> v{
      {kConsumerSession, Type::kInt, "45000", "[1,...]",
       "The timeout to detect client failures when using the consumer group protocol."},
      {kConsumerHeartbeat, Type::kInt, "5000", "[1,...]",
       "The heartbeat interval given to the members of a consumer group."},
      {kShareSession, Type::kInt, "45000", "[1,...]",
       "The timeout to detect client failures when using the share group protocol."},
      {kShareHeartbeat, Type::kInt, "5000", "[1,...]", "The heartbeat interval given to the members of a share group."},
      {kShareLock, Type::kInt, "30000", "[1000,...]",
       "The record acquisition lock duration in milliseconds for share groups."},
      {kShareReset, Type::kString, "latest", "",
       "The strategy to initialize the share-partition start offset. <ul><li>earliest: automatically reset the offset "
       "to the earliest offset</li><li>latest: automatically reset the offset to the latest offset</li>"
       "<li>by_duration:&lt;duration&gt;: automatically reset the offset to a configured duration from the current "
       "timestamp. &lt;duration&gt; must be specified in ISO8601 format (PnDTnHnMn.nS). Negative duration is not "
       "allowed.</li><li>anything else: throw exception to the share consumer.</li></ul>"},
      {kShareIsolation, Type::kString, "read_uncommitted", "[read_committed, read_uncommitted]",
       "Controls how to read records written transactionally. If set to \"read_committed\", the share group will "
       "only deliver transactional records which have been committed. If set to \"read_uncommitted\", the share "
       "group will return all messages, even transactional messages which have been aborted. Non-transactional "
       "records will be returned unconditionally in either mode."},
      {kStreamsSession, Type::kInt, "45000", "[1,...]",
       "The timeout to detect client failures when using the streams group protocol."},
      {kStreamsHeartbeat, Type::kInt, "5000", "[1,...]", "The heartbeat interval given to the members."},
      {kStreamsStandby, Type::kInt, "0", "[0,...]", "The number of standby replicas for each task."},
  };
  return v;
}

Status validate(const ConfigMap& overrides, const Broker& broker, ConfigMap* canonical) {
  for (const auto& [k, v] : overrides)
    if (std::none_of(defs().begin(), defs().end(), [&](const ConfigDef& d) { return d.name == k; }))
      return invalid_config("Unknown group config name: " + truncate_message(k, 256));
  ConfigMap out, all;
  for (const ConfigDef& d : defs()) {
    const std::string key(d.name);
    auto it = overrides.find(key);
    // GroupConfigManager.validate puts the group's values over the broker's consumer defaults;
    // ConfigDef.parse gives the rest their own defaults.
    const std::string raw = it != overrides.end() ? it->second
                            : (key == kConsumerSession || key == kConsumerHeartbeat) ? broker_default(d, broker)
                                                                                      : std::string(d.default_value);
    std::string value;
    if (key == kShareReset) {
      value = trim(raw);
      if (!valid_share_reset(value))
        return invalid_config("Invalid value " + truncate_message(value, 256) + " for configuration " + key +
                              ": Invalid value `" + truncate_message(value, 256) + "` for configuration " + key +
                              ". The value must be either 'earliest', 'latest' or of the format "
                              "'by_duration:<PnDTnHnMn.nS>'.");
    } else {
      auto c = topic_configs::parse_typed_value(key, d.type, d.validator, raw);
      if (!c) return c.error();
      value = *c;
    }
    all[key] = value;
    if (it != overrides.end()) out[key] = value;
  }
  if (auto st = check_bounds(all, broker); !st) return st;
  if (canonical) *canonical = std::move(out);
  return ok_status();
}

std::vector<Entry> resolve(const ConfigMap& overrides, const Broker& broker) {
  std::vector<Entry> out;
  for (const ConfigDef& d : defs()) {
    Entry e;
    e.name = d.name;
    auto it = overrides.find(e.name);
    e.value = it != overrides.end() ? it->second : broker_default(d, broker);
    e.source = it != overrides.end() ? Source::kGroup : Source::kDefault;
    e.type = d.type;
    e.doc = d.doc;
    e.synonyms.push_back({e.name, e.value, e.source});
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

namespace {

// A group's own value of `key` if it has a valid one.
void read_override(const ConfigMap& overrides, const char* key, int32_t min, int32_t& into) {
  auto it = overrides.find(key);
  if (it == overrides.end()) return;
  int32_t v = 0;
  auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
  if (ec == std::errc() && v >= min) into = v;
}

}  // namespace

ConsumerTimeouts consumer_timeouts(const ConfigMap& overrides, const Broker& broker) {
  ConsumerTimeouts t{broker.consumer_session_timeout_ms, broker.consumer_heartbeat_interval_ms};
  read_override(overrides, kConsumerSession, 1, t.session_timeout_ms);
  read_override(overrides, kConsumerHeartbeat, 1, t.heartbeat_interval_ms);
  return t;
}

StreamsSettings streams_settings(const ConfigMap& overrides, const Broker& broker) {
  StreamsSettings s{broker.streams_session_timeout_ms, broker.streams_heartbeat_interval_ms,
                    broker.streams_num_standby_replicas};
  read_override(overrides, kStreamsSession, 1, s.session_timeout_ms);
  read_override(overrides, kStreamsHeartbeat, 1, s.heartbeat_interval_ms);
  read_override(overrides, kStreamsStandby, 0, s.num_standby_replicas);
  return s;
}

}  // namespace kib::bridge::group_configs
