// The running bridge: one libuv loop, the state store, the Iggy connection pool, the Kafka
// listeners, and signal handling (SIGTERM/SIGINT drain and stop, SIGHUP reloads what can be
// reloaded).
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/config.h"
#include "metrics/metrics.h"

namespace kib {

namespace kafka {
class KafkaServer;
struct Services;
}  // namespace kafka
namespace state {
class StateStore;
}
namespace iggy {
class IggyPool;
class IggyClient;
}  // namespace iggy
namespace http {
class HttpServer;
struct Readiness;
struct MetricsAccess;
}  // namespace http
namespace app {
class ServiceGraph;
class ConsumerLagMonitor;
}  // namespace app
namespace uv {
class Timer;
}
class MemoryReleaser;
namespace net {
class TlsContext;
}

class Bridge {
 public:
  // `config_path` is re-read on SIGHUP (empty = nothing to reload).
  Bridge(config::Config cfg, std::string config_path);
  ~Bridge();

  // Opens state, connects the Iggy pool, binds listeners. Errors name what failed.
  Status start();
  // Runs the loop until a shutdown signal; returns true on a clean stop.
  bool run();
  // Non-zero when the bridge stopped itself for a reason a restart does not fix (e.g. 5: the Iggy
  // server speaks an unsupported protocol).
  int exit_code() const { return exit_code_; }
  static constexpr int kExitIggyUnsupported = 5;
  // Begins a graceful shutdown (also what SIGTERM/SIGINT do).
  void shutdown();

  const std::vector<uint16_t>& bound_ports() const { return ports_; }

 private:
  // The start's phases, in order (start() runs them).
  Status load_metrics_access();
  Status open_state();
  Status read_cluster_id(std::string& cluster_id);
  Status start_services();
  Status start_kafka(const std::string& cluster_id);
  Status start_http();
  void install_signals();

  // SIGHUP (app/bridge_reload.cc), section by section.
  void reload();
  void report_restart_needed(const config::Config& next) const;
  void reload_limits(const config::Config& next);
  void reload_topics(const config::Config& next);
  void reload_http(const config::Config& next);
  void reload_authorization(const config::Config& next);
  // Re-reads the [tls] files off the loop into new contexts (one per TLS listener) for new
  // connections.
  void reload_tls(const config::TlsConfig& tls);
  // What /readyz answers: Iggy reachable, the stream initialised, state open, not stopping.
  http::Readiness readiness() const;
  void start_catalog();
  // WATCHDOG=1 at half the interval systemd asks for (WatchdogSec=), from the loop thread, so
  // a stuck loop gets the service restarted.
  void start_watchdog();
  void ping_watchdog();

  config::Config cfg_;
  std::string config_path_;
  uv_loop_t loop_{};
  std::unique_ptr<state::StateStore> state_;
  std::unique_ptr<iggy::IggyPool> iggy_pool_;
  std::unique_ptr<iggy::IggyClient> iggy_;
  std::unique_ptr<app::ServiceGraph> graph_;  // every service (app/service_graph.h)
  std::unique_ptr<app::ConsumerLagMonitor> lag_;
  std::unique_ptr<kafka::Services> services_;
  std::unique_ptr<uv::Timer> catalog_retry_;  // start_catalog() again while Iggy is not ready
  std::unique_ptr<kafka::KafkaServer> kafka_;
  // What new TLS connections get: one context per SSL and SASL_SSL listener, none without them.
  std::vector<std::shared_ptr<const net::TlsContext>> tls_;
  uint64_t tls_reloads_ = 0;  // SIGHUP reloads started; only the latest installs
  std::vector<uv_signal_t*> signals_;
  std::vector<uint16_t> ports_;
  bool stopping_ = false;
  bool ready_ = false;  // the catalog started (READY=1 sent)
  int exit_code_ = 0;
  std::unique_ptr<uv::Timer> watchdog_;
  std::chrono::milliseconds watchdog_every_{0};
  std::unique_ptr<MemoryReleaser> memory_;  // [limits] memory_trim_*: freed memory back to the OS when idle
  std::unique_ptr<http::HttpServer> http_;
  // [http] metrics_bearer_token_file and metrics_labels as /metrics reads them on each request;
  // SIGHUP replaces the value in place.
  std::shared_ptr<http::MetricsAccess> metrics_access_;
  metrics::CollectHook metrics_hook_;  // copies pool/server/state counters into /metrics
};

}  // namespace kib
