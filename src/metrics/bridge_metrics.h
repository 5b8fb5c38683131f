// The bridge's own metrics (kib_ prefix) on the global registry, and the process_* metrics
// every Prometheus exporter has. Names and meanings are listed in docs/operations.md.
//
// The Kafka dispatcher counts requests with the record_* functions; values owned by
// loop-only objects (Iggy pool, TCP server, state store) are copied in at scrape time by a
// collect hook the bridge registers (see Registry::on_collect).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "metrics/metrics.h"

namespace kib::metrics {

// The families, by area; BridgeMetrics is all of them (m.requests, m.iggy_pool_busy, ...).
struct KafkaMetrics {
  CounterFamily& requests;              // kib_requests_total{api,version}
  CounterFamily& request_errors;        // kib_request_errors_total{api,code}
  HistogramFamily& request_duration;    // kib_request_duration_seconds{api}
  Counter& bytes_received;              // kib_bytes_received_total (Kafka frames incl. length prefix)
  Counter& bytes_sent;                  // kib_bytes_sent_total
  Gauge& connections;                   // kib_connections
  Counter& connections_refused;         // kib_connections_refused_total
  CounterFamily& connections_closed;    // kib_connections_closed_total{reason} (by a limit)
  CounterFamily& sasl_authentications;  // kib_sasl_authentications_total{mechanism,result}
};
struct HttpMetrics {
  CounterFamily& http_connections_closed;  // kib_http_connections_closed_total{reason}
  CounterFamily& http_requests_refused;    // kib_http_requests_refused_total{reason}
};
struct IggyMetrics {
  Gauge& iggy_pool_connections;         // kib_iggy_pool_connections (configured)
  Gauge& iggy_pool_connected;           // kib_iggy_pool_connected
  Gauge& iggy_pool_busy;                // kib_iggy_pool_busy
  Gauge& iggy_pool_queued;              // kib_iggy_pool_queued
  Gauge& iggy_login_refused;            // kib_iggy_login_refused (0/1)
  Counter& iggy_requests;               // kib_iggy_requests_total
  Counter& iggy_request_failures;       // kib_iggy_request_failures_total
  Counter& iggy_reconnects;             // kib_iggy_reconnects_total
  GaugeFamily& iggy_server_info;        // kib_iggy_server_info{version,protocol,generation} (1 = current)
  Counter& iggy_unconfirmed_sends;      // kib_iggy_unconfirmed_sends_total
  Gauge& iggy_unsupported_server;       // kib_iggy_unsupported_server (0/1)
};
struct ProcessStateMetrics {
  Counter& state_write_batches;         // kib_state_write_batches_total
  HistogramFamily& state_write_batch_duration;  // kib_state_write_batch_duration_seconds
  Gauge& ready;                         // kib_ready (0/1, what /readyz answers)
  GaugeFamily& build_info;              // kib_build_info{version}
  CounterFamily& callback_exceptions;   // kib_callback_exceptions_total{boundary} (common/guard.h)
};
struct GroupMetrics {
  GaugeFamily& groups;                  // kib_groups{state}
  // The next three carry client-named labels (Registry::render(ClientNames::kRedacted) sums them).
  GaugeFamily& group_members;           // kib_group_members{group} (cleared and refilled per scrape)
  GaugeFamily& group_lag;               // kib_group_lag{group,topic,partition} (idem)
  GaugeFamily& group_lag_sum;           // kib_group_lag_sum{group} (idem)
};
struct BridgeMetrics : KafkaMetrics, HttpMetrics, IggyMetrics, ProcessStateMetrics, GroupMetrics {};

// Registers on first use (on global()).
BridgeMetrics& bridge_metrics();

// The process's size from /proc/self/statm, in bytes; nullopt when it cannot be read.
struct ProcessMemory {
  uint64_t virtual_bytes = 0;
  uint64_t resident_bytes = 0;
};
std::optional<ProcessMemory> process_memory();

// One Kafka frame read (length prefix included), whatever becomes of it.
void record_frame_received(size_t frame_bytes);
// One Kafka request of a served API and version, handed to its handler.
void record_request(std::string_view api, int16_t version);
// One request that ended in an error: `code` is the Kafka error name (e.g. "UNKNOWN_TOPIC_OR_PARTITION")
// or, for requests the bridge refused by closing the connection, "unsupported_version",
// "malformed_request", "internal_error".
void record_request_error(std::string_view api, std::string_view code);
// One SASL exchange that ended (docs/security.md "SASL"): `result` is "success", "failure",
// "reauthentication_success" or "reauthentication_failure".
void record_sasl_authentication(std::string_view mechanism, std::string_view result);
// A Kafka connection the bridge closed for a reason the TCP server does not count itself
// (kib_connections_closed_total{reason}), e.g. "sasl_unauthenticated_request".
void record_connection_closed(std::string_view reason);
// One response written (or, for acks=0, dropped: response_bytes 0).
void record_response(std::string_view api, std::chrono::steady_clock::duration took, size_t response_bytes);

}  // namespace kib::metrics

namespace kib::metrics {

// TLS on the SSL and SASL_SSL listeners (docs/security.md "TLS"); copied in at scrape time from
// the TCP server's counters and the current TLS context.
struct TlsMetrics {
  CounterFamily& handshakes;          // kib_tls_handshakes_total{version}
  CounterFamily& handshake_failures;  // kib_tls_handshake_failures_total{reason}
  Counter& errors;                    // kib_tls_errors_total
  CounterFamily& context_reloads;     // kib_tls_context_reloads_total{result}
  Gauge& certificate_not_after;       // kib_tls_certificate_not_after_seconds
};
TlsMetrics& tls_metrics();

}  // namespace kib::metrics
