#include "metrics/service_metrics.h"

namespace kib::metrics {

ServerBoundMetrics& server_bound_metrics() {
  static ServerBoundMetrics* m = [] {
    Registry& r = global();
    return new ServerBoundMetrics{
        r.counter("kib_connection_read_pauses_total",
                  "Times a Kafka connection stopped being read because answers its client had not taken passed "
                  "max_pending_response_bytes (pending_answers) or, over all connections, "
                  "max_pending_response_bytes_total (pending_answers_total).",
                  {"reason"}),
        r.gauge("kib_pending_response_bytes",
                "Memory held by answers not yet taken by their clients, over all Kafka connections.")
            .get(),
        r.counter("kib_sasl_password_checks_total",
                  "SASL/PLAIN password checks by outcome: checked (hashed), refused (max_pending_password_checks were "
                  "under way), dropped (the connection closed before its turn).",
                  {"result"}),
        r.gauge("kib_sasl_password_checks_pending", "SASL/PLAIN password checks under way (waiting or hashing).").get(),
    };
  }();
  return *m;
}

LogMetrics& log_metrics() {
  static LogMetrics* m = [] {
    Registry& r = global();
    return new LogMetrics{
        r.gauge("kib_fetch_waiters", "Fetch requests being read or long-polling for data.").get(),
        r.counter("kib_iggy_requests_cancelled_total",
                  "Queued Iggy reads dropped unsent because the Kafka connection they were for closed.")
            .get(),
        r.counter("kib_iggy_connection_queue_full_total",
                  "Iggy requests refused because their Kafka connection already had "
                  "limits.max_iggy_queue_per_connection queued.")
            .get(),
        r.counter("kib_delete_segments_total", "DeleteSegments sent to Iggy after DeleteRecords, by result.",
                  {"result"}),
        r.counter("kib_fetch_cache_hits_total",
                  "Partition reads of a Fetch answered from the produced-batch cache, without polling Iggy.")
            .get(),
        r.counter("kib_fetch_cache_misses_total",
                  "Partition reads of a Fetch the produced-batch cache could not answer (read from Iggy).")
            .get(),
        r.counter("kib_fetch_cache_evictions_total", "Batches evicted from the produced-batch cache for room.").get(),
        r.gauge("kib_fetch_cache_bytes",
                "Bytes the produced-batch cache keeps alive (the request frames its batches lie in).")
            .get(),
        r.counter("kib_transaction_offset_shifts_total",
                  "Held batches whose offsets moved because something appended to the partition outside the "
                  "bridge while it held (docs/transactions.md).")
            .get(),
        r.counter("kib_held_placeholders_total",
                  "Placeholder messages appended for aborted records or offsets taken by a batch that was not "
                  "stored (docs/mapping.md, Aborted records).")
            .get(),
        r.counter("kib_held_refused_total",
                  "Batches refused NOT_ENOUGH_REPLICAS because their partition held "
                  "transactions.max_held_bytes_per_partition behind an open transaction.")
            .get(),
        r.counter("kib_produce_keyless_compacted_total",
                  "Records refused INVALID_RECORD because they had no key and their topic's cleanup.policy "
                  "includes compact (Kafka's NoKeyCompactedTopicRecordsPerSec).")
            .get(),
    };
  }();
  return *m;
}

CompactionMetrics& compaction_metrics() {
  static CompactionMetrics* m = [] {
    Registry& r = global();
    return new CompactionMetrics{
        r.counter("kib_compaction_passes_total",
                  "Compaction passes by result: committed, failed (undone, tried again), abandoned (the "
                  "generation did not read back as written), recovered (interrupted, finished or undone at startup).",
                  {"result"}),
        r.counter("kib_compaction_bytes_read_total", "Bytes compaction passes read from Iggy.").get(),
        r.counter("kib_compaction_bytes_written_total", "Bytes compaction passes wrote to generation topics.").get(),
        r.counter("kib_compaction_records_removed_total",
                  "Records compaction removed: superseded, expired tombstones, aborted placeholders, retention.")
            .get(),
        r.counter("kib_compaction_barrier_repairs_total",
                  "Times the cleaner's Iggy consumer offset (the segment deletion barrier) was found moved and "
                  "stored again.")
            .get(),
        r.counter("kib_compaction_orphan_generations_deleted_total",
                  "Generation topics no compaction state named, deleted at startup.")
            .get(),
        r.gauge("kib_compaction_passes_running", "Compaction passes in progress.").get(),
        r.gauge("kib_compaction_last_pass_seconds", "How long the last committed compaction pass took.").get(),
        r.gauge("kib_compaction_dirty_ratio",
                "A compacted partition's dirty bytes over its cleaned and dirty bytes (min.cleanable.dirty.ratio "
                "is compared with it); [compaction] max_metric_partitions partitions at most.",
                {"topic", "partition"}),
        r.gauge("kib_compaction_cleaner_point",
                "A compacted partition's cleaner point: offsets below it are read from its cleaned generation.",
                {"topic", "partition"}),
        r.gauge("kib_compaction_partitions", "Compacted partitions the cleaner knows.").get(),
    };
  }();
  return *m;
}

MemoryMetrics& memory_metrics() {
  static MemoryMetrics* m = [] {
    Registry& r = global();
    return new MemoryMetrics{
        r.counter("kib_memory_trims_total", "Times the idle bridge gave freed heap memory back to the OS (malloc_trim).")
            .get(),
        r.counter("kib_memory_released_bytes_total", "Resident bytes those trims gave back to the OS.").get(),
    };
  }();
  return *m;
}

SecurityMetrics& security_metrics() {
  static SecurityMetrics* m = [] {
    Registry& r = global();
    return new SecurityMetrics{
        r.counter("kib_principal_identity_refusals_total",
                  "Data requests of a principal refused with TOPIC_AUTHORIZATION_FAILED because it has no Iggy user "
                  "to run as ([principals] iggy_identity = \"per_principal\"), by reason: unmapped (unmapped = "
                  "\"refuse\"), not_created_by_bridge (unmapped = \"create\" found an Iggy user kafka.<name> the "
                  "bridge did not create), unproven (whether the bridge created it could not be told yet).",
                  {"reason"}),
        r.counter("kib_authorization_denied_total",
                  "Authorization checks that refused what a client asked for (an ACL or the default rule), by "
                  "resource type and operation.",
                  {"resource_type", "operation"}),
    };
  }();
  return *m;
}

}  // namespace kib::metrics
