#include "metrics/bridge_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/guard.h"
#include "common/version.h"

namespace kib::metrics {
namespace {

// process_* metrics from /proc/self, as the Prometheus client libraries define them.
struct ProcessMetrics {
  Gauge& start_time;
  Gauge& resident_memory;
  Gauge& virtual_memory;
  Gauge& open_fds;
  Gauge& max_fds;
  Counter& cpu_seconds;

  void collect() {
    if (auto m = process_memory()) {
      virtual_memory.set(static_cast<double>(m->virtual_bytes));
      resident_memory.set(static_cast<double>(m->resident_bytes));
    }
    rusage ru{};
    if (getrusage(RUSAGE_SELF, &ru) == 0)
      cpu_seconds.mirror(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    if (DIR* d = opendir("/proc/self/fd")) {
      int n = 0;
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') ++n;
      closedir(d);
      open_fds.set(n - 1);  // minus the directory's own descriptor
    }
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) max_fds.set(static_cast<double>(rl.rlim_cur));
  }
};

// When this object file's static initialisers ran: at program start, before main(). (The
// unit's ProcSubset=pid hides /proc/uptime, which /proc/self/stat's start time would need.)
const double kProcessStartTime = [] {
  timeval now{};
  gettimeofday(&now, nullptr);
  return static_cast<double>(now.tv_sec) + now.tv_usec / 1e6;
}();

}  // namespace

std::optional<ProcessMemory> process_memory() {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::ifstream statm("/proc/self/statm");
  uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return std::nullopt;
  return ProcessMemory{size_pages * page, resident_pages * page};
}

namespace {

KafkaMetrics kafka_metrics(Registry& r) {
  return KafkaMetrics{
      r.counter("kib_requests_total", "Kafka requests received, by API and version.", {"api", "version"}),
      r.counter("kib_request_errors_total",
                "Kafka requests that ended in an error, by API and Kafka error name (or the reason the "
                "connection was closed).",
                {"api", "code"}),
      r.histogram("kib_request_duration_seconds",
                  "Time from a Kafka request's arrival to its response being queued, by API.", {"api"},
                  latency_buckets()),
      r.counter("kib_bytes_received_total", "Bytes of Kafka request frames received, length prefix included.").get(),
      r.counter("kib_bytes_sent_total", "Bytes of Kafka responses sent, length prefix included.").get(),
      r.gauge("kib_connections", "Open Kafka client connections.").get(),
      r.counter("kib_connections_refused_total",
                "Kafka connections closed at accept because of limits.max_connections or "
                "limits.max_connections_per_ip.")
          .get(),
      r.counter("kib_connections_closed_total",
                "Kafka connections the bridge closed because of a limit, by reason: max_connections, "
                "max_connections_per_ip, frame_read_timeout, idle_timeout, authentication_timeout, "
                "sasl_unauthenticated_request (a request other than ApiVersions and SASL before authentication), "
                "sasl_authentication_failed, sasl_session_expired, sasl_illegal_state.",
                {"reason"}),
      r.counter("kib_sasl_authentications_total",
                "SASL exchanges that ended, by mechanism and result: success, failure, reauthentication_success, "
                "reauthentication_failure (KIP-368).",
                {"mechanism", "result"}),
  };
}

HttpMetrics http_metrics(Registry& r) {
  return HttpMetrics{
      r.counter("kib_http_connections_closed_total",
                "Connections to the HTTP listener closed because of a limit, by reason: max_connections, "
                "max_connections_per_ip, timeout (no whole request, or the response not read, within 5 s).",
                {"reason"}),
      r.counter("kib_http_requests_refused_total",
                "Requests to the HTTP listener refused, by reason: unauthorized (/metrics without the bearer token "
                "of [http] metrics_bearer_token_file).",
                {"reason"}),
  };
}

IggyMetrics iggy_metrics(Registry& r) {
  return IggyMetrics{
      r.gauge("kib_iggy_pool_connections", "Configured connections to Iggy (iggy.pool_size).").get(),
      r.gauge("kib_iggy_pool_connected", "Connections to Iggy that are logged in.").get(),
      r.gauge("kib_iggy_pool_busy", "Connections to Iggy with a request in flight.").get(),
      r.gauge("kib_iggy_pool_queued", "Iggy requests waiting for a free connection.").get(),
      r.gauge("kib_iggy_login_refused", "1 when Iggy refused the last login (bad credentials or version).").get(),
      r.counter("kib_iggy_requests_total", "Requests sent to Iggy.").get(),
      r.counter("kib_iggy_request_failures_total", "Requests to Iggy that failed (Iggy error or transport).").get(),
      r.counter("kib_iggy_reconnects_total", "Successful logins to Iggy after a connection dropped.").get(),
      r.gauge("kib_iggy_server_info",
              "1 for the Iggy server the bridge is logged in to: its version, wire protocol and generation "
              "(edge = 0.9.0-edge.N, release = 0.9.0 and later 0.9.x).",
              {"version", "protocol", "generation"}),
      r.counter("kib_iggy_unconfirmed_sends_total",
                "SendMessages that Iggy answered without a confirmation (an empty reply from a release server, or "
                "a malformed one); each failed its Produce with a retriable error instead of being acknowledged.")
          .get(),
      r.gauge("kib_iggy_unsupported_server",
              "1 when every Iggy connection stopped because the server speaks a protocol the bridge does not.")
          .get(),
  };
}

ProcessStateMetrics process_state_metrics(Registry& r) {
  return ProcessStateMetrics{
      r.counter("kib_state_write_batches_total",
                "State database write transactions committed (one fsync each, unless all its writes are "
                "recoverable).")
          .get(),
      r.histogram("kib_state_write_batch_duration_seconds", "Time to run and commit one state database write batch.",
                  {}, latency_buckets()),
      r.gauge("kib_ready", "1 when the bridge is ready (Iggy reachable, state open), as /readyz answers.").get(),
      r.gauge("kib_build_info", "Always 1; the version label names the bridge build.", {"version"}),
      r.counter("kib_callback_exceptions_total",
                "Exceptions caught at a callback boundary (libuv, Iggy completion, state store); each failed "
                "one request or closed one connection instead of ending the process.",
                {"boundary"}),
  };
}

GroupMetrics group_metrics(Registry& r) {
  return GroupMetrics{
      r.gauge("kib_groups", "Consumer groups by state.", {"state"}),
      // Group ids and topic names are the clients' (ListGroups and Metadata show them only to
      // principals allowed to describe them); a partition number means nothing without its topic.
      r.gauge("kib_group_members", "Members of each consumer group that has any.", {"group"}, {"group"}),
      r.gauge("kib_group_lag",
              "Consumer lag: high watermark minus committed offset, per group and partition (watermarks refreshed "
              "from Iggy every 10 s).",
              {"group", "topic", "partition"}, {"group", "topic", "partition"}),
      r.gauge("kib_group_lag_sum", "Consumer lag summed over a group's partitions.", {"group"}, {"group"}),
  };
}

}  // namespace

BridgeMetrics& bridge_metrics() {
  static BridgeMetrics* m = [] {
    Registry& r = global();
    auto* b = new BridgeMetrics{kafka_metrics(r), http_metrics(r), iggy_metrics(r), process_state_metrics(r),
                                group_metrics(r)};
    b->build_info.labels({kBridgeVersion}).set(1);
    b->http_requests_refused.labels({"unauthorized"});  // 0 until the first refusal, so alerts see the series

    static ProcessMetrics process{
        r.gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.").get(),
        r.gauge("process_resident_memory_bytes", "Resident memory size in bytes.").get(),
        r.gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.").get(),
        r.gauge("process_open_fds", "Number of open file descriptors.").get(),
        r.gauge("process_max_fds", "Maximum number of open file descriptors.").get(),
        r.counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.").get(),
    };
    process.start_time.set(kProcessStartTime);
    static CollectHook hook = r.on_collect([] { process.collect(); });
    static CollectHook guards = r.on_collect([b] {
      for (size_t i = 0; i < guard::kBoundaryCount; ++i) {
        auto boundary = static_cast<guard::Boundary>(i);
        b->callback_exceptions.labels({guard::boundary_name(boundary)}).mirror(static_cast<double>(guard::caught(boundary)));
      }
    });
    return b;
  }();
  return *m;
}

void record_frame_received(size_t frame_bytes) { bridge_metrics().bytes_received.inc(static_cast<double>(frame_bytes)); }

void record_request(std::string_view api, int16_t version) {
  bridge_metrics().requests.labels({api, std::to_string(version)}).inc();
}

void record_request_error(std::string_view api, std::string_view code) {
  bridge_metrics().request_errors.labels({api, code}).inc();
}

void record_sasl_authentication(std::string_view mechanism, std::string_view result) {
  bridge_metrics().sasl_authentications.labels({mechanism, result}).inc();
}

void record_connection_closed(std::string_view reason) { bridge_metrics().connections_closed.labels({reason}).inc(); }

void record_response(std::string_view api, std::chrono::steady_clock::duration took, size_t response_bytes) {
  BridgeMetrics& m = bridge_metrics();
  m.request_duration.labels({api}).observe(std::chrono::duration<double>(took).count());
  m.bytes_sent.inc(static_cast<double>(response_bytes));
}

}  // namespace kib::metrics

namespace kib::metrics {

TlsMetrics& tls_metrics() {
  static TlsMetrics* m = [] {
    Registry& r = global();
    return new TlsMetrics{
        r.counter("kib_tls_handshakes_total", "TLS handshakes completed on the SSL and SASL_SSL listeners, by version.",
                  {"version"}),
        r.counter("kib_tls_handshake_failures_total",
                  "TLS handshakes that failed (the connection was closed), by reason: not_tls, protocol_version, "
                  "no_shared_cipher, no_client_certificate, client_certificate_rejected, peer_alert, peer_closed, "
                  "timeout, principal_mapping, other.",
                  {"reason"}),
        r.counter("kib_tls_errors_total", "Connections closed because of a TLS error after the handshake.").get(),
        r.counter("kib_tls_context_reloads_total",
                  "SIGHUP reloads of the [tls] certificate, key and CA files, by result (ok, failed: the previous "
                  "files stay in use).",
                  {"result"}),
        r.gauge("kib_tls_certificate_not_after_seconds",
                "Expiry (notAfter, seconds since the epoch) of the server certificate new TLS connections get.")
            .get(),
    };
  }();
  return *m;
}

}  // namespace kib::metrics
