// SQL for compaction (migrations/0015_compaction.sql, docs/compaction.md "Where the state lives"):
// the state of each cleaned partition, the sparse index of its current generation, and the pass
// in progress that recovery finishes or undoes.
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kib::state {

struct CompactionStateRow {
  std::string topic;
  int32_t partition = 0;
  int64_t generation = 1;
  std::string generation_topic;
  int64_t cleaner_point = 0;
  int64_t log_start = 0;
  int64_t kept_records = 0;
  int64_t kept_bytes = 0;
  int64_t last_pass_at = 0;
  int64_t last_pass_ms = 0;
};

struct CompactionIndexRow {
  int64_t kafka_offset = 0;
  int64_t generation_offset = 0;
  int64_t max_timestamp = -1;
};

struct CompactionPassRow {
  std::string topic;
  int32_t partition = 0;
  int64_t generation = 1;
  std::string generation_topic;
  std::optional<std::string> previous_topic;
  int64_t from_offset = 0;
  int64_t to_offset = 0;
  std::string state = "writing";  // writing, committed, done
  int64_t started_at = 0;
};

std::vector<CompactionStateRow> load_compaction_states(SQLite::Database& db);
// The sparse index of one partition's generation, in Kafka-offset order.
std::vector<CompactionIndexRow> load_compaction_index(SQLite::Database& db, const std::string& topic,
                                                      int32_t partition, int64_t generation);
// Passes not done, for recovery at startup.
std::vector<CompactionPassRow> load_unfinished_compaction_passes(SQLite::Database& db);

// Step 3 of a pass: its row, state `writing` (replaces a row of the same generation a crash left).
void begin_compaction_pass(SQLite::Database& db, const CompactionPassRow& pass);
// Step 5, one job (one SAVEPOINT): the partition's state names the new generation, its index
// replaces every other generation's of the partition, and the pass row becomes `committed`.
void commit_compaction_pass(SQLite::Database& db, const CompactionStateRow& state,
                            const std::vector<CompactionIndexRow>& index);
// Step 7, or recovery of a `writing` pass: the row goes.
void delete_compaction_pass(SQLite::Database& db, const std::string& topic, int32_t partition, int64_t generation);

}  // namespace kib::state
