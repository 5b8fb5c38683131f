#include "app/bridge.h"

#include <algorithm>
#include <csignal>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include "app/consumer_lag.h"
#include "app/memory_release.h"
#include "app/metrics_collector.h"
#include "app/service_graph.h"
#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/cleaner/cleaner.h"
#include "bridge/iggy_pool_config.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "common/guard.h"
#include "http/http_server.h"
#include "http/metrics_access.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "metrics/bridge_metrics.h"
#include "net/tls.h"
#include "server/context/services.h"
#include "server/kafka_server.h"
#include "state/state_store.h"
#include "state/topic_store.h"
#include "uvx/timer.h"

namespace kib {

Bridge::Bridge(config::Config cfg, std::string config_path) : cfg_(std::move(cfg)), config_path_(std::move(config_path)) {
  uv_loop_init(&loop_);
}

Bridge::~Bridge() {
  metrics_hook_.reset();
  watchdog_.reset();
  memory_.reset();
  catalog_retry_.reset();
  http_.reset();
  kafka_.reset();
  services_.reset();
  lag_.reset();
  graph_.reset();  // the services, in the reverse order of their making
  iggy_.reset();
  if (iggy_pool_) {
    bool closed = false;
    iggy_pool_->close([&closed] { closed = true; });
    while (!closed && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    iggy_pool_.reset();
  }
  if (state_) state_->close();
  state_.reset();
  for (auto* s : signals_)
    uv_close(reinterpret_cast<uv_handle_t*>(s), [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
  signals_.clear();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

// How /metrics' labels are set, for the log (also SIGHUP's, app/bridge_reload.cc).
std::string_view labels_phrase(metrics::ClientNames n) {
  return n == metrics::ClientNames::kShown ? "name consumer groups and topics" : "leave consumer groups and topics out";
}

Status Bridge::start() {
  std::signal(SIGPIPE, SIG_IGN);
  std::string cluster_id;
  for (auto phase : {&Bridge::load_metrics_access, &Bridge::open_state})
    if (auto st = (this->*phase)(); !st) return st;
  if (auto st = read_cluster_id(cluster_id); !st) return st;
  if (auto st = start_services(); !st) return st;
  if (auto st = start_kafka(cluster_id); !st) return st;
  if (auto st = start_http(); !st) return st;
  metrics_hook_ = metrics::global().on_collect([this] {
    collect_metrics(MetricSources{kafka_.get(), http_.get(), iggy_pool_.get(), state_.get(), graph_.get(),
                                  memory_.get(), lag_.get(), &tls_});
  });
  install_signals();
  std::string advertised;
  for (size_t i = 0; i < cfg_.kafka.listeners.size(); ++i)
    advertised += (i ? ", " : "") + cfg_.kafka.listeners[i].name + "://" + cfg_.advertised(i).str();
  spdlog::info("kafka-iggy-bridge listening; advertised as {}; cluster id {}", advertised, cluster_id);
  start_watchdog();
  memory_ = std::make_unique<MemoryReleaser>(&loop_, cfg_.limits.memory_trim_interval_ms,
                                             cfg_.limits.memory_trim_min_free_bytes,
                                             [] { return metrics::bridge_metrics().bytes_received.value(); });
  start_catalog();
  return ok_status();
}

// [http] metrics_bearer_token_file is read before anything opens: a file that does not load
// stops the start with its key named, as check-config does.
Status Bridge::load_metrics_access() {
  if (cfg_.http.listen.empty()) return ok_status();
  std::string warning;
  auto access = http::load_metrics_access(cfg_.http, &warning);
  if (!access) return access.error();
  if (!warning.empty()) spdlog::warn("{}", warning);
  metrics_access_ = std::make_shared<http::MetricsAccess>(std::move(*access));
  return ok_status();
}

Status Bridge::open_state() {
  auto st = state::StateStore::open(cfg_.state.path, &loop_);
  if (!st) return st.error();
  state_ = std::move(*st);
  spdlog::info("state: {} (schema version {})", cfg_.state.path, state::latest_schema_version());
  return ok_status();
}

Status Bridge::read_cluster_id(std::string& cluster_id) {
  return state_->run_blocking(
      [&](SQLite::Database& db) { cluster_id = state::load_or_create_cluster_id(db, cfg_.kafka.cluster_id); });
}

// The Iggy pool (connecting in the background) and every service on it, loaded from SQLite
// before a listener opens (app/service_graph.h).
Status Bridge::start_services() {
  iggy_pool_ = std::make_unique<iggy::IggyPool>(&loop_, iggy_pool_config(cfg_));
  iggy_pool_->start();
  iggy_ = std::make_unique<iggy::IggyClient>(*iggy_pool_);
  app::ServiceGraphOptions options;
  options.identity_pool = iggy_pool_config(cfg_);
  graph_ = std::make_unique<app::ServiceGraph>(&loop_, cfg_, *state_, *iggy_, std::move(options));
  if (auto st = graph_->load(); !st) return st;
  lag_ = std::make_unique<app::ConsumerLagMonitor>(&loop_, graph_->offsets(), graph_->log());
  return ok_status();
}

Status Bridge::start_kafka(const std::string& cluster_id) {
  services_ = std::make_unique<kafka::Services>(graph_->services(cluster_id));
  kafka_ = std::make_unique<kafka::KafkaServer>(*services_, &loop_, net::server_limits(cfg_.limits));
  // A closed connection's work ends with it: its long-polling fetches and its reads still
  // queued for Iggy are dropped (nobody is left to answer), instead of running to their deadline.
  kafka_->tcp().on_close = [this](const std::shared_ptr<net::Connection>& c) {
    if (!graph_) return;
    graph_->log().cancel_fetches(c->id());
    graph_->identities().cancel_owner(c->id());
  };
  // [tls]: the files are read and checked before any listener opens; one that does not load
  // stops the start with its key named. Each TLS listener gets a context of its own, so that
  // no session resumes on a listener other than the one it was made on.
  if (auto listeners = net::tls_listeners(cfg_.kafka.listeners); !listeners.empty()) {
    auto tls = net::TlsContext::load_all(cfg_.tls, listeners);
    if (!tls) return tls.error();
    tls_ = std::move(*tls);
    if (auto st = kafka_->set_tls_contexts(tls_); !st) return st.error();
    spdlog::info("tls: server certificate {}; client_auth {}; protocols {}", tls_.front()->summary(),
                 config::client_auth_name(cfg_.tls.client_auth), fmt::join(cfg_.tls.protocols, ", "));
  }
  for (size_t i = 0; i < cfg_.kafka.listeners.size(); ++i) {
    auto port = kafka_->listen(cfg_.kafka.listeners[i], i);
    if (!port) return port.error();
    ports_.push_back(*port);
  }
  return ok_status();
}

Status Bridge::start_http() {
  if (cfg_.http.listen.empty()) return ok_status();
  auto addr = config::parse_host_port(cfg_.http.listen);  // validated when the config was loaded
  if (!addr) return addr.error();
  http_ = std::make_unique<http::HttpServer>(
      &loop_, http::ops_handlers([this] { return readiness(); }, metrics_access_), http::http_limits(cfg_.http));
  auto port = http_->listen(*addr);
  if (!port) return port.error();
  spdlog::info("http: /metrics {}; its labels {} ([http] metrics_labels = \"{}\")",
               metrics_access_->bearer_token.empty() ? "open to anyone who reaches the port" : "asks for a bearer token",
               labels_phrase(metrics_access_->names), config::metrics_labels_name(cfg_.http.metrics_labels));
  return ok_status();
}

// SIGTERM and SIGINT drain and stop; SIGHUP reloads what can be reloaded.
void Bridge::install_signals() {
  auto add_signal = [this](int signum, void (*cb)(uv_signal_t*, int)) {
    auto* s = new uv_signal_t;
    uv_signal_init(&loop_, s);
    s->data = this;
    uv_signal_start(s, cb, signum);
    signals_.push_back(s);
  };
  auto on_stop = [](uv_signal_t* s, int signum) {
    guard::run(guard::Boundary::kSignal, "shutdown signal", [&] {
      spdlog::info("received {}, shutting down", signum == SIGTERM ? "SIGTERM" : "SIGINT");
      static_cast<Bridge*>(s->data)->shutdown();
    });
  };
  add_signal(SIGTERM, on_stop);
  add_signal(SIGINT, on_stop);
  add_signal(SIGHUP, [](uv_signal_t* s, int) {
    // A reload that throws changes nothing more than it had; the bridge keeps serving.
    guard::run(guard::Boundary::kSignal, "SIGHUP reload", [&] { static_cast<Bridge*>(s->data)->reload(); });
  });
}

// Readiness needs Iggy: the catalog makes sure the stream exists and reads the topics. If Iggy
// is not reachable yet the bridge keeps serving (requests that need Iggy get retriable
// errors) and retries every second.
void Bridge::start_catalog() {
  graph_->catalog().start([this](Status s) {
    if (stopping_) return;
    if (s) {
      ready_ = true;
      sd_notify(0, "READY=1");
      lag_->start();
      graph_->cleaner().start();
      graph_->configs().reapply_topics();  // broker configs changed while the bridge was down
      // Commits decided before a crash are appended, transactions open at it aborted.
      graph_->transactions().recover([] { spdlog::info("transactions: recovery after restart complete"); });
      const iggy::ServerProfile p = iggy_pool_->server_profile();
      spdlog::info("kafka-iggy-bridge ready: Iggy at {} (server {}, protocol {}, {}) stream '{}', {} topics",
                   cfg_.iggy.address.str(), p.version, iggy::format_protocol_version(p.protocol),
                   iggy::server_generation_name(p.generation), cfg_.iggy.stream, graph_->catalog().all().size());
      return;
    }
    if (const iggy::PoolStats ps = iggy_pool_->stats(); ps.unsupported_server) {
      // Nothing will change by retrying: say so once and stop (systemd does not restart exit 5).
      spdlog::critical("cannot start: Iggy at {} is not supported: {}", cfg_.iggy.address.str(), ps.unsupported_reason);
      exit_code_ = kExitIggyUnsupported;
      shutdown();
      return;
    }
    spdlog::warn("Iggy at {} not ready ({}); retrying in 1 s", cfg_.iggy.address.str(), s.error().message);
    if (!catalog_retry_) catalog_retry_ = std::make_unique<uv::Timer>(&loop_, "catalog start retry");
    catalog_retry_->start(std::chrono::milliseconds(1000), [this] { start_catalog(); });
  });
}

bool Bridge::run() {
  uv_run(&loop_, UV_RUN_DEFAULT);
  return true;
}

void Bridge::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  // Long-polling fetches and waiting JoinGroup/SyncGroup requests are answered now so
  // connections can drain.
  if (graph_) {
    graph_->log().stop_waiting();
    graph_->stop();
  }
  if (lag_) lag_->stop();
  kafka_->shutdown(cfg_.limits.shutdown_deadline_ms, [this] {
    spdlog::info("shutdown: all Kafka connections closed");
    catalog_retry_.reset();
    if (graph_) graph_->catalog().stop();
    watchdog_.reset();
    memory_.reset();
    if (http_) http_->close();
    if (graph_) graph_->close_identities([] {});
    if (iggy_pool_) iggy_pool_->close();
    if (state_) state_->close();
    for (auto* s : signals_)
      uv_close(reinterpret_cast<uv_handle_t*>(s), [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
    signals_.clear();
  });
}

void Bridge::start_watchdog() {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return;
  watchdog_ = std::make_unique<uv::Timer>(&loop_, "systemd watchdog");
  watchdog_every_ = std::chrono::milliseconds(std::max<uint64_t>(1, usec / 2000));
  spdlog::info("systemd watchdog: WATCHDOG=1 every {} ms", watchdog_every_.count());
  ping_watchdog();
}

void Bridge::ping_watchdog() {
  sd_notify(0, "WATCHDOG=1");
  watchdog_->start(watchdog_every_, [this] { ping_watchdog(); });
}

http::Readiness Bridge::readiness() const {
  if (stopping_) return {false, "shutting down"};
  if (!state_) return {false, "state database not open"};
  iggy::PoolStats s = iggy_pool_->stats();
  if (s.unsupported_server)
    return {false, "Iggy at " + cfg_.iggy.address.str() + " is not supported (" + s.unsupported_reason +
                       "); restart the bridge once a supported Iggy server runs there"};
  if (s.login_refused) return {false, "Iggy at " + cfg_.iggy.address.str() + " refused the login"};
  if (s.connected == 0) return {false, "Iggy at " + cfg_.iggy.address.str() + " not connected"};
  if (!ready_) return {false, "Iggy stream '" + cfg_.iggy.stream + "' not initialised yet"};
  return {true, ""};
}


}  // namespace kib
