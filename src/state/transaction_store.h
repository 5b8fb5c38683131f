// SQL for the transaction coordinator's tables (migrations/0006_transactions.sql,
// docs/transactions.md).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace kib::state {

struct TransactionRow {
  std::string transactional_id;
  int64_t producer_id = -1;
  int32_t producer_epoch = -1;
  int64_t last_producer_id = -1;
  int32_t last_epoch = -1;
  int32_t timeout_ms = 0;
  std::string state;
  int64_t started_at_ms = -1;
  int64_t updated_at_ms = 0;
};

struct TransactionPartitionRow {
  std::string transactional_id;
  std::string topic;
  int32_t partition = 0;
  int64_t start_offset = -1;
  int64_t append_from = -1;
};

struct TransactionOffsetRow {
  std::string transactional_id;
  std::string group_id;
  std::string topic;
  int32_t partition = 0;
  int64_t committed_offset = 0;
  int32_t leader_epoch = -1;
  std::string metadata;
};

// A buffered batch without its bytes (startup: sizes and order).
struct TransactionBatchInfo {
  std::string transactional_id;
  int64_t seq = 0;
  std::string topic;
  int32_t partition = 0;
  int32_t base_sequence = 0;
  int32_t record_count = 0;
  int64_t bytes = 0;
};

struct TransactionBatchRow {
  int64_t seq = 0;
  int32_t base_sequence = 0;
  int32_t record_count = 0;
  Bytes batch;
};

struct TransactionSnapshot {
  std::vector<TransactionRow> transactions;
  std::vector<TransactionPartitionRow> partitions;
  std::vector<std::pair<std::string, std::string>> groups;  // transactional id, group id
  std::vector<TransactionOffsetRow> offsets;
  std::vector<TransactionBatchInfo> batches;  // by transactional id, seq
};

TransactionSnapshot load_transactions(SQLite::Database& db);

// Inserts or replaces the transaction's row (its partitions, groups, batches and offsets stay).
void save_transaction(SQLite::Database& db, const TransactionRow& row);
void delete_transaction(SQLite::Database& db, const std::string& transactional_id);
// Deletes what the open transaction holds: partitions, groups, batches, pending offsets.
void clear_transaction(SQLite::Database& db, const std::string& transactional_id);

void add_transaction_partition(SQLite::Database& db, const TransactionPartitionRow& row);
void set_partition_start_offset(SQLite::Database& db, const std::string& transactional_id, const std::string& topic,
                                int32_t partition, int64_t start_offset);
void set_partition_append_from(SQLite::Database& db, const std::string& transactional_id, const std::string& topic,
                               int32_t partition, int64_t append_from);
void add_transaction_group(SQLite::Database& db, const std::string& transactional_id, const std::string& group_id);
void upsert_transaction_offsets(SQLite::Database& db, const std::vector<TransactionOffsetRow>& rows);
void delete_transaction_offsets(SQLite::Database& db, const std::string& transactional_id);

void insert_transaction_batch(SQLite::Database& db, const std::string& transactional_id, int64_t seq,
                              const std::string& topic, int32_t partition, int32_t base_sequence, int32_t record_count,
                              ByteSpan batch);
// The partition's buffered batches with seq > after_seq, in seq order, until their bytes pass
// max_bytes (at least one).
std::vector<TransactionBatchRow> load_transaction_batches(SQLite::Database& db, const std::string& transactional_id,
                                                          const std::string& topic, int32_t partition,
                                                          int64_t after_seq, int64_t max_bytes);

}  // namespace kib::state
