// SQL for partition_log_start: the DeleteRecords floors (migrations/0005_partition_log_start.sql).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kib::state {

struct LogStartRow {
  std::string topic;
  int32_t partition = 0;
  int64_t log_start_offset = 0;
};

std::vector<LogStartRow> load_log_starts(SQLite::Database& db);
// Raises the stored floor of one partition (never lowers it: concurrent writes keep the highest).
void upsert_log_start(SQLite::Database& db, const LogStartRow& row, int64_t now_ms);

}  // namespace kib::state
