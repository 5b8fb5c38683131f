// SQL for idempotent producers: the producer id high-water mark (bridge_meta), the producers
// table and the last batches per producer and partition (producer_batches). Every function
// runs inside a StateStore job (or run_blocking) and throws SQLite::Exception on failure.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kib::state {

// bridge_meta key of the producer id high-water mark: no id below it is ever issued again.
inline constexpr const char* kProducerIdHighWaterKey = "producer_id_high_water";

// One remembered batch of an idempotent producer (a producer_batches row).
struct ProducerBatchRow {
  int64_t producer_id = -1;
  std::string topic;
  int32_t partition = 0;
  int16_t producer_epoch = 0;
  int32_t first_sequence = 0;
  int32_t last_sequence = 0;
  int64_t base_offset = 0;
  int64_t appended_at_ms = 0;
};

// What the producer registry restores at startup.
struct ProducerSnapshot {
  int64_t id_high_water = 0;              // first id that may still be issued
  std::vector<ProducerBatchRow> batches;  // by producer, topic, partition, then base_offset
};

// Ids [first, end) are reserved: recorded as issued before any of them is handed out.
struct ProducerIdBlock {
  int64_t first = 0;
  int64_t end = 0;
};

// The high-water mark is the largest of the stored mark and every producer id in either
// table, so a database edited by hand (or from before the mark existed) never reissues ids.
ProducerSnapshot load_producer_snapshot(SQLite::Database& db);

// Moves the high-water mark to at least max(stored, `at_least`) + `count` and returns the
// reserved block. Throws std::overflow_error past INT64_MAX.
ProducerIdBlock reserve_producer_ids(SQLite::Database& db, int64_t at_least, int64_t count);

// A newly issued (non-transactional) producer id, for operators and expiry.
void insert_producer(SQLite::Database& db, int64_t producer_id, int16_t producer_epoch, int64_t now_ms);

// What record_producer_batch does beside storing the row. It runs once per idempotent Produce
// batch, and the producer registry knows from memory which older row the new one displaces and
// whether the producers row needs a write, so the common case costs one insert and one delete
// by primary key instead of a scan and an upsert.
struct ProducerBatchWrite {
  enum class Prune {
    kFull,   // keep only the newest `keep` rows of the batch's epoch (a scan of the key's rows)
    kExact,  // delete the one row at evicted_first_sequence (the batch the registry dropped)
    kNone,   // delete nothing (the key holds fewer than `keep` batches)
  };
  Prune prune = Prune::kFull;
  int32_t evicted_first_sequence = 0;  // kExact
  bool touch_producer = true;          // upsert the producers row (epoch, updated_at)
};

// Stores an appended batch and keeps, for its producer and partition, only the newest `keep`
// batches (by base offset) of the batch's epoch: a newer epoch forgets the older epoch's
// batches, as Kafka's ProducerStateEntry does. Also marks the producer active. `how` narrows
// the pruning and the producers write (the defaults do both in full).
void record_producer_batch(SQLite::Database& db, const ProducerBatchRow& row, int keep,
                           const ProducerBatchWrite& how = {});

struct ProducerExpiry {
  int batches_deleted = 0;
  int producers_deleted = 0;
};

// Deletes the batches of every producer-partition whose newest batch was appended at or before
// `idle_since_ms`, and the non-transactional producers last active at or before it.
ProducerExpiry expire_idle_producers(SQLite::Database& db, int64_t idle_since_ms);

}  // namespace kib::state
