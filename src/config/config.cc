#include "config/config.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "security/ssl_principal_mapper.h"

namespace kib::config {
namespace {

Error invalid(std::string msg) { return Error{ErrorDomain::kInvalid, 0, std::move(msg)}; }

// Reads one [section], remembering which keys were consumed so that leftovers (typos,
// keys of a newer version) are reported instead of silently ignored.
class Section {
 public:
  Section(const toml::table* table, std::string name, std::vector<std::string>& errors)
      : table_(table), name_(std::move(name)), errors_(errors) {}

  void str(const char* key, std::string& out) {
    const toml::node* n = get(key);
    if (!n) return;
    if (auto v = n->value<std::string>()) out = *v;
    else bad(key, "expected a string");
  }
  void boolean(const char* key, bool& out) {
    const toml::node* n = get(key);
    if (!n) return;
    if (auto v = n->value<bool>()) out = *v;
    else bad(key, "expected true or false");
  }
  template <typename T>
  void integer(const char* key, T& out, int64_t min, int64_t max) {
    const toml::node* n = get(key);
    if (!n) return;
    auto v = n->is_integer() ? n->value<int64_t>() : std::nullopt;
    if (!v) return bad(key, "expected an integer");
    if (*v < min || *v > max)
      return bad(key, "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                          std::to_string(*v));
    out = static_cast<T>(*v);
  }
  void host_port(const char* key, HostPort& out) {
    std::string s;
    const toml::node* n = get(key);
    if (!n) return;
    if (auto v = n->value<std::string>()) s = *v;
    else return bad(key, "expected a \"host:port\" string");
    auto hp = parse_host_port(s);
    if (!hp) return bad(key, hp.error().message);
    out = *hp;
  }
  // For keys a section's caller parses itself.
  void mark_read(const char* key) { seen_.insert(key); }
  void finish() {
    if (!table_) return;
    for (const auto& [k, v] : *table_) {
      if (!seen_.count(std::string(k.str())))
        errors_.push_back("[" + name_ + "] " + std::string(k.str()) + ": unknown key");
    }
  }
  void bad(const char* key, const std::string& why) { errors_.push_back("[" + name_ + "] " + key + ": " + why); }

 private:
  const toml::node* get(const char* key) {
    seen_.insert(key);
    return table_ ? table_->get(key) : nullptr;
  }
  const toml::table* table_;
  std::string name_;
  std::vector<std::string>& errors_;
  std::set<std::string> seen_;
};

// "NAME://host:port" -> (NAME, host:port); a bare "host:port" has no name.
struct ListenerSpec {
  std::string name;  // empty: the bare form
  std::string address;
};
ListenerSpec split_listener(const std::string& s) {
  auto sep = s.find("://");
  if (sep == std::string::npos) return {"", s};
  return {s.substr(0, sep), s.substr(sep + 3)};
}

bool valid_listener_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char ch : n)
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  return true;
}

std::optional<std::vector<std::string>> string_array(const toml::node* n) {
  const toml::array* arr = n ? n->as_array() : nullptr;
  if (!arr) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& el : *arr) {
    auto v = el.value<std::string>();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// [kafka] listeners, advertised_listeners and listener_security_protocol_map together (Kafka's
// listeners, advertised.listeners and listener.security.protocol.map).
void parse_listeners(const toml::table* kafka, KafkaConfig& out, std::vector<std::string>& errors) {
  auto bad = [&](const char* key, const std::string& why) { errors.push_back(std::string("[kafka] ") + key + ": " + why); };
  auto get = [&](const char* key) -> const toml::node* { return kafka ? kafka->get(key) : nullptr; };

  std::map<std::string, SecurityProtocol> protocol_of;
  if (const toml::node* n = get("listener_security_protocol_map")) {
    auto entries = string_array(n);
    if (!entries) return bad("listener_security_protocol_map", "expected an array of \"NAME:PROTOCOL\" strings");
    for (const auto& e : *entries) {
      auto colon = e.find(':');
      std::string name = colon == std::string::npos ? e : e.substr(0, colon);
      auto proto = colon == std::string::npos ? std::nullopt : parse_security_protocol(e.substr(colon + 1));
      if (!valid_listener_name(name) || !proto)
        return bad("listener_security_protocol_map",
                   "\"" + e + "\" is not NAME:PROTOCOL (NAME of A-Z, 0-9, _; PROTOCOL one of PLAINTEXT, SSL, "
                   "SASL_PLAINTEXT, SASL_SSL)");
      if (!protocol_of.emplace(name, *proto).second)
        return bad("listener_security_protocol_map", "listener name " + name + " given twice");
    }
  }

  if (const toml::node* n = get("listeners")) {
    auto entries = string_array(n);
    if (!entries || entries->empty())
      return bad("listeners", "expected a non-empty array of \"host:port\" or \"NAME://host:port\" strings");
    std::vector<ListenerConfig> result;
    std::set<std::string> named;
    for (const auto& e : *entries) {
      ListenerSpec spec = split_listener(e);
      ListenerConfig l;
      auto hp = parse_host_port(spec.address);
      if (!hp) return bad("listeners", hp.error().message);
      l.address = *hp;
      if (!spec.name.empty()) {
        if (!valid_listener_name(spec.name))
          return bad("listeners", "\"" + e + "\": a listener name is made of A-Z, 0-9 and _");
        if (!named.insert(spec.name).second) return bad("listeners", "listener name " + spec.name + " used twice");
        l.name = spec.name;
        if (auto it = protocol_of.find(spec.name); it != protocol_of.end()) l.protocol = it->second;
        else if (auto p = parse_security_protocol(spec.name)) l.protocol = *p;
        else
          return bad("listeners", "listener " + spec.name +
                                      " is not a security protocol and listener_security_protocol_map does not name it");
      }
      result.push_back(std::move(l));
    }
    // A bare "host:port" is a listener named PLAINTEXT; an explicit PLAINTEXT:// beside it would
    // make advertised_listeners' PLAINTEXT entry ambiguous.
    if (named.count("PLAINTEXT"))
      for (const auto& e : *entries)
        if (split_listener(e).name.empty())
          return bad("listeners", "\"" + e + "\" (a PLAINTEXT listener) and a PLAINTEXT:// listener cannot both be given");
    out.listeners = std::move(result);
  }

  if (const toml::node* n = get("advertised_listeners")) {
    auto entries = string_array(n);
    if (!entries) return bad("advertised_listeners", "expected an array of \"NAME://host:port\" strings");
    std::set<std::string> seen;
    for (const auto& e : *entries) {
      ListenerSpec spec = split_listener(e);
      if (spec.name.empty()) return bad("advertised_listeners", "\"" + e + "\" is not NAME://host:port");
      auto hp = parse_host_port(spec.address);
      if (!hp) return bad("advertised_listeners", hp.error().message);
      if (!seen.insert(spec.name).second) return bad("advertised_listeners", "listener " + spec.name + " given twice");
      size_t matches = 0;
      for (auto& l : out.listeners)
        if (l.name == spec.name) {
          l.advertised = *hp;
          ++matches;
        }
      if (matches == 0) return bad("advertised_listeners", "no listener is named " + spec.name);
      if (matches > 1)
        return bad("advertised_listeners", spec.name + " names " + std::to_string(matches) +
                                               " listeners; give them names of their own (NAME://host:port)");
    }
  }
}

}  // namespace

Result<HostPort> parse_host_port(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return invalid("\"" + s + "\" is not host:port");
  std::string host = s.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string port = s.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    return invalid("\"" + s + "\": port must be a number 0-65535");
  unsigned long p = std::stoul(port);
  if (p > 65535) return invalid("\"" + s + "\": port must be a number 0-65535");
  return HostPort{host, static_cast<uint16_t>(p)};
}

std::string_view security_protocol_name(SecurityProtocol p) {
  switch (p) {
    case SecurityProtocol::kPlaintext: return "PLAINTEXT";
    case SecurityProtocol::kSsl: return "SSL";
    case SecurityProtocol::kSaslPlaintext: return "SASL_PLAINTEXT";
    case SecurityProtocol::kSaslSsl: return "SASL_SSL";
  }
  return "?";
}

std::optional<SecurityProtocol> parse_security_protocol(std::string_view name) {
  for (auto p : {SecurityProtocol::kPlaintext, SecurityProtocol::kSsl, SecurityProtocol::kSaslPlaintext,
                 SecurityProtocol::kSaslSsl})
    if (security_protocol_name(p) == name) return p;
  return std::nullopt;
}

std::string_view metrics_labels_name(HttpConfig::MetricsLabels m) {
  switch (m) {
    case HttpConfig::MetricsLabels::kFull: return "full";
    case HttpConfig::MetricsLabels::kRedacted: return "redacted";
    case HttpConfig::MetricsLabels::kAuto: break;
  }
  return "auto";
}

std::string_view client_auth_name(TlsConfig::ClientAuth a) {
  switch (a) {
    case TlsConfig::ClientAuth::kNone: return "none";
    case TlsConfig::ClientAuth::kRequested: return "requested";
    case TlsConfig::ClientAuth::kRequired: return "required";
  }
  return "?";
}

HostPort Config::advertised(size_t listener) const {
  if (listener >= kafka.listeners.size()) listener = 0;
  const ListenerConfig& l = kafka.listeners[listener];
  if (l.advertised) return *l.advertised;
  HostPort hp = l.address;
  if (listener == 0) {
    if (!kafka.advertised_host.empty()) hp.host = kafka.advertised_host;
    if (kafka.advertised_port != 0) hp.port = kafka.advertised_port;
  }
  return hp;
}

Result<Config> parse_config(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
    return invalid(os.str());
  }

  Config c;
  std::vector<std::string> errors;
  constexpr int64_t kMaxI = std::numeric_limits<int32_t>::max();
  constexpr int64_t kMaxU = std::numeric_limits<int64_t>::max();
  auto table = [&](const char* name) -> const toml::table* {
    const toml::node* n = root.get(name);
    if (n && !n->is_table()) errors.push_back(std::string(name) + ": expected a [" + name + "] table");
    return n ? n->as_table() : nullptr;
  };

  {
    const toml::table* kafka = table("kafka");
    Section s(kafka, "kafka", errors);
    s.mark_read("listeners");
    s.mark_read("advertised_listeners");
    s.mark_read("listener_security_protocol_map");
    parse_listeners(kafka, c.kafka, errors);
    s.str("advertised_host", c.kafka.advertised_host);
    s.integer("advertised_port", c.kafka.advertised_port, 0, 65535);
    s.integer("node_id", c.kafka.node_id, 0, kMaxI);
    s.str("cluster_id", c.kafka.cluster_id);
    s.boolean("auto_create_topics", c.kafka.auto_create_topics);
    s.integer("default_partitions", c.kafka.default_partitions, 1, 1000);
    s.finish();
  }
  {
    Section s(table("topics"), "topics", errors);
    s.boolean("enforce_fsync", c.topics.enforce_fsync);
    s.integer("messages_required_to_save", c.topics.messages_required_to_save, 1, 16777216);
    s.integer("segment_bytes", c.topics.segment_bytes, 0, 1LL << 30);
    if (c.topics.segment_bytes != 0 && (c.topics.segment_bytes < (1u << 20) || c.topics.segment_bytes % 512 != 0))
      s.bad("segment_bytes", "must be 0 (Iggy's default) or 1 MiB..1 GiB and a multiple of 512");
    s.integer("retention_ms", c.topics.retention_ms, -1, kMaxU);
    s.integer("retention_bytes", c.topics.retention_bytes, -1, kMaxU);
    s.finish();
  }
  {
    Section s(table("groups"), "groups", errors);
    s.integer("initial_rebalance_delay_ms", c.groups.initial_rebalance_delay_ms, 0, 300000);
    s.integer("min_session_timeout_ms", c.groups.min_session_timeout_ms, 1, 3600000);
    s.integer("max_session_timeout_ms", c.groups.max_session_timeout_ms, 1, 3600000);
    if (c.groups.min_session_timeout_ms > c.groups.max_session_timeout_ms)
      s.bad("min_session_timeout_ms", "must not exceed max_session_timeout_ms");
    s.integer("max_size", c.groups.max_size, 1, 100000);
    s.integer("offsets_retention_minutes", c.groups.offsets_retention_minutes, 1, 5256000);
    s.integer("offset_metadata_max_bytes", c.groups.offset_metadata_max_bytes, 0, 1048576);
    s.integer("offsets_topic_partitions", c.groups.offsets_topic_partitions, 1, 1000);
    s.integer("consumer_session_timeout_ms", c.groups.consumer_session_timeout_ms, 1, 3600000);
    s.integer("consumer_heartbeat_interval_ms", c.groups.consumer_heartbeat_interval_ms, 1, 3600000);
    s.integer("consumer_min_session_timeout_ms", c.groups.consumer_min_session_timeout_ms, 1, 3600000);
    s.integer("consumer_max_session_timeout_ms", c.groups.consumer_max_session_timeout_ms, 1, 3600000);
    s.integer("consumer_min_heartbeat_interval_ms", c.groups.consumer_min_heartbeat_interval_ms, 1, 3600000);
    s.integer("consumer_max_heartbeat_interval_ms", c.groups.consumer_max_heartbeat_interval_ms, 1, 3600000);
    if (c.groups.consumer_heartbeat_interval_ms >= c.groups.consumer_session_timeout_ms)
      s.bad("consumer_heartbeat_interval_ms", "must be less than consumer_session_timeout_ms");
    // Kafka's GroupCoordinatorConfig checks the same: the broker's values within its bounds.
    if (c.groups.consumer_session_timeout_ms < c.groups.consumer_min_session_timeout_ms ||
        c.groups.consumer_session_timeout_ms > c.groups.consumer_max_session_timeout_ms)
      s.bad("consumer_session_timeout_ms", "must be within consumer_min_session_timeout_ms and consumer_max_session_timeout_ms");
    if (c.groups.consumer_heartbeat_interval_ms < c.groups.consumer_min_heartbeat_interval_ms ||
        c.groups.consumer_heartbeat_interval_ms > c.groups.consumer_max_heartbeat_interval_ms)
      s.bad("consumer_heartbeat_interval_ms",
            "must be within consumer_min_heartbeat_interval_ms and consumer_max_heartbeat_interval_ms");
    s.integer("consumer_max_regex_bytes", c.groups.consumer_max_regex_bytes, 1, 65536);
    s.integer("consumer_max_subscribed_topics", c.groups.consumer_max_subscribed_topics, 1, 1000000);
    s.str("consumer_migration_policy", c.groups.consumer_migration_policy);
    if (c.groups.consumer_migration_policy != "bidirectional" && c.groups.consumer_migration_policy != "upgrade" &&
        c.groups.consumer_migration_policy != "downgrade" && c.groups.consumer_migration_policy != "disabled")
      s.bad("consumer_migration_policy", "must be one of bidirectional, upgrade, downgrade, disabled");
    s.integer("group_version", c.groups.group_version, 0, 1);
    s.integer("streams_session_timeout_ms", c.groups.streams_session_timeout_ms, 1, 3600000);
    s.integer("streams_heartbeat_interval_ms", c.groups.streams_heartbeat_interval_ms, 1, 3600000);
    s.integer("streams_min_session_timeout_ms", c.groups.streams_min_session_timeout_ms, 1, 3600000);
    s.integer("streams_max_session_timeout_ms", c.groups.streams_max_session_timeout_ms, 1, 3600000);
    s.integer("streams_min_heartbeat_interval_ms", c.groups.streams_min_heartbeat_interval_ms, 1, 3600000);
    s.integer("streams_max_heartbeat_interval_ms", c.groups.streams_max_heartbeat_interval_ms, 1, 3600000);
    s.integer("streams_max_standby_replicas", c.groups.streams_max_standby_replicas, 0, 100);
    s.integer("streams_num_standby_replicas", c.groups.streams_num_standby_replicas, 0, 100);
    s.integer("streams_max_size", c.groups.streams_max_size, 1, 100000);
    s.integer("streams_initial_rebalance_delay_ms", c.groups.streams_initial_rebalance_delay_ms, 0, 3600000);
    s.integer("streams_assignment_interval_ms", c.groups.streams_assignment_interval_ms, 0, 15000);
    s.integer("streams_version", c.groups.streams_version, 0, 1);
    if (c.groups.streams_heartbeat_interval_ms >= c.groups.streams_session_timeout_ms)
      s.bad("streams_heartbeat_interval_ms", "must be less than streams_session_timeout_ms");
    if (c.groups.streams_session_timeout_ms < c.groups.streams_min_session_timeout_ms ||
        c.groups.streams_session_timeout_ms > c.groups.streams_max_session_timeout_ms)
      s.bad("streams_session_timeout_ms", "must be within streams_min_session_timeout_ms and streams_max_session_timeout_ms");
    if (c.groups.streams_heartbeat_interval_ms < c.groups.streams_min_heartbeat_interval_ms ||
        c.groups.streams_heartbeat_interval_ms > c.groups.streams_max_heartbeat_interval_ms)
      s.bad("streams_heartbeat_interval_ms",
            "must be within streams_min_heartbeat_interval_ms and streams_max_heartbeat_interval_ms");
    if (c.groups.streams_num_standby_replicas > c.groups.streams_max_standby_replicas)
      s.bad("streams_num_standby_replicas", "must not exceed streams_max_standby_replicas");
    s.finish();
  }
  {
    Section s(table("transactions"), "transactions", errors);
    s.integer("max_timeout_ms", c.transactions.max_timeout_ms, 1, 2147483647);
    s.integer("id_expiration_ms", c.transactions.id_expiration_ms, 1000, kMaxU);
    s.integer("abort_timed_out_interval_ms", c.transactions.abort_timed_out_interval_ms, 10, 3600000);
    s.integer("max_open", c.transactions.max_open, 1, 1000000);
    s.integer("max_buffered_bytes", c.transactions.max_buffered_bytes, 1024, 1LL << 34);
    s.integer("max_id_pattern_bytes", c.transactions.max_id_pattern_bytes, 1, 65536);
    s.integer("max_held_bytes_per_partition", c.transactions.max_held_bytes_per_partition, 1LL << 20, 1LL << 34);
    s.integer("max_recovery_scan_messages", c.transactions.max_recovery_scan_messages, 1000, 1LL << 40);
    s.integer("transaction_version", c.transactions.transaction_version, 1, 2);
    s.finish();
  }
  {
    Section s(table("limits"), "limits", errors);
    s.integer("max_frame_bytes", c.limits.max_frame_bytes, 1024, 1LL << 30);
    s.integer("max_connections", c.limits.max_connections, 1, 1000000);
    s.integer("idle_timeout_ms", c.limits.idle_timeout_ms, 0, kMaxU);
    s.integer("max_pending_response_bytes", c.limits.max_pending_response_bytes, 1024, kMaxU);
    s.integer("max_pending_response_bytes_total", c.limits.max_pending_response_bytes_total, 1024, kMaxU);
    s.integer("max_response_bytes", c.limits.max_response_bytes, 65536, 1LL << 31);
    s.integer("max_inflight_requests", c.limits.max_inflight_requests, 1, 100000);
    s.integer("max_inflight_request_bytes", c.limits.max_inflight_request_bytes, 1024, kMaxU);
    s.integer("max_decompressed_bytes_per_request", c.limits.max_decompressed_bytes_per_request, 1024, 1LL << 34);
    s.integer("shutdown_deadline_ms", c.limits.shutdown_deadline_ms, 0, 3600000);
    s.integer("frame_read_timeout_ms", c.limits.frame_read_timeout_ms, 0, 3600000);
    s.integer("max_connections_per_ip", c.limits.max_connections_per_ip, 1, 1000000);
    s.integer("fetch_max_bytes", c.limits.fetch_max_bytes, 1024, kMaxI);
    s.integer("fetch_max_wait_ms", c.limits.fetch_max_wait_ms, 0, kMaxI);
    s.integer("max_iggy_queue_per_connection", c.limits.max_iggy_queue_per_connection, 1, 100000);
    s.integer("authentication_timeout_ms", c.limits.authentication_timeout_ms, 100, 3600000);
    s.integer("max_unauthenticated_frame_bytes", c.limits.max_unauthenticated_frame_bytes, 1024, 1LL << 30);
    s.integer("failed_authentication_delay_ms", c.limits.failed_authentication_delay_ms, 0, 60000);
    s.integer("produced_batch_cache_bytes", c.limits.produced_batch_cache_bytes, 0, 1LL << 34);
    s.integer("memory_trim_interval_ms", c.limits.memory_trim_interval_ms, 0, 3600000);
    s.integer("memory_trim_min_free_bytes", c.limits.memory_trim_min_free_bytes, 0, 1LL << 40);
    s.finish();
  }
  {
    // [tls]: the files themselves are read and checked when the bridge starts (net::TlsContext).
    const toml::table* tls = table("tls");
    Section s(tls, "tls", errors);
    s.str("certificate_file", c.tls.certificate_file);
    s.str("key_file", c.tls.key_file);
    s.str("key_password", c.tls.key_password);
    s.str("ca_file", c.tls.ca_file);
    std::string client_auth(client_auth_name(c.tls.client_auth));
    s.str("client_auth", client_auth);
    if (client_auth == "none") c.tls.client_auth = TlsConfig::ClientAuth::kNone;
    else if (client_auth == "requested") c.tls.client_auth = TlsConfig::ClientAuth::kRequested;
    else if (client_auth == "required") c.tls.client_auth = TlsConfig::ClientAuth::kRequired;
    else s.bad("client_auth", "must be one of none, requested, required");
    s.mark_read("protocols");
    if (const toml::node* n = tls ? tls->get("protocols") : nullptr) {
      auto protocols = string_array(n);
      std::set<std::string> seen;
      bool ok = protocols && !protocols->empty();
      for (const auto& p : protocols ? *protocols : std::vector<std::string>{})
        ok = ok && (p == "TLSv1.2" || p == "TLSv1.3") && seen.insert(p).second;
      if (ok) c.tls.protocols = *protocols;
      else s.bad("protocols", "expected a non-empty array of \"TLSv1.2\" and/or \"TLSv1.3\", each once");
    }
    s.str("cipher_list", c.tls.cipher_list);
    s.str("ciphersuites", c.tls.ciphersuites);
    s.str("principal_mapping_rules", c.tls.principal_mapping_rules);
    if (auto m = security::SslPrincipalMapper::parse(c.tls.principal_mapping_rules); !m)
      s.bad("principal_mapping_rules", m.error().message);
    for (const auto& l : c.kafka.listeners) {
      if (!uses_tls(l.protocol)) continue;
      std::string why = "required by listener " + l.str() + " (" + std::string(security_protocol_name(l.protocol)) + ")";
      if (c.tls.certificate_file.empty()) s.bad("certificate_file", why);
      if (c.tls.key_file.empty()) s.bad("key_file", why);
      break;
    }
    if (c.tls.client_auth != TlsConfig::ClientAuth::kNone && c.tls.ca_file.empty())
      s.bad("ca_file", "required when client_auth is \"" + client_auth + "\": the CAs client certificates are verified against");
    s.finish();
  }
  {
    // [sasl]: the mechanisms SaslHandshake offers, session lifetime, iterations of new credentials.
    const toml::table* sasl = table("sasl");
    Section s(sasl, "sasl", errors);
    s.mark_read("enabled_mechanisms");
    if (const toml::node* n = sasl ? sasl->get("enabled_mechanisms") : nullptr) {
      static const std::set<std::string> kKnown{"SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"};
      const toml::array* a = n->as_array();
      std::vector<std::string> names;
      bool good = a != nullptr && !a->empty();
      if (a)
        for (const auto& e : *a) {
          auto v = e.value<std::string>();
          if (!v || !kKnown.count(*v)) good = false;
          else if (std::find(names.begin(), names.end(), *v) != names.end()) good = false;
          else names.push_back(*v);
        }
      if (good) c.sasl.enabled_mechanisms = std::move(names);
      else s.bad("enabled_mechanisms",
                 "expected a non-empty array of distinct mechanisms among \"SCRAM-SHA-256\", \"SCRAM-SHA-512\", \"PLAIN\"");
    }
    s.integer("connections_max_reauth_ms", c.sasl.connections_max_reauth_ms, 0, kMaxU);
    s.integer("scram_iterations", c.sasl.scram_iterations, SaslConfig::kMinIterations, SaslConfig::kMaxIterations);
    s.integer("max_pending_password_checks", c.sasl.max_pending_password_checks, 1, 100000);
    s.finish();
  }
  {
    const toml::table* t = table("authorization");
    Section s(t, "authorization", errors);
    s.boolean("enabled", c.authorization.enabled);
    s.mark_read("super_users");
    if (const toml::node* n = t ? t->get("super_users") : nullptr) {
      auto users = string_array(n);
      if (!users) {
        s.bad("super_users", "expected an array of principals (\"User:admin\")");
      } else {
        for (const auto& u : *users) {
          // Kafka's SecurityUtils.parseKafkaPrincipal: TYPE:NAME, split at the first ':'.
          const auto colon = u.find(':');
          if (colon == std::string::npos || colon == 0)
            s.bad("super_users", "\"" + u + "\" is not a principal (TYPE:NAME, e.g. \"User:admin\")");
        }
        c.authorization.super_users = std::move(*users);
      }
    }
    s.boolean("allow_everyone_if_no_acl_found", c.authorization.allow_everyone_if_no_acl_found);
    s.integer("max_acls", c.authorization.max_acls, 1, 10000000);
    s.integer("max_acl_filters_per_request", c.authorization.max_acl_filters_per_request, 1, 1000000);
    s.finish();
  }
  {
    Section s(table("iggy"), "iggy", errors);
    s.host_port("address", c.iggy.address);
    s.str("username", c.iggy.username);
    s.str("password", c.iggy.password);
    s.str("personal_access_token", c.iggy.personal_access_token);
    s.integer("pool_size", c.iggy.pool_size, 1, 256);
    s.integer("request_timeout_ms", c.iggy.request_timeout_ms, 100, 3600000);
    s.str("stream", c.iggy.stream);
    if (c.iggy.stream.empty() || c.iggy.stream.size() > 255) s.bad("stream", "must be 1..255 bytes");
    s.finish();
  }
  {
    Section s(table("compaction"), "compaction", errors);
    // Unset: "<[iggy] stream>-compacted", so two bridges on one Iggy server with streams of their
    // own never share (and never sweep) each other's generation topics.
    c.compaction.stream.clear();
    s.str("stream", c.compaction.stream);
    const auto* t = table("compaction");
    const bool given = t && t->contains("stream");
    if (!given) c.compaction.stream = c.iggy.stream + "-compacted";
    if (c.compaction.stream.empty() || c.compaction.stream.size() > 255) s.bad("stream", "must be 1..255 bytes");
    else if (c.compaction.stream == c.iggy.stream) s.bad("stream", "must differ from [iggy] stream");
    s.boolean("enabled", c.compaction.enabled);
    s.integer("threads", c.compaction.threads, 1, 64);
    s.integer("io_bytes_per_second", c.compaction.io_bytes_per_second, 0, INT64_MAX);
    s.integer("dedupe_buffer_bytes", c.compaction.dedupe_buffer_bytes, 1 << 20, int64_t{1} << 40);
    s.integer("backoff_ms", c.compaction.backoff_ms, 10, 86400000);
    s.integer("iggy_consumer_id", c.compaction.iggy_consumer_id, 1, UINT32_MAX);
    s.integer("max_metric_partitions", c.compaction.max_metric_partitions, 0, 1000000);
    s.finish();
  }
  {
    Section s(table("principals"), "principals", errors);
    std::string identity = "shared", unmapped = "refuse";
    s.str("iggy_identity", identity);
    if (identity == "shared") c.principals.iggy_identity = PrincipalsConfig::Identity::kShared;
    else if (identity == "per_principal") c.principals.iggy_identity = PrincipalsConfig::Identity::kPerPrincipal;
    else s.bad("iggy_identity", "must be \"shared\" or \"per_principal\"");
    s.str("unmapped", unmapped);
    if (unmapped == "refuse") c.principals.unmapped = PrincipalsConfig::Unmapped::kRefuse;
    else if (unmapped == "create") c.principals.unmapped = PrincipalsConfig::Unmapped::kCreate;
    else if (unmapped == "shared") c.principals.unmapped = PrincipalsConfig::Unmapped::kShared;
    else s.bad("unmapped", "must be \"refuse\", \"create\" or \"shared\"");
    s.integer("pool_size", c.principals.pool_size, 1, 64);
    s.boolean("sync_iggy_permissions", c.principals.sync_iggy_permissions);
    s.finish();
  }
  {
    Section s(table("state"), "state", errors);
    s.str("path", c.state.path);
    if (c.state.path.empty()) s.bad("path", "must not be empty");
    s.finish();
  }
  {
    Section s(table("log"), "log", errors);
    s.str("level", c.log.level);
    static const std::set<std::string> kLevels{"trace", "debug", "info", "warn", "error", "critical", "off"};
    if (!kLevels.count(c.log.level)) s.bad("level", "must be one of trace, debug, info, warn, error, critical, off");
    s.finish();
  }
  {
    Section s(table("http"), "http", errors);
    s.str("listen", c.http.listen);
    s.integer("max_connections_per_ip", c.http.max_connections_per_ip, 1, HttpConfig::kMaxConnections);
    std::string labels(metrics_labels_name(c.http.metrics_labels));
    s.str("metrics_labels", labels);
    if (labels == "auto") c.http.metrics_labels = HttpConfig::MetricsLabels::kAuto;
    else if (labels == "full") c.http.metrics_labels = HttpConfig::MetricsLabels::kFull;
    else if (labels == "redacted") c.http.metrics_labels = HttpConfig::MetricsLabels::kRedacted;
    else s.bad("metrics_labels", "must be one of auto, full, redacted");
    s.str("metrics_bearer_token_file", c.http.metrics_bearer_token_file);
    if (!c.http.listen.empty()) {
      auto hp = parse_host_port(c.http.listen);
      if (!hp) s.bad("listen", hp.error().message);
    }
    s.finish();
  }
  static const std::set<std::string> kSections{"kafka", "topics", "groups", "transactions", "limits", "tls",
                                               "sasl",  "authorization", "iggy", "compaction", "principals", "state", "log", "http"};
  for (const auto& [k, v] : root)
    if (!kSections.count(std::string(k.str()))) errors.push_back(std::string(k.str()) + ": unknown section or key");

  if (!errors.empty()) {
    std::string msg = origin + ": invalid configuration:";
    for (const auto& e : errors) msg += "\n  " + e;
    return invalid(msg);
  }
  return c;
}

Result<Config> load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid(path + ": cannot open configuration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_config(ss.str(), path);
}

namespace {

// A TOML basic string.
std::string q(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// A TOML array of basic strings, without its brackets.
std::string strings(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + q(v[i]);
  return out;
}

const char* boolean(bool b) { return b ? "true" : "false"; }
const char* secret(const std::string& s) { return s.empty() ? "\"\"" : "\"<redacted>\""; }

void render_kafka(std::ostream& os, const Config& c) {
  std::vector<std::string> listeners, advertised, map;
  std::set<std::string> mapped;
  for (const auto& l : c.kafka.listeners) {
    listeners.push_back(l.str());
    if (l.advertised) advertised.push_back(l.name + "://" + l.advertised->str());
    if (mapped.insert(l.name).second) map.push_back(l.name + ":" + std::string(security_protocol_name(l.protocol)));
  }
  os << "[kafka]\nlisteners = [" << strings(listeners) << "]\nadvertised_listeners = [" << strings(advertised)
     << "]\nlistener_security_protocol_map = [" << strings(map) << "]\nadvertised_host = " << q(c.kafka.advertised_host)
     << "\nadvertised_port = " << c.kafka.advertised_port << "\nnode_id = " << c.kafka.node_id
     << "\ncluster_id = " << q(c.kafka.cluster_id) << "\nauto_create_topics = " << boolean(c.kafka.auto_create_topics)
     << "\ndefault_partitions = " << c.kafka.default_partitions << "\n";
}

void render_topics_groups_transactions(std::ostream& os, const Config& c) {
  os << "\n[topics]\nenforce_fsync = " << boolean(c.topics.enforce_fsync)
     << "\nmessages_required_to_save = " << c.topics.messages_required_to_save
     << "\nsegment_bytes = " << c.topics.segment_bytes << "\nretention_ms = " << c.topics.retention_ms
     << "\nretention_bytes = " << c.topics.retention_bytes << "\n\n[groups]\ninitial_rebalance_delay_ms = "
     << c.groups.initial_rebalance_delay_ms << "\nmin_session_timeout_ms = " << c.groups.min_session_timeout_ms
     << "\nmax_session_timeout_ms = " << c.groups.max_session_timeout_ms << "\nmax_size = " << c.groups.max_size
     << "\noffsets_retention_minutes = " << c.groups.offsets_retention_minutes
     << "\noffset_metadata_max_bytes = " << c.groups.offset_metadata_max_bytes
     << "\noffsets_topic_partitions = " << c.groups.offsets_topic_partitions
     << "\nconsumer_session_timeout_ms = " << c.groups.consumer_session_timeout_ms
     << "\nconsumer_heartbeat_interval_ms = " << c.groups.consumer_heartbeat_interval_ms
     << "\nconsumer_min_session_timeout_ms = " << c.groups.consumer_min_session_timeout_ms
     << "\nconsumer_max_session_timeout_ms = " << c.groups.consumer_max_session_timeout_ms
     << "\nconsumer_min_heartbeat_interval_ms = " << c.groups.consumer_min_heartbeat_interval_ms
     << "\nconsumer_max_heartbeat_interval_ms = " << c.groups.consumer_max_heartbeat_interval_ms
     << "\nconsumer_max_regex_bytes = " << c.groups.consumer_max_regex_bytes
     << "\nconsumer_max_subscribed_topics = " << c.groups.consumer_max_subscribed_topics
     << "\nconsumer_migration_policy = " << q(c.groups.consumer_migration_policy)
     << "\ngroup_version = " << c.groups.group_version
     << "\nstreams_session_timeout_ms = " << c.groups.streams_session_timeout_ms
     << "\nstreams_heartbeat_interval_ms = " << c.groups.streams_heartbeat_interval_ms
     << "\nstreams_min_session_timeout_ms = " << c.groups.streams_min_session_timeout_ms
     << "\nstreams_max_session_timeout_ms = " << c.groups.streams_max_session_timeout_ms
     << "\nstreams_min_heartbeat_interval_ms = " << c.groups.streams_min_heartbeat_interval_ms
     << "\nstreams_max_heartbeat_interval_ms = " << c.groups.streams_max_heartbeat_interval_ms
     << "\nstreams_num_standby_replicas = " << c.groups.streams_num_standby_replicas
     << "\nstreams_max_standby_replicas = " << c.groups.streams_max_standby_replicas
     << "\nstreams_max_size = " << c.groups.streams_max_size
     << "\nstreams_initial_rebalance_delay_ms = " << c.groups.streams_initial_rebalance_delay_ms
     << "\nstreams_assignment_interval_ms = " << c.groups.streams_assignment_interval_ms
     << "\nstreams_version = " << c.groups.streams_version
     << "\n\n[transactions]\nmax_timeout_ms = " << c.transactions.max_timeout_ms
     << "\nid_expiration_ms = " << c.transactions.id_expiration_ms
     << "\nabort_timed_out_interval_ms = " << c.transactions.abort_timed_out_interval_ms
     << "\nmax_open = " << c.transactions.max_open << "\nmax_buffered_bytes = " << c.transactions.max_buffered_bytes
     << "\nmax_id_pattern_bytes = " << c.transactions.max_id_pattern_bytes
     << "\nmax_held_bytes_per_partition = " << c.transactions.max_held_bytes_per_partition
     << "\nmax_recovery_scan_messages = " << c.transactions.max_recovery_scan_messages
     << "\ntransaction_version = " << c.transactions.transaction_version << "\n";
}

void render_limits(std::ostream& os, const LimitsConfig& l) {
  os << "\n[limits]\nmax_frame_bytes = " << l.max_frame_bytes << "\nmax_connections = " << l.max_connections
     << "\nidle_timeout_ms = " << l.idle_timeout_ms << "\nmax_pending_response_bytes = " << l.max_pending_response_bytes
     << "\nmax_pending_response_bytes_total = " << l.max_pending_response_bytes_total
     << "\nmax_response_bytes = " << l.max_response_bytes << "\nmax_inflight_requests = " << l.max_inflight_requests
     << "\nmax_inflight_request_bytes = " << l.max_inflight_request_bytes
     << "\nmax_decompressed_bytes_per_request = " << l.max_decompressed_bytes_per_request
     << "\nshutdown_deadline_ms = " << l.shutdown_deadline_ms << "\nframe_read_timeout_ms = " << l.frame_read_timeout_ms
     << "\nmax_connections_per_ip = " << l.max_connections_per_ip << "\nfetch_max_bytes = " << l.fetch_max_bytes
     << "\nfetch_max_wait_ms = " << l.fetch_max_wait_ms
     << "\nmax_iggy_queue_per_connection = " << l.max_iggy_queue_per_connection
     << "\nauthentication_timeout_ms = " << l.authentication_timeout_ms
     << "\nmax_unauthenticated_frame_bytes = " << l.max_unauthenticated_frame_bytes
     << "\nfailed_authentication_delay_ms = " << l.failed_authentication_delay_ms
     << "\nproduced_batch_cache_bytes = " << l.produced_batch_cache_bytes
     << "\nmemory_trim_interval_ms = " << l.memory_trim_interval_ms
     << "\nmemory_trim_min_free_bytes = " << l.memory_trim_min_free_bytes << "\n";
}

void render_tls_sasl(std::ostream& os, const Config& c) {
  os << "\n[tls]\ncertificate_file = " << q(c.tls.certificate_file) << "\nkey_file = " << q(c.tls.key_file)
     << "\nkey_password = " << secret(c.tls.key_password) << "\nca_file = " << q(c.tls.ca_file)
     << "\nclient_auth = " << q(std::string(client_auth_name(c.tls.client_auth))) << "\nprotocols = ["
     << strings(c.tls.protocols) << "]\ncipher_list = " << q(c.tls.cipher_list) << "\nciphersuites = "
     << q(c.tls.ciphersuites) << "\nprincipal_mapping_rules = " << q(c.tls.principal_mapping_rules)
     << "\n\n[sasl]\nenabled_mechanisms = [" << strings(c.sasl.enabled_mechanisms)
     << "]\nconnections_max_reauth_ms = " << c.sasl.connections_max_reauth_ms
     << "\nscram_iterations = " << c.sasl.scram_iterations
     << "\nmax_pending_password_checks = " << c.sasl.max_pending_password_checks << "\n";
}

void render_iggy_and_the_rest(std::ostream& os, const Config& c) {
  const char* unmapped = c.principals.unmapped == PrincipalsConfig::Unmapped::kRefuse   ? "refuse"
                         : c.principals.unmapped == PrincipalsConfig::Unmapped::kCreate ? "create"
                                                                                         : "shared";
  os << "\n[iggy]\naddress = " << q(c.iggy.address.str()) << "\nusername = " << q(c.iggy.username)
     << "\npassword = " << secret(c.iggy.password) << "\npersonal_access_token = " << secret(c.iggy.personal_access_token)
     << "\npool_size = " << c.iggy.pool_size << "\nrequest_timeout_ms = " << c.iggy.request_timeout_ms
     << "\nstream = " << q(c.iggy.stream) << "\n\n[compaction]\nstream = " << q(c.compaction.stream)
     << "\nenabled = " << (c.compaction.enabled ? "true" : "false") << "\nthreads = " << c.compaction.threads
     << "\nio_bytes_per_second = " << c.compaction.io_bytes_per_second
     << "\ndedupe_buffer_bytes = " << c.compaction.dedupe_buffer_bytes << "\nbackoff_ms = " << c.compaction.backoff_ms
     << "\niggy_consumer_id = " << c.compaction.iggy_consumer_id
     << "\nmax_metric_partitions = " << c.compaction.max_metric_partitions
     << "\n\n[principals]\niggy_identity = "
     << q(c.principals.iggy_identity == PrincipalsConfig::Identity::kShared ? "shared" : "per_principal")
     << "\nunmapped = " << q(unmapped) << "\npool_size = " << c.principals.pool_size
     << "\nsync_iggy_permissions = " << boolean(c.principals.sync_iggy_permissions) << "\n\n[state]\npath = "
     << q(c.state.path) << "\n\n[log]\nlevel = " << q(c.log.level) << "\n\n[http]\nlisten = " << q(c.http.listen)
     << "\nmax_connections_per_ip = " << c.http.max_connections_per_ip
     << "\nmetrics_labels = " << q(std::string(metrics_labels_name(c.http.metrics_labels)))
     << "\nmetrics_bearer_token_file = " << q(c.http.metrics_bearer_token_file) << "\n";
  os << "\n[authorization]\nenabled = " << boolean(c.authorization.enabled) << "\nsuper_users = ["
     << strings(c.authorization.super_users)
     << "]\nallow_everyone_if_no_acl_found = " << boolean(c.authorization.allow_everyone_if_no_acl_found)
     << "\nmax_acls = " << c.authorization.max_acls
     << "\nmax_acl_filters_per_request = " << c.authorization.max_acl_filters_per_request << "\n";
}

}  // namespace

std::string render_config(const Config& c) {
  std::ostringstream os;
  render_kafka(os, c);
  render_topics_groups_transactions(os, c);
  render_limits(os, c.limits);
  render_tls_sasl(os, c);
  render_iggy_and_the_rest(os, c);
  return os.str();
}

}  // namespace kib::config
