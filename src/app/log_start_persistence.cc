#include "app/log_start_persistence.h"

#include <chrono>
#include <memory>

#include <spdlog/spdlog.h>

#include "bridge/log/partition_log.h"
#include "state/compaction_store.h"
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

Status restore_cleaned_heads(bridge::PartitionLog& log, state::StateStore& store, const std::string& compaction_stream) {
  std::vector<std::pair<state::CompactionStateRow, std::vector<state::CompactionIndexRow>>> heads;
  if (auto st = store.run_blocking([&](SQLite::Database& db) {
        for (state::CompactionStateRow& r : state::load_compaction_states(db)) {
          auto index = state::load_compaction_index(db, r.topic, r.partition, r.generation);
          heads.emplace_back(std::move(r), std::move(index));
        }
      });
      !st)
    return st;
  for (const auto& [row, index] : heads) {
    auto head = std::make_shared<bridge::compaction::CleanedHead>();
    head->generation = row.generation;
    head->stream = compaction_stream;
    head->topic = row.generation_topic;
    head->cleaner_point = row.cleaner_point;
    head->log_start = row.log_start;
    for (const state::CompactionIndexRow& e : index)
      head->index.push_back({e.kafka_offset, static_cast<uint64_t>(e.generation_offset), e.max_timestamp});
    log.set_cleaned_head(row.topic, PartitionId(row.partition), std::move(head));
  }
  if (!heads.empty()) spdlog::info("state: {} compacted partition(s) with a cleaned head", heads.size());
  return ok_status();
}

}  // namespace kib::app
