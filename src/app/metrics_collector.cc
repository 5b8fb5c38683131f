#include "app/metrics_collector.h"

#include <map>
#include <string>

#include "app/consumer_lag.h"
#include "app/memory_release.h"
#include "app/service_graph.h"
#include "bridge/cleaner/cleaner.h"
#include "bridge/groups/group_coordinator.h"
#include "bridge/log/batch_cache.h"
#include "bridge/log/held_appends.h"
#include "bridge/log/partition_log.h"
#include "bridge/security/authorizer.h"
#include "bridge/security/iggy_identities.h"
#include "bridge/security/sasl_authenticator.h"
#include "http/http_server.h"
#include "iggy/pool.h"
#include "metrics/bridge_metrics.h"
#include "metrics/service_metrics.h"
#include "net/tls.h"
#include "server/kafka_server.h"
#include "state/state_store.h"

namespace kib {
namespace {

double d(uint64_t n) { return static_cast<double>(n); }

// The Kafka server: connections, the limits that closed them, the bounds on pending answers, TLS.
void collect_kafka_server(const kafka::KafkaServer& kafka,
                          const std::vector<std::shared_ptr<const net::TlsContext>>* tls) {
  metrics::BridgeMetrics& m = metrics::bridge_metrics();
  const net::TcpServer& tcp = kafka.tcp();
  m.connections.set(d(tcp.connection_count()));
  m.connections_refused.mirror(d(tcp.refused_connections()));
  const net::ServerStats ts = tcp.stats();
  m.connections_closed.labels({"max_connections"}).mirror(d(ts.refused_max_connections));
  m.connections_closed.labels({"max_connections_per_ip"}).mirror(d(ts.refused_per_ip));
  m.connections_closed.labels({"frame_read_timeout"}).mirror(d(ts.frame_read_timeouts));
  m.connections_closed.labels({"idle_timeout"}).mirror(d(ts.idle_timeouts));
  m.connections_closed.labels({"authentication_timeout"}).mirror(d(ts.authentication_timeouts));
  // Clients that do not take their answers ([limits] max_pending_response_bytes{,_total}).
  metrics::ServerBoundMetrics& b = metrics::server_bound_metrics();
  b.read_pauses.labels({"pending_answers"}).mirror(d(ts.read_pauses_pending));
  b.read_pauses.labels({"pending_answers_total"}).mirror(d(ts.read_pauses_pending_total));
  b.pending_response_bytes.set(d(ts.pending_response_cost));
  if (!tls || tls->empty()) return;
  metrics::TlsMetrics& t = metrics::tls_metrics();
  for (const auto& [version, n] : ts.tls_handshakes) t.handshakes.labels({version}).mirror(d(n));
  for (size_t i = 0; i < net::kTlsFailureCount; ++i)
    t.handshake_failures.labels({net::tls_failure_name(static_cast<net::TlsFailure>(i))})
        .mirror(d(ts.tls_handshake_failures[i]));
  t.errors.mirror(d(ts.tls_errors));
  t.certificate_not_after.set(static_cast<double>(tls->front()->not_after()));
}

void collect_http(const http::HttpServer& http) {
  metrics::BridgeMetrics& m = metrics::bridge_metrics();
  const http::HttpStats hs = http.stats();
  m.http_connections_closed.labels({"max_connections"}).mirror(d(hs.refused_max_connections));
  m.http_connections_closed.labels({"max_connections_per_ip"}).mirror(d(hs.refused_per_ip));
  m.http_connections_closed.labels({"timeout"}).mirror(d(hs.timeouts));
}

// The [iggy] pool and the state store behind the services.
void collect_iggy_and_state(const iggy::IggyPool& pool, const state::StateStore& state) {
  metrics::BridgeMetrics& m = metrics::bridge_metrics();
  const iggy::PoolStats s = pool.stats();
  m.iggy_pool_connections.set(d(s.connections));
  m.iggy_pool_connected.set(d(s.connected));
  m.iggy_pool_busy.set(d(s.busy));
  m.iggy_pool_queued.set(d(s.queued));
  m.iggy_login_refused.set(s.login_refused ? 1 : 0);
  m.iggy_unconfirmed_sends.mirror(d(s.unconfirmed_sends));
  m.iggy_unsupported_server.set(s.unsupported_server ? 1 : 0);
  if (const iggy::ServerProfile p = pool.server_profile(); p.generation != iggy::ServerGeneration::kUnknown) {
    m.iggy_server_info.clear();
    m.iggy_server_info
        .labels({p.version, iggy::format_protocol_version(p.protocol), iggy::server_generation_name(p.generation)})
        .set(1);
  }
  m.iggy_requests.mirror(d(s.submitted));
  m.iggy_request_failures.mirror(d(s.failed));
  m.iggy_reconnects.mirror(d(s.reconnects));
  metrics::LogMetrics& l = metrics::log_metrics();
  l.iggy_requests_cancelled.mirror(d(s.cancelled));
  l.iggy_connection_queue_full.mirror(d(s.owner_queue_full));
  m.state_write_batches.mirror(d(state.batches_committed()));
}

// The partition log: long polls, DeleteRecords' segment deletions, the produced-batch cache.
void collect_log(const bridge::PartitionLog& log) {
  metrics::LogMetrics& l = metrics::log_metrics();
  l.fetch_waiters.set(d(log.waiting_fetches()));
  l.delete_segments.labels({"sent"}).mirror(d(log.segment_deletions().sent));
  l.delete_segments.labels({"failed"}).mirror(d(log.segment_deletions().failed));
  const bridge::BatchCacheStats& cs = log.batch_cache().stats();
  l.cache_hits.mirror(d(cs.hits));
  l.cache_misses.mirror(d(cs.misses));
  l.cache_evictions.mirror(d(cs.evictions));
  l.cache_bytes.set(d(log.batch_cache().bytes()));
  const bridge::HeldStats& hs = log.held_stats();
  l.offset_shifts.mirror(d(hs.offset_shifts));
  l.held_placeholders.mirror(d(hs.placeholders));
  l.held_refused.mirror(d(hs.refused_full));
  l.keyless_compacted.mirror(d(log.keyless_compacted_records()));
}

// The compaction cleaner: its totals, and per compacted partition (up to max_metric_partitions)
// the dirty ratio and the cleaner point.
void collect_compaction(const bridge::compaction::Cleaner& cleaner) {
  const uint32_t max_partitions = cleaner.max_metric_partitions();
  metrics::CompactionMetrics& m = metrics::compaction_metrics();
  const bridge::compaction::CleanerStats& s = cleaner.stats();
  m.passes.labels({"committed"}).mirror(d(s.passes_committed));
  m.passes.labels({"failed"}).mirror(d(s.passes_failed));
  m.passes.labels({"abandoned"}).mirror(d(s.passes_abandoned));
  m.passes.labels({"recovered"}).mirror(d(s.passes_recovered));
  m.bytes_read.mirror(d(s.bytes_read));
  m.bytes_written.mirror(d(s.bytes_written));
  m.records_removed.mirror(d(s.records_removed));
  m.barrier_repairs.mirror(d(s.barrier_repairs));
  m.orphans_deleted.mirror(d(s.orphans_deleted));
  m.running.set(d(s.running));
  m.last_pass_seconds.set(s.last_pass_seconds);
  m.dirty_ratio.clear();
  m.cleaner_point.clear();
  const auto parts = cleaner.status();
  m.partitions.set(d(parts.size()));
  size_t shown = 0;
  for (const auto& p : parts) {
    if (shown++ >= max_partitions) break;
    const std::string partition = std::to_string(p.partition);
    m.dirty_ratio.labels({p.topic, partition}).set(p.dirty_ratio);
    m.cleaner_point.labels({p.topic, partition}).set(d(p.cleaner_point));
  }
}

// PLAIN checks, principals refused an Iggy identity, ACL denials.
void collect_security(const app::ServiceGraph& g) {
  metrics::ServerBoundMetrics& b = metrics::server_bound_metrics();
  const bridge::PasswordCheckStats& pc = g.sasl().password_checks();
  b.password_checks.labels({"checked"}).mirror(d(pc.checked));
  b.password_checks.labels({"refused"}).mirror(d(pc.refused));
  b.password_checks.labels({"dropped"}).mirror(d(pc.dropped));
  b.password_checks_pending.set(d(pc.pending));
  metrics::SecurityMetrics& s = metrics::security_metrics();
  const bridge::IggyIdentityStats is = g.identities().stats();
  s.principal_identity_refusals.labels({"unmapped"}).mirror(d(is.refused));
  s.principal_identity_refusals.labels({"not_created_by_bridge"}).mirror(d(is.refused_not_created));
  s.principal_identity_refusals.labels({"unproven"}).mirror(d(is.refused_unproven));
  for (int t = 0; t < security::kResourceTypeCount; ++t)
    for (int o = 0; o < security::kAclOperationCount; ++o) {
      const auto type = static_cast<security::ResourceType>(t);
      const auto op = static_cast<security::AclOperation>(o);
      if (const uint64_t n = g.authorizer().denied(type, op))
        s.authorization_denied.labels({security::name(type), security::name(op)}).mirror(d(n));
    }
}

// Groups by state, their members, and their lag (cleared and refilled per scrape).
void collect_groups(const bridge::GroupCoordinator& groups, const app::ConsumerLagMonitor* lag) {
  metrics::BridgeMetrics& m = metrics::bridge_metrics();
  std::map<std::string, int> by_state;
  for (const char* st : {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}) by_state[st] = 0;
  m.group_members.clear();
  for (const auto& g : groups.list_groups({}, {})) {
    ++by_state[g.state];
    if (size_t n = groups.member_count(g.group_id); n > 0) m.group_members.labels({g.group_id}).set(d(n));
  }
  for (const auto& [st, n] : by_state) m.groups.labels({st}).set(n);
  m.group_lag.clear();
  m.group_lag_sum.clear();
  if (!lag) return;
  std::map<std::string, int64_t> sums;
  for (const auto& l : lag->lags()) {
    m.group_lag.labels({l.group, l.topic, std::to_string(l.partition)}).set(static_cast<double>(l.lag));
    sums[l.group] += l.lag;
  }
  for (const auto& [group, sum] : sums) m.group_lag_sum.labels({group}).set(static_cast<double>(sum));
}

}  // namespace

void collect_metrics(const MetricSources& s) {
  if (s.kafka) collect_kafka_server(*s.kafka, s.tls);
  if (s.http) collect_http(*s.http);
  if (s.iggy && s.state) collect_iggy_and_state(*s.iggy, *s.state);
  if (s.memory) {
    metrics::MemoryMetrics& mm = metrics::memory_metrics();
    mm.trims.mirror(d(s.memory->stats().trims));
    mm.released_bytes.mirror(d(s.memory->stats().released_bytes));
  }
  if (!s.services) return;
  collect_log(s.services->log());
  collect_security(*s.services);
  collect_compaction(s.services->cleaner());
  collect_groups(s.services->groups(), s.lag);
}

}  // namespace kib
