// The partition log's HeldStore on SQLite's held_batches (state/held_batch_store.h), written
// through the state store's thread. The transaction coordinator writes its own batches' rows
// (buffered_produce.cc) and their outcome with its state; the log writes plain batches' rows and
// reads and deletes every row. Loop thread only.
#pragma once

#include "bridge/log/held_store.h"
#include "common/liveness.h"
#include "state/state_store.h"

namespace kib::bridge {

class SqliteHeldStore final : public HeldStore {
 public:
  explicit SqliteHeldStore(state::StateStore& store) : store_(store) {}
  ~SqliteHeldStore() override { alive_.end(); }

  void insert_plain(const std::string& topic, PartitionId partition, const HeldBatch& batch,
                    std::shared_ptr<const Bytes> wire, std::function<void(Status)> done) override;
  void load(const std::string& topic, PartitionId partition, KafkaOffset base,
            std::function<void(Result<std::shared_ptr<Bytes>>)> done) override;
  void erase(const std::string& topic, PartitionId partition, KafkaOffset base) override;

 private:
  state::StateStore& store_;
  Liveness alive_;
};

}  // namespace kib::bridge
