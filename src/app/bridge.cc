#include "app/bridge.h"

#include <csignal>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include "common/log.h"
#include "kafka/kafka_server.h"
#include "kafka/services.h"
#include "state/state_store.h"

namespace kib {

Bridge::Bridge(config::Config cfg, std::string config_path) : cfg_(std::move(cfg)), config_path_(std::move(config_path)) {
  uv_loop_init(&loop_);
}

Bridge::~Bridge() {
  kafka_.reset();
  if (state_) state_->close();
  state_.reset();
  for (auto* s : signals_)
    uv_close(reinterpret_cast<uv_handle_t*>(s), [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
  signals_.clear();
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

Status Bridge::start() {
  std::signal(SIGPIPE, SIG_IGN);
  auto st = state::StateStore::open(cfg_.state.path, &loop_);
  if (!st) return st.error();
  state_ = std::move(*st);
  spdlog::info("state: {} (schema version {})", cfg_.state.path, state::latest_schema_version());

  services_ = std::make_unique<kafka::Services>();
  services_->config = &cfg_;
  services_->loop = &loop_;
  services_->state = state_.get();

  net::ServerLimits limits{cfg_.limits.max_frame_bytes, cfg_.limits.max_connections, cfg_.limits.idle_timeout_ms,
                           cfg_.limits.max_pending_response_bytes, cfg_.limits.max_inflight_requests};
  kafka_ = std::make_unique<kafka::KafkaServer>(*services_, &loop_, limits);
  for (const auto& l : cfg_.kafka.listeners) {
    auto port = kafka_->listen(l);
    if (!port) return port.error();
    ports_.push_back(*port);
  }

  auto add_signal = [this](int signum, void (*cb)(uv_signal_t*, int)) {
    auto* s = new uv_signal_t;
    uv_signal_init(&loop_, s);
    s->data = this;
    uv_signal_start(s, cb, signum);
    signals_.push_back(s);
  };
  auto on_stop = [](uv_signal_t* s, int signum) {
    spdlog::info("received {}, shutting down", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    static_cast<Bridge*>(s->data)->shutdown();
  };
  add_signal(SIGTERM, on_stop);
  add_signal(SIGINT, on_stop);
  add_signal(SIGHUP, [](uv_signal_t* s, int) { static_cast<Bridge*>(s->data)->reload(); });

  sd_notify(0, "READY=1");
  spdlog::info("kafka-iggy-bridge ready: advertised as {}", cfg_.advertised().str());
  return ok_status();
}

bool Bridge::run() {
  uv_run(&loop_, UV_RUN_DEFAULT);
  return true;
}

void Bridge::shutdown() {
  if (stopping_) return;
  stopping_ = true;
  sd_notify(0, "STOPPING=1");
  kafka_->shutdown(cfg_.limits.shutdown_deadline_ms, [this] {
    spdlog::info("shutdown: all Kafka connections closed");
    if (state_) state_->close();
    for (auto* s : signals_)
      uv_close(reinterpret_cast<uv_handle_t*>(s), [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
    signals_.clear();
  });
}

void Bridge::reload() {
  // Only what can change without dropping connections is applied; the rest is named in the
  // log as needing a restart. An invalid file changes nothing.
  sd_notify(0, "RELOADING=1");
  auto next = config::load_config(config_path_);
  if (!next) {
    spdlog::error("SIGHUP: configuration not reloaded: {}", next.error().message);
    sd_notify(0, "READY=1");
    return;
  }
  if (next->log.level != cfg_.log.level) {
    log::set_level(next->log.level);
    spdlog::info("SIGHUP: log level {} -> {}", cfg_.log.level, next->log.level);
    cfg_.log.level = next->log.level;
  }
  auto needs_restart = [&](const char* key, bool changed) {
    if (changed) spdlog::warn("SIGHUP: {} changed; it takes effect after a restart", key);
  };
  auto listeners = [](const config::Config& x) {
    std::string s;
    for (const auto& l : x.kafka.listeners) s += l.str() + ",";
    return s;
  };
  const auto &a = cfg_.limits, &b = next->limits;
  needs_restart("[kafka] listeners", listeners(*next) != listeners(cfg_));
  needs_restart("[kafka] advertised address/node id/cluster id",
                next->advertised().str() != cfg_.advertised().str() || next->kafka.node_id != cfg_.kafka.node_id ||
                    next->kafka.cluster_id != cfg_.kafka.cluster_id);
  needs_restart("[iggy]", next->iggy.address.str() != cfg_.iggy.address.str() || next->iggy.username != cfg_.iggy.username ||
                               next->iggy.password != cfg_.iggy.password ||
                               next->iggy.personal_access_token != cfg_.iggy.personal_access_token ||
                               next->iggy.pool_size != cfg_.iggy.pool_size || next->iggy.stream != cfg_.iggy.stream);
  needs_restart("[state] path", next->state.path != cfg_.state.path);
  needs_restart("[limits]", a.max_frame_bytes != b.max_frame_bytes || a.max_connections != b.max_connections ||
                                a.idle_timeout_ms != b.idle_timeout_ms ||
                                a.max_pending_response_bytes != b.max_pending_response_bytes ||
                                a.max_inflight_requests != b.max_inflight_requests ||
                                a.max_decompressed_bytes_per_request != b.max_decompressed_bytes_per_request ||
                                a.shutdown_deadline_ms != b.shutdown_deadline_ms);
  needs_restart("[http] listen", next->http.listen != cfg_.http.listen);
  spdlog::info("SIGHUP: configuration reloaded from {}", config_path_);
  sd_notify(0, "READY=1");
}

}  // namespace kib
