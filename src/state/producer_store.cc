#include "state/producer_store.h"
#include "state/state_store.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace kib::state {
namespace {

int64_t stored_high_water(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT value FROM bridge_meta WHERE key = ?");
  q.bind(1, kProducerIdHighWaterKey);
  if (!q.executeStep()) return 0;
  return std::stoll(q.getColumn(0).getString());
}

int64_t max_id_plus_one(SQLite::Database& db, const char* sql) {
  SQLite::Statement q(db, sql);
  q.executeStep();
  return q.getColumn(0).isNull() ? 0 : q.getColumn(0).getInt64() + 1;
}

}  // namespace

ProducerSnapshot load_producer_snapshot(SQLite::Database& db) {
  ProducerSnapshot snap;
  snap.id_high_water = std::max({stored_high_water(db),
                                 max_id_plus_one(db, "SELECT max(producer_id) FROM producers"),
                                 max_id_plus_one(db, "SELECT max(producer_id) FROM producer_batches")});
  SQLite::Statement q(db,
                      "SELECT producer_id, topic, partition, producer_epoch, first_sequence, last_sequence, "
                      "base_offset, appended_at FROM producer_batches "
                      "ORDER BY producer_id, topic, partition, base_offset");
  while (q.executeStep()) {
    ProducerBatchRow r;
    r.producer_id = q.getColumn(0).getInt64();
    r.topic = q.getColumn(1).getString();
    r.partition = q.getColumn(2).getInt();
    r.producer_epoch = static_cast<int16_t>(q.getColumn(3).getInt());
    r.first_sequence = q.getColumn(4).getInt();
    r.last_sequence = q.getColumn(5).getInt();
    r.base_offset = q.getColumn(6).getInt64();
    r.appended_at_ms = q.getColumn(7).getInt64();
    snap.batches.push_back(std::move(r));
  }
  return snap;
}

ProducerIdBlock reserve_producer_ids(SQLite::Database& db, int64_t at_least, int64_t count) {
  int64_t first = std::max(stored_high_water(db), at_least);
  if (count <= 0 || first > std::numeric_limits<int64_t>::max() - count)
    throw std::overflow_error("producer ids exhausted: cannot reserve " + std::to_string(count) + " ids after " +
                              std::to_string(first));
  ProducerIdBlock block{first, first + count};
  SQLite::Statement st(db,
                       "INSERT INTO bridge_meta(key, value) VALUES (?, ?) "
                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  st.bind(1, kProducerIdHighWaterKey);
  st.bind(2, std::to_string(block.end));
  st.exec();
  return block;
}

void insert_producer(SQLite::Database& db, int64_t producer_id, int16_t producer_epoch, int64_t now_ms) {
  SQLite::Statement st(db,
                       "INSERT INTO producers(producer_id, producer_epoch, transactional_id, updated_at) "
                       "VALUES (?, ?, NULL, ?) ON CONFLICT(producer_id) DO UPDATE SET "
                       "producer_epoch = excluded.producer_epoch, updated_at = excluded.updated_at");
  st.bind(1, producer_id);
  st.bind(2, producer_epoch);
  st.bind(3, now_ms);
  st.exec();
}

void record_producer_batch(SQLite::Database& db, const ProducerBatchRow& r, int keep, const ProducerBatchWrite& how) {
  // Once per idempotent Produce batch: cached statements (state_store.h), no parse per call.
  CachedStatement ins(db,
                      "INSERT OR REPLACE INTO producer_batches(producer_id, topic, partition, producer_epoch, "
                      "first_sequence, last_sequence, base_offset, appended_at) VALUES (?,?,?,?,?,?,?,?)");
  ins->bind(1, r.producer_id);
  ins->bind(2, r.topic);
  ins->bind(3, r.partition);
  ins->bind(4, r.producer_epoch);
  ins->bind(5, r.first_sequence);
  ins->bind(6, r.last_sequence);
  ins->bind(7, r.base_offset);
  ins->bind(8, r.appended_at_ms);
  ins->exec();

  switch (how.prune) {
    case ProducerBatchWrite::Prune::kFull: {
      // Offsets grow in append order within a partition, so the newest `keep` batches are the
      // ones with the highest base offsets; with fewer than `keep` the subquery is NULL.
      CachedStatement prune(db,
                            "DELETE FROM producer_batches WHERE producer_id = ?1 AND topic = ?2 AND partition = ?3 "
                            "AND (producer_epoch <> ?4 OR base_offset < ("
                            "  SELECT base_offset FROM producer_batches WHERE producer_id = ?1 AND topic = ?2 "
                            "  AND partition = ?3 AND producer_epoch = ?4 ORDER BY base_offset DESC LIMIT 1 OFFSET ?5))");
      prune->bind(1, r.producer_id);
      prune->bind(2, r.topic);
      prune->bind(3, r.partition);
      prune->bind(4, r.producer_epoch);
      prune->bind(5, keep - 1);
      prune->exec();
      break;
    }
    case ProducerBatchWrite::Prune::kExact: {
      CachedStatement evict(db,
                            "DELETE FROM producer_batches WHERE producer_id = ? AND topic = ? AND partition = ? "
                            "AND first_sequence = ?");
      evict->bind(1, r.producer_id);
      evict->bind(2, r.topic);
      evict->bind(3, r.partition);
      evict->bind(4, how.evicted_first_sequence);
      evict->exec();
      break;
    }
    case ProducerBatchWrite::Prune::kNone:
      break;
  }

  if (!how.touch_producer) return;
  CachedStatement active(db,
                         "INSERT INTO producers(producer_id, producer_epoch, transactional_id, updated_at) "
                         "VALUES (?, ?, NULL, ?) ON CONFLICT(producer_id) DO UPDATE SET "
                         "producer_epoch = max(producer_epoch, excluded.producer_epoch), "
                         "updated_at = max(updated_at, excluded.updated_at)");
  active->bind(1, r.producer_id);
  active->bind(2, r.producer_epoch);
  active->bind(3, r.appended_at_ms);
  active->exec();
}

ProducerExpiry expire_idle_producers(SQLite::Database& db, int64_t idle_since_ms) {
  ProducerExpiry out;
  SQLite::Statement batches(db,
                            "DELETE FROM producer_batches WHERE (producer_id, topic, partition) IN ("
                            "  SELECT producer_id, topic, partition FROM producer_batches "
                            "  GROUP BY producer_id, topic, partition HAVING max(appended_at) <= ?)");
  batches.bind(1, idle_since_ms);
  out.batches_deleted = batches.exec();
  // Transactional ids expire by their own rule (transactional.id.expiration.ms), later.
  SQLite::Statement producers(db,
                              "DELETE FROM producers WHERE transactional_id IS NULL AND updated_at <= ?");
  producers.bind(1, idle_since_ms);
  out.producers_deleted = producers.exec();
  return out;
}

}  // namespace kib::state
