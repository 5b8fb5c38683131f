// SQL for held_batches (migrations/0009_held_batches.sql; docs/transactions.md, "Real offsets at
// produce time"): the batches a partition holds behind an open transaction, with their offsets.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/bytes.h"

namespace kib::state {

enum class HeldOutcomeCode : int { kUndecided = 0, kCommitted = 1, kAborted = 2 };

// A held batch without its bytes (startup).
struct HeldBatchRow {
  std::string topic;
  int32_t partition = 0;
  int64_t base_offset = 0;
  int32_t record_count = 0;
  uint64_t txn = 0;  // 0: a plain batch
  std::optional<std::string> transactional_id;
  int64_t producer_id = -1;
  int32_t producer_epoch = -1;
  int32_t base_sequence = -1;
  HeldOutcomeCode outcome = HeldOutcomeCode::kUndecided;
  int64_t bytes = 0;
};

void insert_held_batch(SQLite::Database& db, const HeldBatchRow& row, ByteSpan batch);
std::optional<Bytes> load_held_batch(SQLite::Database& db, const std::string& topic, int32_t partition,
                                     int64_t base_offset);
void delete_held_batch(SQLite::Database& db, const std::string& topic, int32_t partition, int64_t base_offset);
// A transaction ended: its held batches take the outcome (committed or aborted).
void decide_held_batches(SQLite::Database& db, uint64_t txn, HeldOutcomeCode outcome);
// Every held batch, by topic, partition and offset.
std::vector<HeldBatchRow> load_held_batch_rows(SQLite::Database& db);

}  // namespace kib::state
