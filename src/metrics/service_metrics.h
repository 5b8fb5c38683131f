// The metric families of the bridge's services and of the Kafka server's bounds, copied in at
// scrape time from their stats by app/metrics_collector.cc. Names and meanings are listed in
// docs/operations.md; each family is registered once, on first use, on global().
#pragma once

#include "metrics/metrics.h"

namespace kib::metrics {

// The Kafka server's bounds (docs/security.md "Bounds against hostile clients").
struct ServerBoundMetrics {
  CounterFamily& read_pauses;              // kib_connection_read_pauses_total{reason}
  Gauge& pending_response_bytes;           // kib_pending_response_bytes
  CounterFamily& password_checks;          // kib_sasl_password_checks_total{result}
  Gauge& password_checks_pending;          // kib_sasl_password_checks_pending
};
ServerBoundMetrics& server_bound_metrics();

// The partition log and the Iggy pool's queues.
struct LogMetrics {
  Gauge& fetch_waiters;                    // kib_fetch_waiters
  Counter& iggy_requests_cancelled;        // kib_iggy_requests_cancelled_total
  Counter& iggy_connection_queue_full;     // kib_iggy_connection_queue_full_total
  CounterFamily& delete_segments;          // kib_delete_segments_total{result}
  Counter& cache_hits;                     // kib_fetch_cache_hits_total
  Counter& cache_misses;                   // kib_fetch_cache_misses_total
  Counter& cache_evictions;                // kib_fetch_cache_evictions_total
  Gauge& cache_bytes;                      // kib_fetch_cache_bytes
  Counter& offset_shifts;                  // kib_transaction_offset_shifts_total
  Counter& held_placeholders;              // kib_held_placeholders_total
  Counter& held_refused;                   // kib_held_refused_total
  Counter& keyless_compacted;              // kib_produce_keyless_compacted_total
};
LogMetrics& log_metrics();

// The compaction cleaner (bridge/cleaner/cleaner.h, docs/compaction.md).
struct CompactionMetrics {
  CounterFamily& passes;                   // kib_compaction_passes_total{result}
  Counter& bytes_read;                     // kib_compaction_bytes_read_total
  Counter& bytes_written;                  // kib_compaction_bytes_written_total
  Counter& records_removed;                // kib_compaction_records_removed_total
  Counter& barrier_repairs;                // kib_compaction_barrier_repairs_total
  Counter& orphans_deleted;                // kib_compaction_orphan_generations_deleted_total
  Gauge& running;                          // kib_compaction_passes_running
  Gauge& last_pass_seconds;                // kib_compaction_last_pass_seconds
  GaugeFamily& dirty_ratio;                // kib_compaction_dirty_ratio{topic,partition}
  GaugeFamily& cleaner_point;              // kib_compaction_cleaner_point{topic,partition}
  Gauge& partitions;                       // kib_compaction_partitions
};
CompactionMetrics& compaction_metrics();

// Memory given back to the OS while idle (app/memory_release.h).
struct MemoryMetrics {
  Counter& trims;                          // kib_memory_trims_total
  Counter& released_bytes;                 // kib_memory_released_bytes_total
};
MemoryMetrics& memory_metrics();

// Authorization and the principals' Iggy identities.
struct SecurityMetrics {
  CounterFamily& principal_identity_refusals;  // kib_principal_identity_refusals_total{reason}
  CounterFamily& authorization_denied;         // kib_authorization_denied_total{resource_type,operation}
};
SecurityMetrics& security_metrics();

}  // namespace kib::metrics
