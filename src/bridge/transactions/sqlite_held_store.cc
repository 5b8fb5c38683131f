#include "bridge/transactions/sqlite_held_store.h"

#include <spdlog/spdlog.h>

#include "bridge/errors.h"
#include "state/held_batch_store.h"

namespace kib::bridge {

void SqliteHeldStore::insert_plain(const std::string& topic, PartitionId partition, const HeldBatch& batch,
                                   std::shared_ptr<const Bytes> wire, std::function<void(Status)> done) {
  state::HeldBatchRow row;
  row.topic = topic;
  row.partition = partition();
  row.base_offset = batch.base();
  row.record_count = batch.count;
  row.txn = kPlainBatch;
  row.producer_id = batch.producer.producer_id;
  row.producer_epoch = batch.producer.producer_epoch;
  row.outcome = state::HeldOutcomeCode::kCommitted;
  store_.write([row, wire](SQLite::Database& db) { state::insert_held_batch(db, row, *wire); },
               [alive = alive_.token(), done = std::move(done)](Status st) {
                 if (alive) done(std::move(st));
               });
}

void SqliteHeldStore::load(const std::string& topic, PartitionId partition, KafkaOffset base,
                           std::function<void(Result<std::shared_ptr<Bytes>>)> done) {
  auto out = std::make_shared<std::optional<Bytes>>();
  store_.write(
      [out, topic, partition, base](SQLite::Database& db) {
        *out = state::load_held_batch(db, topic, partition(), base());
      },
      [alive = alive_.token(), out, topic, partition, base, done = std::move(done)](Status st) {
        if (!alive) return;
        if (!st) return done(st.error());
        if (!*out)
          return done(kafka_error(kafka::ErrorCode::kKafkaStorageError,
                                  "no held batch of " + topic + "-" + std::to_string(partition()) + " at " +
                                      std::to_string(base())));
        done(std::make_shared<Bytes>(std::move(**out)));
      });
}

void SqliteHeldStore::erase(const std::string& topic, PartitionId partition, KafkaOffset base) {
  store_.write([topic, partition, base](SQLite::Database& db) { state::delete_held_batch(db, topic, partition(), base()); },
               [topic, partition, base](Status st) {
                 if (!st)
                   spdlog::warn("held batch of {}-{} at {} not deleted: {}; the next start finds it in Iggy", topic,
                                partition, base, st.error().message);
               });
}

}  // namespace kib::bridge
