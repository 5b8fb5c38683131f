#include "state/log_start_store.h"

namespace kib::state {

std::vector<LogStartRow> load_log_starts(SQLite::Database& db) {
  std::vector<LogStartRow> rows;
  SQLite::Statement q(db, "SELECT topic, partition, log_start_offset FROM partition_log_start");
  while (q.executeStep()) {
    LogStartRow r;
    r.topic = q.getColumn(0).getString();
    r.partition = q.getColumn(1).getInt();
    r.log_start_offset = q.getColumn(2).getInt64();
    rows.push_back(std::move(r));
  }
  return rows;
}

void upsert_log_start(SQLite::Database& db, const LogStartRow& r, int64_t now_ms) {
  SQLite::Statement st(db,
                       "INSERT INTO partition_log_start(topic, partition, log_start_offset, updated_at) "
                       "VALUES (?,?,?,?) ON CONFLICT(topic, partition) DO UPDATE SET "
                       "log_start_offset = MAX(log_start_offset, excluded.log_start_offset), "
                       "updated_at = excluded.updated_at");
  st.bind(1, r.topic);
  st.bind(2, r.partition);
  st.bind(3, static_cast<int64_t>(r.log_start_offset));
  st.bind(4, static_cast<int64_t>(now_ms));
  st.exec();
}

}  // namespace kib::state
