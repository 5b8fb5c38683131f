#include "app/log_start_persistence.h"

#include <chrono>
#include <memory>

#include <spdlog/spdlog.h>

#include "bridge/log/partition_log.h"
#include "state/log_start_store.h"
#include "state/state_store.h"

namespace kib::app {

Status attach_log_start_store(bridge::PartitionLog& log, state::StateStore& store) {
  std::vector<state::LogStartRow> rows;
  if (auto st = store.run_blocking([&](SQLite::Database& db) { rows = state::load_log_starts(db); }); !st) return st;
  std::vector<bridge::LogStartFloor> floors;
  for (const auto& r : rows) floors.push_back({r.topic, PartitionId(r.partition), KafkaOffset(r.log_start_offset)});
  if (!floors.empty()) spdlog::info("state: {} DeleteRecords log start(s)", floors.size());
  log.restore_log_starts(floors, [&store](const std::string& topic, PartitionId partition, KafkaOffset floor,
                                          std::function<void(Status)> done) {
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    state::LogStartRow row{topic, partition(), floor()};
    store.write([row, now_ms](SQLite::Database& db) { state::upsert_log_start(db, row, now_ms); }, std::move(done));
  });
  return ok_status();
}

}  // namespace kib::app
