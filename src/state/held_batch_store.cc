#include "state/held_batch_store.h"

namespace kib::state {

void insert_held_batch(SQLite::Database& db, const HeldBatchRow& row, ByteSpan batch) {
  SQLite::Statement st(db,
                       "INSERT INTO held_batches(topic, partition, base_offset, record_count, txn, transactional_id, "
                       "producer_id, producer_epoch, base_sequence, outcome, batch) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  st.bind(1, row.topic);
  st.bind(2, row.partition);
  st.bind(3, static_cast<int64_t>(row.base_offset));
  st.bind(4, row.record_count);
  st.bind(5, static_cast<int64_t>(row.txn));
  if (row.transactional_id) st.bind(6, *row.transactional_id);
  else st.bind(6);
  st.bind(7, static_cast<int64_t>(row.producer_id));
  st.bind(8, row.producer_epoch);
  st.bind(9, row.base_sequence);
  st.bind(10, static_cast<int>(row.outcome));
  st.bind(11, batch.data(), static_cast<int>(batch.size()));
  st.exec();
}

std::optional<Bytes> load_held_batch(SQLite::Database& db, const std::string& topic, int32_t partition,
                                     int64_t base_offset) {
  SQLite::Statement q(db, "SELECT batch FROM held_batches WHERE topic = ? AND partition = ? AND base_offset = ?");
  q.bind(1, topic);
  q.bind(2, partition);
  q.bind(3, static_cast<int64_t>(base_offset));
  if (!q.executeStep()) return std::nullopt;
  const SQLite::Column blob = q.getColumn(0);
  const auto* p = static_cast<const uint8_t*>(blob.getBlob());
  return Bytes(p, p + blob.getBytes());
}

void delete_held_batch(SQLite::Database& db, const std::string& topic, int32_t partition, int64_t base_offset) {
  SQLite::Statement st(db, "DELETE FROM held_batches WHERE topic = ? AND partition = ? AND base_offset = ?");
  st.bind(1, topic);
  st.bind(2, partition);
  st.bind(3, static_cast<int64_t>(base_offset));
  st.exec();
}

void decide_held_batches(SQLite::Database& db, uint64_t txn, HeldOutcomeCode outcome) {
  SQLite::Statement st(db, "UPDATE held_batches SET outcome = ? WHERE txn = ? AND outcome = 0");
  st.bind(1, static_cast<int>(outcome));
  st.bind(2, static_cast<int64_t>(txn));
  st.exec();
}

std::vector<HeldBatchRow> load_held_batch_rows(SQLite::Database& db) {
  std::vector<HeldBatchRow> out;
  SQLite::Statement q(db,
                      "SELECT topic, partition, base_offset, record_count, txn, transactional_id, producer_id, "
                      "producer_epoch, base_sequence, outcome, length(batch) FROM held_batches "
                      "ORDER BY topic, partition, base_offset");
  while (q.executeStep()) {
    HeldBatchRow r;
    r.topic = q.getColumn(0).getString();
    r.partition = q.getColumn(1).getInt();
    r.base_offset = q.getColumn(2).getInt64();
    r.record_count = q.getColumn(3).getInt();
    r.txn = static_cast<uint64_t>(q.getColumn(4).getInt64());
    if (!q.getColumn(5).isNull()) r.transactional_id = q.getColumn(5).getString();
    r.producer_id = q.getColumn(6).getInt64();
    r.producer_epoch = q.getColumn(7).getInt();
    r.base_sequence = q.getColumn(8).getInt();
    r.outcome = static_cast<HeldOutcomeCode>(q.getColumn(9).getInt());
    r.bytes = q.getColumn(10).getInt64();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kib::state
