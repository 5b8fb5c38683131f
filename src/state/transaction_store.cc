#include "state/transaction_store.h"

namespace kib::state {

TransactionSnapshot load_transactions(SQLite::Database& db) {
  TransactionSnapshot s;
  {
    SQLite::Statement q(db,
                        "SELECT transactional_id, producer_id, producer_epoch, last_producer_id, last_epoch, "
                        "timeout_ms, state, started_at, updated_at FROM transactions");
    while (q.executeStep()) {
      TransactionRow r;
      r.transactional_id = q.getColumn(0).getString();
      r.producer_id = q.getColumn(1).getInt64();
      r.producer_epoch = q.getColumn(2).getInt();
      r.last_producer_id = q.getColumn(3).getInt64();
      r.last_epoch = q.getColumn(4).getInt();
      r.timeout_ms = q.getColumn(5).getInt();
      r.state = q.getColumn(6).getString();
      r.started_at_ms = q.getColumn(7).getInt64();
      r.updated_at_ms = q.getColumn(8).getInt64();
      s.transactions.push_back(std::move(r));
    }
  }
  {
    SQLite::Statement q(db,
                        "SELECT transactional_id, topic, partition, start_offset, append_from "
                        "FROM transaction_partitions");
    while (q.executeStep())
      s.partitions.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt(),
                              q.getColumn(3).getInt64(), q.getColumn(4).getInt64()});
  }
  {
    SQLite::Statement q(db, "SELECT transactional_id, group_id FROM transaction_groups");
    while (q.executeStep()) s.groups.emplace_back(q.getColumn(0).getString(), q.getColumn(1).getString());
  }
  {
    SQLite::Statement q(db,
                        "SELECT transactional_id, group_id, topic, partition, committed_offset, leader_epoch, "
                        "metadata FROM transaction_offsets");
    while (q.executeStep())
      s.offsets.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getString(),
                           q.getColumn(3).getInt(), q.getColumn(4).getInt64(), q.getColumn(5).getInt(),
                           q.getColumn(6).getString()});
  }
  {
    SQLite::Statement q(db,
                        "SELECT transactional_id, seq, topic, partition, base_sequence, record_count, length(batch) "
                        "FROM transaction_batches ORDER BY transactional_id, seq");
    while (q.executeStep())
      s.batches.push_back({q.getColumn(0).getString(), q.getColumn(1).getInt64(), q.getColumn(2).getString(),
                           q.getColumn(3).getInt(), q.getColumn(4).getInt(), q.getColumn(5).getInt(),
                           q.getColumn(6).getInt64()});
  }
  return s;
}

void save_transaction(SQLite::Database& db, const TransactionRow& r) {
  SQLite::Statement st(db,
                       "INSERT INTO transactions(transactional_id, producer_id, producer_epoch, last_producer_id, "
                       "last_epoch, timeout_ms, state, started_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?) "
                       "ON CONFLICT(transactional_id) DO UPDATE SET producer_id = excluded.producer_id, "
                       "producer_epoch = excluded.producer_epoch, last_producer_id = excluded.last_producer_id, "
                       "last_epoch = excluded.last_epoch, timeout_ms = excluded.timeout_ms, state = excluded.state, "
                       "started_at = excluded.started_at, updated_at = excluded.updated_at");
  st.bind(1, r.transactional_id);
  st.bind(2, static_cast<int64_t>(r.producer_id));
  st.bind(3, r.producer_epoch);
  st.bind(4, static_cast<int64_t>(r.last_producer_id));
  st.bind(5, r.last_epoch);
  st.bind(6, r.timeout_ms);
  st.bind(7, r.state);
  st.bind(8, static_cast<int64_t>(r.started_at_ms));
  st.bind(9, static_cast<int64_t>(r.updated_at_ms));
  st.exec();
}

namespace {
void delete_where_id(SQLite::Database& db, const char* sql, const std::string& id) {
  SQLite::Statement st(db, sql);
  st.bind(1, id);
  st.exec();
}
}  // namespace

void delete_transaction(SQLite::Database& db, const std::string& id) {
  clear_transaction(db, id);
  delete_where_id(db, "DELETE FROM transactions WHERE transactional_id = ?", id);
}

void clear_transaction(SQLite::Database& db, const std::string& id) {
  delete_where_id(db, "DELETE FROM transaction_batches WHERE transactional_id = ?", id);
  delete_where_id(db, "DELETE FROM transaction_offsets WHERE transactional_id = ?", id);
  delete_where_id(db, "DELETE FROM transaction_groups WHERE transactional_id = ?", id);
  delete_where_id(db, "DELETE FROM transaction_partitions WHERE transactional_id = ?", id);
}

void add_transaction_partition(SQLite::Database& db, const TransactionPartitionRow& r) {
  SQLite::Statement st(db,
                       "INSERT OR IGNORE INTO transaction_partitions(transactional_id, topic, partition, "
                       "start_offset, append_from) VALUES (?,?,?,?,?)");
  st.bind(1, r.transactional_id);
  st.bind(2, r.topic);
  st.bind(3, r.partition);
  st.bind(4, static_cast<int64_t>(r.start_offset));
  st.bind(5, static_cast<int64_t>(r.append_from));
  st.exec();
}

namespace {
void set_partition_column(SQLite::Database& db, const char* sql, const std::string& id, const std::string& topic,
                          int32_t partition, int64_t value) {
  SQLite::Statement st(db, sql);
  st.bind(1, static_cast<int64_t>(value));
  st.bind(2, id);
  st.bind(3, topic);
  st.bind(4, partition);
  st.exec();
}
}  // namespace

void set_partition_start_offset(SQLite::Database& db, const std::string& id, const std::string& topic,
                                int32_t partition, int64_t start_offset) {
  set_partition_column(db,
                       "UPDATE transaction_partitions SET start_offset = ? WHERE transactional_id = ? AND topic = ? "
                       "AND partition = ?",
                       id, topic, partition, start_offset);
}

void set_partition_append_from(SQLite::Database& db, const std::string& id, const std::string& topic,
                               int32_t partition, int64_t append_from) {
  set_partition_column(db,
                       "UPDATE transaction_partitions SET append_from = ? WHERE transactional_id = ? AND topic = ? "
                       "AND partition = ?",
                       id, topic, partition, append_from);
}

void add_transaction_group(SQLite::Database& db, const std::string& id, const std::string& group_id) {
  SQLite::Statement st(db, "INSERT OR IGNORE INTO transaction_groups(transactional_id, group_id) VALUES (?,?)");
  st.bind(1, id);
  st.bind(2, group_id);
  st.exec();
}

void upsert_transaction_offsets(SQLite::Database& db, const std::vector<TransactionOffsetRow>& rows) {
  SQLite::Statement st(db,
                       "INSERT OR REPLACE INTO transaction_offsets(transactional_id, group_id, topic, partition, "
                       "committed_offset, leader_epoch, metadata) VALUES (?,?,?,?,?,?,?)");
  for (const auto& r : rows) {
    st.reset();
    st.bind(1, r.transactional_id);
    st.bind(2, r.group_id);
    st.bind(3, r.topic);
    st.bind(4, r.partition);
    st.bind(5, static_cast<int64_t>(r.committed_offset));
    st.bind(6, r.leader_epoch);
    st.bind(7, r.metadata);
    st.exec();
  }
}

void delete_transaction_offsets(SQLite::Database& db, const std::string& id) {
  delete_where_id(db, "DELETE FROM transaction_offsets WHERE transactional_id = ?", id);
}

void insert_transaction_batch(SQLite::Database& db, const std::string& id, int64_t seq, const std::string& topic,
                              int32_t partition, int32_t base_sequence, int32_t record_count, ByteSpan batch) {
  SQLite::Statement st(db,
                       "INSERT INTO transaction_batches(transactional_id, seq, topic, partition, base_sequence, "
                       "record_count, batch) VALUES (?,?,?,?,?,?,?)");
  st.bind(1, id);
  st.bind(2, static_cast<int64_t>(seq));
  st.bind(3, topic);
  st.bind(4, partition);
  st.bind(5, base_sequence);
  st.bind(6, record_count);
  st.bind(7, batch.data(), static_cast<int>(batch.size()));
  st.exec();
}

std::vector<TransactionBatchRow> load_transaction_batches(SQLite::Database& db, const std::string& id,
                                                          const std::string& topic, int32_t partition,
                                                          int64_t after_seq, int64_t max_bytes) {
  std::vector<TransactionBatchRow> out;
  SQLite::Statement q(db,
                      "SELECT seq, base_sequence, record_count, batch FROM transaction_batches "
                      "WHERE transactional_id = ? AND topic = ? AND partition = ? AND seq > ? ORDER BY seq");
  q.bind(1, id);
  q.bind(2, topic);
  q.bind(3, partition);
  q.bind(4, static_cast<int64_t>(after_seq));
  int64_t bytes = 0;
  while (q.executeStep()) {
    TransactionBatchRow r;
    r.seq = q.getColumn(0).getInt64();
    r.base_sequence = q.getColumn(1).getInt();
    r.record_count = q.getColumn(2).getInt();
    const SQLite::Column blob = q.getColumn(3);
    const auto* p = static_cast<const uint8_t*>(blob.getBlob());
    r.batch.assign(p, p + blob.getBytes());
    bytes += blob.getBytes();
    out.push_back(std::move(r));
    if (bytes >= max_bytes) break;
  }
  return out;
}

}  // namespace kib::state
