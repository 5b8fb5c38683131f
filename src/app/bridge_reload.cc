// SIGHUP (Bridge::reload): what can change without dropping connections is applied, section by
// section; the rest is named in the log as needing a restart. An invalid file changes nothing.
#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include "app/bridge.h"
#include "app/service_graph.h"
#include "bridge/catalog/config_service.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/sasl_authenticator.h"
#include "common/guard.h"
#include "common/log.h"
#include "http/http_server.h"
#include "http/metrics_access.h"
#include "iggy/pool.h"
#include "metrics/bridge_metrics.h"
#include "net/tls.h"
#include "server/kafka_server.h"
#include "app/memory_release.h"

namespace kib {
namespace {

void needs_restart(const char* key, bool changed) {
  if (changed) spdlog::warn("SIGHUP: {} changed; it takes effect after a restart", key);
}

void changed(const char* key, uint64_t from, uint64_t to) {
  if (from != to) spdlog::info("SIGHUP: {} {} -> {}", key, from, to);
}

std::string listeners_of(const config::Config& x) {
  std::string s;
  for (size_t i = 0; i < x.kafka.listeners.size(); ++i)
    s += x.kafka.listeners[i].str() + "=" + std::string(config::security_protocol_name(x.kafka.listeners[i].protocol)) +
         "@" + x.advertised(i).str() + ",";
  return s;
}

// Every [limits] key that changed, named in the log.
void log_limits(const config::LimitsConfig& a, const config::LimitsConfig& b) {
  changed("[limits] max_frame_bytes", a.max_frame_bytes, b.max_frame_bytes);
  changed("[limits] max_connections", a.max_connections, b.max_connections);
  changed("[limits] idle_timeout_ms", a.idle_timeout_ms, b.idle_timeout_ms);
  changed("[limits] max_pending_response_bytes", a.max_pending_response_bytes, b.max_pending_response_bytes);
  changed("[limits] max_pending_response_bytes_total", a.max_pending_response_bytes_total,
          b.max_pending_response_bytes_total);
  changed("[limits] max_response_bytes", a.max_response_bytes, b.max_response_bytes);
  changed("[limits] max_inflight_requests", a.max_inflight_requests, b.max_inflight_requests);
  changed("[limits] max_inflight_request_bytes", a.max_inflight_request_bytes, b.max_inflight_request_bytes);
  changed("[limits] max_decompressed_bytes_per_request", a.max_decompressed_bytes_per_request,
          b.max_decompressed_bytes_per_request);
  changed("[limits] shutdown_deadline_ms", a.shutdown_deadline_ms, b.shutdown_deadline_ms);
  changed("[limits] frame_read_timeout_ms", a.frame_read_timeout_ms, b.frame_read_timeout_ms);
  changed("[limits] max_connections_per_ip", a.max_connections_per_ip, b.max_connections_per_ip);
  changed("[limits] fetch_max_bytes", a.fetch_max_bytes, b.fetch_max_bytes);
  changed("[limits] fetch_max_wait_ms", a.fetch_max_wait_ms, b.fetch_max_wait_ms);
  changed("[limits] max_iggy_queue_per_connection", a.max_iggy_queue_per_connection, b.max_iggy_queue_per_connection);
  changed("[limits] authentication_timeout_ms", a.authentication_timeout_ms, b.authentication_timeout_ms);
  changed("[limits] max_unauthenticated_frame_bytes", a.max_unauthenticated_frame_bytes,
          b.max_unauthenticated_frame_bytes);
  changed("[limits] failed_authentication_delay_ms", a.failed_authentication_delay_ms, b.failed_authentication_delay_ms);
  changed("[limits] memory_trim_interval_ms", a.memory_trim_interval_ms, b.memory_trim_interval_ms);
  changed("[limits] memory_trim_min_free_bytes", a.memory_trim_min_free_bytes, b.memory_trim_min_free_bytes);
}

}  // namespace

std::string_view labels_phrase(metrics::ClientNames n);  // app/bridge.cc

void Bridge::reload() {
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
  report_restart_needed(*next);
  // [tls]: the files are read again even when their names did not change (a renewed
  // certificate is usually written over the old one).
  if (!tls_.empty()) reload_tls(next->tls);
  reload_limits(*next);
  reload_topics(*next);
  reload_http(*next);
  reload_authorization(*next);
  spdlog::info("SIGHUP: configuration reloaded from {}", config_path_);
  sd_notify(0, "READY=1");
}

void Bridge::report_restart_needed(const config::Config& next) const {
  needs_restart("[kafka] listeners, advertised addresses", listeners_of(next) != listeners_of(cfg_));
  needs_restart("[kafka] node id/cluster id",
                next.kafka.node_id != cfg_.kafka.node_id || next.kafka.cluster_id != cfg_.kafka.cluster_id);
  const auto &i = cfg_.iggy, &ni = next.iggy;
  needs_restart("[iggy]", ni.address.str() != i.address.str() || ni.username != i.username || ni.password != i.password ||
                              ni.personal_access_token != i.personal_access_token || ni.pool_size != i.pool_size ||
                              ni.stream != i.stream);
  needs_restart("[state] path", next.state.path != cfg_.state.path);
  needs_restart("[compaction] stream", next.compaction.stream != cfg_.compaction.stream);
  {
    const config::CompactionConfig &a = next.compaction, &b = cfg_.compaction;
    needs_restart("[compaction] enabled", a.enabled != b.enabled);
    needs_restart("[compaction] threads", a.threads != b.threads);
    needs_restart("[compaction] io_bytes_per_second", a.io_bytes_per_second != b.io_bytes_per_second);
    needs_restart("[compaction] dedupe_buffer_bytes", a.dedupe_buffer_bytes != b.dedupe_buffer_bytes);
    needs_restart("[compaction] backoff_ms", a.backoff_ms != b.backoff_ms);
    needs_restart("[compaction] iggy_consumer_id", a.iggy_consumer_id != b.iggy_consumer_id);
    needs_restart("[compaction] max_metric_partitions", a.max_metric_partitions != b.max_metric_partitions);
  }
  const auto &g = cfg_.groups, &ng = next.groups;
  needs_restart("[groups]", g.initial_rebalance_delay_ms != ng.initial_rebalance_delay_ms ||
                                g.min_session_timeout_ms != ng.min_session_timeout_ms ||
                                g.max_session_timeout_ms != ng.max_session_timeout_ms || g.max_size != ng.max_size ||
                                g.offsets_retention_minutes != ng.offsets_retention_minutes ||
                                g.offset_metadata_max_bytes != ng.offset_metadata_max_bytes ||
                                g.offsets_topic_partitions != ng.offsets_topic_partitions);
  needs_restart("[http] listen", next.http.listen != cfg_.http.listen);
}

// [limits] apply at once: the TCP server takes the connection limits, and the handlers read the
// decompression budget and the shutdown deadline from cfg_ when they need them.
void Bridge::reload_limits(const config::Config& next) {
  log_limits(cfg_.limits, next.limits);
  const config::LimitsConfig& b = next.limits;
  if (memory_) memory_->configure(b.memory_trim_interval_ms, b.memory_trim_min_free_bytes);
  if (next.sasl.max_pending_password_checks != cfg_.sasl.max_pending_password_checks) {
    spdlog::info("SIGHUP: [sasl] max_pending_password_checks {} -> {}", cfg_.sasl.max_pending_password_checks,
                 next.sasl.max_pending_password_checks);
    graph_->sasl().set_max_pending_password_checks(next.sasl.max_pending_password_checks);
    cfg_.sasl.max_pending_password_checks = next.sasl.max_pending_password_checks;
  }
  iggy_pool_->set_max_queue_per_owner(b.max_iggy_queue_per_connection);
  cfg_.limits = next.limits;
  kafka_->tcp().set_limits(net::server_limits(cfg_.limits));
}

// Topic auto-creation and the options of topics created from now on are read from cfg_ whenever a
// topic is created; the broker's log.retention.ms/bytes (STATIC_BROKER_CONFIG) reach topics
// without their own retention now.
void Bridge::reload_topics(const config::Config& next) {
  const auto &k = cfg_.kafka, &nk = next.kafka;
  changed("[kafka] default_partitions", static_cast<uint64_t>(k.default_partitions),
          static_cast<uint64_t>(nk.default_partitions));
  changed("[kafka] auto_create_topics", k.auto_create_topics, nk.auto_create_topics);
  changed("[topics] enforce_fsync", cfg_.topics.enforce_fsync, next.topics.enforce_fsync);
  changed("[topics] messages_required_to_save", cfg_.topics.messages_required_to_save,
          next.topics.messages_required_to_save);
  changed("[topics] segment_bytes", cfg_.topics.segment_bytes, next.topics.segment_bytes);
  if (cfg_.topics.retention_ms != next.topics.retention_ms)
    spdlog::info("SIGHUP: [topics] retention_ms {} -> {}", cfg_.topics.retention_ms, next.topics.retention_ms);
  if (cfg_.topics.retention_bytes != next.topics.retention_bytes)
    spdlog::info("SIGHUP: [topics] retention_bytes {} -> {}", cfg_.topics.retention_bytes, next.topics.retention_bytes);
  const bool retention_changed = cfg_.topics.retention_ms != next.topics.retention_ms ||
                                 cfg_.topics.retention_bytes != next.topics.retention_bytes;
  cfg_.kafka.auto_create_topics = nk.auto_create_topics;
  cfg_.kafka.default_partitions = nk.default_partitions;
  cfg_.topics = next.topics;
  if (retention_changed && ready_) graph_->configs().reapply_topics();
}

// [http] limits, and /metrics' labels and token from the next scrape. The token file is read
// again even when its name did not change: rotating the token is rewriting the file.
void Bridge::reload_http(const config::Config& next) {
  changed("[http] max_connections_per_ip", cfg_.http.max_connections_per_ip, next.http.max_connections_per_ip);
  cfg_.http.max_connections_per_ip = next.http.max_connections_per_ip;
  if (!http_) return;
  http_->set_limits(http::http_limits(cfg_.http));
  if (!metrics_access_) return;
  config::HttpConfig h = cfg_.http;  // with the running listen: "auto" depends on it
  h.metrics_labels = next.http.metrics_labels;
  h.metrics_bearer_token_file = next.http.metrics_bearer_token_file;
  std::string warning;
  auto access = http::load_metrics_access(h, &warning);
  if (!access) {
    spdlog::error("SIGHUP: /metrics keeps its previous token and labels: {}", access.error().message);
    return;
  }
  if (!warning.empty()) spdlog::warn("SIGHUP: {}", warning);
  const http::MetricsAccess& was = *metrics_access_;
  if (access->bearer_token != was.bearer_token)
    spdlog::info("SIGHUP: /metrics {}", access->bearer_token.empty() ? "no longer asks for a bearer token"
                                        : was.bearer_token.empty()   ? "now asks for a bearer token"
                                                                     : "asks for the new bearer token");
  if (access->names != was.names)
    spdlog::info("SIGHUP: /metrics labels {} from now on ([http] metrics_labels = \"{}\")",
                 labels_phrase(access->names), config::metrics_labels_name(h.metrics_labels));
  *metrics_access_ = std::move(*access);
  cfg_.http.metrics_labels = h.metrics_labels;
  cfg_.http.metrics_bearer_token_file = h.metrics_bearer_token_file;
}

// [authorization] applies at once: the next check uses it (Kafka needs a broker restart).
void Bridge::reload_authorization(const config::Config& next) {
  const auto &a = cfg_.authorization, &na = next.authorization;
  if (a.enabled != na.enabled) spdlog::warn("SIGHUP: [authorization] enabled {} -> {}", a.enabled, na.enabled);
  if (a.super_users != na.super_users) spdlog::info("SIGHUP: [authorization] super_users changed");
  changed("[authorization] allow_everyone_if_no_acl_found", a.allow_everyone_if_no_acl_found,
          na.allow_everyone_if_no_acl_found);
  changed("[authorization] max_acls", a.max_acls, na.max_acls);
  changed("[authorization] max_acl_filters_per_request", a.max_acl_filters_per_request, na.max_acl_filters_per_request);
  cfg_.authorization = na;
  graph_->authorizer().configure(cfg_.authorization);
}

void Bridge::reload_tls(const config::TlsConfig& tls) {
  // Reading the files and decrypting the key may take a while: done on libuv's thread pool,
  // installed back on the loop. Of overlapping reloads only the latest installs.
  struct Work {
    uv_work_t req{};
    Bridge* bridge = nullptr;
    config::TlsConfig cfg;
    std::vector<net::TlsListener> listeners;
    uint64_t generation = 0;
    std::optional<Result<std::vector<std::shared_ptr<const net::TlsContext>>>> result;
  };
  auto* w = new Work;
  w->req.data = w;
  w->bridge = this;
  w->cfg = tls;
  // The listeners running, not those the new file names (they change only with a restart).
  w->listeners = net::tls_listeners(cfg_.kafka.listeners);
  w->generation = ++tls_reloads_;
  int rc = uv_queue_work(
      &loop_, &w->req,
      [](uv_work_t* req) {
        auto* work = static_cast<Work*>(req->data);
        try {
          work->result = net::TlsContext::load_all(work->cfg, work->listeners);
        } catch (const std::exception& e) {
          work->result = Error{ErrorDomain::kInvalid, 0, e.what()};
        }
      },
      [](uv_work_t* req, int) {
        std::unique_ptr<Work> work(static_cast<Work*>(req->data));
        guard::run(guard::Boundary::kSignal, "SIGHUP TLS reload", [&] {
          Bridge* b = work->bridge;
          if (!b->kafka_ || b->stopping_ || work->generation != b->tls_reloads_ || !work->result) return;
          metrics::TlsMetrics& t = metrics::tls_metrics();
          if (!*work->result) {
            t.context_reloads.labels({"failed"}).inc();
            spdlog::error("SIGHUP: [tls] not reloaded, new connections keep the previous certificate: {}",
                          work->result->error().message);
            return;
          }
          // Every listener gets its new context; connections established keep their old one.
          b->tls_ = std::move(**work->result);
          b->cfg_.tls = work->cfg;
          if (auto st = b->kafka_->set_tls_contexts(b->tls_); !st)
            spdlog::error("SIGHUP: [tls] not reloaded for a listener: {}", st.error().message);
          t.context_reloads.labels({"ok"}).inc();
          spdlog::info("SIGHUP: [tls] reloaded; new connections get server certificate {}", b->tls_.front()->summary());
        });
      });
  if (rc != 0) {
    delete w;
    spdlog::error("SIGHUP: [tls] not reloaded: {}", uv_strerror(rc));
  }
}

}  // namespace kib
