#include "http/bridge_status.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>

#include <nlohmann/json.hpp>

#include "http/http_client.h"
#include "http/metrics_access.h"

namespace kib::http {
namespace {

double total(const BridgeStatus& s, const std::string& name) {
  auto it = s.totals.find(name);
  return it == s.totals.end() ? 0 : it->second;
}

std::string integer(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string human_bytes(double v) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string human_duration(double seconds) {
  auto s = static_cast<long long>(seconds < 0 ? 0 : seconds);
  std::ostringstream os;
  if (s >= 86400) os << s / 86400 << "d ";
  if (s >= 3600) os << (s % 86400) / 3600 << "h ";
  if (s >= 60) os << (s % 3600) / 60 << "m ";
  os << s % 60 << "s";
  return os.str();
}

// Counts and gauges are rendered as whole numbers (as the table shows them); a value that is
// not finite has no JSON number and is null.
nlohmann::ordered_json json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  if (std::fabs(v) < 9e18) return static_cast<long long>(std::llround(v));
  return std::round(v);
}

double uptime_seconds(const BridgeStatus& s) {
  double start = total(s, "process_start_time_seconds");
  return start > 0 ? static_cast<double>(std::time(nullptr)) - start : 0;
}

// The value of label `key` in a label set `a="x",b="y"` (escapes kept as written).
std::string label_value(const std::string& labels, const std::string& key) {
  const std::string needle = key + "=\"";
  size_t p = 0;
  while ((p = labels.find(needle, p)) != std::string::npos) {
    if (p == 0 || labels[p - 1] == ',') break;
    p += needle.size();
  }
  if (p == std::string::npos) return {};
  p += needle.size();
  size_t q = p;
  while (q < labels.size() && labels[q] != '"') q += labels[q] == '\\' ? 2 : 1;
  return labels.substr(p, std::min(q, labels.size()) - p);
}

}  // namespace

std::map<std::string, double> sum_samples(const std::string& exposition, std::string* version, BridgeStatus* s) {
  std::map<std::string, double> sums;
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    std::string name = line.substr(0, i);
    std::string labels;
    if (i < line.size() && line[i] == '{') {
      size_t start = ++i;
      bool quoted = false;
      for (; i < line.size(); ++i) {
        if (quoted && line[i] == '\\') ++i;
        else if (line[i] == '"') quoted = !quoted;
        else if (!quoted && line[i] == '}') break;
      }
      if (i >= line.size()) continue;  // unterminated label set: skip the line
      labels = line.substr(start, i - start);
      ++i;
    }
    const char* value_at = line.c_str() + i;
    char* end = nullptr;
    double v = std::strtod(value_at, &end);
    if (end == value_at) continue;
    sums[name] += v;
    if (version && name == "kib_build_info") *version = label_value(labels, "version");
    if (s && name == "kib_iggy_server_info" && v > 0) {
      s->iggy_version = label_value(labels, "version");
      s->iggy_protocol = label_value(labels, "protocol");
    }
  }
  return sums;
}

BridgeStatus fetch_status(const config::HostPort& addr, std::chrono::milliseconds timeout,
                          const std::string& bearer_token) {
  BridgeStatus s;
  s.address = addr.str();
  auto ready = get(addr, "/readyz", timeout);
  if (!ready) {
    s.error = ready.error().message;
    return s;
  }
  s.reachable = true;
  s.ready = ready->status == 200;
  if (!s.ready) {
    s.reason = ready->body;
    if (s.reason.starts_with("not ready: ")) s.reason.erase(0, 11);
    while (!s.reason.empty() && (s.reason.back() == '\n' || s.reason.back() == '\r')) s.reason.pop_back();
    if (s.reason.empty()) s.reason = "HTTP " + std::to_string(ready->status);
  }
  std::vector<std::pair<std::string, std::string>> headers;
  if (!bearer_token.empty()) headers.emplace_back("Authorization", "Bearer " + bearer_token);
  auto m = get(addr, "/metrics", timeout, headers);
  if (!m) s.metrics_error = m.error().message;
  else if (m->status == 200) s.totals = sum_samples(m->body, &s.version, &s);
  else if (m->status == 401)
    s.metrics_error = bearer_token.empty() ? "HTTP 401: the bridge asks for the token of [http] metrics_bearer_token_file"
                                           : "HTTP 401: the bridge refused the token of [http] metrics_bearer_token_file";
  else s.metrics_error = "HTTP " + std::to_string(m->status);
  return s;
}

std::string render_status_table(const BridgeStatus& s) {
  std::ostringstream os;
  auto row = [&](const char* k, const std::string& v) { os << k << std::string(14 - std::string(k).size(), ' ') << v << "\n"; };
  row("address", "http://" + s.address + (s.version.empty() ? "" : "  (version " + s.version + ")"));
  if (!s.reachable) {
    row("reachable", "no: " + s.error);
    return os.str();
  }
  row("ready", s.ready ? "yes" : "no: " + s.reason);
  if (!s.metrics_error.empty()) row("metrics", "unavailable: " + s.metrics_error);
  if (s.totals.empty()) return os.str();
  row("uptime", human_duration(uptime_seconds(s)));
  row("connections", integer(total(s, "kib_connections")) + " open, " +
                         integer(total(s, "kib_connections_refused_total")) + " refused");
  row("requests", integer(total(s, "kib_requests_total")) + " total, " + integer(total(s, "kib_request_errors_total")) +
                      " errors");
  row("bytes", "in " + human_bytes(total(s, "kib_bytes_received_total")) + ", out " +
                   human_bytes(total(s, "kib_bytes_sent_total")));
  row("iggy pool", integer(total(s, "kib_iggy_pool_connected")) + "/" + integer(total(s, "kib_iggy_pool_connections")) +
                       " connected, " + integer(total(s, "kib_iggy_pool_busy")) + " busy, " +
                       integer(total(s, "kib_iggy_pool_queued")) + " queued, " +
                       integer(total(s, "kib_iggy_reconnects_total")) + " reconnects");
  row("iggy server", s.iggy_version.empty() ? std::string("unknown (not logged in yet)")
                                            : s.iggy_version + ", protocol " + s.iggy_protocol);
  row("state", integer(total(s, "kib_state_write_batches_total")) + " write batches committed");
  row("memory", human_bytes(total(s, "process_resident_memory_bytes")) + " resident");
  return os.str();
}

std::string render_status_json(const BridgeStatus& s) {
  // Keys in the order operators have always seen them; bytes that are not UTF-8 (an address
  // or error text from the environment) become U+FFFD rather than failing the command.
  nlohmann::ordered_json doc;
  doc["address"] = s.address;
  doc["reachable"] = s.reachable;
  if (!s.reachable) {
    doc["error"] = s.error;
  } else {
    doc["ready"] = s.ready;
    doc["reason"] = s.reason;
    doc["version"] = s.version;
    if (!s.metrics_error.empty()) doc["metrics_error"] = s.metrics_error;
    if (!s.totals.empty()) {
      doc["uptime_seconds"] = json_number(uptime_seconds(s));
      doc["connections"] = json_number(total(s, "kib_connections"));
      doc["connections_refused_total"] = json_number(total(s, "kib_connections_refused_total"));
      doc["requests_total"] = json_number(total(s, "kib_requests_total"));
      doc["request_errors_total"] = json_number(total(s, "kib_request_errors_total"));
      doc["bytes_received_total"] = json_number(total(s, "kib_bytes_received_total"));
      doc["bytes_sent_total"] = json_number(total(s, "kib_bytes_sent_total"));
      nlohmann::ordered_json pool;
      pool["connections"] = json_number(total(s, "kib_iggy_pool_connections"));
      pool["connected"] = json_number(total(s, "kib_iggy_pool_connected"));
      pool["busy"] = json_number(total(s, "kib_iggy_pool_busy"));
      pool["queued"] = json_number(total(s, "kib_iggy_pool_queued"));
      pool["reconnects_total"] = json_number(total(s, "kib_iggy_reconnects_total"));
      pool["server_version"] = s.iggy_version;
      pool["server_protocol"] = s.iggy_protocol;
      doc["iggy_pool"] = std::move(pool);
      doc["state_write_batches_total"] = json_number(total(s, "kib_state_write_batches_total"));
      doc["resident_memory_bytes"] = json_number(total(s, "process_resident_memory_bytes"));
    }
  }
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

int run_status_command(const config::Config& cfg, bool json, std::ostream& out, std::ostream& err) {
  if (cfg.http.listen.empty()) {
    err << "[http] listen is empty: the bridge serves no status endpoint\n";
    return 3;
  }
  auto addr = config::parse_host_port(cfg.http.listen);
  if (!addr) {
    err << "[http] listen: " << addr.error().message << "\n";
    return 3;
  }
  std::string token;
  if (!cfg.http.metrics_bearer_token_file.empty()) {
    // The file is usually readable by root and the bridge's group only: without it the
    // readiness part still answers.
    if (auto t = read_bearer_token_file(cfg.http.metrics_bearer_token_file)) token = *t;
    else err << t.error().message << " (/metrics not summarised)\n";
  }
  BridgeStatus s = fetch_status(*addr, std::chrono::milliseconds(3000), token);
  out << (json ? render_status_json(s) : render_status_table(s));
  if (!s.reachable && json) err << "kafka-iggy-bridge is not answering on http://" << s.address << ": " << s.error << "\n";
  return s.reachable && s.ready ? 0 : 1;
}

}  // namespace kib::http
