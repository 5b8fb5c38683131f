#include "bridge/catalog/topic_configs.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "bridge/catalog/topic_catalog.h"
#include "bridge/errors.h"
#include "common/text.h"
#include "config/config.h"
#include "iggy/types.h"

namespace kib::bridge::topic_configs {

using kafka::ErrorCode;

namespace {

const std::vector<ConfigDef>& kafka_topic_defs() {
  static const std::vector<ConfigDef> defs = [] {
    std::vector<ConfigDef> v{
#define KIB_TOPIC_CONFIG(name, type, def, validator, doc) ConfigDef{name, type, def, validator, doc},
#define KIB_TOPIC_SYNONYM(topic, broker, factor)
#define KIB_BROKER_CONFIG(name, type, def, dynamic, doc)
#include "bridge/catalog/kafka_config_defs.inc"
#undef KIB_TOPIC_CONFIG
#undef KIB_TOPIC_SYNONYM
#undef KIB_BROKER_CONFIG
    };
    for (auto& d : v) {
      if (d.name == "retention.ms" || d.name == "retention.bytes") d.apply = Apply::kIggy;
      if (d.name == "segment.bytes") d.apply = Apply::kIggy;  // at creation only
      if (d.name == "max.message.bytes" || d.name == "cleanup.policy") d.apply = Apply::kBridge;
    }
    v.push_back(ConfigDef{"iggy.enforce.fsync", Type::kBoolean, nullptr, "null",
                          "Bridge only: the Iggy topic's enforce_fsync option (see the bridge's docs/durability.md). "
                          "Set only when the topic is created; the default is [topics] enforce_fsync.",
                          Apply::kIggy, true, false});
    v.push_back(ConfigDef{"iggy.messages.required.to.save", Type::kLong, nullptr, "[1,...,16777216]",
                          "Bridge only: the Iggy topic's messages_required_to_save option. Set only when the topic "
                          "is created; the default is [topics] messages_required_to_save.",
                          Apply::kIggy, true, false});
    return v;
  }();
  return defs;
}

const std::vector<Synonym>& all_synonyms() {
  static const std::vector<Synonym> v{
#define KIB_TOPIC_CONFIG(name, type, def, validator, doc)
#define KIB_TOPIC_SYNONYM(topic, broker, factor) Synonym{topic, broker, factor},
#define KIB_BROKER_CONFIG(name, type, def, dynamic, doc)
#include "bridge/catalog/kafka_config_defs.inc"
#undef KIB_TOPIC_CONFIG
#undef KIB_TOPIC_SYNONYM
#undef KIB_BROKER_CONFIG
  };
  return v;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::optional<int64_t> parse_int(const std::string& s, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (s.empty() || ec != std::errc() || p != e || v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// Java's Double.toString for the values a config takes in practice.
std::string java_double(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e7) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string out(buf, p);
  if (out.find('.') == std::string::npos && out.find('e') == std::string::npos) out += ".0";
  return out;
}

}  // namespace

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string t = trim(s);
  if (t.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t comma = t.find(',', start);
    out.push_back(trim(t.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string shown(const std::string& s) { return truncate_message(s, 256); }

Error invalid(const std::string& key, const std::string& value, const std::string& why) {
  return kafka_error(ErrorCode::kInvalidConfig,
                     "Invalid value " + shown(value) + " for configuration " + shown(key) + ": " + why);
}

// The validator string of the generated schema: "[a,...,b]", "[a,...]", "[a,...,b] or -1",
// "[x, y]" (one of), "[partitionId]:..." (throttled replicas), "null".
struct Validator {
  enum Kind { kNone, kRange, kOneOf, kThrottled } kind = kNone;
  std::optional<double> lo, hi;
  bool or_minus_one = false;
  std::vector<std::string> one_of;
};

Validator parse_validator(std::string_view v) {
  Validator out;
  if (v == "null" || v.empty() || v[0] != '[') return out;
  if (v.starts_with("[partitionId]")) {
    out.kind = Validator::kThrottled;
    return out;
  }
  std::string s(v);
  size_t close = s.find(']');
  std::string inner = s.substr(1, close - 1);
  if (inner.find(",...") != std::string::npos) {
    out.kind = Validator::kRange;
    auto parts = split_list(inner);  // "a", "...", "b"?
    if (!parts.empty() && parts[0] != "...") out.lo = parse_double(parts[0]);
    if (parts.size() == 3) out.hi = parse_double(parts[2]);
    out.or_minus_one = s.find("or -1", close) != std::string::npos;
    return out;
  }
  out.kind = Validator::kOneOf;
  out.one_of = split_list(inner);
  return out;
}

// A validator bound as Kafka prints it (its Range holds Integer/Long bounds, even for DOUBLE keys).
std::string number_text(double d, Type t) {
  if (t == Type::kDouble && d != std::floor(d)) return java_double(d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(d));
  return buf;
}

// ConfigDef.parseType + validator, for one typed key. Returns the canonical value.
Result<std::string> parse_typed(const std::string& key, Type type, std::string_view validator_text,
                                const std::string& raw) {
  const Validator val = parse_validator(validator_text);
  const std::string t = trim(raw);
  auto check_range = [&](double d, const std::string& shown_value) -> std::optional<Error> {
    if (val.kind != Validator::kRange) return std::nullopt;
    if (val.or_minus_one) {
      if (d == -1 || ((!val.lo || d >= *val.lo) && (!val.hi || d <= *val.hi))) return std::nullopt;
      return invalid(key, shown_value, "Value must be between " + number_text(*val.lo, type) + " and " +
                                           number_text(*val.hi, type) + " or equal to -1");
    }
    if (val.lo && d < *val.lo) return invalid(key, shown_value, "Value must be at least " + number_text(*val.lo, type));
    if (val.hi && d > *val.hi) return invalid(key, shown_value, "Value must be no more than " + number_text(*val.hi, type));
    return std::nullopt;
  };
  switch (type) {
    case Type::kBoolean: {
      std::string l = t;
      std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
      if (l != "true" && l != "false") return invalid(key, raw, "Expected value to be either true or false");
      return l;
    }
    case Type::kInt:
    case Type::kShort:
    case Type::kLong: {
      const int64_t lo = type == Type::kInt ? INT32_MIN : type == Type::kShort ? INT16_MIN : INT64_MIN;
      const int64_t hi = type == Type::kInt ? INT32_MAX : type == Type::kShort ? INT16_MAX : INT64_MAX;
      auto v = parse_int(t, lo, hi);
      const char* tn = type == Type::kInt ? "INT" : type == Type::kShort ? "SHORT" : "LONG";
      if (!v) return invalid(key, raw, std::string("Not a number of type ") + tn);
      if (auto e = check_range(static_cast<double>(*v), std::to_string(*v))) return *e;
      return std::to_string(*v);
    }
    case Type::kDouble: {
      auto v = parse_double(t);
      if (!v) return invalid(key, raw, "Not a number of type DOUBLE");
      if (auto e = check_range(*v, java_double(*v))) return *e;
      return java_double(*v);
    }
    case Type::kList: {
      auto items = split_list(t);
      if (val.kind == Validator::kOneOf)
        for (const auto& i : items)
          if (std::find(val.one_of.begin(), val.one_of.end(), i) == val.one_of.end())
            return invalid(key, i, "String must be one of: " + join(val.one_of, ", "));
      if (val.kind == Validator::kThrottled) {
        bool ok = true;
        if (!(items.size() == 1 && items[0] == "*"))
          for (const auto& i : items) {
            auto colon = i.find(':');
            if (colon == std::string::npos || !parse_int(trim(i.substr(0, colon)), 0, INT32_MAX) ||
                !parse_int(trim(i.substr(colon + 1)), 0, INT32_MAX))
              ok = false;
          }
        if (!ok)
          return invalid(key, "[" + join(items, ", ") + "]",
                         key + " must be the literal '*' or a list of replicas in the following format: "
                               "[partitionId]:[brokerId],[partitionId]:[brokerId],...");
      }
      return join(items, ",");
    }
    case Type::kString:
    case Type::kClass:
    case Type::kPassword:
    case Type::kUnknown:
      if (val.kind == Validator::kOneOf &&
          std::find(val.one_of.begin(), val.one_of.end(), t) == val.one_of.end())
        return invalid(key, t, "String must be one of: " + join(val.one_of, ", "));
      return t;
  }
  return t;
}

const ConfigMap kEmpty;
const ConfigMap& layer(const ConfigMap* m) { return m ? *m : kEmpty; }

}  // namespace

const std::vector<ConfigDef>& topic_defs() { return kafka_topic_defs(); }

Result<std::string> parse_typed_value(const std::string& key, Type type, std::string_view validator,
                                      const std::string& raw) {
  return parse_typed(key, type, validator, raw);
}

const std::vector<ConfigDef>& broker_defs() {
  static const std::vector<ConfigDef> v{
#define KIB_TOPIC_CONFIG(name, type, def, validator, doc)
#define KIB_TOPIC_SYNONYM(topic, broker, factor)
#define KIB_BROKER_CONFIG(name, type, def, dynamic, doc) ConfigDef{name, type, def, "null", doc, Apply::kStored, false, dynamic},
#include "bridge/catalog/kafka_config_defs.inc"
#undef KIB_TOPIC_CONFIG
#undef KIB_TOPIC_SYNONYM
#undef KIB_BROKER_CONFIG
  };
  return v;
}

const ConfigDef* find_topic_def(std::string_view name) {
  for (const auto& d : topic_defs())
    if (d.name == name) return &d;
  return nullptr;
}

const ConfigDef* find_broker_def(std::string_view name) {
  for (const auto& d : broker_defs())
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<Synonym> synonyms_of(std::string_view topic_key) {
  std::vector<Synonym> out;
  for (const auto& s : all_synonyms())
    if (s.topic_key == topic_key) out.push_back(s);
  return out;
}

std::vector<std::string> broker_synonym_group(std::string_view broker_key) {
  // DynamicBrokerConfig.brokerConfigSynonyms: the retention, roll, jitter and flush groups.
  static const std::vector<std::vector<std::string>> groups{
      {"log.retention.ms", "log.retention.minutes", "log.retention.hours"},
      {"log.roll.ms", "log.roll.hours"},
      {"log.roll.jitter.ms", "log.roll.jitter.hours"},
      {"log.flush.interval.ms", "log.flush.scheduler.interval.ms"},
  };
  for (const auto& g : groups)
    if (std::find(g.begin(), g.end(), broker_key) != g.end()) return g;
  return {std::string(broker_key)};
}

Result<std::string> validate_topic_value(const std::string& key, const std::string& value) {
  const ConfigDef* d = find_topic_def(key);
  if (!d) return kafka_error(ErrorCode::kInvalidConfig, "Unknown topic config name: " + shown(key));
  return parse_typed(key, d->type, d->validator, value);
}

Status validate_topic_configs(const ConfigMap& overrides, ConfigMap* canonical) {
  ConfigMap out;
  for (const auto& [k, v] : overrides) {
    auto c = validate_topic_value(k, v);
    if (!c) return c.error();
    out[k] = *c;
  }
  // LogConfig.validate's cross-key checks.
  auto lag = [&](const char* k, int64_t def) {
    auto it = out.find(k);
    return it == out.end() ? def : std::stoll(it->second);
  };
  const int64_t min_lag = lag("min.compaction.lag.ms", 0), max_lag = lag("max.compaction.lag.ms", INT64_MAX);
  if (min_lag > max_lag)
    return kafka_error(ErrorCode::kInvalidConfig, "conflict topic config setting min.compaction.lag.ms (" +
                                                      std::to_string(min_lag) + ") > max.compaction.lag.ms (" +
                                                      std::to_string(max_lag) + ")");
  if (auto it = out.find("remote.storage.enable"); it != out.end() && it->second == "true")
    return kafka_error(ErrorCode::kInvalidConfig,
                       "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with "
                       "remote log storage.");
  if (auto it = out.find("message.timestamp.type"); it != out.end() && it->second != "CreateTime")
    return invalid("message.timestamp.type", it->second,
                   "the bridge supports only CreateTime (Iggy keeps the producer's timestamps)");
  if (canonical) *canonical = std::move(out);
  return ok_status();
}

Result<std::string> validate_broker_value(const std::string& key, const std::string& value) {
  const ConfigDef* d = find_broker_def(key);
  if (!d) return value;
  return parse_typed(key, d->type, "null", value);
}

namespace {

// ConfigHelper.configSynonyms: the broker layers for `names`, dropping leading entries not
// named `name`.
std::vector<SynonymEntry> config_synonyms(const std::string& name, const std::vector<std::string>& names,
                                          const BrokerLayers& layers) {
  std::vector<SynonymEntry> all;
  auto add = [&](const ConfigMap& m, Source src) {
    for (const auto& n : names)
      if (auto it = m.find(n); it != m.end()) all.push_back({n, it->second, src});
  };
  add(layer(layers.dynamic_broker), Source::kDynamicBroker);
  add(layer(layers.dynamic_default), Source::kDynamicDefaultBroker);
  add(layer(layers.static_broker), Source::kStaticBroker);
  for (const auto& n : names)
    if (const ConfigDef* d = find_broker_def(n); d && d->default_value) all.push_back({n, d->default_value, Source::kDefault});
  auto first = std::find_if(all.begin(), all.end(), [&](const SynonymEntry& s) { return s.name == name; });
  return std::vector<SynonymEntry>(first, all.end());
}

std::optional<std::string> broker_value(const std::string& key, const BrokerLayers& layers) {
  for (const ConfigMap* m : {layers.dynamic_broker, layers.dynamic_default, layers.static_broker})
    if (auto it = layer(m).find(key); it != layer(m).end()) return it->second;
  if (const ConfigDef* d = find_broker_def(key); d && d->default_value) return std::string(d->default_value);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> effective_topic_value(const std::string& key, const ConfigMap& overrides,
                                                 const BrokerLayers& layers) {
  if (auto it = overrides.find(key); it != overrides.end()) return it->second;
  // KafkaConfig reads the first synonym set in any layer (log.retention.ms, then .minutes, then
  // .hours), converted to the topic's unit.
  for (const auto& s : synonyms_of(key)) {
    std::optional<std::string> v;
    for (const ConfigMap* m : {layers.dynamic_broker, layers.dynamic_default, layers.static_broker})
      if (!v)
        if (auto it = layer(m).find(std::string(s.broker_key)); it != layer(m).end()) v = it->second;
    if (!v) {
      const ConfigDef* d = find_broker_def(s.broker_key);
      if (d && d->default_value) v = d->default_value;
    }
    if (!v) continue;
    if (s.factor == 1) return v;
    auto n = parse_int(trim(*v), INT64_MIN, INT64_MAX);
    if (!n) return v;
    return std::to_string(*n * s.factor);
  }
  const ConfigDef* d = find_topic_def(key);
  if (d && d->default_value) return std::string(d->default_value);
  return std::nullopt;
}

std::vector<Entry> resolve_topic(const ConfigMap& overrides, const BrokerLayers& layers, const ConfigMap& bridge_values) {
  std::vector<Entry> out;
  for (const auto& d : topic_defs()) {
    Entry e;
    e.name = std::string(d.name);
    e.type = d.type;
    e.doc = d.doc;
    e.read_only = false;
    e.sensitive = d.type == Type::kPassword;
    if (d.create_only) {
      // Bridge-only keys are listed when the topic was created with them (kafka-configs
      // --describe --all then prints what a Kafka broker prints for a default topic).
      auto it = overrides.find(e.name);
      if (it == overrides.end() && !bridge_values.count("*")) continue;
      auto bv = bridge_values.find(e.name);
      e.value = it != overrides.end() ? std::optional<std::string>(it->second)
                : bv != bridge_values.end() ? std::optional<std::string>(bv->second)
                                            : std::nullopt;
      if (it != overrides.end()) e.synonyms.push_back({e.name, e.value, Source::kTopic});
      e.source = it != overrides.end() ? Source::kTopic : Source::kDefault;
      out.push_back(std::move(e));
      continue;
    }
    e.value = effective_topic_value(e.name, overrides, layers);
    auto syns = synonyms_of(d.name);
    if (!syns.empty()) {
      std::vector<std::string> names;
      for (const auto& s : syns) names.emplace_back(s.broker_key);
      e.synonyms = config_synonyms(names.front(), names, layers);
    }
    if (overrides.count(e.name)) e.synonyms.insert(e.synonyms.begin(), SynonymEntry{e.name, e.value, Source::kTopic});
    e.source = e.synonyms.empty() ? Source::kDefault : e.synonyms.front().source;
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Entry> resolve_broker(const BrokerLayers& layers, bool per_broker) {
  std::vector<Entry> out;
  auto entry = [&](const std::string& name, const ConfigDef* d) {
    Entry e;
    e.name = name;
    e.type = d ? d->type : Type::kUnknown;
    e.doc = d ? d->doc : std::string_view{};
    // KafkaConfig.maybeSensitive: a key of unknown type may be a secret, so no value is shown.
    e.sensitive = !d || e.type == Type::kPassword;
    e.read_only = !(d && d->dynamic);
    auto syns = config_synonyms(name, broker_synonym_group(name), layers);
    if (e.sensitive)
      for (auto& s : syns) s.value = std::nullopt;
    if (!per_broker)
      std::erase_if(syns, [](const SynonymEntry& s) { return s.source != Source::kDynamicDefaultBroker; });
    e.value = e.sensitive ? std::nullopt
              : per_broker ? broker_value(name, layers)
                           : (syns.empty() ? std::nullopt : syns.front().value);
    e.source = syns.empty() ? Source::kDefault : syns.front().source;
    e.synonyms = std::move(syns);
    return e;
  };
  if (per_broker) {
    std::set<std::string> names;
    for (const auto& d : broker_defs()) names.insert(std::string(d.name));
    for (const ConfigMap* m : {layers.dynamic_broker, layers.dynamic_default})
      for (const auto& [k, v] : layer(m)) names.insert(k);
    for (const auto& n : names) out.push_back(entry(n, find_broker_def(n)));
  } else {
    for (const auto& [k, v] : layer(layers.dynamic_default)) out.push_back(entry(k, find_broker_def(k)));
  }
  return out;
}

TopicSettings settings_of(const ConfigMap& overrides, const BrokerLayers& layers, const TopicSettings& base) {
  TopicSettings s = base;
  auto num = [&](const char* k, int64_t def) {
    auto v = effective_topic_value(k, overrides, layers);
    if (!v) return def;
    auto n = parse_int(trim(*v), INT64_MIN, INT64_MAX);
    return n ? *n : def;
  };
  s.retention_ms = num("retention.ms", -1);
  s.retention_bytes = num("retention.bytes", -1);
  s.max_message_bytes = static_cast<int32_t>(std::clamp<int64_t>(num("max.message.bytes", 1048588), 0, INT32_MAX));
  auto policy = effective_topic_value("cleanup.policy", overrides, layers);
  s.cleanup_policy = policy ? join(split_list(*policy), ",") : "delete";
  return s;
}

IggyRetention iggy_retention(const TopicSettings& s, int32_t partitions) {
  IggyRetention r{iggy::kNeverExpire, iggy::kUnlimitedSize};
  if (!deletes_allowed(s)) return r;
  if (s.retention_ms == 0) r.message_expiry_us = 1;
  else if (s.retention_ms > 0)
    r.message_expiry_us = s.retention_ms > static_cast<int64_t>(iggy::kNeverExpire / 1000 - 1)
                              ? iggy::kNeverExpire - 1
                              : static_cast<uint64_t>(s.retention_ms) * 1000;
  if (s.retention_bytes >= 0) {
    const uint64_t segment = s.segment_bytes > 0 ? static_cast<uint64_t>(s.segment_bytes) : (1ull << 30);
    const uint64_t parts = static_cast<uint64_t>(std::max(partitions, 1));
    const uint64_t bytes = static_cast<uint64_t>(s.retention_bytes);
    uint64_t total = bytes > (iggy::kUnlimitedSize - 1) / parts ? iggy::kUnlimitedSize - 1 : bytes * parts;
    r.max_topic_size = std::max(total, segment);
  }
  return r;
}

Status check_alter_ops(const std::vector<AlterOp>& ops) {
  std::set<std::string> seen;
  for (const auto& o : ops) {
    if (!seen.insert(o.name).second)
      return kafka_error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys");
    if (o.op < 0 || o.op > 3)
      return kafka_error(ErrorCode::kInvalidRequest, "Unknown alter config operation type " + std::to_string(o.op));
    if (o.op != static_cast<int8_t>(Op::kDelete) && !o.value)
      return kafka_error(ErrorCode::kInvalidRequest, "Null value not supported for : " + shown(o.name));
  }
  return ok_status();
}

Result<ConfigMap> apply_incremental(const ConfigMap& current, const std::vector<AlterOp>& ops, bool topic) {
  ConfigMap out = current;
  for (const auto& o : ops) {
    switch (static_cast<Op>(o.op)) {
      case Op::kSet:
        out[o.name] = o.value.value_or("");
        break;
      case Op::kDelete:
        out.erase(o.name);
        break;
      case Op::kAppend:
      case Op::kSubtract: {
        const ConfigDef* d = topic ? find_topic_def(o.name) : find_broker_def(o.name);
        if (!d || d->type != Type::kList)
          return kafka_error(ErrorCode::kInvalidConfig,
                             std::string("Can't ") + (o.op == 2 ? "APPEND" : "SUBTRACT") + " to key " + shown(o.name) +
                                 " because its type is not LIST.");
        std::vector<std::string> items;
        if (auto it = out.find(o.name); it != out.end()) items = split_list(it->second);
        else if (d->default_value) items = split_list(d->default_value);
        for (const auto& v : split_list(o.value.value_or(""))) {
          if (o.op == 2) {
            if (std::find(items.begin(), items.end(), v) == items.end()) items.push_back(v);
          } else {
            std::erase(items, v);
          }
        }
        out[o.name] = join(items, ",");
        break;
      }
    }
  }
  return out;
}

Result<ConfigMap> apply_replace(const std::vector<std::pair<std::string, std::optional<std::string>>>& values) {
  ConfigMap out;
  std::set<std::string> seen;
  for (const auto& [k, v] : values) {
    if (!seen.insert(k).second) return kafka_error(ErrorCode::kInvalidRequest, "Error due to duplicate config keys");
    if (!v) return kafka_error(ErrorCode::kInvalidRequest, "Null value not supported for : " + shown(k));
    out[k] = *v;
  }
  return out;
}

ConfigMap static_broker_layer(const config::Config& cfg) {
  ConfigMap m;
  const std::string node = std::to_string(cfg.kafka.node_id);
  m["node.id"] = node;
  m["broker.id"] = node;
  m["process.roles"] = "broker,controller";
  std::string listeners;
  std::string advertised, protocols;
  for (size_t i = 0; i < cfg.kafka.listeners.size(); ++i) {
    const auto& l = cfg.kafka.listeners[i];
    const std::string sep = listeners.empty() ? "" : ",";
    listeners += sep + l.str();
    advertised += sep + l.name + "://" + cfg.advertised(i).str();
    protocols += sep + l.name + ":" + std::string(config::security_protocol_name(l.protocol));
  }
  m["listeners"] = listeners;
  m["advertised.listeners"] = advertised;
  m["listener.security.protocol.map"] = protocols;
  m["num.partitions"] = std::to_string(cfg.kafka.default_partitions);
  m["auto.create.topics.enable"] = cfg.kafka.auto_create_topics ? "true" : "false";
  m["default.replication.factor"] = "1";
  m["min.insync.replicas"] = "1";
  m["delete.topic.enable"] = "true";
  m["log.retention.ms"] = std::to_string(cfg.topics.retention_ms);
  if (cfg.topics.retention_bytes != -1) m["log.retention.bytes"] = std::to_string(cfg.topics.retention_bytes);
  if (cfg.topics.segment_bytes != 0) m["log.segment.bytes"] = std::to_string(cfg.topics.segment_bytes);
  m["offsets.retention.minutes"] = std::to_string(cfg.groups.offsets_retention_minutes);
  m["offset.metadata.max.bytes"] = std::to_string(cfg.groups.offset_metadata_max_bytes);
  m["group.initial.rebalance.delay.ms"] = std::to_string(cfg.groups.initial_rebalance_delay_ms);
  m["group.min.session.timeout.ms"] = std::to_string(cfg.groups.min_session_timeout_ms);
  m["group.max.session.timeout.ms"] = std::to_string(cfg.groups.max_session_timeout_ms);
  m["group.max.size"] = std::to_string(cfg.groups.max_size);
  m["socket.request.max.bytes"] = std::to_string(cfg.limits.max_frame_bytes);
  m["log.dirs"] = "iggy://" + cfg.iggy.address.str() + "/" + cfg.iggy.stream;
  m["log.dir"] = m["log.dirs"];
  return m;
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::kTopic: return "DYNAMIC_TOPIC_CONFIG";
    case Source::kDynamicBroker: return "DYNAMIC_BROKER_CONFIG";
    case Source::kDynamicDefaultBroker: return "DYNAMIC_DEFAULT_BROKER_CONFIG";
    case Source::kStaticBroker: return "STATIC_BROKER_CONFIG";
    case Source::kDefault: return "DEFAULT_CONFIG";
    case Source::kGroup: return "GROUP_CONFIG";
    case Source::kUnknown: break;
  }
  return "UNKNOWN";
}

}  // namespace kib::bridge::topic_configs

namespace kib::bridge {

namespace {
// Whether cleanup.policy lists `policy` ("compact, delete" lists both).
bool policy_includes(const TopicSettings& s, std::string_view policy) {
  for (const auto& p : topic_configs::split_list(s.cleanup_policy))
    if (p == policy) return true;
  return false;
}
}  // namespace

bool deletes_allowed(const TopicSettings& s) { return policy_includes(s, "delete"); }

bool compacts(const TopicSettings& s) { return policy_includes(s, "compact"); }

}  // namespace kib::bridge
