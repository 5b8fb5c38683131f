#include "app/bridge.h"

#include <algorithm>
#include <csignal>
#include <map>

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include "bridge/iggy_pool_config.h"
#include "app/log_start_persistence.h"
#include "app/memory_release.h"
#include "bridge/catalog/config_service.h"
#include "bridge/catalog/topic_catalog.h"
#include "bridge/groups/committed_offsets.h"
#include "bridge/transactions/transaction_coordinator_impl.h"
#include "app/consumer_lag.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/groups/group_timers.h"
#include "bridge/log/batch_cache.h"
#include "bridge/log/partition_log.h"
#include "bridge/producers/producer_registry_impl.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/security/sasl_authenticator.h"
#include "bridge/security/scram_credentials.h"
#include "bridge/security/authorizer.h"
#include "common/guard.h"
#include "common/log.h"
#include "http/http_server.h"
#include "http/metrics_access.h"
#include "iggy/client.h"
#include "iggy/pool.h"
#include "server/kafka_server.h"
#include "server/context/services.h"
#include "metrics/bridge_metrics.h"
#include "net/tls.h"
#include "state/state_store.h"
#include "state/topic_store.h"
#include "uvx/timer.h"

namespace kib {
namespace {

// A deleted topic's committed offsets and producer state leave the caches (their rows already
// left SQLite with the catalog's delete).
struct TopicStateListener final : bridge::TopicListener {
  TopicStateListener(bridge::CommittedOffsets& o, bridge::ProducerRegistry& p) : offsets(o), producers(p) {}
  void on_topic_deleted(const std::string& name) override {
    offsets.forget_topic(name);
    producers.forget_topic(name);
  }
  bridge::CommittedOffsets& offsets;
  bridge::ProducerRegistry& producers;
};

}  // namespace

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
  scram_credentials_.reset();
  sasl_.reset();
  lag_.reset();
  if (identities_) identities_->set_rights({}, {});  // it refers to the authorizer
  authorizer_.reset();
  if (transactions_) transactions_->stop();
  transactions_.reset();
  if (groups_) groups_->stop();
  groups_.reset();
  if (offsets_) offsets_->stop();
  offsets_.reset();
  group_timers_.reset();
  log_.reset();
  if (identities_) {
    if (catalog_) catalog_->remove_listener(identities_.get());
    bool closed = false;
    identities_->close([&closed] { closed = true; });
    while (!closed && uv_run(&loop_, UV_RUN_ONCE) != 0) {
    }
    identities_.reset();
  }
  producers_.reset();
  configs_.reset();
  catalog_.reset();
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

namespace {

std::string_view labels_phrase(metrics::ClientNames n) {
  return n == metrics::ClientNames::kShown ? "name consumer groups and topics" : "leave consumer groups and topics out";
}

}  // namespace

Status Bridge::start() {
  std::signal(SIGPIPE, SIG_IGN);
  // [http] metrics_bearer_token_file is read before anything opens: a file that does not load
  // stops the start with its key named, as check-config does.
  if (!cfg_.http.listen.empty()) {
    std::string warning;
    auto access = http::load_metrics_access(cfg_.http, &warning);
    if (!access) return access.error();
    if (!warning.empty()) spdlog::warn("{}", warning);
    metrics_access_ = std::make_shared<http::MetricsAccess>(std::move(*access));
  }
  auto st = state::StateStore::open(cfg_.state.path, &loop_);
  if (!st) return st.error();
  state_ = std::move(*st);
  spdlog::info("state: {} (schema version {})", cfg_.state.path, state::latest_schema_version());

  std::string cluster_id;
  auto cid = state_->run_blocking(
      [&](SQLite::Database& db) { cluster_id = state::load_or_create_cluster_id(db, cfg_.kafka.cluster_id); });
  if (!cid) return cid.error();

  iggy_pool_ = std::make_unique<iggy::IggyPool>(&loop_, iggy_pool_config(cfg_));
  iggy_pool_->start();
  iggy_ = std::make_unique<iggy::IggyClient>(*iggy_pool_);
  catalog_ = std::make_unique<bridge::TopicCatalog>(cfg_, *iggy_, *state_, &loop_);
  configs_ = std::make_unique<bridge::ConfigService>(cfg_, *catalog_, *state_);
  if (auto st = configs_->load(); !st) return st.error();
  producers_ = bridge::make_producer_registry(*state_, &loop_);
  if (auto st = producers_->load(); !st) return st.error();
  log_ = std::make_unique<bridge::PartitionLog>(&loop_, *iggy_, *catalog_, producers_.get(), cfg_);
  identities_ = std::make_unique<bridge::IggyIdentities>(&loop_, cfg_, *state_, *iggy_, iggy_pool_config(cfg_));
  catalog_->add_listener(identities_.get());
  if (auto st = app::attach_log_start_store(*log_, *state_); !st) return st.error();
  group_timers_ = bridge::make_uv_group_timers(&loop_);
  bridge::CommittedOffsetsOptions oo;
  oo.offsets_retention_ms = static_cast<int64_t>(cfg_.groups.offsets_retention_minutes) * 60 * 1000;
  oo.offset_metadata_max_bytes = static_cast<int32_t>(cfg_.groups.offset_metadata_max_bytes);
  oo.partition_count = [this](const std::string& topic) -> std::optional<int32_t> {
    const bridge::TopicMetadata* t = catalog_->find(topic);
    if (!t) return std::nullopt;
    return t->partitions;
  };
  offsets_ = std::make_unique<bridge::CommittedOffsets>(*state_, *group_timers_, std::move(oo));
  if (auto st = offsets_->load(); !st) return st.error();
  catalog_->adopt_listener(std::make_unique<TopicStateListener>(*offsets_, *producers_));
  bridge::GroupCoordinatorOptions go;
  go.initial_rebalance_delay_ms = static_cast<int32_t>(cfg_.groups.initial_rebalance_delay_ms);
  go.min_session_timeout_ms = static_cast<int32_t>(cfg_.groups.min_session_timeout_ms);
  go.max_session_timeout_ms = static_cast<int32_t>(cfg_.groups.max_session_timeout_ms);
  go.max_size = static_cast<int32_t>(cfg_.groups.max_size);
  groups_ = std::make_unique<bridge::GroupCoordinator>(*state_, *group_timers_, *offsets_, go);
  if (auto st = groups_->load(); !st) return st.error();
  lag_ = std::make_unique<bridge::ConsumerLagMonitor>(&loop_, *offsets_, *log_);
  transactions_ = bridge::make_transaction_coordinator(
      bridge::TransactionServices{*state_, &loop_, *producers_, *log_, *offsets_, cfg_.transactions});
  // Before the listener opens: a commit decided before a crash holds its partitions' last stable
  // offsets from here on; recover() completes it once Iggy is reachable (docs/transactions.md).
  if (auto st = transactions_->load(); !st) return st.error();
  // [authorization]: every ACL in memory before the first request is authorized.
  authorizer_ = std::make_unique<bridge::Authorizer>(cfg_.authorization, *state_, &loop_);
  if (auto st = authorizer_->load(); !st) return st.error();
  // The mapped Iggy users' permissions follow the ACLs (docs/security.md "ACLs as Iggy permissions").
  identities_->use_authorizer(*authorizer_);
  authorizer_->add_listener(*identities_);

  sasl_ = std::make_unique<bridge::SaslAuthenticator>(*state_, &loop_, cfg_.sasl);
  scram_credentials_ = std::make_unique<bridge::ScramCredentials>(*state_);

  services_ = std::make_unique<kafka::Services>(kafka::Services{
      .config = cfg_,
      .catalog = *catalog_,
      .producers = *producers_,
      .log = *log_,
      .groups = *groups_,
      .offsets = *offsets_,
      .configs = *configs_,
      .transactions = *transactions_,
      .identities = *identities_,
      .sasl = *sasl_,
      .scram_credentials = *scram_credentials_,
      .authorizer = *authorizer_,
      .cluster_id = cluster_id,
  });

  kafka_ = std::make_unique<kafka::KafkaServer>(*services_, &loop_, net::server_limits(cfg_.limits));
  // A closed connection's work ends with it: its long-polling fetches and its reads still
  // queued for Iggy are dropped (nobody is left to answer), instead of running to their deadline.
  kafka_->tcp().on_close = [this](const std::shared_ptr<net::Connection>& c) {
    if (log_) log_->cancel_fetches(c->id());
    if (identities_) identities_->cancel_owner(c->id());
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

  if (!cfg_.http.listen.empty()) {
    auto addr = config::parse_host_port(cfg_.http.listen);  // validated when the config was loaded
    if (!addr) return addr.error();
    http_ = std::make_unique<http::HttpServer>(
        &loop_, http::ops_handlers([this] { return readiness(); }, metrics_access_), http::http_limits(cfg_.http));
    auto port = http_->listen(*addr);
    if (!port) return port.error();
    spdlog::info("http: /metrics {}; its labels {} ([http] metrics_labels = \"{}\")",
                 metrics_access_->bearer_token.empty() ? "open to anyone who reaches the port" : "asks for a bearer token",
                 labels_phrase(metrics_access_->names), config::metrics_labels_name(cfg_.http.metrics_labels));
  }
  metrics_hook_ = metrics::global().on_collect([this] {
    metrics::BridgeMetrics& m = metrics::bridge_metrics();
    m.connections.set(static_cast<double>(kafka_->tcp().connection_count()));
    m.connections_refused.mirror(static_cast<double>(kafka_->tcp().refused_connections()));
    const net::ServerStats& ts = kafka_->tcp().stats();
    m.connections_closed.labels({"max_connections"}).mirror(static_cast<double>(ts.refused_max_connections));
    m.connections_closed.labels({"max_connections_per_ip"}).mirror(static_cast<double>(ts.refused_per_ip));
    m.connections_closed.labels({"frame_read_timeout"}).mirror(static_cast<double>(ts.frame_read_timeouts));
    m.connections_closed.labels({"idle_timeout"}).mirror(static_cast<double>(ts.idle_timeouts));
    m.connections_closed.labels({"authentication_timeout"}).mirror(static_cast<double>(ts.authentication_timeouts));
    // Clients that do not take their answers ([limits] max_pending_response_bytes{,_total}).
    static metrics::CounterFamily& read_pauses = metrics::global().counter(
        "kib_connection_read_pauses_total",
        "Times a Kafka connection stopped being read because answers its client had not taken passed "
        "max_pending_response_bytes (pending_answers) or, over all connections, max_pending_response_bytes_total "
        "(pending_answers_total).",
        {"reason"});
    static metrics::Gauge& pending_answers =
        metrics::global()
            .gauge("kib_pending_response_bytes",
                   "Memory held by answers not yet taken by their clients, over all Kafka connections.")
            .get();
    read_pauses.labels({"pending_answers"}).mirror(static_cast<double>(ts.read_pauses_pending));
    read_pauses.labels({"pending_answers_total"}).mirror(static_cast<double>(ts.read_pauses_pending_total));
    pending_answers.set(static_cast<double>(ts.pending_response_cost));
    // PLAIN password checks ([sasl] max_pending_password_checks).
    static metrics::CounterFamily& password_checks = metrics::global().counter(
        "kib_sasl_password_checks_total",
        "SASL/PLAIN password checks by outcome: checked (hashed), refused (max_pending_password_checks were under "
        "way), dropped (the connection closed before its turn).",
        {"result"});
    static metrics::Gauge& password_checks_pending =
        metrics::global()
            .gauge("kib_sasl_password_checks_pending", "SASL/PLAIN password checks under way (waiting or hashing).")
            .get();
    if (sasl_) {
      const bridge::PasswordCheckStats& pc = sasl_->password_checks();
      password_checks.labels({"checked"}).mirror(static_cast<double>(pc.checked));
      password_checks.labels({"refused"}).mirror(static_cast<double>(pc.refused));
      password_checks.labels({"dropped"}).mirror(static_cast<double>(pc.dropped));
      password_checks_pending.set(static_cast<double>(pc.pending));
    }
    if (!tls_.empty()) {
      metrics::TlsMetrics& t = metrics::tls_metrics();
      for (const auto& [version, n] : ts.tls_handshakes) t.handshakes.labels({version}).mirror(static_cast<double>(n));
      for (size_t i = 0; i < net::kTlsFailureCount; ++i)
        t.handshake_failures.labels({net::tls_failure_name(static_cast<net::TlsFailure>(i))})
            .mirror(static_cast<double>(ts.tls_handshake_failures[i]));
      t.errors.mirror(static_cast<double>(ts.tls_errors));
      t.certificate_not_after.set(static_cast<double>(tls_.front()->not_after()));
    }
    if (http_) {
      const http::HttpStats& hs = http_->stats();
      m.http_connections_closed.labels({"max_connections"}).mirror(static_cast<double>(hs.refused_max_connections));
      m.http_connections_closed.labels({"max_connections_per_ip"}).mirror(static_cast<double>(hs.refused_per_ip));
      m.http_connections_closed.labels({"timeout"}).mirror(static_cast<double>(hs.timeouts));
    }
    iggy::PoolStats s = iggy_pool_->stats();
    m.iggy_pool_connections.set(static_cast<double>(s.connections));
    m.iggy_pool_connected.set(static_cast<double>(s.connected));
    m.iggy_pool_busy.set(static_cast<double>(s.busy));
    m.iggy_pool_queued.set(static_cast<double>(s.queued));
    m.iggy_login_refused.set(s.login_refused ? 1 : 0);
    m.iggy_unconfirmed_sends.mirror(static_cast<double>(s.unconfirmed_sends));
    m.iggy_unsupported_server.set(s.unsupported_server ? 1 : 0);
    if (const iggy::ServerProfile p = iggy_pool_->server_profile(); p.generation != iggy::ServerGeneration::kUnknown) {
      m.iggy_server_info.clear();
      m.iggy_server_info.labels({p.version, iggy::format_protocol_version(p.protocol),
                                 iggy::server_generation_name(p.generation)})
          .set(1);
    }
    m.iggy_requests.mirror(static_cast<double>(s.submitted));
    m.iggy_request_failures.mirror(static_cast<double>(s.failed));
    m.iggy_reconnects.mirror(static_cast<double>(s.reconnects));
    m.state_write_batches.mirror(static_cast<double>(state_->batches_committed()));
    static metrics::Gauge& fetch_waiters =
        metrics::global().gauge("kib_fetch_waiters", "Fetch requests being read or long-polling for data.").get();
    static metrics::Counter& iggy_cancelled =
        metrics::global()
            .counter("kib_iggy_requests_cancelled_total",
                     "Queued Iggy reads dropped unsent because the Kafka connection they were for closed.")
            .get();
    static metrics::Counter& iggy_share_full =
        metrics::global()
            .counter("kib_iggy_connection_queue_full_total",
                     "Iggy requests refused because their Kafka connection already had "
                     "limits.max_iggy_queue_per_connection queued.")
            .get();
    fetch_waiters.set(static_cast<double>(log_ ? log_->waiting_fetches() : 0));
    static metrics::CounterFamily& delete_segments = metrics::global().counter(
        "kib_delete_segments_total", "DeleteSegments sent to Iggy after DeleteRecords, by result.", {"result"});
    if (log_) {
      delete_segments.labels({"sent"}).mirror(static_cast<double>(log_->segment_deletions().sent));
      delete_segments.labels({"failed"}).mirror(static_cast<double>(log_->segment_deletions().failed));
    }
    // Freed memory given back to the OS when idle (app/memory_release.h; [limits] memory_trim_*).
    static metrics::Counter& memory_trims =
        metrics::global()
            .counter("kib_memory_trims_total",
                     "Times the idle bridge gave freed heap memory back to the OS (malloc_trim).")
            .get();
    static metrics::Counter& memory_released =
        metrics::global()
            .counter("kib_memory_released_bytes_total", "Resident bytes those trims gave back to the OS.")
            .get();
    if (memory_) {
      memory_trims.mirror(static_cast<double>(memory_->stats().trims));
      memory_released.mirror(static_cast<double>(memory_->stats().released_bytes));
    }
    // The produced-batch cache (bridge/log/batch_cache.h; [limits] produced_batch_cache_bytes).
    static metrics::Counter& cache_hits =
        metrics::global()
            .counter("kib_fetch_cache_hits_total",
                     "Partition reads of a Fetch answered from the produced-batch cache, without polling Iggy.")
            .get();
    static metrics::Counter& cache_misses =
        metrics::global()
            .counter("kib_fetch_cache_misses_total",
                     "Partition reads of a Fetch the produced-batch cache could not answer (read from Iggy).")
            .get();
    static metrics::Counter& cache_evictions =
        metrics::global()
            .counter("kib_fetch_cache_evictions_total", "Batches evicted from the produced-batch cache for room.")
            .get();
    static metrics::Gauge& cache_bytes =
        metrics::global()
            .gauge("kib_fetch_cache_bytes", "Bytes the produced-batch cache keeps alive (the request frames its batches lie in).")
            .get();
    if (log_) {
      const bridge::BatchCacheStats& cs = log_->batch_cache().stats();
      cache_hits.mirror(static_cast<double>(cs.hits));
      cache_misses.mirror(static_cast<double>(cs.misses));
      cache_evictions.mirror(static_cast<double>(cs.evictions));
      cache_bytes.set(static_cast<double>(log_->batch_cache().bytes()));
    }
    iggy_cancelled.mirror(static_cast<double>(s.cancelled));
    iggy_share_full.mirror(static_cast<double>(s.owner_queue_full));
    collect_group_metrics();
    // Principals whose data requests were refused for want of an Iggy identity ([principals]).
    static metrics::CounterFamily& principal_refusals = metrics::global().counter(
        "kib_principal_identity_refusals_total",
        "Data requests of a principal refused with TOPIC_AUTHORIZATION_FAILED because it has no Iggy user to run as "
        "([principals] iggy_identity = \"per_principal\"), by reason: unmapped (unmapped = \"refuse\"), "
        "not_created_by_bridge (unmapped = \"create\" found an Iggy user kafka.<name> the bridge did not create), "
        "unproven (whether the bridge created it could not be told yet).",
        {"reason"});
    if (identities_) {
      const bridge::IggyIdentityStats is = identities_->stats();
      principal_refusals.labels({"unmapped"}).mirror(static_cast<double>(is.refused));
      principal_refusals.labels({"not_created_by_bridge"}).mirror(static_cast<double>(is.refused_not_created));
      principal_refusals.labels({"unproven"}).mirror(static_cast<double>(is.refused_unproven));
    }
    // kib_authorization_denied_total{resource_type,operation}: requests refused by an ACL.
    static metrics::CounterFamily& denied = metrics::global().counter(
        "kib_authorization_denied_total",
        "Authorization checks that refused what a client asked for (an ACL or the default rule), by resource "
        "type and operation.",
        {"resource_type", "operation"});
    for (int t = 0; t < security::kResourceTypeCount; ++t)
      for (int o = 0; o < security::kAclOperationCount; ++o) {
        const auto type = static_cast<security::ResourceType>(t);
        const auto op = static_cast<security::AclOperation>(o);
        if (const uint64_t n = authorizer_->denied(type, op))
          denied.labels({security::name(type), security::name(op)}).mirror(static_cast<double>(n));
      }
  });

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

// Readiness needs Iggy: the catalog makes sure the stream exists and reads the topics. If Iggy
// is not reachable yet the bridge keeps serving (requests that need Iggy get retriable
// errors) and retries every second.
void Bridge::start_catalog() {
  catalog_->start([this](Status s) {
    if (stopping_) return;
    if (s) {
      ready_ = true;
      sd_notify(0, "READY=1");
      lag_->start();
      configs_->reapply_topics();  // broker configs changed while the bridge was down
      // Commits decided before a crash are appended, transactions open at it aborted.
      transactions_->recover([] { spdlog::info("transactions: recovery after restart complete"); });
      const iggy::ServerProfile p = iggy_pool_->server_profile();
      spdlog::info("kafka-iggy-bridge ready: Iggy at {} (server {}, protocol {}, {}) stream '{}', {} topics",
                   cfg_.iggy.address.str(), p.version, iggy::format_protocol_version(p.protocol),
                   iggy::server_generation_name(p.generation), cfg_.iggy.stream, catalog_->all().size());
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
  if (log_) log_->stop_waiting();
  if (groups_) groups_->stop();
  if (offsets_) offsets_->stop();
  if (lag_) lag_->stop();
  kafka_->shutdown(cfg_.limits.shutdown_deadline_ms, [this] {
    spdlog::info("shutdown: all Kafka connections closed");
    catalog_retry_.reset();
    if (catalog_) catalog_->stop();
    watchdog_.reset();
    memory_.reset();
    if (http_) http_->close();
    if (identities_) identities_->close({});
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

void Bridge::collect_group_metrics() {
  metrics::BridgeMetrics& m = metrics::bridge_metrics();
  std::map<std::string, int> by_state;
  for (const char* st : {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}) by_state[st] = 0;
  m.group_members.clear();
  for (const auto& g : groups_->list_groups({}, {})) {
    ++by_state[g.state];
    if (size_t n = groups_->member_count(g.group_id); n > 0) m.group_members.labels({g.group_id}).set(static_cast<double>(n));
  }
  for (const auto& [st, n] : by_state) m.groups.labels({st}).set(n);
  m.group_lag.clear();
  m.group_lag_sum.clear();
  std::map<std::string, int64_t> sums;
  for (const auto& l : lag_->lags()) {
    m.group_lag.labels({l.group, l.topic, std::to_string(l.partition)}).set(static_cast<double>(l.lag));
    sums[l.group] += l.lag;
  }
  for (const auto& [group, sum] : sums) m.group_lag_sum.labels({group}).set(static_cast<double>(sum));
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
    for (size_t i = 0; i < x.kafka.listeners.size(); ++i)
      s += x.kafka.listeners[i].str() + "=" + std::string(config::security_protocol_name(x.kafka.listeners[i].protocol)) +
           "@" + x.advertised(i).str() + ",";
    return s;
  };
  needs_restart("[kafka] listeners, advertised addresses", listeners(*next) != listeners(cfg_));
  needs_restart("[kafka] node id/cluster id", next->kafka.node_id != cfg_.kafka.node_id ||
                    next->kafka.cluster_id != cfg_.kafka.cluster_id);
  needs_restart("[iggy]", next->iggy.address.str() != cfg_.iggy.address.str() || next->iggy.username != cfg_.iggy.username ||
                               next->iggy.password != cfg_.iggy.password ||
                               next->iggy.personal_access_token != cfg_.iggy.personal_access_token ||
                               next->iggy.pool_size != cfg_.iggy.pool_size || next->iggy.stream != cfg_.iggy.stream);
  needs_restart("[state] path", next->state.path != cfg_.state.path);
  // [tls]: the files are read again even when their names did not change (a renewed
  // certificate is usually written over the old one).
  if (!tls_.empty()) reload_tls(next->tls);
  // [limits] apply at once: the TCP server takes the connection limits, and the handlers read
  // the decompression budget and the shutdown deadline from cfg_ when they need them.
  const auto &a = cfg_.limits, &b = next->limits;
  auto limit = [](const char* key, uint64_t from, uint64_t to) {
    if (from != to) spdlog::info("SIGHUP: {} {} -> {}", key, from, to);
  };
  limit("[limits] max_frame_bytes", a.max_frame_bytes, b.max_frame_bytes);
  limit("[limits] max_connections", a.max_connections, b.max_connections);
  limit("[limits] idle_timeout_ms", a.idle_timeout_ms, b.idle_timeout_ms);
  limit("[limits] max_pending_response_bytes", a.max_pending_response_bytes, b.max_pending_response_bytes);
  limit("[limits] max_pending_response_bytes_total", a.max_pending_response_bytes_total,
        b.max_pending_response_bytes_total);
  limit("[limits] max_response_bytes", a.max_response_bytes, b.max_response_bytes);
  limit("[limits] max_inflight_requests", a.max_inflight_requests, b.max_inflight_requests);
  limit("[limits] max_inflight_request_bytes", a.max_inflight_request_bytes, b.max_inflight_request_bytes);
  limit("[limits] max_decompressed_bytes_per_request", a.max_decompressed_bytes_per_request, b.max_decompressed_bytes_per_request);
  limit("[limits] shutdown_deadline_ms", a.shutdown_deadline_ms, b.shutdown_deadline_ms);
  limit("[limits] frame_read_timeout_ms", a.frame_read_timeout_ms, b.frame_read_timeout_ms);
  limit("[limits] max_connections_per_ip", a.max_connections_per_ip, b.max_connections_per_ip);
  limit("[limits] fetch_max_bytes", a.fetch_max_bytes, b.fetch_max_bytes);
  limit("[limits] fetch_max_wait_ms", a.fetch_max_wait_ms, b.fetch_max_wait_ms);
  limit("[limits] max_iggy_queue_per_connection", a.max_iggy_queue_per_connection, b.max_iggy_queue_per_connection);
  limit("[limits] authentication_timeout_ms", a.authentication_timeout_ms, b.authentication_timeout_ms);
  limit("[limits] max_unauthenticated_frame_bytes", a.max_unauthenticated_frame_bytes, b.max_unauthenticated_frame_bytes);
  limit("[limits] failed_authentication_delay_ms", a.failed_authentication_delay_ms, b.failed_authentication_delay_ms);
  limit("[limits] memory_trim_interval_ms", a.memory_trim_interval_ms, b.memory_trim_interval_ms);
  limit("[limits] memory_trim_min_free_bytes", a.memory_trim_min_free_bytes, b.memory_trim_min_free_bytes);
  if (memory_) memory_->configure(b.memory_trim_interval_ms, b.memory_trim_min_free_bytes);
  if (next->sasl.max_pending_password_checks != cfg_.sasl.max_pending_password_checks) {
    spdlog::info("SIGHUP: [sasl] max_pending_password_checks {} -> {}", cfg_.sasl.max_pending_password_checks,
                 next->sasl.max_pending_password_checks);
    if (sasl_) sasl_->set_max_pending_password_checks(next->sasl.max_pending_password_checks);
    cfg_.sasl.max_pending_password_checks = next->sasl.max_pending_password_checks;
  }
  iggy_pool_->set_max_queue_per_owner(b.max_iggy_queue_per_connection);
  cfg_.limits = next->limits;
  kafka_->tcp().set_limits(net::server_limits(cfg_.limits));
  // Topic auto-creation and the options of topics created from now on are read from cfg_
  // whenever a topic is created.
  const auto &k = cfg_.kafka, &nk = next->kafka;
  limit("[kafka] default_partitions", static_cast<uint64_t>(k.default_partitions), static_cast<uint64_t>(nk.default_partitions));
  limit("[kafka] auto_create_topics", k.auto_create_topics, nk.auto_create_topics);
  limit("[topics] enforce_fsync", cfg_.topics.enforce_fsync, next->topics.enforce_fsync);
  limit("[topics] messages_required_to_save", cfg_.topics.messages_required_to_save, next->topics.messages_required_to_save);
  limit("[topics] segment_bytes", cfg_.topics.segment_bytes, next->topics.segment_bytes);
  // The broker's log.retention.ms/bytes (STATIC_BROKER_CONFIG): topics without their own
  // retention get the new value now.
  if (cfg_.topics.retention_ms != next->topics.retention_ms)
    spdlog::info("SIGHUP: [topics] retention_ms {} -> {}", cfg_.topics.retention_ms, next->topics.retention_ms);
  if (cfg_.topics.retention_bytes != next->topics.retention_bytes)
    spdlog::info("SIGHUP: [topics] retention_bytes {} -> {}", cfg_.topics.retention_bytes, next->topics.retention_bytes);
  const bool retention_changed = cfg_.topics.retention_ms != next->topics.retention_ms ||
                                 cfg_.topics.retention_bytes != next->topics.retention_bytes;
  cfg_.kafka.auto_create_topics = nk.auto_create_topics;
  cfg_.kafka.default_partitions = nk.default_partitions;
  cfg_.topics = next->topics;
  if (retention_changed && ready_) configs_->reapply_topics();
  const auto &g = cfg_.groups, &ng = next->groups;
  needs_restart("[groups]", g.initial_rebalance_delay_ms != ng.initial_rebalance_delay_ms ||
                                g.min_session_timeout_ms != ng.min_session_timeout_ms ||
                                g.max_session_timeout_ms != ng.max_session_timeout_ms || g.max_size != ng.max_size ||
                                g.offsets_retention_minutes != ng.offsets_retention_minutes ||
                                g.offset_metadata_max_bytes != ng.offset_metadata_max_bytes ||
                                g.offsets_topic_partitions != ng.offsets_topic_partitions);
  needs_restart("[http] listen", next->http.listen != cfg_.http.listen);
  limit("[http] max_connections_per_ip", cfg_.http.max_connections_per_ip, next->http.max_connections_per_ip);
  cfg_.http.max_connections_per_ip = next->http.max_connections_per_ip;
  if (http_) http_->set_limits(http::http_limits(cfg_.http));
  // [http] metrics_labels and metrics_bearer_token_file apply from the next scrape. The file is
  // read again even when its name did not change: rotating the token is rewriting the file.
  if (http_ && metrics_access_) {
    config::HttpConfig h = cfg_.http;  // with the running listen: "auto" depends on it
    h.metrics_labels = next->http.metrics_labels;
    h.metrics_bearer_token_file = next->http.metrics_bearer_token_file;
    std::string warning;
    auto access = http::load_metrics_access(h, &warning);
    if (!access) {
      spdlog::error("SIGHUP: /metrics keeps its previous token and labels: {}", access.error().message);
    } else {
      if (!warning.empty()) spdlog::warn("SIGHUP: {}", warning);
      const http::MetricsAccess& was = *metrics_access_;
      if (access->bearer_token != was.bearer_token)
        spdlog::info("SIGHUP: /metrics {}", access->bearer_token.empty() ? "no longer asks for a bearer token"
                                            : was.bearer_token.empty() ? "now asks for a bearer token"
                                                                       : "asks for the new bearer token");
      if (access->names != was.names)
        spdlog::info("SIGHUP: /metrics labels {} from now on ([http] metrics_labels = \"{}\")",
                     labels_phrase(access->names), config::metrics_labels_name(h.metrics_labels));
      *metrics_access_ = std::move(*access);
      cfg_.http.metrics_labels = h.metrics_labels;
      cfg_.http.metrics_bearer_token_file = h.metrics_bearer_token_file;
    }
  }
  // [authorization] applies at once: the next check uses it (Kafka needs a broker restart).
  {
    const auto &a = cfg_.authorization, &na = next->authorization;
    if (a.enabled != na.enabled) spdlog::warn("SIGHUP: [authorization] enabled {} -> {}", a.enabled, na.enabled);
    if (a.super_users != na.super_users) spdlog::info("SIGHUP: [authorization] super_users changed");
    limit("[authorization] allow_everyone_if_no_acl_found", a.allow_everyone_if_no_acl_found,
          na.allow_everyone_if_no_acl_found);
    limit("[authorization] max_acls", a.max_acls, na.max_acls);
    limit("[authorization] max_acl_filters_per_request", a.max_acl_filters_per_request, na.max_acl_filters_per_request);
    cfg_.authorization = na;
    authorizer_->configure(cfg_.authorization);
  }
  spdlog::info("SIGHUP: configuration reloaded from {}", config_path_);
  sd_notify(0, "READY=1");
}

}  // namespace kib
