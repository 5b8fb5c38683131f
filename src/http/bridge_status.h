// `kafka-iggy-bridge status`: asks a running bridge's HTTP listener ([http] listen) for
// /readyz and /metrics and summarises them as a table, or as JSON for scripts.
#pragma once

#include <chrono>
#include <map>
#include <ostream>
#include <string>

#include "config/config.h"

namespace kib::http {

struct BridgeStatus {
  std::string address;       // "127.0.0.1:9644"
  bool reachable = false;    // the HTTP listener answered
  std::string error;         // why not, when !reachable
  bool ready = false;        // /readyz said 200
  std::string reason;        // /readyz body when not ready
  std::string version;       // from kib_build_info
  std::string iggy_version;  // from kib_iggy_server_info: the Iggy server's version string
  std::string iggy_protocol; // and its wire protocol, "0.11.0"
  std::map<std::string, double> totals;  // every metric name -> sum over its label sets
  std::string metrics_error;  // why /metrics was not summarised (e.g. "HTTP 401 ..."), when it was not
};

// Sums the samples of a Prometheus text exposition by metric name (labels ignored); sets
// `version` from kib_build_info's label and, given `s`, s->iggy_version / iggy_protocol from
// kib_iggy_server_info's. Exposed for tests.
std::map<std::string, double> sum_samples(const std::string& exposition, std::string* version = nullptr,
                                          BridgeStatus* s = nullptr);

// `bearer_token`: sent to /metrics as "Authorization: Bearer" when not empty.
BridgeStatus fetch_status(const config::HostPort& addr,
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(3000),
                          const std::string& bearer_token = "");
std::string render_status_table(const BridgeStatus& s);
std::string render_status_json(const BridgeStatus& s);

// The whole subcommand. Returns the exit code: 0 ready, 1 not ready or not reachable,
// 3 when [http] listen is empty (nothing to ask). With [http] metrics_bearer_token_file set it
// sends that file's token; a file it cannot read leaves readiness only, with a line on `err`.
int run_status_command(const config::Config& cfg, bool json, std::ostream& out, std::ostream& err);

}  // namespace kib::http
